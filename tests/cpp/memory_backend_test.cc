// Checks the memory backend: the planner walks an index when one gives the
// query's order (and visits only the rows in range), pages with cursors over
// ties and nulls agree with a brute-force sort, a commit is staged and
// swapped in whole, and the outbox keeps its records in seq order (a shared
// record held, not copied). A run of puts finds its staged table once and
// its rows land in their table and transaction.

#include "backends/memory/memory_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/memory/memory_testing.h"
#include "backends/memory/plan.h"
#include "predicates.h"
#include "query/query.h"
#include "schema/schema.h"
#include "writes/writes.h"

namespace onestore {
namespace {

using test::Cmp;
using test::Group;

// Columns: 0 id str, 1 path str, 2 entry int, 3 at int?, 4 meta json?
constexpr int kId = 0, kPath = 1, kEntry = 2, kAt = 3;

std::shared_ptr<const TableSchema> Schema(const char* indexes, const char* columns = nullptr,
                                          const char* key = R"(["id"])") {
  std::string text = std::string(R"({"op":"table","table":"file-history/edits","columns":)") +
                     (columns ? columns : R"({"id":"str","path":"str","entry":"int",
                                   "at":{"type":"int","optional":true},"meta":{"type":"json","optional":true}})") +
                     R"(,"key":)" + key + R"(,"indexes":)" + indexes + "}";
  Json j = Json::parse(text, nullptr, false);
  auto t = std::make_shared<TableSchema>();
  Status s = ParseTableSchema(j, "test", t.get());
  EXPECT_TRUE(s.ok()) << s.ToString();
  return t;
}

std::shared_ptr<const TableSchema> Edits() {
  return Schema(R"({"byPath":["path","at"],"byEntry":["entry"]})");
}

Row Edit(std::string id, std::string path, int64_t entry, Value at) {
  return Row{Value::Str(std::move(id)), Value::Str(std::move(path)), Value::Int(entry),
             std::move(at), Value()};
}

// A total order as ParseQuery makes it: the terms, then the key in the
// direction of the last term.
Query MakeQuery(const TableSchema* t, std::optional<Predicate> where,
                std::vector<OrderTerm> terms) {
  Query q;
  q.table = t;
  q.where = std::move(where);
  bool last_desc = terms.empty() ? false : terms.back().desc;
  q.order = terms;
  for (int k : t->key) {
    bool used = false;
    for (const OrderTerm& o : terms) used |= o.column == k;
    if (!used) q.order.push_back(OrderTerm{k, last_desc});
  }
  return q;
}

Op TableOp(std::shared_ptr<const TableSchema> t) {
  Op op;
  op.kind = OpKind::kTable;
  op.table = std::move(t);
  return op;
}

Op Put(std::shared_ptr<const TableSchema> t, Row row) {
  Op op;
  op.kind = OpKind::kPut;
  op.table = std::move(t);
  op.row = std::move(row);
  return op;
}

Op UpdateKey(std::shared_ptr<const TableSchema> t, Key key, std::vector<SetItem> set) {
  Op op;
  op.kind = OpKind::kUpdate;
  op.table = std::move(t);
  op.key = std::move(key);
  op.set = std::move(set);
  return op;
}

Expr Lit(Value v) {
  Expr e;
  e.type = v.type();
  e.value = std::move(v);
  return e;
}

Expr AddToCol(int column, int64_t n) {
  Expr c;
  c.op = ExprOp::kCol;
  c.type = Type::kInt;
  c.column = column;
  Expr e;
  e.op = ExprOp::kAdd;
  e.type = Type::kInt;
  e.args = {c, Lit(Value::Int(n))};
  return e;
}

class MemoryBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    backend_ = NewMemoryBackend();
    BackendState state;
    ASSERT_TRUE(backend_->Open("session-1", &state).ok());
    t_ = Edits();
    Commit({TableOp(t_)});
  }

  // Applies `ops` in one transaction and commits; fails the test on error.
  void Commit(std::vector<Op> ops) {
    ASSERT_TRUE(backend_->Begin().ok());
    for (Op& op : ops) {
      Status s = backend_->Apply(&op, nullptr);
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
    ASSERT_TRUE(backend_->Commit().ok());
  }

  std::optional<Row> Get(const std::string& id) {
    std::optional<Row> row;
    Status s = backend_->Get(*t_, {Value::Str(id)}, &row);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return row;
  }

  std::vector<Row> All(const Query& q) {
    std::vector<Row> rows;
    Status s = backend_->Page(q, nullptr, -1, &rows);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return rows;
  }

  // Every page of `q` of size `limit`, each read after the last row's position.
  std::vector<Row> PageThrough(const Query& q, int64_t limit) {
    std::vector<Row> out;
    std::vector<Value> pos;
    for (int guard = 0; guard < 10000; ++guard) {
      std::vector<Row> page;
      Status s = backend_->Page(q, out.empty() ? nullptr : &pos, limit, &page);
      EXPECT_TRUE(s.ok()) << s.ToString();
      EXPECT_LE(static_cast<int64_t>(page.size()), limit);
      if (page.empty()) break;
      out.insert(out.end(), page.begin(), page.end());
      pos = q.OrderValues(out.back());
    }
    return out;
  }

  std::unique_ptr<Backend> backend_;
  std::shared_ptr<const TableSchema> t_;
};

TEST(PlanScanTest, EqOnTheLeadingColumnAndOrderOnTheNextPicksThatIndex) {
  auto t = Edits();
  Query q = MakeQuery(t.get(), Cmp(PredOp::kEq, kPath, Value::Str("a")), {{kAt, true}});
  ScanPlan plan = PlanScan(*t, &*q.where, &q.order);
  EXPECT_EQ(plan.Describe(*t), "index byPath eq(path) desc");
  EXPECT_FALSE(plan.sort);
}

TEST(PlanScanTest, RangeOnAnIndexedColumnBecomesBounds) {
  auto t = Edits();
  Predicate where =
      Group(PredOp::kAnd, {Cmp(PredOp::kGte, kEntry, Value::Int(10)),
                           Group(PredOp::kAnd, {Cmp(PredOp::kLt, kEntry, Value::Int(20))})});
  Query q = MakeQuery(t.get(), where, {{kEntry, false}});
  ScanPlan plan = PlanScan(*t, &*q.where, &q.order);
  EXPECT_EQ(plan.Describe(*t), "index byEntry range(entry) asc");
  ASSERT_TRUE(plan.lower && plan.upper);
  EXPECT_EQ(plan.lower->value, Value::Int(10));
  EXPECT_TRUE(plan.lower->inclusive);
  EXPECT_EQ(plan.upper->value, Value::Int(20));
  EXPECT_FALSE(plan.upper->inclusive);
}

TEST(PlanScanTest, MixedDirectionsOrAnUnindexedOrderSort) {
  auto t = Edits();
  Query mixed = MakeQuery(t.get(), std::nullopt, {{kPath, false}, {kAt, true}});
  EXPECT_TRUE(PlanScan(*t, nullptr, &mixed.order).sort);
  Query by_at = MakeQuery(t.get(), std::nullopt, {{kAt, false}});
  EXPECT_TRUE(PlanScan(*t, nullptr, &by_at.order).sort);
  // An eq under an or fixes nothing.
  Predicate either = Group(PredOp::kOr, {Cmp(PredOp::kEq, kPath, Value::Str("a"))});
  Query q = MakeQuery(t.get(), either, {{kAt, false}});
  EXPECT_TRUE(PlanScan(*t, &*q.where, &q.order).sort);
  // The key order walks the primary key.
  Query by_key = MakeQuery(t.get(), std::nullopt, {});
  EXPECT_EQ(PlanScan(*t, nullptr, &by_key.order).Describe(*t), "primary key asc");
}

TEST_F(MemoryBackendTest, AnOrderThatAnIndexGivesInPartSortsOnlyTheGroupsAPageNeeds) {
  std::vector<Op> ops;
  for (int i = 0; i < 200; ++i) {
    ops.push_back(
        Put(t_, Edit("e" + std::to_string(i), "p" + std::to_string(i % 20), i, Value::Int(i % 7))));
  }
  Commit(std::move(ops));
  // byPath is (path, at, id); ordering by path alone (then the key) follows
  // it for path, and sorts only within each path.
  for (bool desc : {false, true}) {
    Query q = MakeQuery(t_.get(), std::nullopt, {{kPath, desc}});
    *MemoryStats(backend_.get()) = MemoryScanStats{};
    std::vector<Row> page;
    ASSERT_TRUE(backend_->Page(q, nullptr, 15, &page).ok());
    EXPECT_EQ(
        MemoryStats(backend_.get())->last_plan,
        std::string("index byPath ") + (desc ? "desc" : "asc") + ", then sort each group of 1");
    // Two groups of 10 fill a page of 15: the walk stops after the second.
    EXPECT_LE(MemoryStats(backend_.get())->rows_visited, 21);
    std::vector<Row> all = All(q);
    ASSERT_EQ(all.size(), 200u);
    for (size_t i = 1; i < all.size(); ++i) EXPECT_GT(q.CompareRows(all[i], all[i - 1]), 0);
    ASSERT_EQ(page.size(), 15u);
    for (size_t i = 0; i < page.size(); ++i) EXPECT_EQ(page[i], all[i]);
  }
}

TEST_F(MemoryBackendTest, EqPlusOrderOnAnIndexVisitsOnlyTheMatchingRows) {
  std::vector<Op> ops;
  for (int i = 0; i < 200; ++i) {
    ops.push_back(
        Put(t_, Edit("e" + std::to_string(i), "p" + std::to_string(i % 20), i, Value::Int(i % 7))));
  }
  Commit(std::move(ops));
  Query q = MakeQuery(t_.get(), Cmp(PredOp::kEq, kPath, Value::Str("p3")), {{kAt, true}});

  *MemoryStats(backend_.get()) = MemoryScanStats{};
  std::vector<Row> rows = All(q);
  EXPECT_EQ(MemoryStats(backend_.get())->last_plan, "index byPath eq(path) desc");
  EXPECT_EQ(MemoryStats(backend_.get())->rows_visited, 10);
  ASSERT_EQ(rows.size(), 10u);
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_GT(q.CompareRows(rows[i], rows[i - 1]), 0);
  for (const Row& r : rows) EXPECT_EQ(r[kPath], Value::Str("p3"));

  // A page of 3 stops after 3 rows, and the next page seeks past the cursor.
  *MemoryStats(backend_.get()) = MemoryScanStats{};
  std::vector<Row> page;
  ASSERT_TRUE(backend_->Page(q, nullptr, 3, &page).ok());
  EXPECT_EQ(MemoryStats(backend_.get())->rows_visited, 3);
  std::vector<Value> pos = q.OrderValues(page.back());
  *MemoryStats(backend_.get()) = MemoryScanStats{};
  ASSERT_TRUE(backend_->Page(q, &pos, 3, &page).ok());
  EXPECT_EQ(MemoryStats(backend_.get())->rows_visited, 3);
  EXPECT_EQ(page[0], rows[3]);
  // The same forward: ascending at.
  Query asc = MakeQuery(t_.get(), Cmp(PredOp::kEq, kPath, Value::Str("p3")), {{kAt, false}});
  ASSERT_TRUE(backend_->Page(asc, nullptr, 3, &page).ok());
  pos = asc.OrderValues(page.back());
  *MemoryStats(backend_.get()) = MemoryScanStats{};
  ASSERT_TRUE(backend_->Page(asc, &pos, 3, &page).ok());
  EXPECT_EQ(MemoryStats(backend_.get())->last_plan, "index byPath eq(path) asc");
  EXPECT_EQ(MemoryStats(backend_.get())->rows_visited, 3);
  EXPECT_EQ(page[0], rows[6]);

  // A range on byEntry visits the range only; so does a count.
  Predicate range = Group(PredOp::kAnd, {Cmp(PredOp::kGte, kEntry, Value::Int(50)),
                                         Cmp(PredOp::kLt, kEntry, Value::Int(60))});
  *MemoryStats(backend_.get()) = MemoryScanStats{};
  EXPECT_EQ(All(MakeQuery(t_.get(), range, {{kEntry, true}})).size(), 10u);
  EXPECT_EQ(MemoryStats(backend_.get())->rows_visited, 10);
  *MemoryStats(backend_.get()) = MemoryScanStats{};
  int64_t n = 0;
  ASSERT_TRUE(backend_->Count(*t_, &range, &n).ok());
  EXPECT_EQ(n, 10);
  EXPECT_EQ(MemoryStats(backend_.get())->rows_visited, 10);
}

TEST_F(MemoryBackendTest, PrefixOnAnIndexedColumnWalksOnlyThePrefixIncludingEmoji) {
  Commit({Put(t_, Edit("1", "a/x", 1, Value())), Put(t_, Edit("2", "a/😀", 2, Value())),
          Put(t_, Edit("3", "a/\uffff", 3, Value())), Put(t_, Edit("4", "a0", 4, Value())),
          Put(t_, Edit("5", "a", 5, Value())), Put(t_, Edit("6", "b/a", 6, Value()))});
  Query q = MakeQuery(t_.get(), Cmp(PredOp::kPrefix, kPath, Value::Str("a/")), {{kPath, false}});
  *MemoryStats(backend_.get()) = MemoryScanStats{};
  std::vector<Row> rows = All(q);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0][kId], Value::Str("1"));
  EXPECT_EQ(rows[1][kId], Value::Str("3"));  // U+FFFF before the emoji: code point order
  EXPECT_EQ(rows[2][kId], Value::Str("2"));
  EXPECT_EQ(MemoryStats(backend_.get())->rows_visited, 3);
}

TEST_F(MemoryBackendTest, CursorsPageOverTiesAndNullsInBothDirections) {
  // at has ties and nulls; the key breaks ties.
  std::vector<Op> ops;
  const Value ats[] = {Value::Int(2), Value(),       Value::Int(1), Value::Int(2),
                       Value(),       Value::Int(1), Value::Int(2)};
  for (int i = 0; i < 7; ++i) ops.push_back(Put(t_, Edit("k" + std::to_string(i), "p", i, ats[i])));
  Commit(std::move(ops));
  for (bool desc : {false, true}) {
    Query q = MakeQuery(t_.get(), Cmp(PredOp::kEq, kPath, Value::Str("p")), {{kAt, desc}});
    std::vector<Row> all = All(q);
    ASSERT_EQ(all.size(), 7u);
    // Nulls first ascending, last descending (as SQLite orders them).
    EXPECT_TRUE(desc ? all.back()[kAt].is_null() : all.front()[kAt].is_null());
    for (int64_t limit = 1; limit <= 8; ++limit) EXPECT_EQ(PageThrough(q, limit), all) << limit;
    // The same through the fallback sort (order by at alone, no index gives it).
    Query sorted = MakeQuery(t_.get(), std::nullopt, {{kAt, desc}});
    std::vector<Row> all_sorted = All(sorted);
    EXPECT_EQ(all_sorted, all);
    for (int64_t limit = 1; limit <= 8; ++limit)
      EXPECT_EQ(PageThrough(sorted, limit), all) << limit;
  }
}

TEST_F(MemoryBackendTest, APositionThatDisagreesWithAnEqColumnIsNotUsedToSeek) {
  Commit({Put(t_, Edit("k1", "p", 1, Value::Int(1))), Put(t_, Edit("k2", "p", 2, Value::Int(2)))});
  // Walks byPath [path, at, id] with path and id fixed; the order puts id first.
  Predicate where = Group(PredOp::kAnd, {Cmp(PredOp::kEq, kPath, Value::Str("p")),
                                         Cmp(PredOp::kEq, kId, Value::Str("k1"))});
  Query q = MakeQuery(t_.get(), where, {{kId, false}, {kAt, false}});
  EXPECT_FALSE(PlanScan(*t_, &where, &q.order).sort);
  // "k0" < "k1": the row comes after this position although its at is lower.
  std::vector<Value> pos = {Value::Str("k0"), Value::Int(9)};
  std::vector<Row> page;
  ASSERT_TRUE(backend_->Page(q, &pos, 10, &page).ok());
  ASSERT_EQ(page.size(), 1u);
  EXPECT_EQ(page[0][kId], Value::Str("k1"));
}

// A random where tree over path, entry and at.
Predicate RandomWhere(std::mt19937* rng, int depth) {
  static const char* kPaths[] = {"a", "a/", "a/b", "a/😀", "测试（一）", "测试😀", "b"};
  std::uniform_int_distribution<int> pick(0, depth > 0 ? 9 : 6);
  auto path = [&] { return Value::Str(kPaths[(*rng)() % 7]); };
  auto small = [&] { return Value::Int(static_cast<int64_t>((*rng)() % 8)); };
  switch (pick(*rng)) {
    case 0:
      return Cmp(PredOp::kEq, kPath, path());
    case 1:
      return Cmp(PredOp::kPrefix, kPath, Value::Str((*rng)() % 2 ? "a/" : "测试"));
    case 2:
      return Cmp(static_cast<PredOp>(static_cast<int>(PredOp::kLt) + (*rng)() % 4), kAt, small());
    case 3:
      return Cmp(static_cast<PredOp>(static_cast<int>(PredOp::kLt) + (*rng)() % 4), kEntry,
                 small());
    case 4:
      return Cmp(PredOp::kEq, kEntry, small());
    case 5: {
      Predicate p;
      p.op = PredOp::kIsNull;
      p.column = kAt;
      return p;
    }
    case 6:
      return Cmp(PredOp::kNe, kAt, small());
    case 7:
      return Group(PredOp::kNot, {RandomWhere(rng, depth - 1)});
    case 8:
      return Group(PredOp::kOr, {RandomWhere(rng, depth - 1), RandomWhere(rng, depth - 1)});
    default:
      return Group(PredOp::kAnd, {RandomWhere(rng, depth - 1), RandomWhere(rng, depth - 1)});
  }
}

TEST_F(MemoryBackendTest, EveryPlanGivesWhatABruteForceFilterAndSortGives) {
  std::mt19937 rng(42);
  static const char* kPaths[] = {"a", "a/", "a/b", "a/😀", "测试（一）", "测试😀", "b"};
  std::vector<Row> rows;
  std::vector<Op> ops;
  for (int i = 0; i < 120; ++i) {
    Value at = rng() % 4 == 0 ? Value() : Value::Int(static_cast<int64_t>(rng() % 8));
    rows.push_back(Edit("id" + std::to_string(rng() % 1000), kPaths[rng() % 7],
                        static_cast<int64_t>(rng() % 8), at));
    ops.push_back(Put(t_, rows.back()));
  }
  Commit(std::move(ops));
  // Later puts replace earlier rows with the same key.
  std::vector<Row> table;
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    bool seen = false;
    for (const Row& r : table) seen |= r[kId] == (*it)[kId];
    if (!seen) table.push_back(*it);
  }
  const std::vector<std::vector<OrderTerm>> orders = {{},
                                                      {{kId, true}},
                                                      {{kPath, false}},
                                                      {{kPath, true}},
                                                      {{kAt, true}},
                                                      {{kPath, false}, {kAt, false}},
                                                      {{kPath, true}, {kAt, true}},
                                                      {{kEntry, false}},
                                                      {{kEntry, true}},
                                                      {{kAt, false}, {kPath, true}},
                                                      {{kPath, false}, {kAt, true}}};
  int indexed = 0;
  for (int round = 0; round < 300; ++round) {
    Predicate where = RandomWhere(&rng, 2);
    if (round % 3 == 0)
      where = Group(PredOp::kAnd, {Cmp(PredOp::kEq, kPath, Value::Str(kPaths[rng() % 7])), where});
    Query q = MakeQuery(t_.get(), where, orders[round % orders.size()]);
    std::vector<Row> expect;
    for (const Row& r : table) {
      if (EvalPredicate(where, r) == Tri::kTrue) expect.push_back(r);
    }
    std::sort(expect.begin(), expect.end(),
              [&](const Row& a, const Row& b) { return q.CompareRows(a, b) < 0; });
    std::string plan = PlanScan(*t_, &where, &q.order).Describe(*t_);
    indexed += plan.find("sort") == std::string::npos;
    EXPECT_EQ(All(q), expect) << plan;
    EXPECT_EQ(PageThrough(q, 1 + static_cast<int64_t>(rng() % 5)), expect) << plan;
    int64_t n = -1;
    ASSERT_TRUE(backend_->Count(*t_, &where, &n).ok());
    EXPECT_EQ(n, static_cast<int64_t>(expect.size()));
  }
  EXPECT_GT(indexed, 100);  // the index walks were exercised, not just the sort
}

TEST_F(MemoryBackendTest, StagedChangesAreInvisibleToReadsUntilCommit) {
  Commit({Put(t_, Edit("e1", "a", 1, Value::Int(1)))});
  ASSERT_TRUE(backend_->Begin().ok());
  Op put = Put(t_, Edit("e2", "a", 2, Value::Int(2)));
  ASSERT_TRUE(backend_->Apply(&put, nullptr).ok());
  Op upd = UpdateKey(t_, {Value::Str("e1")}, {{kAt, AddToCol(kAt, 10)}});
  ASSERT_TRUE(backend_->Apply(&upd, nullptr).ok());
  EXPECT_FALSE(Get("e2").has_value());
  EXPECT_EQ((*Get("e1"))[kAt], Value::Int(1));
  int64_t n = 0;
  ASSERT_TRUE(backend_->Count(*t_, nullptr, &n).ok());
  EXPECT_EQ(n, 1);
  EXPECT_EQ(All(MakeQuery(t_.get(), std::nullopt, {})).size(), 1u);
  ASSERT_TRUE(backend_->Commit().ok());
  EXPECT_TRUE(Get("e2").has_value());
  EXPECT_EQ((*Get("e1"))[kAt], Value::Int(11));
  // The index followed the update.
  Query q = MakeQuery(t_.get(), Cmp(PredOp::kEq, kAt, Value::Int(11)), {});
  EXPECT_EQ(All(q).size(), 1u);
}

TEST_F(MemoryBackendTest, WritesInATransactionSeeEarlierWritesOfTheSameTransaction) {
  ASSERT_TRUE(backend_->Begin().ok());
  Op put = Put(t_, Edit("e1", "a/x", 1, Value::Int(5)));
  ASSERT_TRUE(backend_->Apply(&put, nullptr).ok());
  Op upd = UpdateKey(t_, {Value::Str("e1")}, {{kAt, AddToCol(kAt, 1)}});
  ASSERT_TRUE(backend_->Apply(&upd, nullptr).ok());
  Op put2 = Put(t_, Edit("e2", "a/y", 2, Value::Int(1)));
  ASSERT_TRUE(backend_->Apply(&put2, nullptr).ok());
  Op bulk;
  bulk.kind = OpKind::kUpdateWhere;
  bulk.table = t_;
  bulk.where = Cmp(PredOp::kPrefix, kPath, Value::Str("a/"));
  Expr rp;
  rp.op = ExprOp::kReplacePrefix;
  rp.type = Type::kStr;
  rp.column = kPath;
  rp.from = "a/";
  rp.to = "b/";
  bulk.set = {{kPath, rp}, {kAt, AddToCol(kAt, 100)}};
  ASSERT_TRUE(backend_->Apply(&bulk, nullptr).ok());
  EXPECT_EQ(bulk.count, 2);
  Op del;
  del.kind = OpKind::kDeleteWhere;
  del.table = t_;
  del.where = Cmp(PredOp::kEq, kAt, Value::Int(101));
  ASSERT_TRUE(backend_->Apply(&del, nullptr).ok());
  EXPECT_EQ(del.count, 1);
  ASSERT_TRUE(backend_->Commit().ok());
  EXPECT_FALSE(Get("e2").has_value());
  ASSERT_TRUE(Get("e1").has_value());
  EXPECT_EQ((*Get("e1"))[kPath], Value::Str("b/x"));
  EXPECT_EQ((*Get("e1"))[kAt], Value::Int(106));
  // The moved row left its old index entry behind.
  EXPECT_TRUE(
      All(MakeQuery(t_.get(), Cmp(PredOp::kPrefix, kPath, Value::Str("a/")), {{kPath, false}}))
          .empty());
  EXPECT_EQ(
      All(MakeQuery(t_.get(), Cmp(PredOp::kPrefix, kPath, Value::Str("b/")), {{kPath, false}}))
          .size(),
      1u);
}

TEST_F(MemoryBackendTest, BulkOpsCountTheRowsTheyMatchAndNoWhereMeansEveryRow) {
  Commit({Put(t_, Edit("1", "a", 1, Value())), Put(t_, Edit("2", "a", 2, Value::Int(3))),
          Put(t_, Edit("3", "b", 3, Value::Int(4)))});
  ASSERT_TRUE(backend_->Begin().ok());
  Op none;
  none.kind = OpKind::kUpdateWhere;
  none.table = t_;
  none.where = Cmp(PredOp::kGt, kAt, Value::Int(100));
  none.set = {{kEntry, Lit(Value::Int(0))}};
  ASSERT_TRUE(backend_->Apply(&none, nullptr).ok());
  EXPECT_EQ(none.count, 0);
  Op nulls = none;
  nulls.where =
      Group(PredOp::kNot, {Cmp(PredOp::kGt, kAt, Value::Int(3))});  // unknown on null: 1 row
  ASSERT_TRUE(backend_->Apply(&nulls, nullptr).ok());
  EXPECT_EQ(nulls.count, 1);
  Op all;
  all.kind = OpKind::kDeleteWhere;
  all.table = t_;
  ASSERT_TRUE(backend_->Apply(&all, nullptr).ok());
  EXPECT_EQ(all.count, 3);
  Op missing;
  missing.kind = OpKind::kDelete;
  missing.table = t_;
  missing.key = {Value::Str("nope")};
  EXPECT_TRUE(backend_->Apply(&missing, nullptr).ok());
  EXPECT_EQ(missing.count, 0);
  ASSERT_TRUE(backend_->Commit().ok());
  int64_t n = -1;
  ASSERT_TRUE(backend_->Count(*t_, nullptr, &n).ok());
  EXPECT_EQ(n, 0);
}

TEST_F(MemoryBackendTest, AFailedOpLeavesTheCommittedStateUnchangedAfterRollback) {
  Commit({Put(t_, Edit("e1", "a", 1, Value::Int(INT64_MAX))),
          Put(t_, Edit("e2", "a", 2, Value::Int(1)))});
  ASSERT_TRUE(backend_->Begin().ok());
  Op put = Put(t_, Edit("e3", "c", 3, Value::Int(1)));
  ASSERT_TRUE(backend_->Apply(&put, nullptr).ok());
  Op upd = UpdateKey(t_, {Value::Str("e2")}, {{kAt, AddToCol(kAt, 1)}});
  ASSERT_TRUE(backend_->Apply(&upd, nullptr).ok());
  ASSERT_TRUE(backend_->AppendOutbox(1, R"({"seq":1})").ok());

  Op missing = UpdateKey(t_, {Value::Str("zz")}, {{kAt, AddToCol(kAt, 1)}});
  Status s = backend_->Apply(&missing, nullptr);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("file-history/edits"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("\"zz\""), std::string::npos) << s.message();

  Op overflow;
  overflow.kind = OpKind::kUpdateWhere;
  overflow.table = t_;
  overflow.set = {{kAt, AddToCol(kAt, 1)}};
  s = backend_->Apply(&overflow, nullptr);
  EXPECT_EQ(s.code(), Code::kInvalidArgs);
  EXPECT_NE(s.message().find("overflow"), std::string::npos) << s.message();
  backend_->Rollback();

  EXPECT_FALSE(Get("e3").has_value());
  EXPECT_EQ((*Get("e2"))[kAt], Value::Int(1));
  EXPECT_EQ((*Get("e1"))[kAt], Value::Int(INT64_MAX));
  std::vector<OutboxEntry> out;
  ASSERT_TRUE(backend_->ReadOutbox(0, 10, &out).ok());
  EXPECT_TRUE(out.empty());
  BackendState state;
  ASSERT_TRUE(backend_->Open("other", &state).ok());
  EXPECT_EQ(state.head, 0);
  // The index kept no trace of the rolled-back row.
  EXPECT_TRUE(
      All(MakeQuery(t_.get(), Cmp(PredOp::kEq, kPath, Value::Str("c")), {{kAt, false}})).empty());
}

TEST_F(MemoryBackendTest, TableRecordsAreStagedAndIndexChangesAppliedAtCommit) {
  auto other = Schema("{}", R"({"n":"int","name":{"type":"str","optional":true}})", R"(["n"])");
  // Schema() names every table file-history/edits; give this one its own name.
  auto notes = std::make_shared<TableSchema>(*other);
  notes->name = "notes/list";
  ASSERT_TRUE(backend_->Begin().ok());
  Op decl = TableOp(notes);
  ASSERT_TRUE(backend_->Apply(&decl, nullptr).ok());
  Op put = Put(notes, Row{Value::Int(7), Value::Str("x")});
  ASSERT_TRUE(backend_->Apply(&put, nullptr).ok());
  std::optional<Row> row;
  EXPECT_EQ(backend_->Get(*notes, {Value::Int(7)}, &row).code(),
            Code::kInvalidArgs);  // not there yet
  ASSERT_TRUE(backend_->Commit().ok());
  ASSERT_TRUE(backend_->Get(*notes, {Value::Int(7)}, &row).ok());
  EXPECT_TRUE(row.has_value());
  int64_t max = 0;
  ASSERT_TRUE(backend_->MaxIntKey(*notes, &max).ok());
  EXPECT_EQ(max, 7);

  // A new index is built from the rows at commit; a dropped one disappears.
  Commit({Put(t_, Edit("e1", "a", 1, Value::Int(3))), Put(t_, Edit("e2", "b", 2, Value::Int(3)))});
  auto reindexed = Schema(R"({"byAt":["at"]})");
  Commit({TableOp(reindexed)});
  Query q = MakeQuery(reindexed.get(), Cmp(PredOp::kEq, kAt, Value::Int(3)), {});
  *MemoryStats(backend_.get()) = MemoryScanStats{};
  EXPECT_EQ(All(q).size(), 2u);
  EXPECT_EQ(MemoryStats(backend_.get())->last_plan, "index byAt eq(at) asc");
  BackendState state;
  ASSERT_TRUE(backend_->Open("ignored", &state).ok());
  EXPECT_EQ(state.id, "session-1");
  ASSERT_EQ(state.tables.size(), 2u);

  // A changed column list needs a migration.
  auto changed =
      Schema("{}", R"({"id":"str","path":"int","entry":"int","at":{"type":"int","optional":true},
                                  "meta":{"type":"json","optional":true}})");
  ASSERT_TRUE(backend_->Begin().ok());
  Op bad = TableOp(changed);
  Status s = backend_->Apply(&bad, nullptr);
  EXPECT_EQ(s.code(), Code::kInvalidArgs);
  EXPECT_NE(s.message().find("migration"), std::string::npos) << s.message();
  backend_->Rollback();
}

TEST_F(MemoryBackendTest, TheOutboxKeepsRecordsInSeqOrderAndTrims) {
  for (int64_t seq = 1; seq <= 5; ++seq) {
    ASSERT_TRUE(backend_->Begin().ok());
    ASSERT_TRUE(backend_->AppendOutbox(seq, "r" + std::to_string(seq)).ok());
    ASSERT_TRUE(backend_->Commit().ok());
  }
  BackendState state;
  ASSERT_TRUE(backend_->Open("x", &state).ok());
  EXPECT_EQ(state.head, 5);
  std::vector<OutboxEntry> out;
  ASSERT_TRUE(backend_->ReadOutbox(2, 2, &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].seq, 3);
  EXPECT_EQ(out[1].record, "r4");
  int64_t removed = 0;
  ASSERT_TRUE(backend_->TrimOutbox(3, &removed).ok());
  EXPECT_EQ(removed, 3);
  ASSERT_TRUE(backend_->ReadOutbox(0, 100, &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].seq, 4);
}

// Issue 13's fourteenth step: a run of puts to one table finds its staged
// table once (the backend keeps it while the transaction is open). Puts that
// switch tables, a table declared in the transaction, a second schema object
// of the same table, a rollback and a commit between transactions of puts
// with the same schema object: each row lands in its own table and
// transaction, and nothing of a rolled-back one.
TEST_F(MemoryBackendTest, RunsOfPutsLandInTheirTableAndTransactionThroughSwitchesRollbacksAndCommits) {
  auto other = std::make_shared<TableSchema>(*Edits());
  other->name = "file-history/other";
  std::shared_ptr<const TableSchema> o = other;
  auto same = std::make_shared<const TableSchema>(*t_);  // t_'s table, another object
  auto ids = [&](const TableSchema& t) {
    std::vector<std::string> out;
    for (const Row& r : All(MakeQuery(&t, std::nullopt, {}))) out.push_back(r[kId].text());
    return out;
  };
  using V = std::vector<std::string>;
  Commit({Put(t_, Edit("e1", "a", 1, Value())), TableOp(o), Put(o, Edit("o1", "x", 1, Value())),
          Put(t_, Edit("e2", "b", 2, Value())), Put(t_, Edit("e3", "c", 3, Value())),
          Put(o, Edit("o2", "y", 2, Value())), Put(same, Edit("e0", "z", 0, Value())),
          Put(t_, Edit("e4", "d", 4, Value()))});
  EXPECT_EQ(ids(*t_), (V{"e0", "e1", "e2", "e3", "e4"}));
  EXPECT_EQ(ids(*o), (V{"o1", "o2"}));

  ASSERT_TRUE(backend_->Begin().ok());  // rolled back: none of it lands
  for (Op op : {Put(t_, Edit("r1", "a", 1, Value())), Put(o, Edit("r2", "a", 1, Value())),
                Put(t_, Edit("r3", "a", 1, Value()))}) {
    ASSERT_TRUE(backend_->Apply(&op, nullptr).ok());
  }
  backend_->Rollback();
  Commit({Put(t_, Edit("e5", "e", 5, Value())), Put(t_, Edit("e6", "f", 6, Value()))});
  Commit({Put(t_, Edit("e7", "g", 7, Value()))});
  Commit({Put(o, Edit("o3", "w", 3, Value())), Put(t_, Edit("e8", "h", 8, Value()))});
  EXPECT_EQ(ids(*t_), (V{"e0", "e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8"}));
  EXPECT_EQ(ids(*o), (V{"o1", "o2", "o3"}));
  // The byPath index holds each row once.
  std::vector<Row> by_path = All(MakeQuery(t_.get(), std::nullopt, {OrderTerm{kPath, false}}));
  ASSERT_EQ(by_path.size(), 9u);
  EXPECT_NE(MemoryStats(backend_.get())->last_plan.find("byPath"), std::string::npos)
      << MemoryStats(backend_.get())->last_plan;
  std::string paths;
  for (const Row& r : by_path) paths += r[kPath].text();
  EXPECT_EQ(paths, "abcdefghz");
}

// Issue 13's fourteenth step: a record handed over shared is held, not
// copied, and reads back as written, before and after later commits.
TEST_F(MemoryBackendTest, ASharedRecordIsHeldNotCopiedAndReadsBackAsWritten) {
  auto first = std::make_shared<const std::string>(std::string(5000, 'x') + "1");
  ASSERT_TRUE(backend_->Begin().ok());
  ASSERT_TRUE(backend_->AppendOutboxShared(1, first).ok());
  ASSERT_TRUE(backend_->Commit().ok());
  EXPECT_EQ(first.use_count(), 2);  // the backend's outbox holds this string
  ASSERT_TRUE(backend_->Begin().ok());
  ASSERT_TRUE(backend_->AppendOutbox(2, "r2").ok());
  ASSERT_TRUE(backend_->Commit().ok());
  auto rolled = std::make_shared<const std::string>("r3");
  ASSERT_TRUE(backend_->Begin().ok());
  ASSERT_TRUE(backend_->AppendOutboxShared(3, rolled).ok());
  backend_->Rollback();
  EXPECT_EQ(rolled.use_count(), 1);
  std::vector<OutboxEntry> out;
  ASSERT_TRUE(backend_->ReadOutbox(0, 10, &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].record, *first);
  EXPECT_EQ(out[1].record, "r2");
  int64_t removed = 0;
  ASSERT_TRUE(backend_->TrimOutbox(1, &removed).ok());
  EXPECT_EQ(first.use_count(), 1);
  EXPECT_EQ(*first, std::string(5000, 'x') + "1");
}

TEST_F(MemoryBackendTest, MaxIntKeyIsZeroWhenEmptyAndRefusesAStrKey) {
  auto ids = std::make_shared<TableSchema>(*Schema("{}", R"({"n":"int"})", R"(["n"])"));
  ids->name = "ids/t";
  Commit({TableOp(ids)});
  int64_t max = -1;
  ASSERT_TRUE(backend_->MaxIntKey(*ids, &max).ok());
  EXPECT_EQ(max, 0);
  Commit(
      {Put(ids, Row{Value::Int(-3)}), Put(ids, Row{Value::Int(41)}), Put(ids, Row{Value::Int(2)})});
  ASSERT_TRUE(backend_->MaxIntKey(*ids, &max).ok());
  EXPECT_EQ(max, 41);
  EXPECT_EQ(backend_->MaxIntKey(*t_, &max).code(), Code::kInvalidArgs);
}

// The rows' map tells most keys apart by a number made of the first value's
// first 8 bytes (a str) or its bits (an int), and falls back to comparing the
// values when the numbers tie: keys that agree for 8 bytes and then differ,
// that end inside them, hold zero bytes or UTF-8, and ints of both signs keep
// the values' order, and each is found by a get, through commits that append
// past the last key, land in between, replace and delete.
TEST_F(MemoryBackendTest, KeysKeepTheirOrderWhereTheirFirstEightBytesTieOrTheyAreIntsOfEitherSign) {
  const std::vector<std::string> strs = {
      "", "a", std::string("a\0", 2), std::string("a\0\0", 3), "a\x01", "ab", "abcdefg",
      "abcdefgh", std::string("abcdefgh\0", 9), "abcdefgha", "abcdefghi", "abcdefghij", "abcdefgi",
      "A", "~", "\xC3\xA9", "\xF0\x9F\x98\x80", "zzzzzzzzzzzzzzzz", "zzzzzzzzzzzzzzzy"};
  std::vector<std::string> order = strs;
  std::mt19937 rng(7);
  std::shuffle(order.begin(), order.end(), rng);
  // In three commits: the last ones land among the first, not past them.
  for (size_t from = 0; from < order.size(); from += 7) {
    std::vector<Op> ops;
    for (size_t i = from; i < std::min(order.size(), from + 7); ++i) {
      ops.push_back(Put(t_, Edit(order[i], "p/" + std::to_string(i), static_cast<int64_t>(i), Value())));
    }
    Commit(std::move(ops));
  }
  auto ids_in_order = [&] {
    std::vector<std::string> ids;
    for (const Row& r : All(MakeQuery(t_.get(), std::nullopt, {}))) ids.push_back(r[kId].text());
    return ids;
  };
  std::vector<std::string> sorted = strs;
  std::sort(sorted.begin(), sorted.end(),
            [](const std::string& a, const std::string& b) { return CompareText(a, b) < 0; });
  EXPECT_EQ(ids_in_order(), sorted);
  for (size_t i = 0; i < order.size(); ++i) {
    std::optional<Row> row = Get(order[i]);
    ASSERT_TRUE(row.has_value()) << i;
    EXPECT_EQ((*row)[kEntry].int_value(), static_cast<int64_t>(i));
  }
  EXPECT_FALSE(Get(std::string("abcdefgh\x01", 9)).has_value());
  EXPECT_FALSE(Get("abcdefgj").has_value());
  EXPECT_FALSE(Get("b").has_value());
  // Replaced in place and deleted where the numbers tie.
  Op gone;
  gone.kind = OpKind::kDelete;
  gone.table = t_;
  gone.key = {Value::Str("abcdefghi")};
  Commit({Put(t_, Edit("abcdefgh", "replaced", 100, Value())), std::move(gone)});
  sorted.erase(std::find(sorted.begin(), sorted.end(), "abcdefghi"));
  EXPECT_EQ(ids_in_order(), sorted);
  EXPECT_EQ((*Get("abcdefgh"))[kEntry].int_value(), 100);
  EXPECT_FALSE(Get("abcdefghi").has_value());
  EXPECT_TRUE(Get("abcdefghij").has_value());

  auto ints = std::make_shared<TableSchema>(*Schema("{}", R"({"n":"int"})", R"(["n"])"));
  ints->name = "ints/t";
  Commit({TableOp(ints)});
  const std::vector<int64_t> ns = {kMaxSafeInteger, -1, 0, 256, -kMaxSafeInteger, 1, -256, 255};
  for (int64_t n : ns) Commit({Put(ints, Row{Value::Int(n)})});
  std::vector<int64_t> got;
  for (const Row& r : All(MakeQuery(ints.get(), std::nullopt, {}))) got.push_back(r[0].int_value());
  std::vector<int64_t> want = ns;
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
  for (int64_t n : ns) {
    std::optional<Row> row;
    ASSERT_TRUE(backend_->Get(*ints, {Value::Int(n)}, &row).ok());
    EXPECT_TRUE(row.has_value()) << n;
  }
  std::optional<Row> none;
  ASSERT_TRUE(backend_->Get(*ints, {Value::Int(2)}, &none).ok());
  EXPECT_FALSE(none.has_value());

  // Two-column keys whose first values tie in the number: the rest decides.
  auto pairs = std::make_shared<TableSchema>(
      *Schema("{}", R"({"s":"str","n":"int"})", R"(["s","n"])"));
  pairs->name = "pairs/t";
  Commit({TableOp(pairs)});
  Commit({Put(pairs, Row{Value::Str("abcdefghX"), Value::Int(0)}),
          Put(pairs, Row{Value::Str("abcdefgh"), Value::Int(2)}),
          Put(pairs, Row{Value::Str("abcdefgh"), Value::Int(-1)})});
  std::vector<std::string> pair_order;
  for (const Row& r : All(MakeQuery(pairs.get(), std::nullopt, {}))) {
    pair_order.push_back(r[0].text() + "/" + std::to_string(r[1].int_value()));
  }
  EXPECT_EQ(pair_order, (std::vector<std::string>{"abcdefgh/-1", "abcdefgh/2", "abcdefghX/0"}));
}

TEST_F(MemoryBackendTest, ACloseStoreRefusesCalls) {
  backend_->Close();
  EXPECT_EQ(backend_->Begin().code(), Code::kClosed);
  std::optional<Row> row;
  EXPECT_EQ(backend_->Get(*t_, {Value::Str("e1")}, &row).code(), Code::kClosed);
}

}  // namespace
}  // namespace onestore
