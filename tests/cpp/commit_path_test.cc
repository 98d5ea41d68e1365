// Checks the bulk commit path of issue 13's fourth step: the ops array of an
// outbox record written with a run's head and column names once
// (AppendOpsJson) is the text Op::AppendJson writes op by op, and the memory
// backend's secondary indexes (entries that point at committed rows) stay in
// step with the rows through replaced rows whose indexed values change,
// deletes, refused commits and rollbacks. Issue 13's fifth step: the memory
// backend's staged changes (a sorted vector while keys ascend, a map after)
// and the rows it takes from a put-only commit's ops leave the rows a model
// holds, through ascending runs, earlier keys, updates, deletes and bulk ops
// in one commit. Issue 13's eighth step: index entries that carry their first
// str cell's text keep the value order, nulls and ints included. Issue 13's
// tenth step: entries that carry the text's first 16 bytes as two numbers
// keep the byte order at the edges of those 16 bytes. Issue 13's eleventh
// step: a run of puts' record text, sized first and written in place, is
// still Op::AppendJson's, for every cell type and at the sizes' edges.
// Issue 13's thirteenth step: a binary batch counted before it is parsed
// (its list of ops allocated once) parses to the same ops, or the same
// refusal, at every length, and staged in pieces grows the list as a vector
// does. Issue 13's fourteenth step: the record the store and the memory
// backend share (no copy) is the one LastOps and the outbox give.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "binary_batch_writer.h"
#include "commit/store.h"
#include "schema/schema.h"
#include "values/json_text.h"
#include "writes/binary_ops.h"
#include "writes/writes.h"

namespace onestore {
namespace {

std::shared_ptr<const TableSchema> ParseSchema(const std::string& text) {
  auto t = std::make_shared<TableSchema>();
  Status s = ParseTableSchema(Json::parse(text), "test", t.get());
  EXPECT_TRUE(s.ok()) << s.ToString();
  return t;
}

// A put of `row` into table `t`, as ParseBinaryOps makes one.
Op PutOp(std::shared_ptr<const TableSchema> t, Row row) {
  Op op;
  op.kind = OpKind::kPut;
  op.table = std::move(t);
  op.row = std::move(row);
  return op;
}

TEST(AppendOpsJsonTest, WritesTheTextOpByOpAppendJsonWritesForAMixOfOpsAndTables) {
  auto a = ParseSchema(
      R"({"op":"table","table":"t/a","columns":{"id":"str","n":{"type":"num","optional":true},)"
      R"("b":{"type":"bool","optional":true},"j":{"type":"json","optional":true},"i":"int"},"key":["id"]})");
  auto b = ParseSchema(
      R"({"op":"table","table":"t/b\u00e9","columns":{"k\u00fc":"int","v":"str"},"key":["k\u00fc"]})");
  std::vector<Op> ops;
  ops.push_back(PutOp(a, {Value::Str("x\"\\\x01\xc3\xa9"), Value::Num(-0.0), Value::Bool(true),
                        Value::JsonText(R"({"a":[1,2]})"), Value::Int(9007199254740993)}));
  ops.push_back(PutOp(a, {Value::Str(""), Value(), Value(), Value(), Value::Int(-5)}));
  ops.push_back(PutOp(b, {Value::Int(1), Value::Str("\xf0\x9f\x98\x80")}));
  Op del;
  del.kind = OpKind::kDelete;
  del.table = a;
  del.key = {Value::Str("gone")};
  ops.push_back(std::move(del));
  ops.push_back(PutOp(a, {Value::Str("y"), Value::Num(1.5), Value::Bool(false), Value::JsonText("null"),
                        Value::Int(0)}));
  ops.push_back(PutOp(b, {Value::Int(2), Value::Str("w")}));
  ops.push_back(PutOp(a, {Value::Str("z"), Value::Num(1e300), Value(), Value(), Value::Int(7)}));

  std::string want = "[";
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i) want.push_back(',');
    ops[i].AppendJson(&want);
  }
  want.push_back(']');
  std::string got;
  AppendOpsJson(ops, &got);
  EXPECT_EQ(got, want);
  std::string none;
  AppendOpsJson({}, &none);
  EXPECT_EQ(none, "[]");
}

// Issue 13's eleventh step: AppendOpsJson writes a run of puts with its
// texts sized first and then written in place (AppendPutRun), no longer
// through Value::AppendJson; the text must stay the one Op::AppendJson
// writes, for every cell type and at the edges of the sizes: ints at each
// power of ten and the int64 limits, strs that need every escape, unicode,
// nums and vectors (whose texts the run writer keeps aside), nulls, runs
// of one put, runs first in the list, after another op and of two tables in
// turn, and non-ASCII names.
TEST(AppendOpsJsonTest, TheRunWriterWritesOpByOpAppendJsonsTextForEveryCellAndSize) {
  auto a = ParseSchema(
      R"({"op":"table","table":"t/a\u00e9","columns":{"id":"str",)"
      R"("i":{"type":"int","optional":true},"n":{"type":"num","optional":true},)"
      R"("b":{"type":"bool","optional":true},"j":{"type":"json","optional":true},)"
      R"("v":{"type":"vector","dims":2,"optional":true},"s\u00fc":{"type":"str","optional":true}},)"
      R"("key":["id"]})");
  auto b = ParseSchema(R"({"op":"table","table":"t/one","columns":{"k":"int"},"key":["k"]})");
  std::vector<Value> cells_i = {Value(), Value::Int(0), Value::Int(-1),
                                Value::Int(INT64_MIN), Value::Int(INT64_MAX),
                                Value::Int(9007199254740993LL), Value::Int(-9007199254740993LL)};
  for (int64_t p = 1, k = 0; k < 19; ++k, p *= 10) {
    for (int64_t d : {p - 1, p, p + 1}) {
      cells_i.push_back(Value::Int(d));
      cells_i.push_back(Value::Int(-d));
    }
  }
  const std::vector<Value> cells_n = {Value(), Value::Num(0), Value::Num(1.5), Value::Num(-1e300),
                                      Value::Num(3), Value::Num(0.1), Value::Num(5e-324)};
  std::vector<Value> cells_s = {
      Value(), Value::Str(""), Value::Str("plain"), Value::Str("\"\\\n\r\t\b\f\x01\x1f"),
      Value::Str("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"), Value::Str(std::string(300, 'x') + "\""),
      Value::Str("src/dir3/file12345.ts")};
  // Each char that needs an escape, at each edge of the eight-byte words
  // JsonStringSize reads plain text in.
  for (const char* ch : {"\"", "\\", "\x1f", "\x01", "\n", " ", "\x7f", "\xc3\xa9"}) {
    for (size_t at : {0, 1, 7, 8, 9, 15, 16, 17, 23}) {
      cells_s.push_back(Value::Str(std::string(at, 'a') + ch + std::string(24 - at, 'b')));
    }
  }
  // JsonStringSize (which both sides below use) against a byte-by-byte
  // escaper of the record's rules.
  for (const Value& v : cells_s) {
    if (v.is_null()) continue;
    std::string want = "\"";
    for (unsigned char c : v.text()) {
      static const char kHex[] = "0123456789abcdef";
      if (c == '"' || c == '\\') {
        want += {'\\', static_cast<char>(c)};
      } else if (c == '\n' || c == '\r' || c == '\t') {
        want += {'\\', c == '\n' ? 'n' : c == '\r' ? 'r' : 't'};
      } else if (c < 0x20) {
        want += {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      } else {
        want.push_back(static_cast<char>(c));
      }
    }
    want.push_back('"');
    std::string got;
    AppendJsonString(v.text(), &got);
    ASSERT_EQ(got, want);
    ASSERT_EQ(JsonStringSize(v.text()), want.size());
  }
  const std::vector<Value> cells_j = {Value(), Value::JsonText("null"), Value::JsonText("\"s\""),
                                      Value::JsonText(R"({"a":[1,2.5,"\u0000"]})")};
  const std::vector<Value> cells_v = {Value(), Value::Vector(std::string(8, '\0')),
                                      Value::Vector(std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8))};
  std::mt19937 rng(13);
  auto pick = [&](const std::vector<Value>& from) { return from[rng() % from.size()]; };
  auto row_a = [&](int i) {
    return Row{Value::Str("k" + std::to_string(i)), pick(cells_i), pick(cells_n),
               i % 3 ? Value::Bool(i % 2) : Value(), pick(cells_j), pick(cells_v), pick(cells_s)};
  };
  std::vector<std::vector<Op>> lists;
  for (int round = 0; round < 40; ++round) {
    std::vector<Op> ops;
    const int n = static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
      switch (rng() % 5) {
        case 0:
          ops.push_back(PutOp(b, {pick(cells_i).is_null() ? Value::Int(i) : pick(cells_i)}));
          break;
        case 1: {
          Op del;
          del.kind = OpKind::kDelete;
          del.table = a;
          del.key = {Value::Str("gone")};
          ops.push_back(std::move(del));
          break;
        }
        default:
          ops.push_back(PutOp(a, row_a(i)));
      }
    }
    lists.push_back(std::move(ops));
  }
  std::vector<Op> every;  // each value of each list once, in a long run
  for (size_t i = 0; i < std::max({cells_i.size(), cells_n.size(), cells_s.size()}); ++i) {
    every.push_back(PutOp(a, {Value::Str("e"), cells_i[i % cells_i.size()], cells_n[i % cells_n.size()],
                            Value::Bool(true), cells_j[i % cells_j.size()],
                            cells_v[i % cells_v.size()], cells_s[i % cells_s.size()]}));
  }
  lists.push_back(std::move(every));
  for (const std::vector<Op>& ops : lists) {
    std::string want = "{";
    want.push_back('[');
    for (size_t i = 0; i < ops.size(); ++i) {
      if (i) want.push_back(',');
      ops[i].AppendJson(&want);
    }
    want.push_back(']');
    std::string got = "{";  // appended after text, as the record's ops are
    AppendOpsJson(ops, &got);
    ASSERT_EQ(got, want);
  }
}

// Rows as the model keeps them: id -> (g, n).
using Model = std::map<std::string, std::pair<std::string, int64_t>>;

std::string PageRows(Store* st, const char* order) {
  std::string page;
  Status s = st->Page("t/rows", std::string(R"({"orderBy":)") + order + "}", 1000, "", &page);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return Json::parse(page)["rows"].dump();
}

std::string ModelRows(const Model& m, bool desc) {
  std::vector<std::tuple<std::string, int64_t, std::string>> rows;
  for (const auto& [id, v] : m) rows.emplace_back(v.first, v.second, id);
  std::sort(rows.begin(), rows.end());  // UTF-8 bytes sort in code-point order
  if (desc) std::reverse(rows.begin(), rows.end());
  Json out = Json::array();
  for (const auto& [g, n, id] : rows) out.push_back(Json::array({id, g, n}));
  return out.dump();
}

// A memory store holding the table t/rows (id, g, n; key id; index byG on
// g, n), declared and committed.
void OpenRowsTable(const char* id, std::unique_ptr<Store>* st) {
  OpenOptions o;
  o.backend = "memory";
  o.id = id;
  ASSERT_TRUE(Store::Open(o, st).ok());
  std::string out;
  ASSERT_TRUE((*st)->Declare(R"({"op":"table","table":"t/rows","columns":{"id":"str","g":"str",)"
                             R"("n":"int"},"key":["id"],"indexes":{"byG":["g","n"]}})",
                             &out)
                  .ok());
  ASSERT_TRUE((*st)->Commit(out, R"({"owner":"t"})", &out).ok());
}

TEST(MemoryIndexTest, AnIndexWalkAgreesWithTheRowsThroughReplacesDeletesAndRefusedCommits) {
  std::unique_ptr<Store> st;
  ASSERT_NO_FATAL_FAILURE(OpenRowsTable("index-test", &st));
  std::string out;
  const std::vector<std::string> groups = {"a", "b", "\xc3\xa9", "\xef\xbf\xbf", "\xf0\x9f\x98\x80",
                                           "a long group name past the short string size"};
  std::mt19937 rng(13);
  Model model;
  for (int commit = 0; commit < 60; ++commit) {
    Model next = model;
    Json ops = Json::array();
    const int n = 1 + static_cast<int>(rng() % 30);
    for (int k = 0; k < n; ++k) {
      std::string id = "r" + std::to_string(rng() % 50);
      if (rng() % 5 == 0) {
        ops.push_back({{"op", "delete"}, {"table", "t/rows"}, {"key", Json::array({id})}});
        next.erase(id);
      } else {
        std::string g = groups[rng() % groups.size()];
        int64_t v = static_cast<int64_t>(rng() % 7) - 3;
        ops.push_back({{"op", "put"}, {"table", "t/rows"}, {"row", {{"id", id}, {"g", g}, {"n", v}}}});
        next[id] = {g, v};
      }
    }
    // One commit in four ends with a put the store refuses: nothing of it lands.
    const bool refused = rng() % 4 == 0;
    if (refused) {
      ops.push_back({{"op", "put"}, {"table", "t/rows"}, {"row", {{"id", "bad"}, {"g", nullptr}, {"n", 1}}}});
    }
    Status s = st->Commit(ops.dump(), R"({"owner":"t"})", &out);
    ASSERT_EQ(s.ok(), !refused) << s.ToString();
    if (!refused) model = std::move(next);
    ASSERT_EQ(PageRows(st.get(), R"([["g","asc"],["n","asc"]])"), ModelRows(model, false))
        << "after commit " << commit;
    ASSERT_EQ(PageRows(st.get(), R"([["g","desc"],["n","desc"]])"), ModelRows(model, true))
        << "after commit " << commit;
  }
}

// Puts, updates and deletes rows of t/opt (an optional str g and an int n,
// indexed both ways) whose g is drawn from `groups`, walking both indexes
// against a model after each commit.
void CheckIndexOrder(const char* store_id, const std::vector<std::optional<std::string>>& groups,
                     unsigned seed) {
  OpenOptions o;
  o.backend = "memory";
  o.id = store_id;
  std::unique_ptr<Store> st;
  ASSERT_TRUE(Store::Open(o, &st).ok()) << store_id;
  std::string out;
  ASSERT_TRUE(st->Declare(R"({"op":"table","table":"t/opt","columns":{"id":"str",)"
                          R"("g":{"type":"str","optional":true},"n":"int"},"key":["id"],)"
                          R"("indexes":{"byG":["g","n"],"byN":["n","g"]}})",
                          &out)
                  .ok());
  ASSERT_TRUE(st->Commit(out, R"({"owner":"t"})", &out).ok());
  std::mt19937 rng(seed);
  // id -> (g, n)
  std::map<std::string, std::pair<std::optional<std::string>, int64_t>> model;
  auto want = [&](bool by_n) {
    std::vector<std::tuple<int64_t, std::optional<std::string>, int64_t, std::string>> rows;
    for (const auto& [id, v] : model) {
      // std::optional orders nullopt first, then by value: CompareValues's order.
      if (by_n) rows.emplace_back(v.second, v.first, 0, id);
      else rows.emplace_back(0, v.first, v.second, id);
    }
    std::sort(rows.begin(), rows.end());
    Json page = Json::array();
    for (const auto& [a, g, b, id] : rows) {
      page.push_back(Json::array({id, g ? Json(*g) : Json(nullptr), by_n ? a : b}));
    }
    return page.dump();
  };
  auto got = [&](const char* order) {
    std::string page;
    Status s = st->Page("t/opt", std::string(R"({"orderBy":)") + order + "}", 1000, "", &page);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return Json::parse(page)["rows"].dump();
  };
  for (int commit = 0; commit < 50; ++commit) {
    Json ops = Json::array();
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int k = 0; k < n; ++k) {
      const std::string id = "r" + std::to_string(rng() % 60);
      const auto& g = groups[rng() % groups.size()];
      const int64_t v = static_cast<int64_t>(rng() % 5) - 2;
      const unsigned r = rng() % 6;
      if (r == 0) {
        ops.push_back({{"op", "delete"}, {"table", "t/opt"}, {"key", Json::array({id})}});
        model.erase(id);
      } else if (r == 1 && model.count(id)) {
        ops.push_back({{"op", "update"}, {"table", "t/opt"}, {"key", Json::array({id})},
                       {"set", {{"g", {{"value", g ? Json(*g) : Json(nullptr)}}}}}});
        model[id].first = g;
      } else {
        ops.push_back({{"op", "put"}, {"table", "t/opt"},
                       {"row", {{"id", id}, {"g", g ? Json(*g) : Json(nullptr)}, {"n", v}}}});
        model[id] = {g, v};
      }
    }
    Status s = st->Commit(ops.dump(), R"({"owner":"t"})", &out);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(got(R"([["g","asc"],["n","asc"],["id","asc"]])"), want(false)) << "after commit " << commit;
    ASSERT_EQ(got(R"([["n","asc"],["g","asc"],["id","asc"]])"), want(true)) << "after commit " << commit;
  }
}

// Issue 13's eighth step: an index entry keeps its first column's text in
// place when that cell is a str (and compares it first), and the index is a
// multiset. The order must stay CompareValues's where the first column is an
// optional str (nulls, which have no text, sort first, beside strs short and
// long, equal ones ordered by the next column) and where it is an int (no
// entry has text), through rows whose indexed str changes to and from null,
// and deletes.
TEST(MemoryIndexTest, IndexesOnAnOptionalStrAndOnAnIntKeepTheValueOrderThroughNullsAndChanges) {
  CheckIndexOrder("index-text",
                  {std::nullopt, "", "a", "ab", "\xc3\xa9",
                   "a long group name past the short string size",
                   "a long group name past the short string size, longer"},
                  813);
}

// This step: an index entry carries its str's first 16 bytes as two
// big-endian numbers, compared before the bytes. The order must stay the
// bytes' (unsigned, then the shorter first) for texts that end inside the
// numbers or at their edges (7, 8, 9, 15, 16, 17 bytes), that tie through
// them and differ just past them, that differ at bytes 0, 7, 8 and 15, with
// bytes of 0x80 and up there (a signed compare would put them first) and
// with a byte 0x01 where a shorter text's padding is (a str holds no NUL).
TEST(MemoryIndexTest, AStrIndexKeepsTheByteOrderAtTheEdgesOfItsSixteenBytePrefix) {
  const std::string p16 = "0123456789abcdef";
  CheckIndexOrder(
      "index-prefix",
      {std::nullopt, "", "\x01", "a", "a\x01", "a\x01\x01",
       "abcdefg", "abcdefg\x01", "abcdefgh", "abcdefgh\x7f", "abcdefgh\xc3\xa9", "abcdefg\xc3\xa9",
       "\xc3\xa9", "\xf0\x9f\x98\x80", p16.substr(0, 15), p16.substr(0, 15) + "\xc3\xa9", p16,
       p16 + "\x01", p16 + "0", p16 + "\xc3\xa9", p16 + "01", p16 + "0\x7f",
       p16 + "0\xc3\xa9 past the short string size", p16.substr(0, 8) + "\xc3\xa9" + p16.substr(10)},
      1316);
}

// Issue 13, an index entry's third number: its str's bytes 16 to 23, compared
// before the rest. The same edges for the third number (texts of 23, 24 and
// 25 bytes, ties through it and a difference just past it, differences at
// bytes 16 and 23, bytes of 0x80 and up, a 0x01 where a shorter text's
// padding is), among texts that share their first 16 bytes as paths do.
TEST(MemoryIndexTest, AStrIndexKeepsTheByteOrderAtTheEdgesOfItsThirdEightBytes) {
  const std::string p24 = "src/dir3/file12345.ts/xy";
  CheckIndexOrder(
      "index-prefix-24",
      {std::nullopt, p24.substr(0, 16), p24.substr(0, 17), p24.substr(0, 16) + "\x01",
       p24.substr(0, 16) + "\xc3\xa9", p24.substr(0, 23), p24.substr(0, 23) + "\x01",
       p24.substr(0, 23) + "\xc3\xa9", p24, p24 + "\x01", p24 + "0", p24 + "\xc3\xa9", p24 + "01",
       p24 + "0\x7f", p24.substr(0, 16) + "\xf0\x9f\x98\x80" + p24.substr(20),
       p24.substr(0, 22) + "z" + p24.substr(23), "src/dir3/file12399.ts", "src/dir3/file1234.ts",
       "src/dir3/file12345.tsx", "src/dir3/file123"},
      1317);
}

TEST(MemoryStagingTest, AscendingRunsThenEarlierKeysUpdatesDeletesAndBulkOpsLeaveTheModelsRows) {
  std::unique_ptr<Store> st;
  ASSERT_NO_FATAL_FAILURE(OpenRowsTable("staging-test", &st));
  std::string out;
  const std::vector<std::string> groups = {"a", "b", "\xc3\xa9", "a long group name past the short string size"};
  std::mt19937 rng(1305);
  Model model;
  int next_id = 0;
  auto id_of = [](int i) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "r%05d", i);
    return std::string(buf);
  };
  int switched = 0;  // commits whose keys stopped ascending
  for (int commit = 0; commit < 120; ++commit) {
    Model next = model;
    Json ops = Json::array();
    const bool with_bulk = commit % 4 == 3;  // then the record is written after Apply
    const int n = 1 + static_cast<int>(rng() % 40);
    bool ascending = true;
    for (int k = 0; k < n; ++k) {
      const unsigned r = rng() % 12;
      const std::string g = groups[rng() % groups.size()];
      const int64_t v = static_cast<int64_t>(rng() % 9) - 4;
      if (r < 7 || next_id == 0) {  // a put of a new key: past every key so far
        std::string id = id_of(next_id++);
        ops.push_back({{"op", "put"}, {"table", "t/rows"}, {"row", {{"id", id}, {"g", g}, {"n", v}}}});
        next[id] = {g, v};
        continue;
      }
      std::string id = id_of(static_cast<int>(rng() % next_id));  // an earlier key
      ascending = false;
      if (r < 9) {
        ops.push_back({{"op", "put"}, {"table", "t/rows"}, {"row", {{"id", id}, {"g", g}, {"n", v}}}});
        next[id] = {g, v};
      } else if (r == 9 && next.count(id)) {
        ops.push_back({{"op", "update"}, {"table", "t/rows"}, {"key", Json::array({id})},
                       {"set", {{"n", {{"value", v}}}}}});
        next[id].second = v;
      } else if (r == 10) {
        ops.push_back({{"op", "delete"}, {"table", "t/rows"}, {"key", Json::array({id})}});
        next.erase(id);
      } else if (with_bulk) {
        ops.push_back({{"op", "update"}, {"table", "t/rows"}, {"where", {{"eq", Json::array({"g", g})}}},
                       {"set", {{"n", {{"value", v}}}}}});
        for (auto& [key, row] : next) {
          if (row.first == g) row.second = v;
        }
      }
    }
    if (!ascending) ++switched;
    // One commit in five ends with a put the store refuses: nothing of it lands.
    const bool refused = rng() % 5 == 0;
    if (refused) {
      ops.push_back({{"op", "put"}, {"table", "t/rows"}, {"row", {{"id", "bad"}, {"g", nullptr}, {"n", 1}}}});
    }
    Status s = st->Commit(ops.dump(), R"({"owner":"t"})", &out);
    ASSERT_EQ(s.ok(), !refused) << s.ToString();
    if (!refused) model = std::move(next);
    ASSERT_EQ(PageRows(st.get(), R"([["g","asc"],["n","asc"]])"), ModelRows(model, false))
        << "after commit " << commit;
    Json by_key = Json::array();
    for (const auto& [id, v] : model) by_key.push_back(Json::array({id, v.first, v.second}));
    ASSERT_EQ(PageRows(st.get(), R"([["id","asc"]])"), by_key.dump()) << "after commit " << commit;
  }
  EXPECT_GT(switched, 60);
  EXPECT_GT(next_id, 1000);
}

// Issue 13's fourteenth step: the store and the memory backend share each
// commit's record (no copy). LastOps gives the ops of the record the outbox
// holds, for a put-only commit (its record written before Apply) and one
// with an update (written after), and a record reads back unchanged after
// later commits.
TEST(MemoryStagingTest, LastOpsAndTheOutboxGiveEachCommitsRecordThroughLaterCommits) {
  std::unique_ptr<Store> st;
  ASSERT_NO_FATAL_FAILURE(OpenRowsTable("shared-record-test", &st));
  std::string out;
  std::vector<std::string> records;  // as read right after each commit
  for (int commit = 0; commit < 6; ++commit) {
    Json ops = Json::array();
    for (int k = 0; k < 50; ++k) {
      ops.push_back({{"op", "put"}, {"table", "t/rows"},
                     {"row", {{"id", "r" + std::to_string(commit * 100 + k)}, {"g", "g"}, {"n", k}}}});
    }
    if (commit % 2 == 1) {
      ops.push_back({{"op", "update"}, {"table", "t/rows"}, {"key", Json::array({"r0"})},
                     {"set", {{"n", {{"value", commit}}}}}});
    }
    ASSERT_TRUE(st->Commit(ops.dump(), R"({"owner":"t"})", &out).ok());
    std::vector<OutboxEntry> last;
    ASSERT_TRUE(st->ReadOutboxEntries(static_cast<int64_t>(records.size()) + 1, 1, &last).ok());
    ASSERT_EQ(last.size(), 1u);
    const std::string& r = last[0].record;
    const size_t at = r.find(",\"ops\":");
    ASSERT_NE(at, std::string::npos) << r;
    EXPECT_EQ(st->LastOps(), r.substr(at + 7, r.size() - at - 8)) << "commit " << commit;
    EXPECT_EQ(Json::parse(st->LastOps()).size(), ops.size());
    records.push_back(r);
  }
  std::vector<OutboxEntry> all;
  ASSERT_TRUE(st->ReadOutboxEntries(1, -1, &all).ok());  // after the declare's record
  ASSERT_EQ(all.size(), records.size());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].record, records[i]) << i;
}

std::string OpsText(const std::vector<Op>& ops, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) ops[i].AppendJson(&out);
  return out;
}

TEST(BinaryBatchTest, EveryPrefixGivesItsWholeRecordsOpsOrTheRefusalAndPiecesGrowTheListGeometrically) {
  Catalog catalog;
  catalog.Put(ParseSchema(R"({"op":"table","table":"t/a","version":1,"columns":{"id":{"type":"str"},)"
                          R"("n":{"type":"int"},"doc":{"type":"json","optional":true}},"key":["id"]})"));
  catalog.Put(ParseSchema(R"({"op":"table","table":"t/b","version":1,"columns":{"k":{"type":"int"},)"
                          R"("s":{"type":"str"}},"key":["k"],"indexes":{"byS":["s"]}})"));
  BatchWriter w;
  w.Shape("t/a", {"id", "n", "doc"});
  w.Put({{4, "x2"}, {3, "7"}, {6, R"({"lines":3})"}});
  w.Put({{4, "x1"}, {3, "300"}, {6, "[1,2]"}});  // keys out of order
  w.Put({{4, "x2"}, {3, "8"}, {6, "{ }"}});       // the same key again; JSON text the DOM path reads
  w.JsonOp(R"({"op":"delete","table":"t/a","key":["x1"]})");
  w.Shape("t/b", {"s", "k"});  // names in another order than the columns'
  w.Put({{4, "a long str past any short string's size"}, {3, "1"}});
  w.Put({{4, "\xc3\xa9t\xc3\xa9"}, {3, "100000"}});
  w.JsonOp(R"({"op":"update","table":"t/a","key":["x2"],"set":{"n":{"add":[{"col":"n"},1]}}})");
  w.Shape("t/a", {"id", "n"});
  w.Put({{4, "x3"}, {3, "0"}});
  const std::string& batch = w.bytes;

  std::vector<Op> all;
  {
    TableResolver tables(&catalog);
    Status s = ParseBinaryOps(batch, &tables, &all);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  ASSERT_EQ(all.size(), 8u);
  // Every length: the ops of the records it holds whole, or a refusal that
  // leaves the list as it was.
  for (size_t len = 1; len <= batch.size(); ++len) {
    TableResolver tables(&catalog);
    std::vector<Op> ops(2);  // ops staged before this batch stay
    Status s = ParseBinaryOps(std::string_view(batch).substr(0, len), &tables, &ops);
    size_t whole_ops = 0;
    bool boundary = len == 1;
    size_t records = 0;
    for (size_t e : w.ends) {
      if (e > len) break;
      ++records;
      boundary = boundary || e == len;
    }
    // Shape records hold no op: count the op records among the whole ones.
    for (size_t r = 0; r < records; ++r) whole_ops += batch[r == 0 ? 1 : w.ends[r - 1]] != 'S';
    if (boundary) {
      ASSERT_TRUE(s.ok()) << len << ": " << s.ToString();
      ASSERT_EQ(ops.size(), 2 + whole_ops) << len;
      std::vector<Op> got(std::make_move_iterator(ops.begin() + 2), std::make_move_iterator(ops.end()));
      EXPECT_EQ(OpsText(got, got.size()), OpsText(all, whole_ops)) << len;
    } else {
      EXPECT_EQ(s.code(), Code::kInvalidArgs) << len;
      EXPECT_NE(s.message().find("the binary batch is malformed at byte"), std::string::npos)
          << len << ": " << s.ToString();
      EXPECT_EQ(ops.size(), 2u) << len;
    }
  }

  // Staged in pieces (a tx.get between puts sends what was written since
  // the last as a batch of its own): the same ops, and the list grows as a
  // vector does (a capacity of exactly each piece's need would move every
  // op staged so far at each piece).
  std::vector<Op> pieces;
  TableResolver tables(&catalog);
  int grew = 0;
  for (int i = 0; i < 400; ++i) {
    BatchWriter piece;
    piece.Shape("t/a", {"id", "n"});
    char id[16];
    std::snprintf(id, sizeof id, "p%04d", (i * 7919) % 400);
    piece.Put({{4, id}, {3, std::to_string(i)}});
    const size_t capacity = pieces.capacity();
    Status s = ParseBinaryOps(piece.bytes, &tables, &pieces);
    ASSERT_TRUE(s.ok()) << s.ToString();
    grew += pieces.capacity() != capacity;
  }
  ASSERT_EQ(pieces.size(), 400u);
  EXPECT_LE(grew, 12);
  EXPECT_EQ(pieces[1].row[0].text(), "p0319");
}

// Parses the binary batch `bytes` into *ops (counting the ops that went the
// DOM way in *dom_ops), and checks they are the ops the DOM path reads from
// `json`, the same ops as wire JSON.
void ParseAsTheDomDoes(const Catalog& catalog, const std::string& bytes, const std::string& json,
                       std::vector<Op>* ops, size_t* dom_ops) {
  TableResolver tables(&catalog);
  Status s = ParseBinaryOps(bytes, &tables, ops, dom_ops);
  ASSERT_TRUE(s.ok()) << s.ToString();
  TableResolver json_tables(&catalog);
  std::vector<Op> want;
  Status j = ParseOps(Json::parse(json), &json_tables, &want);
  ASSERT_TRUE(j.ok()) << j.ToString();
  EXPECT_EQ(OpsText(*ops, ops->size()), OpsText(want, want.size()));
}

// A json column's number, string or bool is read straight into its text
// (7 December: each went the DOM way, about ten times a put's cost), the
// text the DOM path gives, and so are fractions and exponents written as
// dump() writes them; values whose text dump() would write otherwise (a \b
// escape, -0, 1.5e-7) still go the DOM way, to the same op.
TEST(BinaryBatchTest, AJsonColumnTakesNumbersStringsAndBoolsWithoutTheDomPath) {
  Catalog catalog;
  catalog.Put(ParseSchema(R"({"op":"table","table":"t/j","version":1,"columns":{"id":{"type":"str"},)"
                          R"("doc":{"type":"json","optional":true}},"key":["id"]})"));
  struct Case {
    int tag;
    std::string value;
    std::string stored;  // the cell's text; empty: the DOM path's
  };
  const std::vector<Case> fast = {
      {3, "0", "0"},
      {3, "9007199254740991", "9007199254740991"},
      {7, "12", "-12"},
      {1, "", "false"},
      {2, "", "true"},
      {4, "plain", "\"plain\""},
      {4, "q\"\\\n\t\x01/\xc3\xa9\xf0\x9f\x98\x80", "\"q\\\"\\\\\\n\\t\\u0001/\xc3\xa9\xf0\x9f\x98\x80\""},
      {4, std::string("a\0b", 3), "\"a\\u0000b\""},
      {6, R"({"lines":3})", R"({"lines":3})"},
      {5, "0.5", "0.5"},
      {5, "-0.25", "-0.25"},
      {6, R"({"score":0.14285714285714285,"big":1e+21,"tiny":-1.5e-07})",
       R"({"score":0.14285714285714285,"big":1e+21,"tiny":-1.5e-07})"},
      {6, "[0.1,-0.0,2.5e+300]", "[0.1,-0.0,2.5e+300]"},
      {0, "", ""},  // null: no cell
  };
  const std::vector<Case> dom = {
      {4, "a\bb", ""},    // dump writes \b, the fast writer \u0008
      {7, "0", ""},        // -0: dump writes 0
      {5, "1.5e-7", ""},   // dump writes 1.5e-07
      {6, "[1E5]", ""},    // dump writes 100000.0
      {6, "[0.10]", ""},   // dump writes 0.1
      {6, "[12345678901234567890]", ""},  // an integer past the fast reader's 18 digits
      {6, "{ }", ""},      // not dump's text
  };
  for (const auto* cases : {&fast, &dom}) {
    BatchWriter w;
    w.Shape("t/j", {"id", "doc"});
    std::string json = "[";
    for (size_t i = 0; i < cases->size(); ++i) {
      const Case& c = (*cases)[i];
      w.Put({{4, "k" + std::to_string(i)}, {c.tag, c.value}});
      std::string text;
      if (c.tag == 0) text = "null";
      if (c.tag == 1) text = "false";
      if (c.tag == 2) text = "true";
      if (c.tag == 3) text = c.value;
      if (c.tag == 7) text = "-" + c.value;
      if (c.tag == 4) AppendJsonString(c.value, &text);
      if (c.tag == 5 || c.tag == 6) text = c.value;
      json += std::string(i ? "," : "") + R"({"op":"put","table":"t/j","row":{"id":"k)" +
              std::to_string(i) + R"(","doc":)" + text + "}}";
    }
    json += "]";
    std::vector<Op> ops;
    size_t dom_ops = 0;
    ASSERT_NO_FATAL_FAILURE(ParseAsTheDomDoes(catalog, w.bytes, json, &ops, &dom_ops));
    ASSERT_EQ(ops.size(), cases->size());
    if (cases == &fast) {
      EXPECT_EQ(dom_ops, 0u);
      for (size_t i = 0; i < ops.size(); ++i) {
        const Value& cell = ops[i].row[1];
        if (fast[i].stored.empty()) {
          EXPECT_TRUE(cell.is_null()) << i;
        } else {
          EXPECT_EQ(cell.text(), fast[i].stored) << i;
        }
      }
    } else {
      EXPECT_EQ(dom_ops, dom.size());
    }
  }
}

// An update or a delete by key (a 'J' record: the JS package writes them
// as wire JSON) is read by the wire reader, not the DOM (7 December: each
// went the DOM way, 3 to 5 times a put's commit cost), to the DOM path's
// op; what the wire reader does not take (an expression, an unknown
// column) still goes the DOM way, to the same op or the same refusal.
TEST(BinaryBatchTest, UpdatesAndDeletesByKeyInABatchAreReadWithoutTheDomPath) {
  Catalog catalog;
  catalog.Put(ParseSchema(R"({"op":"table","table":"t/a","version":1,"columns":{"id":{"type":"str"},)"
                          R"("n":{"type":"int"},"doc":{"type":"json","optional":true}},"key":["id"]})"));
  const std::vector<std::string> fast = {
      R"({"op":"update","table":"t/a","key":["x1"],"set":{"n":{"value":-5},"doc":{"value":{"s":0.5}}}})",
      R"({"op":"update","table":"t/a","key":["x2"],"set":{"doc":{"value":null}}})",
      R"({"op":"delete","table":"t/a","key":["x3"]})",
      R"({"op":"put","table":"t/a","row":{"id":"x4","n":1,"doc":"text"}})",
      R"({"op":"delete","table":"t/a","key":["x3"]} )",  // a space after it
  };
  const std::vector<std::string> dom = {
      R"({"op":"update","table":"t/a","key":["x1"],"set":{"n":{"add":[{"col":"n"},1]}}})",
      R"({"op":"update","table":"t/a","where":{"eq":["n",1]},"set":{"n":{"value":2}}})",
  };
  BatchWriter w;
  std::string json = "[";
  for (const auto* list : {&fast, &dom}) {
    for (const std::string& op : *list) {
      w.JsonOp(op);
      json += (json.size() > 1 ? "," : "") + op;
    }
  }
  json += "]";
  std::vector<Op> ops;
  size_t dom_ops = 0;
  ASSERT_NO_FATAL_FAILURE(ParseAsTheDomDoes(catalog, w.bytes, json, &ops, &dom_ops));
  EXPECT_EQ(dom_ops, 2u);  // the expression and the update by where

  // An update of an unknown column: the DOM path's refusal, word for word.
  for (const std::string op :
       {R"({"op":"update","table":"t/a","key":["x1"],"set":{"nope":{"value":1}}})",
        R"({"op":"delete","table":"t/a","key":[1]})"}) {
    BatchWriter bad;
    bad.JsonOp(op);
    std::vector<Op> got;
    TableResolver t1(&catalog);
    Status b = ParseBinaryOps(bad.bytes, &t1, &got);
    std::vector<Op> dom_got;
    TableResolver t2(&catalog);
    Status d = ParseOps(Json::parse("[" + op + "]"), &t2, &dom_got);
    EXPECT_FALSE(b.ok()) << op;
    EXPECT_EQ(b.ToString(), d.ToString()) << op;
    EXPECT_TRUE(got.empty());
  }
}

// A batch of one-byte records (puts of a shape without names) reserves at
// most an Op per 3 bytes (the shortest put a table takes) before its first
// put is refused: an Op per byte was three times what a batch of real puts
// of its size reserves (the binops fuzz target's note, docs/reliability.md).
TEST(BinaryBatchTest, ABatchOfOneByteRecordsReservesAtMostAnOpPerThreeBytes) {
  Catalog catalog;
  catalog.Put(ParseSchema(R"({"op":"table","table":"t/a","version":1,"columns":{"id":{"type":"str"},)"
                          R"("n":{"type":"int"}},"key":["id"]})"));
  BatchWriter w;
  w.Shape("t/a", {});
  const size_t puts = 200000;
  w.bytes.append(puts, 'P');
  TableResolver tables(&catalog);
  std::vector<Op> ops;
  Status s = ParseBinaryOps(w.bytes, &tables, &ops);
  EXPECT_EQ(s.code(), Code::kInvalidArgs) << s.ToString();  // a put without its key
  EXPECT_TRUE(ops.empty());
  EXPECT_LE(ops.capacity(), w.bytes.size() / 3 + 1);
  // A batch of real puts, the shortest a table takes among them ('P', a
  // tag, a byte), is still reserved once, whole.
  catalog.Put(ParseSchema(R"({"op":"table","table":"t/i","version":1,"columns":{"k":{"type":"int"}},"key":["k"]})"));
  BatchWriter real;
  real.Shape("t/a", {"id", "n"});
  for (int i = 0; i < 500; ++i) real.Put({{4, "k" + std::to_string(i)}, {3, std::to_string(i)}});
  real.Shape("t/i", {"k"});
  for (int i = 0; i < 500; ++i) real.Put({{3, std::to_string(i % 128)}});
  std::vector<Op> got;
  TableResolver both(&catalog);
  Status r = ParseBinaryOps(real.bytes, &both, &got);
  ASSERT_TRUE(r.ok()) << r.ToString();
  EXPECT_EQ(got.size(), 1000u);
  EXPECT_EQ(got.capacity(), 1000u);
}

}  // namespace
}  // namespace onestore
