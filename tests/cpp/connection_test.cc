// Checks the split of the sqlite backend into the SQL it builds and the
// SqlConnection that runs it: the same store over the embedded connection and
// over HostBoundTestConnection (a real SQLite that binds, returns and refuses
// as a Durable Object's sql.exec does) gives the same answers, ints beyond
// 2^53 stay exact, the host's limits fail a commit with `limit` and leave
// nothing, and workerd's own error texts map to their codes; the embedded
// connection joins a transaction's puts into multi-row statements that
// write what one statement per put wrote, and fail as they did; and a page
// over a connection that keeps its rows with the host answers their number
// and the same cursors (issue 13, Durable Objects, step four).
#include "backends/sqlite/connection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <string>

#include "backends/sqlite/embedded_connection.h"
#include "backends/sqlite/sqlite_backend.h"
#include "commit/store.h"
#include "host_bound_connection.h"
#include "query/sql.h"

namespace onestore {
namespace {

const char kCounter[] =
    R"({"op":"table","table":"t/counter","columns":{"n":{"type":"int"},"v":{"type":"str"},)"
    R"("big":{"type":"int","optional":true},"x":{"type":"num","optional":true}},"key":["n"]})";

Json Parse(const std::string& text) {
  Json j = Json::parse(text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << text;
  return j;
}

class ConnectionTest : public testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) {
      auto c = std::make_unique<HostBoundTestConnection>();
      host_ = c.get();
      ASSERT_TRUE(Store::OpenWith(NewSqlBackend(std::move(c)), "s", &store_).ok());
    } else {
      SqliteOptions o;
      o.path = ":memory:";
      ASSERT_TRUE(Store::OpenWith(NewSqliteBackend(o), "s", &store_).ok());
    }
    std::string records, result;
    ASSERT_TRUE(store_->Declare(kCounter, &records).ok());
    Status s = store_->Commit(records, R"({"owner":"t"})", &result);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  Status Commit(const std::string& ops) {
    std::string result;
    return store_->Commit(ops, R"({"owner":"t"})", &result);
  }
  std::string Get(const std::string& key) {
    std::string row;
    Status s = store_->Get("t/counter", key, &row);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return row;
  }
  int64_t OutboxCount() {
    std::string batch;
    EXPECT_TRUE(store_->ReadOutbox(0, 1000, &batch).ok());
    return static_cast<int64_t>(Parse(batch)["commits"].size());
  }

  std::unique_ptr<Store> store_;
  HostBoundTestConnection* host_ = nullptr;
};

TEST_P(ConnectionTest, IntsBeyondTwoToThe53StayExactInKeysColumnsAndMintedIds) {
  ASSERT_TRUE(Commit(R"([{"op":"put","table":"t/counter","row":{"n":9007199254740993,"v":"a",)"
                     R"("big":9223372036854775807,"x":1}}])")
                  .ok());
  // Rows cross to JS with an int beyond 2^53 as a decimal string (ABI.md).
  EXPECT_EQ(Get("[9007199254740993]"), R"(["9007199254740993","a","9223372036854775807",1.0])");
  EXPECT_EQ(Get("[9007199254740992]"), "null");
  int64_t id = 0;
  ASSERT_TRUE(store_->MintId("t/counter", &id).ok());
  EXPECT_EQ(id, 9007199254740994);
  // A set expression on a big int, and a where on it.
  ASSERT_TRUE(
      Commit(R"([{"op":"update","table":"t/counter","where":{"gte":["n",9007199254740993]},)"
             R"("set":{"big":{"sub":[{"col":"big"},{"value":2}]}}}])")
          .ok());
  EXPECT_EQ(Get("[9007199254740993]"), R"(["9007199254740993","a","9223372036854775805",1.0])");
  std::string page;
  ASSERT_TRUE(
      store_->Page("t/counter", R"({"where":{"eq":["big",9223372036854775805]}})", 10, "", &page)
          .ok());
  EXPECT_EQ(Parse(page)["rows"].size(), 1u);
}

TEST_P(ConnectionTest, AnOverflowingAddIsRefusedAndTheCommitLeavesNothing) {
  ASSERT_TRUE(
      Commit(
          R"([{"op":"put","table":"t/counter","row":{"n":1,"v":"a","big":9223372036854775800}}])")
          .ok());
  const int64_t head = store_->head();
  Status s = Commit(R"([{"op":"put","table":"t/counter","row":{"n":2,"v":"b"}},)"
                    R"({"op":"update","table":"t/counter","key":[1],)"
                    R"("set":{"big":{"add":[{"col":"big"},{"value":100}]}}}])");
  EXPECT_EQ(s.code(), Code::kInvalidArgs) << s.ToString();
  EXPECT_NE(s.message().find("integer overflow"), std::string::npos) << s.message();
  EXPECT_EQ(store_->head(), head);
  EXPECT_EQ(Get("[2]"), "null");
  EXPECT_EQ(OutboxCount(), head);
  // In range: nested adds; NULL propagates through add.
  Status fold =
      Commit(R"([{"op":"put","table":"t/counter","row":{"n":3,"v":"c"}},)"
             R"({"op":"update","table":"t/counter","key":[1],)"
             R"("set":{"big":{"add":[{"add":[{"col":"big"},{"value":-1}]},{"value":-2}]}}},)"
             R"({"op":"update","table":"t/counter","key":[3],)"
             R"("set":{"big":{"add":[{"col":"big"},{"value":1}]}}}])");
  ASSERT_TRUE(fold.ok()) << fold.ToString();
  EXPECT_EQ(Get("[1]"), R"([1,"a","9223372036854775797",null])");
  EXPECT_EQ(Get("[3]"), R"([3,"c",null,null])");
}

INSTANTIATE_TEST_SUITE_P(Connections, ConnectionTest, testing::Bool(),
                         [](const auto& info) { return info.param ? "HostBound" : "Embedded"; });

class HostBoundTest : public ConnectionTest {};

TEST_P(HostBoundTest, AValueAboveTheHostLimitFailsWithLimitAndCommitsNothing) {
  const int64_t head = store_->head();
  const std::string big(2000001, 'x');
  Status s = Commit(R"([{"op":"put","table":"t/counter","row":{"n":1,"v":"small"}},)"
                    R"({"op":"put","table":"t/counter","row":{"n":2,"v":")" +
                    big + R"("}}])");
  EXPECT_EQ(s.code(), Code::kLimit) << s.ToString();
  // Refused before the statement is sent, naming the row's key and size
  // (the value's 2,000,001 bytes, 8 for each of the table's other columns).
  EXPECT_NE(s.message().find("the row [2] is 2000025 bytes"), std::string::npos) << s.message();
  EXPECT_EQ(store_->head(), head);
  EXPECT_EQ(Get("[1]"), "null");
  EXPECT_EQ(OutboxCount(), head);
}

// Small values (ints, short texts) are written into a statement that would
// bind more than 100 (SqlBuilder::InlineSmallParams); nums stay bound.
TEST_P(HostBoundTest, MoreThanAHundredBoundNumsFailWithLimitAndCommitNothing) {
  const int64_t head = store_->head();
  // Comparisons other than equalities (which an or folds into one IN list,
  // bound as one JSON text) keep each num a bound value.
  std::string ors;
  for (int i = 0; i < 101; ++i)
    ors += (i ? "," : "") + std::string(R"({"gt":["x",)") + std::to_string(i) + ".5]}";
  Status s = Commit(R"([{"op":"put","table":"t/counter","row":{"n":1,"v":"small"}},)"
                    R"({"op":"delete","table":"t/counter","where":{"or":[)" +
                    ors + "]}}]");
  EXPECT_EQ(s.code(), Code::kLimit) << s.ToString();
  EXPECT_NE(s.message().find("101 values"), std::string::npos) << s.message();
  EXPECT_EQ(store_->head(), head);
  EXPECT_EQ(Get("[1]"), "null");
  // 101 texts are written into the statement: it commits, and deletes the
  // row whose text is among them.
  std::string texts;
  for (int i = 0; i < 101; ++i)
    texts += (i ? "," : "") + std::string(R"({"eq":["v","it's )") + std::to_string(i) + "\"]}";
  ASSERT_TRUE(Commit(R"([{"op":"put","table":"t/counter","row":{"n":1,"v":"it's 100"}},)"
                     R"({"op":"put","table":"t/counter","row":{"n":2,"v":"kept"}},)"
                     R"({"op":"delete","table":"t/counter","where":{"or":[)" +
                     texts + "]}}]")
                  .ok());
  EXPECT_EQ(store_->head(), head + 1);
  EXPECT_EQ(Get("[1]"), "null");
  EXPECT_NE(Get("[2]"), "null");
  ASSERT_TRUE(Commit(R"([{"op":"delete","table":"t/counter","key":[2]}])").ok());
  // A long inArray goes through json_each: one parameter, no limit.
  std::string list;
  for (int i = 0; i < 500; ++i) list += (i ? "," : "") + std::to_string(i);
  ASSERT_TRUE(Commit(R"([{"op":"put","table":"t/counter","row":{"n":7,"v":"seven"}}])").ok());
  std::string page;
  Status p =
      store_->Page("t/counter", R"({"where":{"inArray":["n",[)" + list + "]]}}", 10, "", &page);
  ASSERT_TRUE(p.ok()) << p.ToString();
  EXPECT_EQ(Parse(page)["rows"].size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Connections, HostBoundTest, testing::Values(true),
                         [](const auto&) { return "HostBound"; });

TEST(HostLimits, AStatementAboveAHundredThousandBytesIsALimit) {
  HostLimits limits;
  EXPECT_TRUE(CheckHostLimits(limits, std::string(100000, ' '), {}, "q").ok());
  Status s = CheckHostLimits(limits, std::string(100001, ' '), {}, "q");
  EXPECT_EQ(s.code(), Code::kLimit);
  EXPECT_NE(s.message().find("100001 bytes of SQL"), std::string::npos) << s.message();
}

TEST(HostSqlError, WorkerdsOwnMessagesMapToTheirCodes) {
  // The texts workerd gave for each case (Miniflare 4, workerd 2026-07-30).
  EXPECT_EQ(HostSqlError("string or blob too big: SQLITE_TOOBIG", "put").code(), Code::kLimit);
  EXPECT_EQ(HostSqlError("statement too long: SQLITE_TOOBIG", "q").code(), Code::kLimit);
  EXPECT_EQ(HostSqlError("too many SQL variables at offset 207: SQLITE_ERROR", "q").code(),
            Code::kLimit);
  EXPECT_EQ(HostSqlError("To execute a transaction, please use the state.storage.transaction() "
                         "or state.storage.transactionSync() APIs instead of the SQL BEGIN "
                         "TRANSACTION or SAVEPOINT statements.",
                         "BEGIN")
                .code(),
            Code::kLimit);
  EXPECT_EQ(HostSqlError("integer overflow: SQLITE_ERROR", "update").code(), Code::kInvalidArgs);
  EXPECT_EQ(HostSqlError("UNIQUE constraint failed: t.k: SQLITE_CONSTRAINT", "put").code(),
            Code::kInvalidArgs);
  EXPECT_EQ(HostSqlError("no such table: x: SQLITE_ERROR", "q").code(), Code::kStorageFailed);
  // A name in the message that reads like a limit is not one.
  EXPECT_EQ(HostSqlError("no such table: too big: SQLITE_ERROR", "q").code(), Code::kStorageFailed);
}

TEST(PrefixUpperBoundUtf8, IsTheNextCodePointAndAlwaysValidUtf8) {
  EXPECT_EQ(PrefixUpperBoundUtf8("a/"), "a0");
  EXPECT_EQ(PrefixUpperBoundUtf8(""), "");
  EXPECT_EQ(PrefixUpperBoundUtf8("\xC2\xBF"), "\xC3\x80");              // U+00BF -> U+00C0
  EXPECT_EQ(PrefixUpperBoundUtf8("x\xED\x9F\xBF"), "x\xEE\x80\x80");    // U+D7FF -> U+E000
  EXPECT_EQ(PrefixUpperBoundUtf8("\xEF\xBF\xBF"), "\xF0\x90\x80\x80");  // U+FFFF -> U+10000
  EXPECT_EQ(PrefixUpperBoundUtf8("b\xF4\x8F\xBF\xBF"), "c");            // U+10FFFF dropped
  EXPECT_EQ(PrefixUpperBoundUtf8("\xF4\x8F\xBF\xBF"), "");
}

TEST(SqlDialect, HostBoundBindsIntsThroughCastAndReadsSafeOnesAsNumbersAndOthersAsText) {
  SqlBuilder b(SqlDialect::HostBound());
  b.Append("SELECT ").AppendParam(Value::Int(1)).Append(", ").AppendParam(Value::Str("s"));
  EXPECT_EQ(b.sql(), "SELECT CAST(? AS INTEGER), ?");
  SqlBuilder e;
  e.Append("SELECT ").AppendParam(Value::Int(1));
  EXPECT_EQ(e.sql(), "SELECT ?");
  EXPECT_EQ(IntResultSql(SqlDialect::HostBound(), "seq"),
            "CASE WHEN seq BETWEEN -9007199254740991 AND 9007199254740991 THEN seq "
            "ELSE CAST(seq AS TEXT) END");
  EXPECT_EQ(IntResultSql(SqlDialect::Embedded(), "seq"), "seq");
}

// Issue 13 (Durable Objects, step three): an int result crosses a host that
// returns doubles as a number when a double holds it exactly, as its text
// otherwise, and reads back exact either way.
TEST(SqlDialect, HostBoundIntResultsReadBackExactOnBothSidesOf2To53) {
  HostBoundTestConnection c;
  ASSERT_TRUE(c.Open().ok());
  ASSERT_TRUE(c.Exec("CREATE TABLE t (n INTEGER) STRICT").ok());
  const std::vector<int64_t> values = {0,
                                       -1,
                                       9007199254740991,
                                       -9007199254740991,
                                       9007199254740992,
                                       -9007199254740992,
                                       9007199254740993,
                                       INT64_MAX,
                                       INT64_MIN};
  for (int64_t v : values) {
    SqlBuilder b(SqlDialect::HostBound());
    b.Append("INSERT INTO t (n) VALUES (").AppendParam(Value::Int(v)).Append(")");
    ASSERT_TRUE(c.Run(b.sql(), b.params(), "insert", nullptr, false).ok());
  }
  SqlRows rows;
  ASSERT_TRUE(c.Run("SELECT " + IntResultSql(SqlDialect::HostBound(), "n") + " FROM t ORDER BY rowid",
                    {}, "select", &rows, false)
                  .ok());
  ASSERT_EQ(rows.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    bool ok = false;
    EXPECT_EQ(SqlCellInt(rows.at(i, 0), &ok), values[i]) << i;
    EXPECT_TRUE(ok) << i;
    // Safe integers came as numbers, the others as text.
    const bool safe = values[i] >= -9007199254740991 && values[i] <= 9007199254740991;
    EXPECT_EQ(rows.at(i, 0).type() == Type::kStr, !safe) << i;
  }
}

// --- pages whose rows stay with the host (a Durable Object's) -----------------

// HostBoundTestConnection that keeps a held read's rows, as the durable
// runtime does (js/loader-workerd.js): it answers their number and the cells
// of the last two only.
class HoldingConnection : public HostBoundTestConnection {
 public:
  bool CanHoldRows() const override { return true; }
  Status Run(const std::string& sql, const std::vector<Value>& params, const std::string& what,
             SqlRows* rows, bool count_changes) override {
    ONESTORE_RETURN_IF_ERROR(
        HostBoundTestConnection::Run(sql, params, what, rows, count_changes));
    if (rows != nullptr && rows->hold) {
      ++holds;
      rows->held = rows->size();
      const size_t keep = std::min<size_t>(rows->held, 2);
      rows->cells.erase(rows->cells.begin(),
                        rows->cells.end() - static_cast<std::ptrdiff_t>(keep * rows->columns));
    }
    return Status::OK();
  }
  int holds = 0;
};

TEST(HeldPages, APageOfAHoldingHostAnswersItsRowCountAndTheSameCursorsAsOneThatDoesNot) {
  auto c = std::make_unique<HoldingConnection>();
  HoldingConnection* holding = c.get();
  std::unique_ptr<Store> held, plain;
  ASSERT_TRUE(Store::OpenWith(NewSqlBackend(std::move(c)), "s", &held).ok());
  ASSERT_TRUE(Store::OpenWith(NewSqlBackend(std::make_unique<HostBoundTestConnection>()), "s",
                              &plain)
                  .ok());
  const char kFlags[] =
      R"({"op":"table","table":"t/flags","columns":{"n":{"type":"int"},"on":{"type":"bool"}},)"
      R"("key":["n"]})";
  for (Store* s : {held.get(), plain.get()}) {
    std::string records, result;
    ASSERT_TRUE(s->Declare(kCounter, &records).ok());
    ASSERT_TRUE(s->Commit(records, R"({"owner":"t"})", &result).ok());
    ASSERT_TRUE(s->Declare(kFlags, &records).ok());
    ASSERT_TRUE(s->Commit(records, R"({"owner":"t"})", &result).ok());
    std::string ops = "[";
    for (int i = 0; i < 5; ++i) {
      if (i > 0) ops += ",";
      ops += R"({"op":"put","table":"t/counter","row":{"n":)" + std::to_string(10 - i) +
             R"(,"v":"v)" + std::to_string(i) + R"("}},{"op":"put","table":"t/flags","row":{"n":)" +
             std::to_string(i) + R"(,"on":true}})";
    }
    Status st = s->Commit(ops + "]", R"({"owner":"t"})", &result);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  // Pages of 2 in the order of v: 2 rows and a cursor, 2 and a cursor, 1.
  const std::string q = R"({"orderBy":[["v","asc"]]})";
  std::string after_held, after_plain;
  for (int page = 0; page < 3; ++page) {
    std::string a, b;
    ASSERT_TRUE(held->Page("t/counter", q, 2, after_held, &a).ok());
    ASSERT_TRUE(plain->Page("t/counter", q, 2, after_plain, &b).ok());
    const Json ja = Parse(a), jb = Parse(b);
    EXPECT_FALSE(ja.contains("rows")) << a;
    EXPECT_EQ(ja["held"], jb["rows"].size()) << a << " " << b;
    EXPECT_EQ(ja.contains("next"), page < 2) << a;
    EXPECT_EQ(ja.value("next", ""), jb.value("next", "")) << a << " " << b;
    after_held = ja.value("next", "");
    after_plain = jb.value("next", "");
  }
  EXPECT_EQ(holding->holds, 3);
  // A table with a bool column (the host has 0 or 1, the package true or
  // false) is answered as rows.
  std::string a;
  ASSERT_TRUE(held->Page("t/flags", "", 10, "", &a).ok());
  EXPECT_EQ(Parse(a)["rows"].size(), 5u) << a;
  EXPECT_EQ(holding->holds, 3);
  // Reads other than a page (a get, a count) are never held.
  std::string row;
  ASSERT_TRUE(held->Get("t/counter", "[10]", &row).ok());
  EXPECT_EQ(Parse(row)[1], "v0") << row;
  EXPECT_EQ(holding->holds, 3);
}

// --- the embedded connection's joined puts ------------------------------------

class JoinedPutsTest : public testing::Test {
 protected:
  void SetUp() override {
    SqliteOptions o;
    o.path = ":memory:";
    conn_ = NewEmbeddedConnection(o);
    ASSERT_TRUE(conn_->Open().ok());
    ASSERT_TRUE(conn_->Exec("CREATE TABLE t (k TEXT PRIMARY KEY, n INTEGER NOT NULL, s TEXT) "
                            "STRICT, WITHOUT ROWID; CREATE INDEX t_n ON t (n);"
                            "CREATE TABLE u (k INTEGER PRIMARY KEY, v TEXT) STRICT")
                    .ok());
  }
  Status PutT(const std::string& k, Value n, const std::string& s) {
    std::vector<Value> params = {Value::Str(k), std::move(n), Value::Str(s)};
    return conn_->RunRow("INSERT OR REPLACE INTO t (k, n, s) VALUES ", "(?, ?, ?)", &params,
                         "put into table \"t\"");
  }
  Status PutU(int64_t k, const std::string& v) {
    std::vector<Value> params = {Value::Int(k), Value::Str(v)};
    return conn_->RunRow("INSERT OR REPLACE INTO u (k, v) VALUES ", "(?, ?)", &params,
                         "put into table \"u\"");
  }
  // Every row of `sql` as "a|b|c" lines.
  std::string Rows(const std::string& sql) {
    SqlRows rows;
    Status s = conn_->Run(sql, {}, "reading", &rows);
    EXPECT_TRUE(s.ok()) << s.ToString();
    std::string out;
    for (size_t r = 0; r < rows.size(); ++r) {
      for (size_t c = 0; c < rows.columns; ++c) {
        const Value& v = rows.at(r, c);
        if (c > 0) out += "|";
        out += v.type() == Type::kInt ? std::to_string(v.int_value()) : v.is_null() ? "null" : v.text();
      }
      out += "\n";
    }
    return out;
  }
  std::unique_ptr<SqlConnection> conn_;
};

TEST_F(JoinedPutsTest, AJoinedPutThatBreaksAConstraintFailsAtFlushNamedByItsPutAndLeavesNothing) {
  ASSERT_TRUE(conn_->Begin().ok());
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(PutT("a" + std::to_string(i), Value::Int(i), "x").ok());
  // A text in the STRICT INTEGER column: SQLite refuses it, but only when
  // the joined statement runs; the put itself is accepted and waits.
  EXPECT_TRUE(PutT("bad", Value::Str("not an int"), "x").ok());
  for (int i = 20; i < 30; ++i) ASSERT_TRUE(PutT("a" + std::to_string(i), Value::Int(i), "x").ok());
  Status s = conn_->Flush();
  EXPECT_EQ(s.code(), Code::kInvalidArgs) << s.ToString();
  EXPECT_NE(s.message().find("put into table \"t\""), std::string::npos) << s.message();
  // Nothing waits after the failure: the transaction goes on without it.
  EXPECT_TRUE(conn_->Flush().ok());
  conn_->Rollback();
  EXPECT_EQ(Rows("SELECT count(*) FROM t"), "0\n");
}

TEST_F(JoinedPutsTest, JoinedPutsWriteWhatOnePutAtATimeWroteInOrderAcrossTablesAndReads) {
  // Puts one at a time outside a transaction (each its own statement) give
  // the expected content; the same puts in a transaction, joined, must give
  // the same: every count from 1 to 200 (the sizes 64, 16, 4, 1 and their
  // sums), a key put twice in one statement (the later row wins, as it did
  // one statement at a time), puts into two tables interleaved, and a read
  // in the middle that sees every put before it.
  for (int count : {1, 3, 4, 5, 17, 63, 64, 65, 130, 200}) {
    ASSERT_TRUE(conn_->Exec("DELETE FROM t; DELETE FROM u").ok());
    std::string want_t, want_u;
    std::map<std::string, std::pair<int, std::string>> t;
    ASSERT_TRUE(conn_->Begin().ok());
    for (int i = 0; i < count; ++i) {
      const std::string k = "k" + std::to_string(1000 + i % 50);  // keys repeat after 50
      ASSERT_TRUE(PutT(k, Value::Int(i), "v" + std::to_string(i)).ok());
      t[k] = {i, "v" + std::to_string(i)};
      if (i % 37 == 36) {
        ASSERT_TRUE(PutU(i, "u" + std::to_string(i)).ok());
      }
      if (i == count / 2) {
        EXPECT_EQ(Rows("SELECT count(*) FROM t"), std::to_string(t.size()) + "\n") << count;
      }
    }
    ASSERT_TRUE(conn_->Commit().ok());
    for (const auto& [k, v] : t) want_t += k + "|" + std::to_string(v.first) + "|" + v.second + "\n";
    for (int i = 36; i < count; i += 37) want_u += std::to_string(i) + "|u" + std::to_string(i) + "\n";
    EXPECT_EQ(Rows("SELECT k, n, s FROM t ORDER BY k"), want_t) << count;
    EXPECT_EQ(Rows("PRAGMA integrity_check"), "ok\n") << count;  // the index agrees
    EXPECT_EQ(Rows("SELECT k, v FROM u ORDER BY k"), want_u) << count;
  }
  // A rollback drops the puts that wait.
  ASSERT_TRUE(conn_->Begin().ok());
  ASSERT_TRUE(PutT("gone", Value::Int(1), "x").ok());
  conn_->Rollback();
  EXPECT_EQ(Rows("SELECT count(*) FROM t WHERE k = 'gone'"), "0\n");
}

}  // namespace
}  // namespace onestore
