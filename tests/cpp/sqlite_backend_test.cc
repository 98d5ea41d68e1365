// Checks the sqlite backend: real STRICT tables and indexes, every Backend
// call on SQLite's in-memory database, the in-memory file system and real
// files; a store file read by the real `sqlite3` command; fencing of an
// earlier owner; the statements a commit runs (no epoch read with the lock
// held for life, no _meta row) and the head of head format 2 (the outbox's,
// _meta.head caught up at open, trim and close); and, with failures
// injected into the k-th write or sync, that every acknowledged commit
// survives (a crash included) and a failed one is there whole or not at all.
#include "backends/sqlite/sqlite_backend.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "backends/sqlite/embedded_connection.h"
#include "backends/sqlite/mem_file.h"
#include "backends/sqlite/vfs.h"
#include "predicates.h"
#include "sqlite3.h"

namespace onestore {
namespace {

using test::Cmp;

using TablePtr = std::shared_ptr<const TableSchema>;

TablePtr MakeTable(const std::string& json) {
  auto t = std::make_shared<TableSchema>();
  Json j = Json::parse(json, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << json;
  Status s = ParseTableSchema(j, "test", t.get());
  EXPECT_TRUE(s.ok()) << s.ToString();
  return t;
}

// The table of design.md's example, with an optional column and a num.
// Columns: 0 id, 1 path, 2 entry, 3 at, 4 meta, 5 done, 6 score, 7 note.
const char kEdits[] = R"({"op":"table","table":"file-history/edits","version":2,"columns":{
  "id":{"type":"str"},"path":{"type":"str"},"entry":{"type":"int"},"at":{"type":"int"},
  "meta":{"type":"json"},"done":{"type":"bool"},"score":{"type":"num"},
  "note":{"type":"str","optional":true}},"key":["id"],
  "indexes":{"byPath":["path","at"],"byEntry":["entry"]}})";

// A table keyed by one int (a rowid table).
const char kCounters[] = R"({"op":"table","table":"c/counters","columns":{
  "id":{"type":"int"},"n":{"type":"int","optional":true}},"key":["id"]})";

Row Edit(const std::string& id, const std::string& path, int64_t entry, int64_t at,
         std::optional<std::string> note = std::nullopt) {
  return {Value::Str(id),
          Value::Str(path),
          Value::Int(entry),
          Value::Int(at),
          Value::JsonText("{\"k\":[1,2]}"),
          Value::Bool(entry % 2 == 0),
          Value::Num(at * 0.5),
          note ? Value::Str(*note) : Value()};
}

Op TableOp(TablePtr t) {
  Op op;
  op.kind = OpKind::kTable;
  op.table = std::move(t);
  return op;
}
Op Put(TablePtr t, Row row) {
  Op op;
  op.kind = OpKind::kPut;
  op.table = std::move(t);
  op.row = std::move(row);
  return op;
}
Op Update(TablePtr t, Key key, std::vector<SetItem> set) {
  Op op;
  op.kind = OpKind::kUpdate;
  op.table = std::move(t);
  op.key = std::move(key);
  op.set = std::move(set);
  return op;
}
Op Delete(TablePtr t, Key key) {
  Op op;
  op.kind = OpKind::kDelete;
  op.table = std::move(t);
  op.key = std::move(key);
  return op;
}
Op Bulk(OpKind kind, TablePtr t, std::optional<Predicate> where, std::vector<SetItem> set = {}) {
  Op op;
  op.kind = kind;
  op.table = std::move(t);
  op.where = std::move(where);
  op.set = std::move(set);
  return op;
}
Expr ColExpr(int c, Type type) {
  Expr e;
  e.op = ExprOp::kCol;
  e.column = c;
  e.type = type;
  return e;
}
Expr ValueExpr(Value v) {
  Expr e;
  e.op = ExprOp::kValue;
  e.type = v.type();
  e.value = std::move(v);
  return e;
}
SetItem Set(int column, Expr e) {
  SetItem item;
  item.column = column;
  item.expr = std::move(e);
  return item;
}
Expr AddExpr(Expr a, Expr b) {
  Expr e;
  e.op = ExprOp::kAdd;
  e.type = Type::kInt;
  e.args = {std::move(a), std::move(b)};
  return e;
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/onestore-backend-" +
         std::to_string(::getpid()) + "-" + name;
}

void RemoveStoreFiles(const std::string& path) {
  std::remove(path.c_str());
  std::remove((path + "-journal").c_str());
  std::remove((path + "-wal").c_str());
  std::remove((path + "-lock").c_str());
}

// Drives a backend the way the commit layer does: one transaction per
// commit, ops then the outbox record, then COMMIT.
class Driver {
 public:
  explicit Driver(std::unique_ptr<Backend> b) : b_(std::move(b)) {}
  Backend* operator->() { return b_.get(); }
  Backend* get() { return b_.get(); }

  Status Open(const std::string& id = "s1") {
    Status s = b_->Open(id, &state_);
    if (!s.ok()) return s;
    head_ = state_.head;
    for (const Json& j : state_.tables) {
      auto t = std::make_shared<TableSchema>();
      Status p = ParseTableSchema(j, "stored", t.get());
      if (!p.ok()) return p;
      stored_[t->name] = t;
    }
    return Status::OK();
  }

  // Commits `ops` as seq head+1; returns the status of the first failing
  // call (and rolls back), or OK once COMMIT succeeded.
  Status Commit(std::vector<Op>* ops) {
    ONESTORE_RETURN_IF_ERROR(b_->Begin());
    std::map<std::string, TablePtr> declared;
    for (Op& op : *ops) {
      const TableSchema* previous = nullptr;
      if (op.kind == OpKind::kTable) {
        auto it = stored_.find(op.table->name);
        if (it != stored_.end()) previous = it->second.get();
      }
      Status s = b_->Apply(&op, previous);
      if (!s.ok()) {
        b_->Rollback();
        return s;
      }
      if (op.kind == OpKind::kTable) declared[op.table->name] = op.table;
    }
    const int64_t seq = head_ + 1;
    Status s = b_->AppendOutbox(seq, "{\"seq\":" + std::to_string(seq) + "}");
    if (!s.ok()) {
      b_->Rollback();
      return s;
    }
    s = b_->Commit();
    if (!s.ok()) {
      b_->Rollback();
      return s;
    }
    head_ = seq;
    for (auto& [name, t] : declared) stored_[name] = t;
    return Status::OK();
  }
  Status Commit(std::vector<Op> ops) { return Commit(&ops); }

  const BackendState& state() const { return state_; }
  int64_t head() const { return head_; }

 private:
  std::unique_ptr<Backend> b_;
  BackendState state_;
  int64_t head_ = 0;
  std::map<std::string, TablePtr> stored_;
};

std::optional<Row> GetRow(Driver* d, const TableSchema& t, Key key) {
  std::optional<Row> row;
  Status s = (*d)->Get(t, key, &row);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return row;
}

// --- the Backend contract on each kind of storage ------------------------------

enum class Storage { kSqliteMemory, kMemFs, kPosix };

class SqliteBackendTest : public testing::TestWithParam<Storage> {
 protected:
  void SetUp() override {
    switch (GetParam()) {
      case Storage::kSqliteMemory:
        path_ = ":memory:";
        break;
      case Storage::kMemFs:
        ASSERT_TRUE(RegisterVfs(&mem_).ok());
        path_ = "/stores/s.sqlite";
        break;
      case Storage::kPosix:
        ASSERT_TRUE(RegisterVfs(PosixFileSystem()).ok());
        std::string name = testing::UnitTest::GetInstance()->current_test_info()->name();
        for (char& c : name) {
          if (c == '/') c = '_';
        }
        path_ = TempPath(name);
        RemoveStoreFiles(path_);
        break;
    }
    edits_ = MakeTable(kEdits);
    counters_ = MakeTable(kCounters);
  }
  void TearDown() override {
    if (GetParam() == Storage::kPosix) RemoveStoreFiles(path_);
    RegisterVfs(PosixFileSystem());
  }

  bool persistent() const { return GetParam() != Storage::kSqliteMemory; }

  std::unique_ptr<Driver> OpenDriver(const std::string& id = "s1") {
    SqliteOptions options;
    options.path = path_;
    auto d = std::make_unique<Driver>(NewSqliteBackend(options));
    Status s = d->Open(id);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return d;
  }

  // Declares both tables and puts rows e1..e5.
  void Fill(Driver* d) {
    ASSERT_TRUE(d->Commit({TableOp(edits_), TableOp(counters_)}).ok());
    std::vector<Op> ops;
    ops.push_back(Put(edits_, Edit("e1", "a/x.ts", 812, 1)));
    ops.push_back(Put(edits_, Edit("e2", "a/y.ts", 813, 2, "n")));
    ops.push_back(Put(edits_, Edit("e3", "b/z.ts", 814, 3)));
    ops.push_back(Put(edits_, Edit("e4", "a/x.ts", 815, 4)));
    ops.push_back(Put(edits_, Edit("e5", "测试/q", 816, 5)));
    Status s = d->Commit(&ops);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  MemFileSystem mem_;
  std::string path_;
  TablePtr edits_, counters_;
};

TEST_P(SqliteBackendTest, ANewStoreTakesTheGivenIdAndStartsAtHeadZero) {
  auto d = OpenDriver("session-42");
  EXPECT_EQ(d->state().id, "session-42");
  EXPECT_EQ(d->state().head, 0);
  EXPECT_TRUE(d->state().tables.empty());
}

TEST_P(SqliteBackendTest, ReopeningKeepsTheIdTheHeadAndTheTableRecords) {
  if (!persistent()) GTEST_SKIP() << ":memory: ends with its connection";
  {
    auto d = OpenDriver("first");
    Fill(d.get());
    (*d)->Close();
  }
  auto d = OpenDriver("ignored");
  EXPECT_EQ(d->state().id, "first");
  EXPECT_EQ(d->state().head, 2);
  ASSERT_EQ(d->state().tables.size(), 2u);
  EXPECT_EQ(d->state().tables[1],
            edits_->ToJson());  // ordered by name: c/... then file-history/...
  auto row = GetRow(d.get(), *edits_, {Value::Str("e2")});
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(*row, Edit("e2", "a/y.ts", 813, 2, "n"));
}

TEST_P(SqliteBackendTest, ValuesReadBackAsTheirColumnTypes) {
  auto d = OpenDriver();
  ASSERT_TRUE(d->Commit({TableOp(edits_), TableOp(counters_)}).ok());
  Row big = Edit("big", "p", 9007199254740993LL, -9223372036854775807LL - 1);
  big[6] = Value::Num(3.0);  // an integral num comes back as a num, not an int
  ASSERT_TRUE(d->Commit({Put(edits_, big), Put(counters_, {Value::Int(7), Value()})}).ok());
  auto row = GetRow(d.get(), *edits_, {Value::Str("big")});
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(*row, big);
  EXPECT_EQ((*row)[5].type(), Type::kBool);
  EXPECT_EQ((*row)[6].type(), Type::kNum);
  EXPECT_EQ((*row)[4].type(), Type::kJson);
  EXPECT_EQ((*row)[7].type(), Type::kNull);
  auto counter = GetRow(d.get(), *counters_, {Value::Int(7)});
  ASSERT_TRUE(counter.has_value());
  EXPECT_EQ(*counter, (Row{Value::Int(7), Value()}));
  EXPECT_FALSE(GetRow(d.get(), *counters_, {Value::Int(8)}).has_value());
}

TEST_P(SqliteBackendTest, PutReplacesUpdateReadsTheOldRowAndDeletingAMissingKeyCountsZero) {
  auto d = OpenDriver();
  Fill(d.get());
  ASSERT_TRUE(d->Commit({Put(edits_, Edit("e1", "a/new.ts", 900, 10))}).ok());
  EXPECT_EQ((*GetRow(d.get(), *edits_, {Value::Str("e1")}))[1], Value::Str("a/new.ts"));
  // at = entry, entry = at: both read the row before the update.
  Status s = d->Commit({Update(edits_, {Value::Str("e1")},
                               {Set(3, ColExpr(2, Type::kInt)), Set(2, ColExpr(3, Type::kInt))})});
  ASSERT_TRUE(s.ok()) << s.ToString();
  auto row = GetRow(d.get(), *edits_, {Value::Str("e1")});
  EXPECT_EQ((*row)[2], Value::Int(10));
  EXPECT_EQ((*row)[3], Value::Int(900));
  std::vector<Op> deletes;
  deletes.push_back(Delete(edits_, {Value::Str("e1")}));
  deletes.push_back(Delete(edits_, {Value::Str("nope")}));
  ASSERT_TRUE(d->Commit(&deletes).ok());
  EXPECT_FALSE(GetRow(d.get(), *edits_, {Value::Str("e1")}).has_value());
  // A key op's count is what the commit answers: 1 or 0 rows.
  EXPECT_EQ(deletes[0].count, 1);
  EXPECT_EQ(deletes[1].count, 0);
}

TEST_P(SqliteBackendTest, UpdatingAMissingKeyIsNotFoundNamingTheTableAndKey) {
  auto d = OpenDriver();
  Fill(d.get());
  Status s = d->Commit({Update(edits_, {Value::Str("ghost")}, {Set(3, ValueExpr(Value::Int(1)))})});
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("file-history/edits"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("ghost"), std::string::npos) << s.message();
  s = d->Commit({Update(edits_, {Value::Str("ghost")}, {})});
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_EQ(d->head(), 2);
}

TEST_P(SqliteBackendTest, UpdateWhereIsOneStatementWithTheAffectedCount) {
  auto d = OpenDriver();
  Fill(d.get());
  Expr rp;
  rp.op = ExprOp::kReplacePrefix;
  rp.type = Type::kStr;
  rp.column = 1;
  rp.from = "a/";
  rp.to = "b/";
  std::vector<Op> ops;
  ops.push_back(
      Bulk(OpKind::kUpdateWhere, edits_, Cmp(PredOp::kPrefix, 1, Value::Str("a/")), {Set(1, rp)}));
  ops.push_back(Bulk(OpKind::kUpdateWhere, edits_, std::nullopt,
                     {Set(3, AddExpr(ColExpr(3, Type::kInt), ValueExpr(Value::Int(100))))}));
  ops.push_back(Bulk(OpKind::kDeleteWhere, edits_, Cmp(PredOp::kLt, 3, Value::Int(103))));
  ops.push_back(Bulk(OpKind::kDeleteWhere, edits_, Cmp(PredOp::kEq, 1, Value::Str("zzz"))));
  Status s = d->Commit(&ops);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(ops[0].count, 3);  // e1, e2, e4
  EXPECT_EQ(ops[1].count, 5);  // no where: every row
  EXPECT_EQ(ops[2].count, 2);  // e1 (101), e2 (102)
  EXPECT_EQ(ops[3].count, 0);
  int64_t n = 0;
  ASSERT_TRUE((*d)->Count(*edits_, nullptr, &n).ok());
  EXPECT_EQ(n, 3);
  Predicate in_b = Cmp(PredOp::kPrefix, 1, Value::Str("b/"));
  ASSERT_TRUE((*d)->Count(*edits_, &in_b, &n).ok());
  EXPECT_EQ(n, 2);  // b/z.ts and the moved a/x.ts of e4
  EXPECT_EQ((*GetRow(d.get(), *edits_, {Value::Str("e4")}))[1], Value::Str("b/x.ts"));
}

TEST_P(SqliteBackendTest, IntegerOverflowInAddIsInvalidArgsAndChangesNothing) {
  auto d = OpenDriver();
  Fill(d.get());
  ASSERT_TRUE(d->Commit({Put(counters_, {Value::Int(1), Value::Int(5)}),
                         Put(counters_, {Value::Int(2), Value::Int(INT64_MAX)}),
                         Put(counters_, {Value::Int(3), Value::Int(6)})})
                  .ok());
  Expr plus_one = AddExpr(ColExpr(1, Type::kInt), ValueExpr(Value::Int(1)));
  Status s = d->Commit({Update(counters_, {Value::Int(2)}, {Set(1, plus_one)})});
  EXPECT_EQ(s.code(), Code::kInvalidArgs) << s.ToString();
  EXPECT_NE(s.message().find("overflow"), std::string::npos) << s.message();

  // Inside one transaction, the failed statement undoes its own rows only.
  ASSERT_TRUE((*d)->Begin().ok());
  Op bulk = Bulk(OpKind::kUpdateWhere, counters_, std::nullopt, {Set(1, plus_one)});
  s = (*d)->Apply(&bulk, nullptr);
  EXPECT_EQ(s.code(), Code::kInvalidArgs) << s.ToString();
  Op put = Put(counters_, {Value::Int(4), Value::Int(0)});
  ASSERT_TRUE((*d)->Apply(&put, nullptr).ok());
  ASSERT_TRUE((*d)->AppendOutbox(d->head() + 1, "{}").ok());
  ASSERT_TRUE((*d)->Commit().ok());
  EXPECT_EQ((*GetRow(d.get(), *counters_, {Value::Int(1)}))[1], Value::Int(5));
  EXPECT_EQ((*GetRow(d.get(), *counters_, {Value::Int(2)}))[1], Value::Int(INT64_MAX));
  EXPECT_EQ((*GetRow(d.get(), *counters_, {Value::Int(3)}))[1], Value::Int(6));
  EXPECT_TRUE(GetRow(d.get(), *counters_, {Value::Int(4)}).has_value());
}

TEST_P(SqliteBackendTest, PagesWalkTheWholeOrderWithoutGapsOrRepeats) {
  auto d = OpenDriver();
  ASSERT_TRUE(d->Commit({TableOp(edits_)}).ok());
  std::vector<Op> ops;
  for (int i = 0; i < 40; ++i) {
    std::optional<std::string> note;
    if (i % 3 != 0) note = std::string(1, static_cast<char>('a' + i % 5));
    ops.push_back(
        Put(edits_, Edit("e" + std::to_string(i), i % 2 ? "a/" : "b/", 800 + i % 7, i % 4, note)));
  }
  ASSERT_TRUE(d->Commit(&ops).ok());

  Query q;
  q.table = edits_.get();
  // note desc (NULLs last), at asc, then the key in the last term's direction.
  q.order = {{7, true}, {3, false}, {0, false}};
  Predicate where = Cmp(PredOp::kGte, 2, Value::Int(801));
  q.where = where;

  std::vector<Row> all;
  ASSERT_TRUE((*d)->Page(q, nullptr, 1000, &all).ok());
  int64_t count = 0;
  ASSERT_TRUE((*d)->Count(*edits_, &where, &count).ok());
  ASSERT_EQ(static_cast<int64_t>(all.size()), count);
  ASSERT_GT(count, 20);
  for (size_t i = 1; i < all.size(); ++i) {
    // Check the order by hand: note desc with NULLs last, at asc, id asc.
    const Row& a = all[i - 1];
    const Row& b = all[i];
    int c = 0;
    if (a[7].is_null() != b[7].is_null()) {
      c = a[7].is_null() ? 1 : -1;
    } else if (!a[7].is_null()) {
      c = -CompareText(a[7].text(), b[7].text());
    }
    if (c == 0) c = (a[3].int_value() > b[3].int_value()) - (a[3].int_value() < b[3].int_value());
    if (c == 0) c = CompareText(a[0].text(), b[0].text());
    EXPECT_LT(c, 0) << "rows " << i - 1 << " and " << i;
  }

  std::vector<Row> walked;
  std::optional<std::vector<Value>> after;
  for (int guard = 0; guard < 100; ++guard) {
    std::vector<Row> page;
    ASSERT_TRUE((*d)->Page(q, after ? &*after : nullptr, 3, &page).ok());
    if (page.empty()) break;
    ASSERT_LE(page.size(), 3u);
    const Row& last = page.back();
    after = std::vector<Value>{last[7], last[3], last[0]};
    walked.insert(walked.end(), page.begin(), page.end());
  }
  EXPECT_EQ(walked, all);

  std::vector<Value> wrong_size = {Value::Int(1)};
  std::vector<Row> page;
  EXPECT_EQ((*d)->Page(q, &wrong_size, 3, &page).code(), Code::kInvalidCursor);
}

TEST_P(SqliteBackendTest, MaxIntKeyIsTheLargestKeyOrZero) {
  auto d = OpenDriver();
  ASSERT_TRUE(d->Commit({TableOp(counters_), TableOp(edits_)}).ok());
  int64_t max = -1;
  ASSERT_TRUE((*d)->MaxIntKey(*counters_, &max).ok());
  EXPECT_EQ(max, 0);
  ASSERT_TRUE(d->Commit({Put(counters_, {Value::Int(41), Value()}),
                         Put(counters_, {Value::Int(7), Value()})})
                  .ok());
  ASSERT_TRUE((*d)->MaxIntKey(*counters_, &max).ok());
  EXPECT_EQ(max, 41);
  EXPECT_EQ((*d)->MaxIntKey(*edits_, &max).code(), Code::kInvalidArgs);
}

TEST_P(SqliteBackendTest, TheOutboxHoldsOneRecordPerCommitUntilTrimmed) {
  auto d = OpenDriver();
  Fill(d.get());
  ASSERT_TRUE(d->Commit({Delete(edits_, {Value::Str("e1")})}).ok());
  std::vector<OutboxEntry> out;
  ASSERT_TRUE((*d)->ReadOutbox(0, 10, &out).ok());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].seq, 1);
  EXPECT_EQ(out[2].record, "{\"seq\":3}");
  ASSERT_TRUE((*d)->ReadOutbox(1, 1, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].seq, 2);
  int64_t removed = 0;
  ASSERT_TRUE((*d)->TrimOutbox(2, &removed).ok());
  EXPECT_EQ(removed, 2);
  ASSERT_TRUE((*d)->ReadOutbox(0, 10, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].seq, 3);
}

TEST_P(SqliteBackendTest, ManyDistinctStatementsOutgrowTheCacheSafely) {
  auto d = OpenDriver();
  Fill(d.get());
  for (int n = 1; n <= 400; ++n) {
    Predicate in;
    in.op = PredOp::kIn;
    in.column = 2;
    for (int i = 0; i < n % 150 + 1; ++i) in.values.push_back(Value::Int(812 + i));
    int64_t count = 0;
    Status s = (*d)->Count(*edits_, &in, &count);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(count, std::min<int64_t>(5, n % 150 + 1));
  }
}

TEST_P(SqliteBackendTest, ChangingAColumnOfADeclaredTableNeedsAMigration) {
  auto d = OpenDriver();
  Fill(d.get());
  std::string changed = kEdits;
  changed.replace(changed.find("\"at\":{\"type\":\"int\"}"), 19, "\"at\":{\"type\":\"str\"}");
  Status s = d->Commit({TableOp(MakeTable(changed))});
  EXPECT_EQ(s.code(), Code::kInvalidArgs);
  EXPECT_NE(s.message().find("migration"), std::string::npos) << s.message();
}

TEST_P(SqliteBackendTest, CallsAfterCloseAreClosed) {
  auto d = OpenDriver();
  (*d)->Close();
  EXPECT_EQ((*d)->Begin().code(), Code::kClosed);
  int64_t n = 0;
  EXPECT_EQ((*d)->Count(*edits_, nullptr, &n).code(), Code::kClosed);
}

INSTANTIATE_TEST_SUITE_P(Storages, SqliteBackendTest,
                         testing::Values(Storage::kSqliteMemory, Storage::kMemFs, Storage::kPosix),
                         [](const auto& info) {
                           switch (info.param) {
                             case Storage::kSqliteMemory:
                               return "SqliteMemory";
                             case Storage::kMemFs:
                               return "MemFs";
                             case Storage::kPosix:
                               return "Posix";
                           }
                           return "?";
                         });

// --- fencing: a second owner fences the first ------------------------------------

class FencingTest : public SqliteBackendTest {};

TEST_P(FencingTest, ASecondOwnerFencesTheFirstAndNoCommittedDataIsLost) {
  auto first = OpenDriver("s");
  Fill(first.get());
  auto second = OpenDriver("other");
  EXPECT_EQ(second->state().id, "s");
  EXPECT_EQ(second->state().head, 2);

  Status s = first->Commit({Put(edits_, Edit("late", "x", 1, 1))});
  EXPECT_EQ(s.code(), Code::kFenced) << s.ToString();
  int64_t removed = 0;
  EXPECT_EQ((*first)->TrimOutbox(1, &removed).code(), Code::kFenced);

  ASSERT_TRUE(second->Commit({Put(edits_, Edit("e6", "c/", 1, 6))}).ok());
  // The first owner stays fenced, and reads see the second owner's commit.
  EXPECT_EQ(first->Commit({Put(edits_, Edit("late", "x", 1, 1))}).code(), Code::kFenced);
  EXPECT_TRUE(GetRow(first.get(), *edits_, {Value::Str("e6")}).has_value());
  (*first)->Close();
  (*second)->Close();

  auto third = OpenDriver();
  EXPECT_EQ(third->state().head, 3);
  for (const char* id : {"e1", "e2", "e3", "e4", "e5", "e6"}) {
    EXPECT_TRUE(GetRow(third.get(), *edits_, {Value::Str(id)}).has_value()) << id;
  }
  EXPECT_FALSE(GetRow(third.get(), *edits_, {Value::Str("late")}).has_value());
}

INSTANTIATE_TEST_SUITE_P(Files, FencingTest, testing::Values(Storage::kMemFs, Storage::kPosix),
                         [](const auto& info) {
                           return info.param == Storage::kMemFs ? "MemFs" : "Posix";
                         });

// --- what a commit runs: the statements, by text ------------------------------------

// The embedded connection, recording the text of every statement the backend
// runs through it (RunRow's as head + row, RunCheck's as "check: " + text).
class RecordingConnection : public SqlConnection {
 public:
  RecordingConnection(std::unique_ptr<SqlConnection> inner, std::vector<std::string>* texts)
      : inner_(std::move(inner)), texts_(texts) {}
  const SqlDialect& dialect() const override { return inner_->dialect(); }
  Status Open() override { return inner_->Open(); }
  Status Run(const std::string& sql, const std::vector<Value>& params, const std::string& what,
             SqlRows* rows, bool count_changes) override {
    texts_->push_back(sql);
    return inner_->Run(sql, params, what, rows, count_changes);
  }
  Status RunRow(const std::string& head, const std::string& row, std::vector<Value>* params,
                const std::string& what) override {
    texts_->push_back(head + row);
    return inner_->RunRow(head, row, params, what);
  }
  Status RunCheck(const std::string& sql, const std::vector<Value>& params,
                  const std::string& what, int64_t expect, const Status& mismatch) override {
    texts_->push_back("check: " + sql);
    return inner_->RunCheck(sql, params, what, expect, mismatch);
  }
  Status Flush() override { return inner_->Flush(); }
  Status Exec(const std::string& sql) override {
    texts_->push_back(sql);
    return inner_->Exec(sql);
  }
  Status Begin() override { return inner_->Begin(); }
  Status Commit() override { return inner_->Commit(); }
  void Rollback() override { inner_->Rollback(); }
  bool InTransaction() const override { return inner_->InTransaction(); }
  Status Close() override { return inner_->Close(); }

 private:
  std::unique_ptr<SqlConnection> inner_;
  std::vector<std::string>* texts_;
};

// The statements of three one-put commits on an embedded store over the
// in-memory file system, in the mode `options` gives, through a backend made
// with `backend` (NewSqliteBackend makes the one of `options`).
std::vector<std::string> OnePutCommitTexts(const SqliteOptions& options,
                                           const SqlBackendOptions& backend) {
  std::vector<std::string> texts;
  TablePtr edits = MakeTable(kEdits);
  Driver d(NewSqlBackend(
      std::make_unique<RecordingConnection>(NewEmbeddedConnection(options), &texts), backend));
  EXPECT_TRUE(d.Open("s").ok());
  EXPECT_TRUE(d.Commit({TableOp(edits)}).ok());
  texts.clear();
  for (int i = 0; i < 3; ++i) {
    Status s = d.Commit({Put(edits, Edit("e" + std::to_string(i), "a/x.ts", i, i))});
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  std::vector<std::string> commits = texts;  // not the close's
  d->Close();
  return commits;
}

size_t CountContaining(const std::vector<std::string>& texts, const std::string& part) {
  return std::count_if(texts.begin(), texts.end(), [&](const std::string& t) {
    return t.find(part) != std::string::npos;
  });
}

// Lever one of issue 13's "two statements fewer": a store that holds its
// file's lock from open to close (a Node store file, an opfs store) cannot
// meet another owner's epoch in a commit, so it reads none; a store that
// takes the lock per transaction reads it in every commit (FencingTest shows
// why). Before this change each of the three commits read the epoch in both.
TEST(CommitStatementsTest, AStoreHoldingItsLockForLifeReadsNoEpochInItsCommits) {
  MemFileSystem mem;
  ASSERT_TRUE(RegisterVfs(&mem).ok());
  SqliteOptions options;
  options.path = "/stores/held.sqlite";
  options.exclusive = true;
  SqlBackendOptions held;
  held.lock_for_life = true;
  std::vector<std::string> texts = OnePutCommitTexts(options, held);
  EXPECT_EQ(CountContaining(texts, "INSERT OR REPLACE INTO \"file-history/edits\""), 3u);
  EXPECT_EQ(CountContaining(texts, "check: "), 0u) << "an epoch check";

  options.path = "/stores/per-transaction.sqlite";
  options.exclusive = false;
  texts = OnePutCommitTexts(options, SqlBackendOptions());
  EXPECT_EQ(CountContaining(texts, "check: SELECT value FROM _meta WHERE key = ?"), 3u);
  RegisterVfs(PosixFileSystem());
}

// Lever two: a commit on an embedded store (a Node store file, an opfs or a
// native one) writes its rows and its outbox record and no _meta row (head
// format 2: the head is the outbox's largest seq). Before this change each
// commit also ran "UPDATE _meta SET value = ? WHERE key = 'head'".
TEST(CommitStatementsTest, AStoreFileCommitWritesItsRowAndRecordAndNoMetaRow) {
  MemFileSystem mem;
  ASSERT_TRUE(RegisterVfs(&mem).ok());
  SqliteOptions options;
  options.path = "/stores/format2.sqlite";
  options.exclusive = true;
  SqlBackendOptions file;  // as NewSqliteBackend makes it for `options`
  file.lock_for_life = true;
  file.head_per_commit = false;
  std::vector<std::string> texts = OnePutCommitTexts(options, file);
  ASSERT_EQ(texts.size(), 6u);
  for (size_t i = 0; i < texts.size(); i += 2) {
    EXPECT_EQ(texts[i].rfind("INSERT OR REPLACE INTO \"file-history/edits\"", 0), 0u) << texts[i];
    EXPECT_EQ(texts[i + 1].rfind("INSERT INTO _outbox", 0), 0u) << texts[i + 1];
  }
  EXPECT_EQ(CountContaining(texts, "_meta"), 0u);
  RegisterVfs(PosixFileSystem());
}

// --- the store file is a plain SQLite file --------------------------------------

std::string RunCommand(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return "<popen failed>";
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

// The head of a store file as docs/formats.md ("The head") gives it to a
// reader of the file.
const char kHeadSql[] =
    "SELECT max(coalesce((SELECT value FROM _meta WHERE key = 'head'), 0), "
    "coalesce((SELECT max(seq) FROM _outbox), 0))";

TEST(StoreFileTest, TheSqlite3CommandReadsTablesByTheirNames) {
  // scripts/setup.sh installs the sqlite3 command; without it this test fails.
  ASSERT_EQ(::access("/usr/bin/sqlite3", X_OK), 0) << "no /usr/bin/sqlite3: run npm run setup";
  ASSERT_TRUE(RegisterVfs(PosixFileSystem()).ok());
  const std::string path = TempPath("cli.sqlite");
  RemoveStoreFiles(path);
  TablePtr edits = MakeTable(kEdits);
  {
    SqliteOptions options;
    options.path = path;
    Driver d(NewSqliteBackend(options));
    ASSERT_TRUE(d.Open("cli").ok());
    Row row = {Value::Str("e1"),      Value::Str("a/x.ts"), Value::Int(812), Value::Int(1),
               Value::JsonText("{}"), Value::Bool(true),    Value::Num(2.5), Value()};
    ASSERT_TRUE(d.Commit({TableOp(edits), Put(edits, row)}).ok());
    d->Close();
  }
  const std::string cli = "/usr/bin/sqlite3 '" + path + "' ";
  EXPECT_EQ(RunCommand(cli + "'select * from \"file-history/edits\"' 2>&1"),
            "e1|a/x.ts|812|1|{}|1|2.5|\n");
  EXPECT_EQ(RunCommand(cli + "'pragma integrity_check' 2>&1"), "ok\n");
  // The head as docs/formats.md ("The head") reads it: a store that takes the
  // lock per transaction leaves _meta.head to its next open or trim.
  EXPECT_EQ(RunCommand(cli + "\"" + kHeadSql + "\" 2>&1"), "1\n");
  EXPECT_EQ(RunCommand(cli + "'select seq from _outbox' 2>&1"), "1\n");
  EXPECT_EQ(
      RunCommand(
          cli +
          "\"select name from sqlite_schema where type = 'index' and name like 'file-history/%' "
          "order by name\" 2>&1"),
      "file-history/edits/byEntry\nfile-history/edits/byPath\n");
  // STRICT: the command line tool refuses a value of the wrong type too.
  std::string wrong = RunCommand(cli +
                                 "\"insert into \\\"file-history/edits\\\" values "
                                 "('e2', 'p', 'not an int', 1, '{}', 0, 1.0, null)\" 2>&1");
  EXPECT_NE(wrong.find("cannot store TEXT value in INTEGER column"), std::string::npos) << wrong;
  RemoveStoreFiles(path);
}

// The mode of a Node store file (SqliteOptions::exclusive with
// plain_when_closed): a WAL while open, the lock held between transactions,
// and on close the WAL checkpointed and the file back in rollback mode, so
// the sqlite3 command (and a store opened without exclusive) reads it. Before
// plain_when_closed, a closed exclusive store stayed in WAL mode.
TEST(StoreFileTest, AnExclusiveStoreFileIsAPlainRollbackFileOnceClosed) {
  ASSERT_EQ(::access("/usr/bin/sqlite3", X_OK), 0) << "no /usr/bin/sqlite3: run npm run setup";
  ASSERT_TRUE(RegisterVfs(PosixFileSystem()).ok());
  const std::string path = TempPath("held.sqlite");
  RemoveStoreFiles(path);
  TablePtr edits = MakeTable(kEdits);
  SqliteOptions options;
  options.path = path;
  options.exclusive = true;
  options.plain_when_closed = true;
  {
    Driver d(NewSqliteBackend(options));
    ASSERT_TRUE(d.Open("held").ok());
    Row row = {Value::Str("e1"),      Value::Str("a/x.ts"), Value::Int(812), Value::Int(1),
               Value::JsonText("{}"), Value::Bool(true),    Value::Num(2.5), Value()};
    ASSERT_TRUE(d.Commit({TableOp(edits), Put(edits, row)}).ok());
    EXPECT_EQ(::access((path + "-wal").c_str(), F_OK), 0) << "a WAL while open";
    EXPECT_EQ(::access((path + "-lock").c_str(), F_OK), 0) << "the lock held between transactions";
    d->Close();
  }
  EXPECT_NE(::access((path + "-wal").c_str(), F_OK), 0) << "no WAL once closed";
  EXPECT_NE(::access((path + "-lock").c_str(), F_OK), 0) << "the lock released";
  const std::string cli = "/usr/bin/sqlite3 -readonly '" + path + "' ";
  EXPECT_EQ(RunCommand(cli + "'pragma journal_mode' 2>&1"), "delete\n");
  EXPECT_EQ(RunCommand(cli + "'select id from \"file-history/edits\"' 2>&1"), "e1\n");
  options.exclusive = false;  // a connection in the per-transaction mode reads it too
  options.plain_when_closed = false;
  {
    Driver d(NewSqliteBackend(options));
    ASSERT_TRUE(d.Open("again").ok());
    EXPECT_EQ(d.state().head, 1);
    d->Close();
  }
  RemoveStoreFiles(path);
}

// A connection that holds its file's lock for life (exclusive: a Node store
// file, opfs) keeps 16 MiB of pages (its reads stay valid between
// transactions); one that takes the lock per transaction keeps SQLite's own
// 2 MB. PRAGMA cache_size answers a negative number: KiB.
TEST(StoreFileTest, AConnectionThatHoldsItsLockKeepsSixteenMiBOfPages) {
  ASSERT_TRUE(RegisterVfs(PosixFileSystem()).ok());
  for (const bool exclusive : {true, false}) {
    const std::string path = TempPath(exclusive ? "cache-held.sqlite" : "cache-shared.sqlite");
    RemoveStoreFiles(path);
    SqliteOptions options;
    options.path = path;
    options.exclusive = exclusive;
    std::unique_ptr<SqlConnection> conn = NewEmbeddedConnection(options);
    ASSERT_TRUE(conn->Open().ok());
    SqlRows rows;
    ASSERT_TRUE(conn->Run("PRAGMA cache_size", {}, "reading cache_size", &rows).ok());
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows.at(0, 0).int_value(), exclusive ? -16384 : -2000) << "exclusive " << exclusive;
    ASSERT_TRUE(conn->Close().ok());
    RemoveStoreFiles(path);
  }
}

// Head format 2 on a file, read by the sqlite3 command between the store's
// transactions (a store that takes the lock per transaction): commits leave
// _meta.head alone, a trim writes it before its records go, an open raises a
// _meta.head left behind (as a crash leaves it) to the outbox's head, and
// PeekSqliteStore (listStores) reads the head the same way. A file of the
// format before (_meta.head written by each commit) opens at its head. On
// the code before this change _meta.head read 4 after the commits, and a
// head set back to 1 reopened (and peeked) as 1.
TEST(StoreFileTest, TheHeadIsTheOutboxsAndMetaHeadCatchesUpAtTrimAndOpen) {
  ASSERT_EQ(::access("/usr/bin/sqlite3", X_OK), 0) << "no /usr/bin/sqlite3: run npm run setup";
  ASSERT_TRUE(RegisterVfs(PosixFileSystem()).ok());
  const std::string path = TempPath("head2.sqlite");
  RemoveStoreFiles(path);
  const std::string cli = "/usr/bin/sqlite3 '" + path + "' ";
  auto meta_head = [&] {
    return RunCommand(cli + "\"select value from _meta where key = 'head'\" 2>&1");
  };
  TablePtr edits = MakeTable(kEdits);
  SqliteOptions options;
  options.path = path;
  {
    Driver d(NewSqliteBackend(options));
    ASSERT_TRUE(d.Open("h").ok());
    ASSERT_TRUE(d.Commit({TableOp(edits)}).ok());
    for (int i = 1; i <= 3; ++i) {
      ASSERT_TRUE(d.Commit({Put(edits, Edit("e" + std::to_string(i), "p", i, i))}).ok());
    }
    EXPECT_EQ(meta_head(), "0\n") << "no commit wrote _meta.head";
    EXPECT_EQ(RunCommand(cli + "\"" + kHeadSql + "\" 2>&1"), "4\n");
    int64_t removed = 0;
    ASSERT_TRUE(d->TrimOutbox(4, &removed).ok());
    EXPECT_EQ(removed, 4);
    EXPECT_EQ(meta_head(), "4\n") << "the trim kept the head";
    ASSERT_TRUE(d.Commit({Put(edits, Edit("e5", "p", 5, 5))}).ok());
    EXPECT_EQ(meta_head(), "4\n");
    d->Close();
  }
  {
    Driver d(NewSqliteBackend(options));
    ASSERT_TRUE(d.Open("ignored").ok());
    EXPECT_EQ(d.state().head, 5);
    EXPECT_EQ(meta_head(), "5\n") << "the open caught up";
    EXPECT_EQ(RunCommand(cli + "\"select value from _meta where key = 'head_format'\" 2>&1"),
              "2\n");
    d->Close();
  }
  // A _meta.head behind the outbox, as a crash before the close leaves it.
  ASSERT_EQ(RunCommand(cli + "\"update _meta set value = 1 where key = 'head'\" 2>&1"), "");
  StorePeek peek;
  ASSERT_TRUE(PeekSqliteStore(path, false, &peek).ok());
  EXPECT_EQ(peek.id, "h");
  EXPECT_EQ(peek.head, 5);
  {
    Driver d(NewSqliteBackend(options));
    ASSERT_TRUE(d.Open("ignored").ok());
    EXPECT_EQ(d.state().head, 5);
    ASSERT_TRUE(d.Commit({Put(edits, Edit("e6", "p", 6, 6))}).ok()) << "seq 6, not 2";
    d->Close();
  }
  // A file of head format 1: _meta.head written by every commit (6), no
  // head_format, the outbox (5 and 6) trimmed up to 4.
  ASSERT_EQ(RunCommand(cli + "\"update _meta set value = 6 where key = 'head'; "
                             "delete from _meta where key = 'head_format'\" 2>&1"),
            "");
  {
    Driver d(NewSqliteBackend(options));
    ASSERT_TRUE(d.Open("ignored").ok());
    EXPECT_EQ(d.state().head, 6);
    ASSERT_TRUE(d.Commit({Put(edits, Edit("e7", "p", 7, 7))}).ok());
    d->Close();
  }
  EXPECT_EQ(RunCommand(cli + "\"" + kHeadSql + "\" 2>&1"), "7\n");
  EXPECT_EQ(RunCommand(cli + "'select seq from _outbox' 2>&1"), "5\n6\n7\n");
  RemoveStoreFiles(path);
}

// A store that holds its lock for life (a Node store file) writes
// _meta.head when it closes, so a closed file's _meta.head is its head, as a
// reader of head format 1 (an older onestore, a script) reads it. The head
// survives a trim of the whole outbox. Before this change the file had no
// head_format.
TEST(StoreFileTest, AStoreFileHeldForLifeWritesItsHeadWhenItCloses) {
  ASSERT_EQ(::access("/usr/bin/sqlite3", X_OK), 0) << "no /usr/bin/sqlite3: run npm run setup";
  ASSERT_TRUE(RegisterVfs(PosixFileSystem()).ok());
  const std::string path = TempPath("closehead.sqlite");
  RemoveStoreFiles(path);
  const std::string cli = "/usr/bin/sqlite3 -readonly '" + path + "' ";
  TablePtr edits = MakeTable(kEdits);
  SqliteOptions options;
  options.path = path;
  options.exclusive = true;
  options.plain_when_closed = true;
  {
    Driver d(NewSqliteBackend(options));
    ASSERT_TRUE(d.Open("held").ok());
    ASSERT_TRUE(d.Commit({TableOp(edits)}).ok());
    ASSERT_TRUE(d.Commit({Put(edits, Edit("e1", "p", 1, 1))}).ok());
    ASSERT_TRUE(d.Commit({Put(edits, Edit("e2", "p", 2, 2))}).ok());
    d->Close();
  }
  EXPECT_EQ(RunCommand(cli + "\"select value from _meta where key = 'head'\" 2>&1"), "3\n");
  EXPECT_EQ(RunCommand(cli + "\"select value from _meta where key = 'head_format'\" 2>&1"),
            "2\n");
  {
    Driver d(NewSqliteBackend(options));
    ASSERT_TRUE(d.Open("again").ok());
    EXPECT_EQ(d.state().head, 3);
    int64_t removed = 0;
    ASSERT_TRUE(d->TrimOutbox(3, &removed).ok());
    EXPECT_EQ(removed, 3);
    d->Close();
  }
  EXPECT_EQ(RunCommand(cli + "'select count(*) from _outbox' 2>&1"), "0\n");
  {
    Driver d(NewSqliteBackend(options));
    ASSERT_TRUE(d.Open("again").ok());
    EXPECT_EQ(d.state().head, 3);
    d->Close();
  }
  RemoveStoreFiles(path);
}

TEST(StoreFileTest, ADatabaseOfAnotherApplicationIsRefusedUnlessAdopted) {
  ASSERT_EQ(::access("/usr/bin/sqlite3", X_OK), 0) << "no /usr/bin/sqlite3: run npm run setup";
  ASSERT_TRUE(RegisterVfs(PosixFileSystem()).ok());
  const std::string path = TempPath("foreign.db");
  RemoveStoreFiles(path);
  const std::string cli = "/usr/bin/sqlite3 '" + path + "' ";
  RunCommand(cli + "'create table notes(id integer primary key, body text); "
                   "insert into notes values (1, \"hi\")' 2>&1");
  const std::string schema = RunCommand(cli + "'.schema' 2>&1");
  SqliteOptions options;
  options.path = path;
  {
    Driver d(NewSqliteBackend(options));
    Status s = d.Open("x");
    EXPECT_EQ(s.code(), Code::kInvalidArgs);
    EXPECT_NE(s.message().find("\"" + path + "\" is a SQLite database of another application"),
              std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find("\"notes\""), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("adoptForeign: true"), std::string::npos) << s.message();
  }
  EXPECT_EQ(RunCommand(cli + "'.schema' 2>&1"), schema) << "nothing was added";
  options.adopt_foreign = true;
  {
    Driver d(NewSqliteBackend(options));
    ASSERT_TRUE(d.Open("x").ok());
    d->Close();
  }
  options.adopt_foreign = false;  // a store now: it opens as one
  {
    Driver d(NewSqliteBackend(options));
    ASSERT_TRUE(d.Open("y").ok());
    d->Close();
  }
  EXPECT_EQ(RunCommand(cli + "'select body from notes' 2>&1"), "hi\n");
  RemoveStoreFiles(path);

  // An empty file is a new store.
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  {
    Driver d(NewSqliteBackend(options));
    ASSERT_TRUE(d.Open("z").ok());
    d->Close();
  }
  RemoveStoreFiles(path);
}

// Reads sqlite_schema's index names of one table through a second connection.
std::vector<std::string> IndexNames(const std::string& path, const std::string& table) {
  std::vector<std::string> names;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(
      sqlite3_prepare_v2(db,
                         "SELECT name || ':' || sql FROM sqlite_schema WHERE type = 'index' AND "
                         "tbl_name = ? AND sql IS NOT NULL ORDER BY name",
                         -1, &s, nullptr),
      SQLITE_OK);
  sqlite3_bind_text(s, 1, table.c_str(), -1, SQLITE_TRANSIENT);
  while (sqlite3_step(s) == SQLITE_ROW)
    names.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
  sqlite3_finalize(s);
  sqlite3_close(db);
  return names;
}

TEST(StoreFileTest, RedeclaringATableCreatesAndDropsTheDifferenceOfIndexes) {
  MemFileSystem mem;
  ASSERT_TRUE(RegisterVfs(&mem).ok());
  SqliteOptions options;
  options.path = "/idx.sqlite";
  Driver d(NewSqliteBackend(options));
  ASSERT_TRUE(d.Open().ok());
  ASSERT_TRUE(d.Commit({TableOp(MakeTable(kEdits))}).ok());
  EXPECT_EQ(IndexNames(options.path, "file-history/edits"),
            (std::vector<std::string>{"file-history/edits/byEntry:CREATE INDEX "
                                      "\"file-history/edits/byEntry\" ON \"file-history/edits\" "
                                      "(\"entry\", \"id\")",
                                      "file-history/edits/byPath:CREATE INDEX "
                                      "\"file-history/edits/byPath\" ON \"file-history/edits\" "
                                      "(\"path\", \"at\", \"id\")"}));
  std::string next = kEdits;
  next.replace(next.find("\"indexes\""), std::string::npos,
               "\"indexes\":{\"byPath\":[\"path\"],\"byAt\":[\"at\"]}}");
  Status s = d.Commit({TableOp(MakeTable(next))});
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(IndexNames(options.path, "file-history/edits"),
            (std::vector<std::string>{"file-history/edits/byAt:CREATE INDEX "
                                      "\"file-history/edits/byAt\" ON \"file-history/edits\" "
                                      "(\"at\", \"id\")",
                                      "file-history/edits/byPath:CREATE INDEX "
                                      "\"file-history/edits/byPath\" ON \"file-history/edits\" "
                                      "(\"path\", \"id\")"}));
  d->Close();
  Driver again(NewSqliteBackend(options));
  ASSERT_TRUE(again.Open().ok());
  ASSERT_EQ(again.state().tables.size(), 1u);
  EXPECT_EQ(again.state().tables[0]["indexes"].dump(), "{\"byPath\":[\"path\"],\"byAt\":[\"at\"]}");
  again->Close();
  RegisterVfs(PosixFileSystem());
}

// --- fault injection: acknowledged commits survive -------------------------------

struct FaultCase {
  bool sync;    // fail a sync (else a write)
  int k;        // the k-th call after the store is set up
  bool sticky;  // and every later one
  bool crash;   // then drop every unsynced write before reopening
};

void PrintTo(const FaultCase& c, std::ostream* os) {
  *os << (c.sync ? "sync" : "write") << c.k << (c.sticky ? "_sticky" : "")
      << (c.crash ? "_crash" : "");
}

class FaultTest : public testing::TestWithParam<FaultCase> {};

TEST_P(FaultTest, EveryAcknowledgedCommitSurvivesAndAFailedOneIsWholeOrGone) {
  const FaultCase& c = GetParam();
  MemFileSystem mem;
  FaultFileSystem fault(&mem);
  ASSERT_TRUE(RegisterVfs(&fault).ok());
  TablePtr edits = MakeTable(kEdits);
  SqliteOptions options;
  options.path = "/fault.sqlite";

  std::vector<int64_t> acked;
  int64_t failed = 0;
  {
    Driver d(NewSqliteBackend(options));
    ASSERT_TRUE(d.Open().ok());
    ASSERT_TRUE(d.Commit({TableOp(edits)}).ok());
    acked.push_back(1);
    if (c.sync) {
      fault.FailSync(c.k, c.sticky);
    } else {
      fault.FailWrite(c.k, c.sticky);
    }
    for (int64_t seq = 2; seq <= 8; ++seq) {
      // Each commit puts a row named for its seq and bumps every earlier row.
      std::vector<Op> ops;
      ops.push_back(Put(edits, Edit("s" + std::to_string(seq), "p", seq, 0)));
      ops.push_back(Bulk(OpKind::kUpdateWhere, edits, std::nullopt,
                         {Set(3, AddExpr(ColExpr(3, Type::kInt), ValueExpr(Value::Int(1))))}));
      Status s = d.Commit(&ops);
      if (!s.ok()) {
        EXPECT_EQ(s.code(), Code::kStorageFailed) << s.ToString();
        failed = seq;
        break;  // the store stops at a failed commit
      }
      acked.push_back(seq);
    }
    d->Close();
  }
  ASSERT_NE(failed, 0) << "the injected failure never happened; writes=" << fault.writes()
                       << " syncs=" << fault.syncs();
  if (c.crash) mem.DropUnsyncedWrites();
  fault.Heal();

  Driver d(NewSqliteBackend(options));
  Status s = d.Open();
  ASSERT_TRUE(s.ok()) << s.ToString();
  const int64_t head = d.state().head;
  const int64_t last_acked = acked.back();
  ASSERT_TRUE(head == last_acked || head == failed) << "head " << head;
  std::vector<OutboxEntry> out;
  ASSERT_TRUE(d->ReadOutbox(0, 100, &out).ok());
  ASSERT_EQ(static_cast<int64_t>(out.size()), head);
  for (int64_t seq = 2; seq <= 8; ++seq) {
    auto row = GetRow(&d, *edits, {Value::Str("s" + std::to_string(seq))});
    if (seq <= head) {
      ASSERT_TRUE(row.has_value()) << "row of commit " << seq << " lost";
      // Bumped once by its own commit and once by each later one up to head.
      EXPECT_EQ((*row)[3], Value::Int(head - seq + 1)) << seq;
    } else {
      EXPECT_FALSE(row.has_value()) << "row of commit " << seq << " appeared";
    }
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(options.path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "ok");
  sqlite3_finalize(st);
  sqlite3_close(db);
  d->Close();
  RegisterVfs(PosixFileSystem());
}

std::vector<FaultCase> FaultCases() {
  std::vector<FaultCase> cases;
  for (bool sync : {false, true}) {
    for (int k = 1; k <= (sync ? 8 : 16); ++k) {
      for (bool sticky : {false, true}) {
        for (bool crash : {false, true}) cases.push_back({sync, k, sticky, crash});
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Calls, FaultTest, testing::ValuesIn(FaultCases()), [](const auto& info) {
  std::ostringstream os;
  PrintTo(info.param, &os);
  return os.str();
});

}  // namespace
}  // namespace onestore
