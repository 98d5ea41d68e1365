// Checks the vector cache of nearest (src/vectors/vector_cache.h) on the
// sqlite backend: a store that keeps the cache and one that does not take
// the same random commits (puts, null vectors, updates and deletes by key,
// bulk ops, failed commits that roll back, staged transactions, an alter)
// and answer every search the same, byte for byte; searches after key ops
// are answered from the cache (nothing is built again) and a bulk op drops
// it; a column that does not fit the budget is not held. On the memory
// backend, put-only commits (whose rows the backend may take instead of
// copying) keep the cached column right.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "commit/store.h"

namespace onestore {
namespace {

constexpr char kTable[] =
    R"([{"op":"table","table":"t/v","version":1,
        "columns":{"id":{"type":"str"},"kind":{"type":"str"},
                   "e":{"type":"vector","dims":3,"optional":true}},
        "key":["id"]}])";
constexpr char kMeta[] = R"({"owner":"t"})";

std::unique_ptr<Store> OpenSqlite(int64_t cache_bytes) {
  OpenOptions o;
  o.backend = "sqlite";
  o.path = ":memory:";
  o.id = "s";
  o.vector_cache_bytes = cache_bytes;
  std::unique_ptr<Store> s;
  EXPECT_TRUE(Store::Open(o, &s).ok());
  return s;
}

// A small deterministic generator (xorshift32).
struct Rng {
  uint32_t x;
  uint32_t Next() {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
  }
  int Below(int n) { return static_cast<int>(Next() % static_cast<uint32_t>(n)); }
};

std::string VectorJson(Rng* r) {
  // Few distinct values, so that equal distances (ties by key) happen.
  return "[" + std::to_string(r->Below(5) - 2) + "," + std::to_string(r->Below(5) - 2) + "," +
         std::to_string(r->Below(3)) + "]";
}

std::string RandomOp(Rng* r) {
  const std::string id = "\"r" + std::to_string(r->Below(40)) + "\"";
  const std::string kind = "\"k" + std::to_string(r->Below(3)) + "\"";
  switch (r->Below(10)) {
    case 0:
      return R"({"op":"delete","table":"t/v","key":[)" + id + "]}";
    case 1:
      return R"({"op":"update","table":"t/v","key":[)" + id + R"(],"set":{"e":{"value":)" +
             VectorJson(r) + "}}}";
    case 2:
      return R"({"op":"update","table":"t/v","key":[)" + id +
             R"(],"set":{"e":{"value":null},"kind":{"value":"k0"}}})";
    case 3:
      return R"({"op":"put","table":"t/v","row":{"id":)" + id + R"(,"kind":)" + kind + "}}";
    default:
      return R"({"op":"put","table":"t/v","row":{"id":)" + id + R"(,"kind":)" + kind +
             R"(,"e":)" + VectorJson(r) + "}}";
  }
}

// Every search the test compares: each metric, a where, a k past the rows.
std::vector<std::string> Searches() {
  return {R"({"column":"e","vector":[1,0,1],"k":5})",
          R"({"column":"e","vector":[1,-1,0],"k":3,"metric":"l2"})",
          R"({"column":"e","vector":[0,1,2],"k":100,"metric":"dot"})",
          R"({"column":"e","vector":[2,1,0],"k":4,"where":{"eq":["kind","k1"]}})"};
}

void ExpectSameAnswers(Store* cached, Store* plain, const std::string& when) {
  for (const std::string& q : Searches()) {
    std::string a, b;
    ASSERT_TRUE(cached->Nearest("t/v", q, &a).ok()) << when;
    ASSERT_TRUE(plain->Nearest("t/v", q, &b).ok()) << when;
    EXPECT_EQ(a, b) << when << ": " << q;
  }
}

TEST(VectorCache, AnswersAsAScanDoesAcrossRandomCommitsRollbacksAndBulkOps) {
  std::unique_ptr<Store> cached = OpenSqlite(1 << 20);
  std::unique_ptr<Store> plain = OpenSqlite(0);
  std::string result;
  for (Store* s : {cached.get(), plain.get()}) ASSERT_TRUE(s->Commit(kTable, kMeta, &result).ok());
  Rng rng{12345};
  int from_cache = 0;
  int committed = 0;
  int failed = 0;
  for (int step = 0; step < 300; ++step) {
    const std::string when = "step " + std::to_string(step);
    std::string ops = "[";
    const int n = 1 + rng.Below(4);
    const int shape = rng.Below(20);
    for (int i = 0; i < n; ++i) ops += (i ? "," : "") + RandomOp(&rng);
    if (shape == 0) {
      ops += R"(,{"op":"delete","table":"t/v","where":{"eq":["kind","k2"]}})";
    } else if (shape == 1) {
      ops += R"(,{"op":"update","table":"t/v","where":{"eq":["kind","k1"]},"set":{"e":{"value":[1,1,1]}}})";
    } else if (shape == 2) {
      // Fails at the end (not_found): the commit rolls back, puts and all.
      ops += R"(,{"op":"update","table":"t/v","key":["missing"],"set":{"kind":{"value":"k0"}}})";
    }
    ops += "]";
    const int64_t builds = cached->vector_cache().builds();
    // An update of a key that is not there fails the commit (not_found), so
    // random commits fail too: both stores alike, nothing of them kept.
    Status a, b;
    if (shape == 3) {
      // Staged in a transaction, then committed.
      const int ta = cached->TxOpen();
      const int tb = plain->TxOpen();
      a = cached->TxStage(ta, ops);
      b = plain->TxStage(tb, ops);
      ASSERT_EQ(a.code(), b.code()) << when << ": " << a.message();
      if (a.ok()) a = cached->TxCommit(ta, "[]", kMeta, &result);
      if (b.ok()) b = plain->TxCommit(tb, "[]", kMeta, &result);
      cached->TxClose(ta);
      plain->TxClose(tb);
    } else {
      a = cached->Commit(ops, kMeta, &result);
      b = plain->Commit(ops, kMeta, &result);
    }
    ASSERT_EQ(a.code(), b.code()) << when << ": " << a.message() << " / " << b.message();
    if (shape == 2) {
      ASSERT_FALSE(a.ok()) << when;
    }
    a.ok() ? ++committed : ++failed;
    ExpectSameAnswers(cached.get(), plain.get(), when);
    // Key ops and failed commits keep the cache (nothing is built); a
    // committed bulk op drops it (the next search builds it again).
    const bool bulk = a.ok() && (shape == 0 || shape == 1);
    if (builds > 0) {
      EXPECT_EQ(cached->vector_cache().builds(), builds + (bulk ? 1 : 0)) << when;
      if (!bulk) ++from_cache;
    }
  }
  EXPECT_GT(committed, 100);
  EXPECT_GT(failed, 20);
  EXPECT_GT(from_cache, 200);
  EXPECT_GT(cached->vector_cache().bytes(), 0);
  EXPECT_EQ(plain->vector_cache().builds(), 0);

  // An alter of the table drops its column; the next search builds it again.
  const std::string alter =
      R"([{"op":"alter","table":"t/v","version":2,"add":{"note":{"type":"str","optional":true}}}])";
  const int64_t builds = cached->vector_cache().builds();
  Status a = cached->Commit(alter, kMeta, &result);
  Status b = plain->Commit(alter, kMeta, &result);
  ASSERT_TRUE(a.ok()) << a.message();
  ASSERT_TRUE(b.ok()) << b.message();
  ExpectSameAnswers(cached.get(), plain.get(), "after the alter");
  EXPECT_EQ(cached->vector_cache().builds(), builds + 1);
}

TEST(VectorCache, HoldsNothingPastItsBudgetAndStillAnswers) {
  std::unique_ptr<Store> small = OpenSqlite(600);  // a few rows of 3 float32 and their keys
  std::unique_ptr<Store> plain = OpenSqlite(0);
  std::string result;
  std::string ops = "[";
  for (int i = 0; i < 50; ++i) {
    ops += std::string(i ? "," : "") + R"({"op":"put","table":"t/v","row":{"id":"r)" +
           std::to_string(i) + R"(","kind":"k0","e":[)" + std::to_string(i % 7) + ",1,0]}}";
  }
  ops += "]";
  for (Store* s : {small.get(), plain.get()}) {
    ASSERT_TRUE(s->Commit(kTable, kMeta, &result).ok());
    ASSERT_TRUE(s->Commit(ops, kMeta, &result).ok());
  }
  ExpectSameAnswers(small.get(), plain.get(), "past the budget");
  EXPECT_EQ(small->vector_cache().builds(), 0);
  EXPECT_EQ(small->vector_cache().bytes(), 0);
}

// A commit of puts and declarations only has its outbox record written
// before its Apply calls, and the memory backend then takes each put's row
// instead of copying it; the puts to a table whose vector column the cache
// holds are the exception (the cache reads their rows once committed).
TEST(VectorCache, OnTheMemoryBackendPutOnlyCommitsKeepTheCachedColumnRight) {
  auto open = [](int64_t cache_bytes) {
    OpenOptions o;
    o.backend = "memory";
    o.id = "m";
    o.vector_cache_bytes = cache_bytes;
    std::unique_ptr<Store> s;
    EXPECT_TRUE(Store::Open(o, &s).ok());
    return s;
  };
  std::unique_ptr<Store> cached = open(1 << 20);
  std::unique_ptr<Store> plain = open(0);
  std::string result;
  for (Store* s : {cached.get(), plain.get()}) ASSERT_TRUE(s->Commit(kTable, kMeta, &result).ok());
  Rng rng{777};
  for (int step = 0; step < 60; ++step) {
    const std::string when = "step " + std::to_string(step);
    std::string ops = "[";
    const int n = 1 + rng.Below(6);
    for (int i = 0; i < n; ++i) {
      const std::string id = "\"r" + std::to_string(rng.Below(40)) + "\"";
      ops += std::string(i ? "," : "") + R"({"op":"put","table":"t/v","row":{"id":)" + id +
             R"(,"kind":"k)" + std::to_string(rng.Below(3)) + R"(","e":)" + VectorJson(&rng) + "}}";
    }
    ops += "]";
    const int64_t builds = cached->vector_cache().builds();
    ASSERT_TRUE(cached->Commit(ops, kMeta, &result).ok()) << when;
    ASSERT_TRUE(plain->Commit(ops, kMeta, &result).ok()) << when;
    ExpectSameAnswers(cached.get(), plain.get(), when);
    // Put-only commits keep the cache: after the first search, none builds.
    if (builds > 0) EXPECT_EQ(cached->vector_cache().builds(), builds) << when;
  }
  EXPECT_GT(cached->vector_cache().bytes(), 0);
}

}  // namespace
}  // namespace onestore
