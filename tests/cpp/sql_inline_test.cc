// Checks SqlBuilder::InlineSmallParams (query/sql.h), what a host-bound
// backend does to a statement that would bind more than its 100 values:
// nulls, ints, bools and short texts become literals (quotes doubled, ints as
// the dialect binds them), nums and long texts stay bound in order, and the
// rewritten statement reads the same values in a real SQLite.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "query/sql.h"
#include "sqlite3.h"

namespace onestore {
namespace {

TEST(InlineSmallParamsTest, SmallValuesBecomeLiteralsAndTheRestStayBoundInOrder) {
  SqlBuilder b(SqlDialect::HostBound());
  const std::string long_text(300, 'x');
  b.Append("SELECT ").AppendParam(Value());
  b.Append(", ").AppendParam(Value::Int(-42));
  b.Append(", ").AppendParam(Value::Bool(true));
  b.Append(", ").AppendParam(Value::Num(0.1));
  b.Append(", ").AppendParam(Value::Str("it's \"?\""));
  b.Append(", ").AppendParam(Value::Str(long_text));
  b.Append(", ").AppendParam(Value::JsonText("{\"a\":\"'\"}"));
  b.InlineSmallParams();
  EXPECT_EQ(b.sql(),
            "SELECT NULL, CAST('-42' AS INTEGER), CAST('1' AS INTEGER), ?, 'it''s \"?\"', ?, "
            "'{\"a\":\"''\"}'");
  ASSERT_EQ(b.params().size(), 2u);
  EXPECT_EQ(b.params()[0], Value::Num(0.1));
  EXPECT_EQ(b.params()[1], Value::Str(long_text));
  // Once more: nothing left to write in, the text stays as it is.
  const std::string once = b.sql();
  b.InlineSmallParams();
  EXPECT_EQ(b.sql(), once);
  EXPECT_EQ(b.params().size(), 2u);
}

TEST(InlineSmallParamsTest, EveryInt64ReadsBackTheSameInBothDialects) {
  for (const SqlDialect* d : {&SqlDialect::Embedded(), &SqlDialect::HostBound()}) {
    SqlBuilder b(*d);
    b.Append("SELECT ").AppendParam(Value::Int(INT64_MIN));
    b.Append(", ").AppendParam(Value::Int(INT64_MAX));
    b.Append(", ").AppendParam(Value::Int(0));
    b.InlineSmallParams();
    ASSERT_TRUE(b.params().empty()) << b.sql();
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, b.sql().c_str(), -1, &st, nullptr), SQLITE_OK) << b.sql();
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(sqlite3_column_type(st, i), SQLITE_INTEGER) << b.sql();
    EXPECT_EQ(sqlite3_column_int64(st, 0), INT64_MIN);
    EXPECT_EQ(sqlite3_column_int64(st, 1), INT64_MAX);
    EXPECT_EQ(sqlite3_column_int64(st, 2), 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
}

TEST(InlineSmallParamsTest, AQuotedTextReadsBackByteForByte) {
  SqlBuilder b(SqlDialect::HostBound());
  const std::string text = "a'b''c é 😀 \\ ? -- ; end";
  b.Append("SELECT ").AppendParam(Value::Str(text));
  b.InlineSmallParams();
  ASSERT_TRUE(b.params().empty());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, b.sql().c_str(), -1, &st, nullptr), SQLITE_OK) << b.sql();
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))), text);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

}  // namespace
}  // namespace onestore
