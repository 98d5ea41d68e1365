// Checks values and the one text order: code point order on UTF-8, prefix
// bounds, and the conversions from JSON that refuse bad input by name.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "schema/schema.h"
#include "values/value.h"

namespace onestore {
namespace {

TEST(TextOrder, ComparesByCodePointNotByUtf16Unit) {
  // U+FF08 (fullwidth parenthesis) < U+1F600 (emoji) by code point, while
  // JS's UTF-16 comparison puts the emoji's surrogate (0xD83D) first.
  EXPECT_LT(CompareText("测试（一）", "测试😀"), 0);
  EXPECT_LT(CompareText("～", "😀"), 0);
  EXPECT_LT(CompareText("a", "ab"), 0);
  EXPECT_EQ(CompareText("é", "é"), 0);
  EXPECT_NE(CompareText("é", "e\xCC\x81"), 0);  // no normalization
}

TEST(TextOrder, PrefixUpperBoundIsTheFirstStringWithoutThePrefix) {
  EXPECT_EQ(PrefixUpperBound("a/"), "a0");
  EXPECT_EQ(PrefixUpperBound(""), "");
  const std::string p = "测试";
  const std::string up = PrefixUpperBound(p);
  for (std::string s :
       {std::string("测试"), std::string("测试😀"), std::string("测试\xEF\xBF\xBD")}) {
    EXPECT_GE(CompareText(s, p), 0) << s;
    EXPECT_LT(CompareText(s, up), 0) << s;
  }
  EXPECT_GT(CompareText("测读", up), 0);
}

TEST(TextOrder, CodePointLengthAndOffset) {
  EXPECT_EQ(CodePointLength("a😀b"), 3u);
  EXPECT_EQ(CodePointOffset("a😀b", 2), 5u);
  EXPECT_EQ(CodePointOffset("ab", 5), 2u);
}

TEST(Values, JsonConversionRefusesBadInputByName) {
  Value v;
  Status s = ValueFromJson(Json::parse("1.5"), Type::kInt, "row.entry", &v);
  EXPECT_EQ(s.code(), Code::kInvalidArgs);
  EXPECT_NE(s.message().find("row.entry: 1.5"), std::string::npos) << s.message();
  EXPECT_TRUE(ValueFromJson(Json::parse("1152921504606846976"), Type::kInt, "x", &v).ok());
  EXPECT_EQ(v.int_value(), 1152921504606846976LL);
  EXPECT_EQ(ValueFromJson(Json::parse("18446744073709551615"), Type::kInt, "x", &v).code(),
            Code::kInvalidArgs);
  s = ValueFromJson(Json::parse("\"a\\u0000b\""), Type::kStr, "row.path", &v);
  EXPECT_EQ(s.code(), Code::kInvalidArgs);
  EXPECT_NE(s.message().find("NUL"), std::string::npos);
  EXPECT_EQ(ValueFromJson(Json::parse("\"1\""), Type::kInt, "x", &v).code(), Code::kInvalidArgs);
  EXPECT_EQ(ValueFromJson(Json::parse("1"), Type::kBool, "x", &v).code(), Code::kInvalidArgs);
  EXPECT_TRUE(ValueFromJson(Json::parse("3"), Type::kNum, "x", &v).ok());
  EXPECT_EQ(v.type(), Type::kNum);
  EXPECT_TRUE(ValueFromJson(Json::parse("{\"a\":[1,2]}"), Type::kJson, "x", &v).ok());
  EXPECT_EQ(v.text(), "{\"a\":[1,2]}");
}

TEST(Values, UnsafeIntsGoToJsAsStrings) {
  std::string out;
  Value::Int(9007199254740993LL).AppendJson(&out, true);
  EXPECT_EQ(out, "\"9007199254740993\"");
  out.clear();
  Value::Int(9007199254740991LL).AppendJson(&out, true);
  EXPECT_EQ(out, "9007199254740991");
  out.clear();
  AppendJsonString("a\"\\\n\x01😀", &out);
  EXPECT_EQ(out, "\"a\\\"\\\\\\n\\u0001😀\"");
}

// An int's value and a num's bits share one slot (a Value is 24 bytes in
// wasm32): each accessor still reads as the two fields did, whatever the
// value was before.
TEST(Values, OneSlotReadsAsTwoFields) {
  const Value n = Value::Num(-2.5);
  EXPECT_EQ(n.num_value(), -2.5);
  EXPECT_EQ(n.int_value(), 0);
  EXPECT_FALSE(n.bool_value());
  const Value i = Value::Int(-7);
  EXPECT_EQ(i.int_value(), -7);
  EXPECT_EQ(i.num_value(), 0.0);
  EXPECT_TRUE(Value::Bool(true).bool_value());
  EXPECT_EQ(Value::Bool(true).num_value(), 0.0);
  EXPECT_TRUE(std::signbit(Value::Num(-0.0).num_value()) == false);  // -0 stored as 0
  EXPECT_EQ(Value::Num(1.0), Value::Num(1.0));
  EXPECT_NE(Value::Num(1.0), Value::Int(1));
  const double nan = std::nan("");
  EXPECT_NE(Value::Num(nan), Value::Num(nan));  // as the double compares
  // A kept param made a str after a num reads as a new str.
  Value kept = Value::Num(3.75);
  kept.AssignStr("abc");
  EXPECT_EQ(kept, Value::Str("abc"));
  EXPECT_EQ(kept.int_value(), 0);
  EXPECT_EQ(kept.num_value(), 0.0);
  std::string json;
  Value::Num(0.1).AppendJson(&json);
  EXPECT_EQ(json, "0.1");
}

TEST(Schema, TablesRefuseJsonKeysAndUnknownColumns) {
  TableSchema t;
  auto parse = [&](const char* text) { return ParseTableSchema(Json::parse(text), "table", &t); };
  EXPECT_TRUE(
      parse(
          R"({"table":"a/b","columns":{"id":"str","n":"int"},"key":["id"],"indexes":{"byN":["n"]}})")
          .ok());
  ASSERT_EQ(t.indexes.size(), 1u);
  EXPECT_EQ(t.indexes[0].columns, (std::vector<int>{1, 0}));  // every index ends with the key
  EXPECT_EQ(parse(R"({"table":"a/b","columns":{"id":"json"},"key":["id"]})").code(),
            Code::kInvalidArgs);
  EXPECT_EQ(parse(R"({"table":"a/b","columns":{"id":"str"},"key":["nope"]})").code(),
            Code::kInvalidArgs);
  EXPECT_EQ(parse(R"({"table":"a/b","columns":{"id":"float"},"key":["id"]})").code(),
            Code::kInvalidArgs);
  EXPECT_EQ(parse(R"({"table":"_meta","columns":{"id":"str"},"key":["id"]})").code(),
            Code::kInvalidArgs);
  Status s = parse(
      R"({"table":"a/b","columns":{"id":"str","m":"json"},"key":["id"],"indexes":{"byM":["m"]}})");
  EXPECT_EQ(s.code(), Code::kInvalidArgs);
  EXPECT_NE(s.message().find("\"m\""), std::string::npos) << s.message();
}

// Each error of a table's definition names where it is in the definition,
// as "<where>.<path>", and the name or value it refuses.
TEST(Schema, ErrorsNameTheirPlace) {
  TableSchema t;
  auto message = [&](const char* text) {
    Status s = ParseTableSchema(Json::parse(text), "owner.table", &t);
    EXPECT_EQ(s.code(), Code::kInvalidArgs) << text;
    return s.message();
  };
  EXPECT_EQ(message(R"({"table":"_a/b","columns":{"id":"str"},"key":["id"]})"),
            "owner.table.table (type of \"_a/b\"): \"_a\" is not a valid name: a leading _ is "
            "kept for the store's own tables");
  EXPECT_EQ(message(R"({"table":"a/b\"c","columns":{"id":"str"},"key":["id"]})"),
            "owner.table.table (name of \"a/b\\\"c\"): \"b\\\"c\" is not a valid name: it holds a "
            "double quote");
  EXPECT_EQ(message(R"({"table":"h:_x/b","columns":{"id":"str"},"key":["id"]})"),
            "owner.table.table (type of \"h:_x/b\"): \"_x\" is not a valid name: a leading _ is "
            "kept for the store's own tables");
  EXPECT_EQ(message(R"({"table":"a/b","columns":{"id":"str","_c":"int"},"key":["id"]})"),
            "owner.table.columns._c: \"_c\" is not a valid name: a leading _ is kept for the "
            "store's own tables");
  EXPECT_EQ(message(R"({"table":"a/b","columns":{"id":"str","N":"int","n":"int"},"key":["id"]})"),
            "owner.table.columns: columns \"n\" and \"N\" differ only in letter case, which "
            "SQLite does not tell apart");
  EXPECT_EQ(message(R"({"table":"a/b","columns":{"id":"str","c":"float"},"key":["id"]})"),
            "owner.table.columns.c: unknown column type \"float\" (use str, int, bool, num, json "
            "or vector)");
  EXPECT_EQ(message(R"({"table":"a/b","columns":{"id":"str","c":{"t":1}},"key":["id"]})"),
            "owner.table.columns.c: unknown column type null (use str, int, bool, num, json or "
            "vector)");
  EXPECT_EQ(
      message(R"({"table":"a/b","columns":{"id":"str","c":{"type":"int","optional":1}},"key":["id"]})"),
      "owner.table.columns.c.optional: not a bool");
  EXPECT_EQ(
      message(R"({"table":"a/b","columns":{"id":"str","c":{"type":"int","default":"x"}},"key":["id"]})")
          .rfind("owner.table.columns.c.default", 0),
      0u);
  EXPECT_EQ(message(R"({"table":"a/b","columns":{"id":"str","n":"int"},"key":["n","nope"]})"),
            "owner.table.key[1]: unknown column \"nope\" in table \"a/b\"");
  EXPECT_EQ(message(R"({"table":"a/b","columns":{"id":"str","n":"num"},"key":["id"],)"
                    R"("indexes":{"byN":["id","n"]}})"),
            "owner.table.indexes.byN[1]: column \"n\" is num; keys and indexes take only str "
            "and int columns");
  EXPECT_EQ(message(R"({"table":"a/b","columns":{"id":"str"},"key":["id"],"indexes":{"by:x":["id"]}})"),
            "owner.table.indexes.by:x: \"by:x\" is not a valid name: \":\" separates the parts "
            "of a table's name");
  EXPECT_EQ(message(R"({"table":"a/b","columns":{"id":"str"},"key":["id"],"indexes":{"byX":[]}})"),
            "owner.table.indexes.byX: an index is a non-empty list of columns");
  EXPECT_EQ(message(R"({"table":"a/b","columns":{"id":"str"},"key":["id"],"indexes":{"byX":["id","id"]}})"),
            "owner.table.indexes.byX: column listed twice");
}

TEST(Status, CodesHaveTheirStableStrings) {
  EXPECT_STREQ(CodeString(Code::kInvalidArgs), "invalid/args");
  EXPECT_STREQ(CodeString(Code::kReadAfterBulk), "read_after_bulk");
  EXPECT_STREQ(CodeString(Code::kSyncDiverged), "sync/diverged");
  EXPECT_EQ(Status::Fenced("x").ToString(), "fenced: x");
}

}  // namespace
}  // namespace onestore
