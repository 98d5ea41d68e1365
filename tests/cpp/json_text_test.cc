// Checks the one reader of JSON text that enters the core (values/json_text.h)
// and the JSON that leaves it for JS: nesting is refused at the limit, not
// trapped; objects with many keys are read in linear time with their order
// kept; repeated keys merge as JSON.parse merges them; a json cell holding an
// int beyond 2^53 (or a string) goes to JS as JSON text; NaN and the
// infinities are printed as such in messages; a top-level member can be
// skipped (a record's ops, for the log); the string reader of the DOM-free
// readers (ReadJsonString) decodes what JSON.parse decodes and refuses, under
// its rules, what it must.
#include "values/json_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <limits>
#include <string>

#include "values/value.h"

namespace onestore {
namespace {

TEST(JsonTextTest, ReadsJsonAsNlohmannDoes) {
  Json j;
  ASSERT_TRUE(ParseJsonText(R"({"a":[1,-2,1.5,"x",true,null,{}],"b":18446744073709551615})", "t", &j)
                  .ok());
  EXPECT_EQ(j.dump(), R"({"a":[1,-2,1.5,"x",true,null,{}],"b":18446744073709551615})");
  EXPECT_TRUE(j["b"].is_number_unsigned());
  ASSERT_TRUE(ParseJsonText("  7 ", "t", &j).ok());
  EXPECT_EQ(j, Json(7));
}

// AppendJsonText writes what dump() writes, but for \b and \f, which it
// writes as \u0008 and \u000c; either way the text reads back as the value.
TEST(JsonTextTest, AppendJsonTextWritesWhatDumpWritesAndReadsBackAsTheValue) {
  const std::string text =
      R"({"a":[1,-2,1.5,-0.0,1e+300,"x",true,false,null,{},[]],"b":18446744073709551615,)"
      R"("c":-9223372036854775808,"long string past eight bytes":"quote \" backslash \\ )"
      R"(newline \n tab \t ctl \u0001 \u001f del \u007f é 😀 end","":{"nested":[[[]],{"k":"v"}]},)"
      R"("z":"","after":2.5e-7})";
  Json j;
  ASSERT_TRUE(ParseJsonText(text, "t", &j).ok());
  std::string out = "prefix:";
  AppendJsonText(j, &out);
  EXPECT_EQ(out, "prefix:" + j.dump());
  Json back;
  ASSERT_TRUE(ParseJsonText(out.substr(7), "t", &back).ok());
  EXPECT_EQ(back, j);

  for (const char* one : {"\"\"", "0", "-1", "0.1", "true", "null", "[]", "{}", "\"abcdefgh\""}) {
    ASSERT_TRUE(ParseJsonText(one, "t", &j).ok());
    std::string s;
    AppendJsonText(j, &s);
    EXPECT_EQ(s, j.dump()) << one;
  }
  ASSERT_TRUE(ParseJsonText(R"(["\b\f"])", "t", &j).ok());
  out.clear();
  AppendJsonText(j, &out);
  EXPECT_EQ(out, R"(["\u0008\u000c"])");
  ASSERT_TRUE(ParseJsonText(out, "t", &back).ok());
  EXPECT_EQ(back, j);
  // NaN and the infinities are not JSON: null, as dump() writes them.
  out.clear();
  AppendJsonText(Json::array({std::nan(""), std::numeric_limits<double>::infinity()}), &out);
  EXPECT_EQ(out, "[null,null]");
}

TEST(JsonTextTest, MalformedTextIsInvalidArgsNamingWhatAndTheText) {
  Json j;
  Status s = ParseJsonText("[1,2", "ops", &j);
  EXPECT_EQ(s.code(), Code::kInvalidArgs);
  EXPECT_EQ(s.message(), "ops: not valid JSON: [1,2");
  EXPECT_EQ(ParseJsonText("[1] x", "ops", &j).code(), Code::kInvalidArgs);
  EXPECT_EQ(ParseJsonText("", "ops", &j).code(), Code::kInvalidArgs);
}

TEST(JsonTextTest, NestingIsRefusedAtTheLimitWhileReading) {
  auto nested = [](int depth, char open, char close) {
    return std::string(static_cast<size_t>(depth), open) + std::string(static_cast<size_t>(depth), close);
  };
  Json j;
  ASSERT_TRUE(ParseJsonText(nested(kMaxJsonDepth, '[', ']'), "v", &j).ok());
  EXPECT_EQ(j.dump().size(), 2u * kMaxJsonDepth);
  Status s = ParseJsonText(nested(kMaxJsonDepth + 1, '[', ']'), "v", &j);
  EXPECT_EQ(s.code(), Code::kInvalidArgs);
  EXPECT_EQ(s.message(), "v: JSON nested deeper than 1000 levels of arrays and objects");
  // A million levels, never closed: refused at the limit, not read to the end.
  EXPECT_EQ(ParseJsonText(std::string(1000000, '['), "v", &j).code(), Code::kInvalidArgs);
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += R"({"a":)";
  objects += "1" + std::string(100000, '}');
  s = ParseJsonText(objects, "v", &j);
  EXPECT_NE(s.message().find("nested deeper"), std::string::npos) << s.message();
  bool too_deep = false;
  EXPECT_FALSE(TryParseJsonText("[[[1]]]", 2, &j, &too_deep));
  EXPECT_TRUE(too_deep);
  EXPECT_FALSE(TryParseJsonText("[[1]", 2, &j, &too_deep));
  EXPECT_FALSE(too_deep);
}

TEST(JsonTextTest, RepeatedKeysMergeTheLastValueWinsAtThePlaceOfTheFirst) {
  Json j;
  ASSERT_TRUE(ParseJsonText(R"({"a":1,"b":2,"a":{"x":[3]},"c":4})", "t", &j).ok());
  EXPECT_EQ(j.dump(), R"({"a":{"x":[3]},"b":2,"c":4})");
  // With many keys (the hashed check).
  std::string text = "{";
  for (int i = 0; i < 20; ++i) text += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  text += R"("k3":"last"})";
  ASSERT_TRUE(ParseJsonText(text, "t", &j).ok());
  EXPECT_EQ(j.size(), 20u);
  EXPECT_EQ(j["k3"], "last");
  EXPECT_EQ(j.begin().key(), "k0");
  EXPECT_EQ(std::next(j.begin(), 3).key(), "k3");
}

// 200,000 keys, out of order: read whole, in their order, written back
// byte for byte. (nlohmann's own parse into ordered_json looked every key up
// in the keys before it: this took minutes. There is no timed assertion
// here; npm run bench has the figures.)
TEST(JsonTextTest, AnObjectWithManyKeysIsReadInLinearTimeWithItsOrder) {
  auto object_of = [](int n) {
    std::string text = "{";
    for (int i = 0; i < n; ++i) {
      if (i) text += ",";
      text += "\"k" + std::to_string((i * 7919) % n) + "\":" + std::to_string(i) + ".5";
    }
    return text + "}";
  };
  Json j;
  const std::string big = object_of(200000);
  ASSERT_TRUE(ParseJsonText(big, "t", &j).ok());
  ASSERT_EQ(j.size(), 200000u);
  EXPECT_EQ(j.begin().key(), "k0");
  EXPECT_EQ(std::next(j.begin()).key(), "k7919");
  EXPECT_EQ(j.dump(), big);
}

// TryParseJsonTextWithout: how the log reads a record's head without its
// ops (history/log.cc), in place of Json::parse with a callback.
TEST(JsonTextTest, ASkippedTopLevelMemberIsReadAndLeftOutWhateverItHolds) {
  Json j;
  bool too_deep = false;
  ASSERT_TRUE(TryParseJsonTextWithout(
      R"({"seq":3,"ops":[{"op":"put","row":{"ops":1,"a":[[[]]]}}],"actor":{"ops":"kept"},"ops":7,"at":9})",
      "ops", kMaxJsonDepth, &j, &too_deep));
  // Only the top level's "ops" go, each of them; a nested "ops" stays.
  EXPECT_EQ(j.dump(), R"({"seq":3,"actor":{"ops":"kept"},"at":9})");
  // A skipped scalar, and a skipped member last.
  ASSERT_TRUE(TryParseJsonTextWithout(R"({"ops":null,"a":1,"ops":"x"})", "ops", kMaxJsonDepth, &j,
                                      &too_deep));
  EXPECT_EQ(j.dump(), R"({"a":1})");
  // Not an object: nothing to skip, read as it is.
  ASSERT_TRUE(TryParseJsonTextWithout(R"(["ops",{"ops":1}])", "ops", kMaxJsonDepth, &j, &too_deep));
  EXPECT_EQ(j.dump(), R"(["ops",{"ops":1}])");
  // The skipped value is not built, so its nesting is not limited; the rest is.
  const std::string deep(50, '[');
  const std::string closed(50, ']');
  ASSERT_TRUE(TryParseJsonTextWithout("{\"ops\":" + deep + closed + ",\"a\":2}", "ops", 10, &j,
                                      &too_deep));
  EXPECT_EQ(j.dump(), R"({"a":2})");
  EXPECT_FALSE(TryParseJsonTextWithout("{\"a\":" + deep + closed + "}", "ops", 10, &j, &too_deep));
  EXPECT_TRUE(too_deep);
  // Malformed text inside the skipped value still fails the whole text.
  EXPECT_FALSE(TryParseJsonTextWithout(R"({"ops":[1,},"a":1})", "ops", kMaxJsonDepth, &j, &too_deep));
  EXPECT_FALSE(too_deep);
}

TEST(JsonTextTest, UnsafeIntsAreFoundOutsideStrings) {
  EXPECT_FALSE(JsonTextHasUnsafeInt(R"({"a":[9007199254740991,-9007199254740991,1.5e300]})"));
  EXPECT_TRUE(JsonTextHasUnsafeInt("9007199254740992"));
  EXPECT_TRUE(JsonTextHasUnsafeInt(R"({"a":[1,-9007199254740993]})"));
  EXPECT_TRUE(JsonTextHasUnsafeInt("[18446744073709551615]"));
  EXPECT_FALSE(JsonTextHasUnsafeInt(R"(["12345678901234567890","a\"99999999999999999"])"));
  EXPECT_FALSE(JsonTextHasUnsafeInt("[1.0e20,12345678901234567.5]"));
}

TEST(JsonTextTest, AJsonCellGoesToJsAsJsonTextWhenJsonParseWouldMisreadIt) {
  auto for_js = [](const Value& v) {
    std::string out;
    v.AppendJson(&out, /*unsafe_int_as_string=*/true);
    return out;
  };
  EXPECT_EQ(for_js(Value::JsonText(R"({"a":[1,2]})")), R"({"a":[1,2]})");
  EXPECT_EQ(for_js(Value::JsonText(R"({"big":1152921504606846977})")),
            R"("{\"big\":1152921504606846977}")");
  EXPECT_EQ(for_js(Value::JsonText(R"("text")")), R"("\"text\"")");
  // Elsewhere (the outbox, SQL) json stays verbatim.
  std::string raw;
  Value::JsonText(R"({"big":1152921504606846977})").AppendJson(&raw);
  EXPECT_EQ(raw, R"({"big":1152921504606846977})");
}

TEST(JsonTextTest, MessagesPrintNanAndTheInfinitiesAsSuch) {
  EXPECT_EQ(Value::Num(std::numeric_limits<double>::infinity()).Describe(), "Infinity");
  EXPECT_EQ(Value::Num(-std::numeric_limits<double>::infinity()).Describe(), "-Infinity");
  EXPECT_EQ(Value::Num(std::nan("")).Describe(), "NaN");
  Json j = Json::object();
  j["x"] = std::nan("");
  j["y"] = Json::array({1.5, -std::numeric_limits<double>::infinity()});
  EXPECT_EQ(DescribeJson(j), R"({"x":NaN,"y":[1.5,-Infinity]})");
  // (JSON text cannot spell them, and nlohmann refuses 1e999; a Json built
  // in C++ can hold them.)
  Value v;
  Status s = ValueFromJson(Json(std::numeric_limits<double>::infinity()), Type::kNum,
                           "ops[0].row.x", &v);
  EXPECT_EQ(s.message(), "ops[0].row.x: Infinity is not a finite num");
  Json bad;
  EXPECT_EQ(ParseJsonText("[1e999]", "ops", &bad).code(), Code::kInvalidArgs);
  // Deep values are described within their 80 characters, not recursed into.
  Json deep = Json::array();
  Json* at = &deep;
  for (int i = 0; i < 100000; ++i) {
    at->push_back(Json::array());
    at = &(*at)[0];
  }
  EXPECT_EQ(DescribeJson(deep), std::string(77, '[') + "...");
}

// What ReadJsonString answers for the text after an opening quote: the
// decoded text, or "(refused)".
std::string ReadString(const std::string& body, JsonStringRules rules) {
  const char* p = body.data();
  std::string out;
  if (!ReadJsonString(&p, body.data() + body.size(), rules, &out)) return "(refused)";
  // It stops just past the closing quote (the last character of every
  // string read here).
  EXPECT_EQ(p, body.data() + body.size());
  return out;
}

TEST(JsonTextTest, TheStringReaderDecodesEscapesAndChecksUtf8UnderItsRules) {
  const JsonStringRules strict;                 // fast_puts: \u declined, UTF-8 checked
  const JsonStringRules host{true, false};      // a Durable Object's answers
  EXPECT_EQ(ReadString(R"(plain")", strict), "plain");
  EXPECT_EQ(ReadString(R"(a\"b\\c\/d\b\f\n\r\te")", strict), "a\"b\\c/d\b\f\n\r\te");
  EXPECT_EQ(ReadString("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"", strict), "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  // \u: declined by the strict rules (the DOM path decodes it), decoded by
  // the host's, a surrogate pair joined into one code point.
  EXPECT_EQ(ReadString(R"(\u00e9")", strict), "(refused)");
  EXPECT_EQ(ReadString(R"(\u00e9\u20AC")", host), "\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(ReadString(R"(\ud83d\ude00")", host), "\xF0\x9F\x98\x80");
  EXPECT_EQ(ReadString(R"(\u0000")", host), std::string(1, '\0'));
  // A lone surrogate, a bad hex digit, a cut escape: refused.
  EXPECT_EQ(ReadString(R"(\ud83d")", host), "(refused)");
  EXPECT_EQ(ReadString(R"(\ude00")", host), "(refused)");
  EXPECT_EQ(ReadString(R"(\ud83d\u0041")", host), "(refused)");
  EXPECT_EQ(ReadString(R"(\u00g0")", host), "(refused)");
  EXPECT_EQ(ReadString(R"(\u00")", host), "(refused)");
  EXPECT_EQ(ReadString(R"(\x")", host), "(refused)");
  // A raw control character, a string without its end: refused by both.
  EXPECT_EQ(ReadString("a\nb\"", strict), "(refused)");
  EXPECT_EQ(ReadString("a\nb\"", host), "(refused)");
  EXPECT_EQ(ReadString("abc", strict), "(refused)");
  EXPECT_EQ(ReadString("abc\\", host), "(refused)");
  // Bytes that are not UTF-8 (a lone continuation, an overlong form, an
  // encoded surrogate, above U+10FFFF, a cut sequence): refused when
  // checked, passed through when not.
  for (const std::string bad : {"\x80", "\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82"}) {
    EXPECT_EQ(ReadString(bad + "\"", strict), "(refused)") << testing::PrintToString(bad);
    EXPECT_EQ(ReadString(bad + "\"", host), bad) << testing::PrintToString(bad);
  }
  EXPECT_EQ(Utf8SequenceLength("\xE2\x82\xAC", "\xE2\x82\xAC" + 3), 3);
  EXPECT_EQ(Utf8SequenceLength("\xE2\x82\xAC", "\xE2\x82\xAC" + 2), 0);
}

}  // namespace
}  // namespace onestore
