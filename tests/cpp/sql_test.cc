// Checks the SQL compilers (query/sql.h, writes/sql.h): identifier quoting,
// where trees, ORDER BY and keyset positions, and set expressions, both as
// SQL text and by running them in a real SQLite database against rows whose
// expected answers are known.
#include "query/sql.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backends/sqlite/list_table.h"
#include "predicates.h"
#include "sqlite3.h"
#include "writes/sql.h"

namespace onestore {
namespace {

using test::Cmp;
using test::Group;
using test::In;
using test::IsNull;

TableSchema MakeTable(const char* json) {
  TableSchema t;
  Json j = Json::parse(json, nullptr, false);
  EXPECT_FALSE(j.is_discarded());
  Status s = ParseTableSchema(j, "test", &t);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return t;
}

// A table with a nullable column of each kind that a where can use.
const char kItems[] = R"({"op":"table","table":"t/items","columns":{
  "id":{"type":"int"},"name":{"type":"str","optional":true},
  "n":{"type":"int","optional":true},"x":{"type":"num","optional":true},
  "flag":{"type":"bool","optional":true}},"key":["id"]})";

// --- quoting ---------------------------------------------------------------

struct QuoteCase {
  const char* in;
  const char* out;
};
void PrintTo(const QuoteCase& c, std::ostream* os) { *os << c.in; }

class QuoteIdentTest : public testing::TestWithParam<QuoteCase> {};

TEST_P(QuoteIdentTest, QuotesWithDoubleQuotesAndDoublesInnerOnes) {
  EXPECT_EQ(QuoteIdent(GetParam().in), GetParam().out);
}

INSTANTIATE_TEST_SUITE_P(Names, QuoteIdentTest,
                         testing::Values(QuoteCase{"edits", "\"edits\""},
                                         QuoteCase{"file-history/edits", "\"file-history/edits\""},
                                         QuoteCase{"session:a/b", "\"session:a/b\""},
                                         QuoteCase{"say \"hi\"", "\"say \"\"hi\"\"\""},
                                         QuoteCase{"\"", "\"\"\"\""}, QuoteCase{"", "\"\""},
                                         QuoteCase{"测试", "\"测试\""}));

// --- where as text -----------------------------------------------------------

struct WhereTextCase {
  const char* name;
  Predicate pred;
  std::string sql;
  std::vector<Value> params;
};

void PrintTo(const WhereTextCase& c, std::ostream* os) { *os << c.name; }

class WhereTextTest : public testing::TestWithParam<WhereTextCase> {};

TEST_P(WhereTextTest, CompilesToSqlWithBoundValues) {
  TableSchema t = MakeTable(kItems);
  SqlBuilder b;
  AppendPredicateSql(t, GetParam().pred, &b);
  EXPECT_EQ(b.sql(), GetParam().sql);
  EXPECT_EQ(b.params(), GetParam().params);
}

std::vector<WhereTextCase> WhereTextCases() {
  // Columns of kItems: 0 id, 1 name, 2 n, 3 x, 4 flag.
  return {
      {"eq",
       Cmp(PredOp::kEq, 1, Value::Str("a'; drop")),
       "(\"name\" = ?)",
       {Value::Str("a'; drop")}},
      {"ne", Cmp(PredOp::kNe, 2, Value::Int(3)), "(\"n\" <> ?)", {Value::Int(3)}},
      {"lt", Cmp(PredOp::kLt, 2, Value::Int(3)), "(\"n\" < ?)", {Value::Int(3)}},
      {"lte", Cmp(PredOp::kLte, 2, Value::Int(3)), "(\"n\" <= ?)", {Value::Int(3)}},
      {"gt", Cmp(PredOp::kGt, 2, Value::Int(3)), "(\"n\" > ?)", {Value::Int(3)}},
      {"gte", Cmp(PredOp::kGte, 2, Value::Int(3)), "(\"n\" >= ?)", {Value::Int(3)}},
      {"num_operand_binds_as_double",
       Cmp(PredOp::kEq, 3, Value::Int(2)),
       "(\"x\" = ?)",
       {Value::Num(2)}},
      {"in",
       In(2, {Value::Int(1), Value::Int(2)}),
       "(\"n\" IN (?, ?))",
       {Value::Int(1), Value::Int(2)}},
      {"empty_in", In(2, {}), "(0)", {}},
      {"is_null", IsNull(1), "(\"name\" IS NULL)", {}},
      {"prefix",
       Cmp(PredOp::kPrefix, 1, Value::Str("a/")),
       "(\"name\" >= ? AND \"name\" < ?)",
       {Value::Str("a/"), Value::Str("a0")}},
      {"empty_prefix",
       Cmp(PredOp::kPrefix, 1, Value::Str("")),
       "(\"name\" >= ?)",
       {Value::Str("")}},
      {"and_or_not",
       Group(PredOp::kAnd, {Cmp(PredOp::kEq, 2, Value::Int(1)),
                            Group(PredOp::kOr, {IsNull(1), Group(PredOp::kNot, {IsNull(2)})})}),
       "((\"n\" = ?) AND ((\"name\" IS NULL) OR (NOT (\"n\" IS NULL))))",
       {Value::Int(1)}},
      {"empty_and", Group(PredOp::kAnd, {}), "(1)", {}},
      {"empty_or", Group(PredOp::kOr, {}), "(0)", {}},
      // An or's equalities and inArrays on one column are one IN list, in
      // the place of the first (SQLite plans thousands of OR terms slowly).
      {"or_folds_one_columns_equalities_into_in",
       Group(PredOp::kOr,
             {Cmp(PredOp::kEq, 2, Value::Int(1)), IsNull(1), Cmp(PredOp::kEq, 2, Value::Int(2)),
              In(2, {Value::Int(3), Value::Int(4)}), Cmp(PredOp::kEq, 1, Value::Str("a"))}),
       "((\"n\" IN (?, ?, ?, ?)) OR (\"name\" IS NULL) OR (\"name\" = ?))",
       {Value::Int(1), Value::Int(2), Value::Int(3), Value::Int(4), Value::Str("a")}},
      {"or_of_one_equality_per_column_stays",
       Group(PredOp::kOr,
             {Cmp(PredOp::kEq, 2, Value::Int(1)), Cmp(PredOp::kEq, 1, Value::Str("a"))}),
       "((\"n\" = ?) OR (\"name\" = ?))",
       {Value::Int(1), Value::Str("a")}},
  };
}

INSTANTIATE_TEST_SUITE_P(Predicates, WhereTextTest, testing::ValuesIn(WhereTextCases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(SqlBuilderTest, ALongOrOfEqualitiesIsBoundAsOneJsonArray) {
  TableSchema t = MakeTable(kItems);
  std::vector<Predicate> eqs;
  for (int i = 0; i < 10000; ++i) eqs.push_back(Cmp(PredOp::kEq, 2, Value::Int(i)));
  SqlBuilder b;
  AppendPredicateSql(t, Group(PredOp::kOr, eqs), &b);
  EXPECT_EQ(b.sql(), "((\"n\" IN (SELECT value FROM onestore_list(?))))");
  ASSERT_EQ(b.params().size(), 1u);
}

// The most terms joined by `joiner` inside one pair of parentheses of
// `sql`, and the deepest nesting of parentheses.
std::pair<int, int> LongestRunAndDepth(const std::string& sql, const std::string& joiner) {
  std::vector<int> runs(1, 1);
  int longest = 1;
  int depth = 0;
  for (size_t i = 0; i < sql.size(); ++i) {
    if (sql[i] == '(') {
      runs.push_back(1);
      depth = std::max(depth, static_cast<int>(runs.size()) - 1);
    } else if (sql[i] == ')') {
      runs.pop_back();
    } else if (sql.compare(i, joiner.size(), joiner) == 0) {
      longest = std::max(longest, ++runs.back());
    }
  }
  return {longest, depth};
}

TEST(SqlBuilderTest, LongAndsAndOrsAreWrittenAsBalancedGroupsSoSqliteParsesAShallowTree) {
  TableSchema t = MakeTable(kItems);
  std::vector<Predicate> terms;
  for (int i = 0; i < 20000; ++i)
    terms.push_back(Cmp(i % 2 ? PredOp::kGt : PredOp::kLt, 2, Value::Int(i)));
  for (PredOp op : {PredOp::kOr, PredOp::kAnd}) {
    SqlBuilder b;
    AppendPredicateSql(t, Group(op, terms), &b);
    auto [longest, depth] = LongestRunAndDepth(b.sql(), op == PredOp::kOr ? " OR " : " AND ");
    EXPECT_LE(longest, 16);  // a run of at most 16 terms
    EXPECT_LE(depth, 16);    // about log2(20000 / 16) groups deep, each term in its own ()
    EXPECT_EQ(b.params().size(), 20000u);
  }
}

TEST(SqlBuilderTest, ALongInListIsBoundAsOneJsonArray) {
  TableSchema t = MakeTable(kItems);
  std::vector<Value> values;
  for (int i = 0; i < 500; ++i) values.push_back(Value::Int(i));
  SqlBuilder b;
  AppendPredicateSql(t, In(2, values), &b);
  EXPECT_EQ(b.sql(), "(\"n\" IN (SELECT value FROM onestore_list(?)))");
  ASSERT_EQ(b.params().size(), 1u);
  // A host's SQLite (a Durable Object's) reads the same array with json_each.
  SqlBuilder host(SqlDialect::HostBound());
  AppendPredicateSql(t, In(2, values), &host);
  EXPECT_EQ(host.sql(), "(\"n\" IN (SELECT value FROM json_each(?)))");
}

// onestore_list types each element as json_each does: integers exactly
// (beyond 2^53 too), reals, text, true/false as 1/0, null; anything but a
// JSON array of scalars is an error, not rows.
TEST(ListTableTest, YieldsEachElementTypedAsJsonEachDoes) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  ASSERT_TRUE(RegisterListTable(db).ok());
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT typeof(value), quote(value) FROM onestore_list(?)", -1, &s,
                               nullptr),
            SQLITE_OK);
  const std::string list = R"([9007199254740993, -5, 2.5, "a'b", true, false, null, "é"])";
  sqlite3_bind_text(s, 1, list.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<std::string> got;
  while (sqlite3_step(s) == SQLITE_ROW) {
    got.push_back(std::string(reinterpret_cast<const char*>(sqlite3_column_text(s, 0))) + " " +
                  reinterpret_cast<const char*>(sqlite3_column_text(s, 1)));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"integer 9007199254740993", "integer -5", "real 2.5",
                                           "text 'a''b'", "integer 1", "integer 0", "null NULL",
                                           "text 'é'"}));
  // Not an array, or not JSON: an error naming the table, no rows.
  for (const char* bad : {"{\"a\":1}", "[1,", "7"}) {
    sqlite3_reset(s);
    sqlite3_bind_text(s, 1, bad, -1, SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(s), SQLITE_ERROR) << bad;
    EXPECT_NE(std::string(sqlite3_errmsg(db)).find("onestore_list"), std::string::npos) << bad;
  }
  sqlite3_finalize(s);
  // Eponymous only: it cannot be created as a table in the file.
  EXPECT_NE(sqlite3_exec(db, "CREATE VIRTUAL TABLE x USING onestore_list", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
}

// --- running compiled SQL in SQLite --------------------------------------------

class Db {
 public:
  Db() {
    EXPECT_EQ(sqlite3_open(":memory:", &db_), SQLITE_OK);
    EXPECT_TRUE(RegisterSqlFunctions(db_).ok());
    EXPECT_TRUE(RegisterListTable(db_).ok());
  }
  ~Db() { sqlite3_close(db_); }
  sqlite3* get() { return db_; }

  void Exec(const std::string& sql) {
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
        << sql << ": " << err;
  }

  // Runs b; returns SQLite's result code and, in *rows, the first column of
  // each row as text ("NULL" for null).
  int Run(const SqlBuilder& b, std::vector<std::string>* rows = nullptr,
          std::string* error = nullptr) {
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v2(db_, b.sql().c_str(), -1, &s, nullptr);
    EXPECT_EQ(rc, SQLITE_OK) << b.sql() << ": " << sqlite3_errmsg(db_);
    if (rc != SQLITE_OK) return rc;
    for (size_t i = 0; i < b.params().size(); ++i) {
      const Value& v = b.params()[i];
      int idx = static_cast<int>(i + 1);
      switch (v.type()) {
        case Type::kNull:
          sqlite3_bind_null(s, idx);
          break;
        case Type::kBool:
          sqlite3_bind_int64(s, idx, v.bool_value() ? 1 : 0);
          break;
        case Type::kInt:
          sqlite3_bind_int64(s, idx, v.int_value());
          break;
        case Type::kNum:
          sqlite3_bind_double(s, idx, v.num_value());
          break;
        default:
          sqlite3_bind_text(s, idx, v.text().data(), static_cast<int>(v.text().size()),
                            SQLITE_TRANSIENT);
      }
    }
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      if (rows == nullptr) continue;
      const unsigned char* text = sqlite3_column_text(s, 0);
      rows->push_back(text == nullptr ? "NULL"
                                      : std::string(reinterpret_cast<const char*>(text),
                                                    sqlite3_column_bytes(s, 0)));
    }
    if (error != nullptr) *error = sqlite3_errmsg(db_);
    sqlite3_finalize(s);
    return rc;
  }

 private:
  sqlite3* db_ = nullptr;
};

// Rows of kItems: (id, name, n, x, flag), NULLs included.
void FillItems(Db* db) {
  db->Exec(
      "CREATE TABLE \"t/items\" (id INTEGER NOT NULL, name TEXT, n INTEGER, x REAL, flag INTEGER, "
      "PRIMARY KEY(id)) STRICT;"
      "INSERT INTO \"t/items\" VALUES (1, 'a/x', 1, 1.5, 1), (2, 'a/y', 2, NULL, 0),"
      " (3, 'b', NULL, 2.0, NULL), (4, NULL, 4, -1.0, 1), (5, 'a', 5, 0.0, 0),"
      " (6, '测试（一）', 6, 6.0, 1), (7, '测试😀', 7, 7.0, 0);");
}

struct WhereRunCase {
  const char* name;
  Predicate pred;
  std::vector<std::string> ids;
};

void PrintTo(const WhereRunCase& c, std::ostream* os) { *os << c.name; }

class WhereRunTest : public testing::TestWithParam<WhereRunCase> {};

TEST_P(WhereRunTest, MatchesExactlyTheExpectedRows) {
  Db db;
  FillItems(&db);
  TableSchema t = MakeTable(kItems);
  SqlBuilder b;
  b.Append("SELECT id FROM \"t/items\" WHERE ");
  AppendPredicateSql(t, GetParam().pred, &b);
  b.Append(" ORDER BY id");
  std::vector<std::string> ids;
  ASSERT_EQ(db.Run(b, &ids), SQLITE_DONE);
  EXPECT_EQ(ids, GetParam().ids) << b.sql();
}

// An or of `n = v` for each of `values`, and `other`.
Predicate LongOr(const std::vector<Value>& values, Predicate other) {
  std::vector<Predicate> children;
  for (const Value& v : values) children.push_back(Cmp(PredOp::kEq, 2, v));
  children.push_back(std::move(other));
  return Group(PredOp::kOr, std::move(children));
}

std::vector<WhereRunCase> WhereRunCases() {
  std::vector<Value> many;
  for (int i = 0; i < 300; ++i) many.push_back(Value::Int(i * 2));  // even numbers
  return {
      {"eq_null_cell_never_matches", Cmp(PredOp::kNe, 2, Value::Int(1)), {"2", "4", "5", "6", "7"}},
      {"not_of_unknown_is_unknown",
       Group(PredOp::kNot, {Cmp(PredOp::kEq, 2, Value::Int(1))}),
       {"2", "4", "5", "6", "7"}},
      {"lt", Cmp(PredOp::kLt, 2, Value::Int(4)), {"1", "2"}},
      {"num_gte_int_operand", Cmp(PredOp::kGte, 3, Value::Int(2)), {"3", "6", "7"}},
      {"bool_eq", Cmp(PredOp::kEq, 4, Value::Bool(true)), {"1", "4", "6"}},
      {"in", In(1, {Value::Str("b"), Value::Str("a"), Value::Str("zz")}), {"3", "5"}},
      {"long_in_via_json", In(2, many), {"2", "4", "6"}},
      {"empty_in", In(2, {}), {}},
      // False (never unknown) on a NULL cell too: NOT of it matches every row.
      {"not_empty_in", Group(PredOp::kNot, {In(2, {})}), {"1", "2", "3", "4", "5", "6", "7"}},
      {"is_null", IsNull(2), {"3"}},
      {"prefix", Cmp(PredOp::kPrefix, 1, Value::Str("a/")), {"1", "2"}},
      {"prefix_is_not_plain_lte", Cmp(PredOp::kPrefix, 1, Value::Str("a")), {"1", "2", "5"}},
      {"prefix_multibyte", Cmp(PredOp::kPrefix, 1, Value::Str("测试")), {"6", "7"}},
      {"empty_prefix_is_not_null",
       Cmp(PredOp::kPrefix, 1, Value::Str("")),
       {"1", "2", "3", "5", "6", "7"}},
      // Unknown on a NULL cell (row 4's name), so NOT of it matches nothing.
      {"not_empty_prefix", Group(PredOp::kNot, {Cmp(PredOp::kPrefix, 1, Value::Str(""))}), {}},
      {"not_prefix",
       Group(PredOp::kNot, {Cmp(PredOp::kPrefix, 1, Value::Str("a"))}),
       {"3", "6", "7"}},
      {"code_point_order", Cmp(PredOp::kLt, 1, Value::Str("测试😀")), {"1", "2", "3", "5", "6"}},
      {"or", Group(PredOp::kOr, {IsNull(1), Cmp(PredOp::kEq, 2, Value::Int(5))}), {"4", "5"}},
      // Folded into one IN list: the same rows as the OR, a NULL cell
      // unknown under NOT as before.
      {"folded_or_beside_other_terms",
       Group(PredOp::kOr,
             {Cmp(PredOp::kEq, 2, Value::Int(1)), IsNull(3), Cmp(PredOp::kEq, 2, Value::Int(7)),
              Cmp(PredOp::kEq, 1, Value::Str("b"))}),
       {"1", "2", "3", "7"}},
      {"not_of_folded_or",
       Group(PredOp::kNot, {Group(PredOp::kOr, {Cmp(PredOp::kEq, 2, Value::Int(1)),
                                                Cmp(PredOp::kEq, 2, Value::Int(2))})}),
       {"4", "5", "6", "7"}},
      {"long_folded_or_via_json",
       LongOr(many, Cmp(PredOp::kEq, 3, Value::Num(1.5))),
       {"1", "2", "4", "6"}},
  };
}

INSTANTIATE_TEST_SUITE_P(Predicates, WhereRunTest, testing::ValuesIn(WhereRunCases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(PrefixSqlTest, APrefixEndingInTheLastCodePointsStillMatchesItsExtensions) {
  // U+FFFF is EF BF BF: the upper bound EF BF C0 is not valid UTF-8, and must
  // still be compared as bytes. U+10FFFF is F4 8F BF BF.
  Db db;
  db.Exec("CREATE TABLE s (v TEXT) STRICT");
  const std::vector<std::string> values = {"\xEF\xBF\xBF",
                                           "\xEF\xBF\xBF"
                                           "a",
                                           "\xEF\xBF\xBF\xF4\x8F\xBF\xBF",
                                           "\xF0\x9F\x98\x80",
                                           "\xF4\x8F\xBF\xBF",
                                           "\xF4\x8F\xBF\xBF"
                                           "z",
                                           "z"};
  for (const std::string& v : values) {
    SqlBuilder ins;
    ins.Append("INSERT INTO s VALUES (").AppendParam(Value::Str(v)).Append(")");
    ASSERT_EQ(db.Run(ins), SQLITE_DONE);
  }
  TableSchema t = MakeTable(R"({"table":"t/s","columns":{"v":"str"},"key":["v"]})");
  auto match = [&](const std::string& prefix) {
    SqlBuilder b;
    b.Append("SELECT v FROM s WHERE ");
    AppendPredicateSql(t, Cmp(PredOp::kPrefix, 0, Value::Str(prefix)), &b);
    b.Append(" ORDER BY v");
    std::vector<std::string> out;
    EXPECT_EQ(db.Run(b, &out), SQLITE_DONE);
    return out;
  };
  EXPECT_EQ(match("\xEF\xBF\xBF"), (std::vector<std::string>{"\xEF\xBF\xBF",
                                                             "\xEF\xBF\xBF"
                                                             "a",
                                                             "\xEF\xBF\xBF\xF4\x8F\xBF\xBF"}));
  EXPECT_EQ(match("\xF4\x8F\xBF\xBF"), (std::vector<std::string>{"\xF4\x8F\xBF\xBF",
                                                                 "\xF4\x8F\xBF\xBF"
                                                                 "z"}));
  EXPECT_EQ(match("\xF0\x9F"), (std::vector<std::string>{"\xF0\x9F\x98\x80"}));
}

// --- order and keyset positions ----------------------------------------------

TEST(OrderBySqlTest, EachTermKeepsItsOwnDirection) {
  TableSchema t = MakeTable(kItems);
  Query q;
  q.table = &t;
  q.order = {{1, true}, {2, false}, {0, true}};
  SqlBuilder b;
  AppendOrderBySql(q, &b);
  EXPECT_EQ(b.sql(), "ORDER BY \"name\" DESC, \"n\" ASC, \"id\" DESC");
  EXPECT_TRUE(b.params().empty());
}

TEST(AfterSqlTest, ALastTermHasOnlyAStrictInequality) {
  TableSchema t = MakeTable(kItems);
  Query q;
  q.table = &t;
  q.order = {{0, false}};
  SqlBuilder b;
  AppendAfterSql(q, {Value::Int(3)}, &b);
  EXPECT_EQ(b.sql(), "(\"id\" >= ? AND (\"id\" > ?))");
  EXPECT_EQ(b.params(), (std::vector<Value>{Value::Int(3), Value::Int(3)}));
}

// For every order (directions mixed, NULLs in the leading terms) and every
// row as the position, the rows after it must be exactly the rows that
// follow it in the full ordered list.
struct AfterCase {
  const char* name;
  std::vector<OrderTerm> order;  // over the columns of kGrid
};

const char kGrid[] = R"({"table":"t/g","columns":{"id":"int",
  "a":{"type":"int","optional":true},"b":{"type":"str","optional":true},
  "c":"num"},"key":["id"]})";

void PrintTo(const AfterCase& c, std::ostream* os) { *os << c.name; }

class AfterRunTest : public testing::TestWithParam<AfterCase> {};

TEST_P(AfterRunTest, RowsAfterEveryPositionAreExactlyTheRestOfTheOrder) {
  Db db;
  db.Exec(
      "CREATE TABLE g (id INTEGER NOT NULL PRIMARY KEY, a INTEGER, b TEXT, c REAL NOT NULL) "
      "STRICT");
  std::mt19937 rng(7);
  const char* texts[] = {nullptr, "", "a", "b", "测", "😀"};
  for (int id = 1; id <= 60; ++id) {
    SqlBuilder ins;
    int a = static_cast<int>(rng() % 4);
    const char* text = texts[rng() % 6];
    ins.Append("INSERT INTO g VALUES (").AppendParam(Value::Int(id)).Append(", ");
    ins.AppendParam(a == 3 ? Value() : Value::Int(a)).Append(", ");
    ins.AppendParam(text == nullptr ? Value() : Value::Str(text)).Append(", ");
    ins.AppendParam(Value::Num(static_cast<double>(rng() % 3) / 2)).Append(")");
    ASSERT_EQ(db.Run(ins), SQLITE_DONE);
  }
  TableSchema t = MakeTable(kGrid);
  Query q;
  q.table = &t;
  q.order = GetParam().order;

  auto select = [&](const std::vector<Value>* after, std::vector<std::string>* ids) {
    SqlBuilder b;
    b.Append("SELECT id FROM g");
    if (after != nullptr) {
      b.Append(" WHERE ");
      AppendAfterSql(q, *after, &b);
    }
    b.Append(" ");
    AppendOrderBySql(q, &b);
    ASSERT_EQ(db.Run(b, ids), SQLITE_DONE) << b.sql();
  };
  std::vector<std::string> all;
  select(nullptr, &all);
  ASSERT_EQ(all.size(), 60u);

  // The order values of each row, read back from SQLite.
  for (size_t i = 0; i < all.size(); ++i) {
    std::vector<Value> pos;
    for (const OrderTerm& term : q.order) {
      SqlBuilder b;
      b.Append("SELECT ").AppendIdent(t.columns[term.column].name).Append(" FROM g WHERE id = ");
      b.AppendParam(Value::Int(std::stoll(all[i])));
      std::vector<std::string> cell;
      ASSERT_EQ(db.Run(b, &cell), SQLITE_DONE);
      ASSERT_EQ(cell.size(), 1u);
      Type type = t.columns[term.column].type;
      if (cell[0] == "NULL") {
        pos.emplace_back();
      } else if (type == Type::kInt) {
        pos.push_back(Value::Int(std::stoll(cell[0])));
      } else if (type == Type::kNum) {
        pos.push_back(Value::Num(std::stod(cell[0])));
      } else {
        pos.push_back(Value::Str(cell[0]));
      }
    }
    std::vector<std::string> rest;
    select(&pos, &rest);
    std::vector<std::string> want(all.begin() + static_cast<std::ptrdiff_t>(i) + 1, all.end());
    ASSERT_EQ(rest, want) << "after row " << all[i];
  }
}

// kGrid columns: 0 id, 1 a (int, nullable), 2 b (str, nullable), 3 c (num).
INSTANTIATE_TEST_SUITE_P(
    Orders, AfterRunTest,
    testing::Values(AfterCase{"key_asc", {{0, false}}}, AfterCase{"key_desc", {{0, true}}},
                    AfterCase{"nullable_asc", {{1, false}, {0, false}}},
                    AfterCase{"nullable_desc", {{1, true}, {0, true}}},
                    AfterCase{"mixed", {{1, false}, {2, true}, {0, true}}},
                    AfterCase{"mixed_other_way", {{2, true}, {1, false}, {3, true}, {0, false}}},
                    AfterCase{"num_desc_then_text_asc", {{3, true}, {2, false}, {0, true}}}),
    [](const auto& info) { return std::string(info.param.name); });

// --- set expressions -------------------------------------------------------------

const char kRows[] = R"({"table":"t/r","columns":{"id":"int","n":{"type":"int","optional":true},
  "m":{"type":"int","optional":true},"s":{"type":"str","optional":true},"x":{"type":"num","optional":true}},
  "key":["id"]})";

Expr Lit(Value v, Type type) {
  Expr e;
  e.op = ExprOp::kValue;
  e.type = v.is_null() ? type : v.type();
  if (type == Type::kNum) e.type = Type::kNum;
  e.value = std::move(v);
  return e;
}
Expr ColRef(int c, Type type) {
  Expr e;
  e.op = ExprOp::kCol;
  e.column = c;
  e.type = type;
  return e;
}
Expr Call(ExprOp op, Type type, std::vector<Expr> args) {
  Expr e;
  e.op = op;
  e.type = type;
  e.args = std::move(args);
  return e;
}

class ExprTest : public testing::Test {
 protected:
  void SetUp() override {
    db_.Exec(
        "CREATE TABLE r (id INTEGER NOT NULL PRIMARY KEY, n INTEGER, m INTEGER, s TEXT, x REAL) "
        "STRICT");
    db_.Exec(
        "INSERT INTO r VALUES (1, 5, 7, 'a/b/c', 1.5), (2, NULL, 3, NULL, NULL),"
        " (3, 9223372036854775807, -9223372036854775807, '测试/x', 0.0)");
    t_ = MakeTable(kRows);
  }
  // The value of `e` on row `id`, as text.
  std::string Eval(const Expr& e, int id, int* rc = nullptr, std::string* error = nullptr) {
    SqlBuilder b;
    b.Append("SELECT ");
    AppendExprSql(t_, e, &b);
    b.Append(" FROM r WHERE id = ").AppendParam(Value::Int(id));
    std::vector<std::string> out;
    int code = db_.Run(b, &out, error);
    if (rc != nullptr) *rc = code;
    return out.empty() ? "<none>" : out[0];
  }

  Db db_;
  TableSchema t_;
};

TEST_F(ExprTest, AddAndSubAreExactAndPropagateNull) {
  EXPECT_EQ(
      Eval(Call(ExprOp::kAdd, Type::kInt, {ColRef(1, Type::kInt), Lit(Value::Int(1), Type::kInt)}),
           1),
      "6");
  EXPECT_EQ(Eval(Call(ExprOp::kSub, Type::kInt, {ColRef(1, Type::kInt), ColRef(2, Type::kInt)}), 1),
            "-2");
  EXPECT_EQ(
      Eval(Call(ExprOp::kAdd, Type::kInt, {ColRef(1, Type::kInt), Lit(Value::Int(1), Type::kInt)}),
           2),
      "NULL");
  // 2^63 - 1 + (-(2^63 - 1)) = 0, exactly.
  EXPECT_EQ(Eval(Call(ExprOp::kAdd, Type::kInt, {ColRef(1, Type::kInt), ColRef(2, Type::kInt)}), 3),
            "0");
}

TEST_F(ExprTest, IntegerOverflowInAddOrSubIsAnErrorNotAFloat) {
  int rc = 0;
  std::string error;
  Eval(Call(ExprOp::kAdd, Type::kInt, {ColRef(1, Type::kInt), Lit(Value::Int(1), Type::kInt)}), 3,
       &rc, &error);
  EXPECT_EQ(rc, SQLITE_ERROR);
  EXPECT_EQ(error.rfind(kSqlOverflowMessage, 0), 0u) << error;
  Eval(Call(ExprOp::kSub, Type::kInt, {ColRef(2, Type::kInt), Lit(Value::Int(2), Type::kInt)}), 3,
       &rc, &error);
  EXPECT_EQ(rc, SQLITE_ERROR);
  EXPECT_NE(error.find("overflow"), std::string::npos) << error;
}

TEST_F(ExprTest, NumExpressionsBindLiteralsAsDoubles) {
  Expr e = Call(ExprOp::kAdd, Type::kNum, {ColRef(4, Type::kNum), Lit(Value::Int(2), Type::kNum)});
  SqlBuilder b;
  AppendExprSql(t_, e, &b);
  ASSERT_EQ(b.params().size(), 1u);
  EXPECT_EQ(b.params()[0], Value::Num(2));
  EXPECT_EQ(Eval(e, 1), "3.5");
}

TEST_F(ExprTest, MaxAndMinAreNullWhenAnyArgumentIsNull) {
  EXPECT_EQ(Eval(Call(ExprOp::kMax, Type::kInt, {ColRef(1, Type::kInt), ColRef(2, Type::kInt)}), 1),
            "7");
  EXPECT_EQ(Eval(Call(ExprOp::kMin, Type::kInt, {ColRef(1, Type::kInt), ColRef(2, Type::kInt)}), 1),
            "5");
  EXPECT_EQ(Eval(Call(ExprOp::kMax, Type::kInt, {ColRef(1, Type::kInt), ColRef(2, Type::kInt)}), 2),
            "NULL");
  // One argument is that argument (SQLite's one-argument max() is an aggregate).
  EXPECT_EQ(Eval(Call(ExprOp::kMax, Type::kInt, {ColRef(2, Type::kInt)}), 2), "3");
}

TEST_F(ExprTest, ConcatPropagatesNullAndCoalescePicksTheFirstNonNull) {
  EXPECT_EQ(Eval(Call(ExprOp::kConcat, Type::kStr,
                      {ColRef(3, Type::kStr), Lit(Value::Str("!"), Type::kStr)}),
                 1),
            "a/b/c!");
  EXPECT_EQ(Eval(Call(ExprOp::kConcat, Type::kStr,
                      {ColRef(3, Type::kStr), Lit(Value::Str("!"), Type::kStr)}),
                 2),
            "NULL");
  EXPECT_EQ(Eval(Call(ExprOp::kCoalesce, Type::kStr,
                      {ColRef(3, Type::kStr), Lit(Value::Str("d"), Type::kStr)}),
                 2),
            "d");
  EXPECT_EQ(Eval(Call(ExprOp::kCoalesce, Type::kStr, {ColRef(3, Type::kStr)}), 1), "a/b/c");
}

TEST_F(ExprTest, ReplacePrefixCountsCodePoints) {
  Expr e;
  e.op = ExprOp::kReplacePrefix;
  e.type = Type::kStr;
  e.column = 3;
  e.from = "测试/";
  e.to = "b/";
  EXPECT_EQ(Eval(e, 3), "b/x");
  EXPECT_EQ(Eval(e, 1), "a/b/c");  // no match: unchanged
  EXPECT_EQ(Eval(e, 2), "NULL");
  e.from = "a/";
  e.to = "😀/";
  EXPECT_EQ(Eval(e, 1), "😀/b/c");
  e.from = "";
  e.to = "p/";
  EXPECT_EQ(Eval(e, 1), "p/a/b/c");
}

TEST_F(ExprTest, WhenTreatsUnknownAsFalse) {
  Expr e =
      Call(ExprOp::kWhen, Type::kStr, {Lit(Value::Str("big"), Type::kStr), ColRef(3, Type::kStr)});
  e.cond = std::make_shared<Predicate>(Cmp(PredOp::kGte, 1, Value::Int(5)));
  EXPECT_EQ(Eval(e, 1), "big");
  EXPECT_EQ(Eval(e, 2), "NULL");  // n is NULL: unknown, so the else branch (s, NULL)
  e.args[1] = Lit(Value::Str("small"), Type::kStr);
  EXPECT_EQ(Eval(e, 2), "small");
}

TEST_F(ExprTest, EverySetExpressionReadsTheRowBeforeTheUpdate) {
  // Swap n and m in one statement.
  std::vector<SetItem> set(2);
  set[0].column = 1;
  set[0].expr = ColRef(2, Type::kInt);
  set[1].column = 2;
  set[1].expr = ColRef(1, Type::kInt);
  SqlBuilder b;
  b.Append("UPDATE r SET ");
  AppendSetSql(t_, set, &b);
  b.Append(" WHERE id = 1");
  EXPECT_EQ(b.sql(), "UPDATE r SET \"n\" = \"m\", \"m\" = \"n\" WHERE id = 1");
  ASSERT_EQ(db_.Run(b), SQLITE_DONE);
  EXPECT_EQ(Eval(ColRef(1, Type::kInt), 1), "7");
  EXPECT_EQ(Eval(ColRef(2, Type::kInt), 1), "5");
}

}  // namespace
}  // namespace onestore
