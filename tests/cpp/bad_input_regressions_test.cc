// Regressions of issue 14's bad-input corpus and fuzzing (docs/reliability.md,
// "Bad input through the public API"): a raw NUL byte after a JSON text no
// longer ends the text early, a cursor whose position holds null for a
// required column is refused, and a replica reads a batch with the reader's
// nesting limit plus the three levels a batch adds (so a value a store took
// replicates, and a deeper batch is refused before anything recursive); a
// statement too deep for the host's SQLite (workerd's) is `limit`; a diverged
// replica answers every batch, a malformed one too, with `sync/diverged`.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "backends/sqlite/connection.h"
#include "commit/store.h"
#include "query/query.h"
#include "sync/fingerprint.h"
#include "sync/replica.h"
#include "values/json_text.h"
#include "writes/writes.h"

namespace onestore {
namespace {

using namespace std::string_literals;

std::unique_ptr<Store> Open(bool replica = false) {
  OpenOptions o;
  o.backend = "memory";
  o.id = "bad-input";
  o.replica = replica;
  std::unique_ptr<Store> s;
  EXPECT_TRUE(Store::Open(o, &s).ok());
  return s;
}

const char kTable[] =
    R"([{"op":"table","table":"t/items","columns":{"id":{"type":"str"},"n":{"type":"int","optional":true},)"
    R"("j":{"type":"json","optional":true}},"key":["id"]}])";
const char kMeta[] = R"({"owner":"t","at":1})";

TEST(BadInputRegressions, ARawNulAfterAJsonTextMakesItInvalidRatherThanEndingIt) {
  Json j;
  bool too_deep = true;
  EXPECT_FALSE(TryParseJsonText("[1]\0[2"s, 10, &j, &too_deep));
  EXPECT_FALSE(too_deep);
  Status st = ParseJsonText("{\"a\":1}\0garbage"s, "query", &j);
  EXPECT_EQ(st.code(), Code::kInvalidArgs) << st.ToString();
  // A NUL written as an escape inside a string is fine.
  EXPECT_TRUE(ParseJsonText(R"(["a\u0000b"])", "value", &j).ok());

  auto store = Open();
  std::string r;
  ASSERT_TRUE(store->Commit(kTable, kMeta, &r).ok());
  const int64_t head = store->head();
  st = store->Commit(R"([{"op":"put","table":"t/items","row":{"id":"a"}}])"s + '\0' + "junk", kMeta,
                     &r);
  EXPECT_EQ(st.code(), Code::kInvalidArgs) << st.ToString();
  EXPECT_EQ(store->head(), head);
  std::string page;
  st = store->Page("t/items", "{}\0{\"where\":7}"s, 10, "", &page);
  EXPECT_EQ(st.code(), Code::kInvalidArgs) << st.ToString();
}

TEST(BadInputRegressions, ACursorWithNullForARequiredColumnIsInvalidCursor) {
  auto store = Open();
  std::string r;
  ASSERT_TRUE(store->Commit(kTable, kMeta, &r).ok());
  auto table = store->Tables().front();
  Query q;
  ASSERT_TRUE(ParseQuery(Json::parse("{}"), *table, "query", &q).ok());
  std::vector<Value> position;
  Status st = DecodeCursor(q, EncodeCursor(q, {Value()}), &position);
  EXPECT_EQ(st.code(), Code::kInvalidCursor) << st.ToString();
  EXPECT_TRUE(DecodeCursor(q, EncodeCursor(q, {Value::Str("a")}), &position).ok());
  // Null is a position in an optional column (null sorts first).
  Query by_n;
  ASSERT_TRUE(ParseQuery(Json::parse(R"({"orderBy":[["n","asc"]]})"), *table, "query", &by_n).ok());
  EXPECT_TRUE(DecodeCursor(by_n, EncodeCursor(by_n, {Value(), Value::Str("a")}), &position).ok());
}

std::string Nested(int levels) { return std::string(levels, '[') + std::string(levels, ']'); }

TEST(BadInputRegressions, AReplicaTakesAValueAtTheStoresNestingLimitAndRefusesDeeperBatchesFirst) {
  // The store takes a json value 997 levels deep (1000 in its ops text).
  auto store = Open();
  std::string r;
  ASSERT_TRUE(store->Commit(kTable, kMeta, &r).ok());
  ASSERT_TRUE(store->Commit(R"([{"op":"put","table":"t/items","row":{"id":"deep","j":)" + Nested(997) +
                                "}}]",
                            kMeta, &r)
                  .ok());
  std::string batch;
  ASSERT_TRUE(store->ReadOutbox(0, 10, &batch).ok());
  auto replica_store = Open(/*replica=*/true);
  std::unique_ptr<Replica> replica;
  ASSERT_TRUE(Replica::Attach(replica_store.get(), &replica).ok());
  Status st = replica->ApplyBatch(batch, &r);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(replica->head(), 2);

  // A batch nested deeper than 1003 levels is refused as such, whatever it holds.
  auto fresh = Open(/*replica=*/true);
  ASSERT_TRUE(Replica::Attach(fresh.get(), &replica).ok());
  st = replica->ApplyBatch(R"({"from":0,"to":1,"commits":)" + Nested(100000) + "}", &r);
  EXPECT_EQ(st.code(), Code::kInvalidArgs);
  EXPECT_NE(st.message().find("nested deeper than 1003"), std::string::npos) << st.message();
  st = replica->ApplyBatch(R"({"from":0,"to":0,"commits":[]})"s + '\0' + "x", &r);
  EXPECT_EQ(st.code(), Code::kInvalidArgs) << st.ToString();
  EXPECT_EQ(fresh->head(), 0);
}

TEST(BadInputRegressions, AStatementTooDeepForTheHostsSqliteIsLimitNotStorageFailed) {
  // What workerd's SQLite answers for a set expression nested 60 levels.
  Status st = HostSqlError(
      "Expression tree is too large (maximum depth 100): SQLITE_ERROR", "update in table \"t/items\"");
  EXPECT_EQ(st.code(), Code::kLimit) << st.ToString();
  EXPECT_NE(st.message().find("update in table"), std::string::npos);
  // A storage failure stays one.
  EXPECT_EQ(HostSqlError("disk I/O error: SQLITE_IOERR", "commit").code(), Code::kStorageFailed);
}

TEST(BadInputRegressions, IntsOfNineteenDigitsGoToTheDomPathAndReadExactly) {
  // The fast reader of puts accumulated every digit before checking the
  // count, overflowing an int64 on a 19-digit int (UBSan, fuzz target log,
  // tests/fuzz/corpus/log/regression-fast-reader-19-digit-int). It now
  // declines at the 19th digit; the DOM path reads the value or refuses it.
  auto store = Open();
  std::string r;
  ASSERT_TRUE(store->Commit(kTable, kMeta, &r).ok());
  Catalog catalog;
  for (const auto& t : store->Tables()) catalog.Put(t);
  TableResolver tables(&catalog);
  std::vector<Op> ops;
  EXPECT_FALSE(ParsePutsFast(R"([{"op":"put","table":"t/items","row":{"id":"a","n":9223372036854775807}}])",
                             &tables, &ops));
  EXPECT_TRUE(ops.empty());
  ASSERT_TRUE(store->Commit(R"([{"op":"put","table":"t/items","row":{"id":"a","n":9223372036854775807}}])", kMeta, &r).ok());
  std::string row;
  ASSERT_TRUE(store->Get("t/items", R"(["a"])", &row).ok());
  EXPECT_NE(row.find("9223372036854775807"), std::string::npos) << row;
  Status st = store->Commit(R"([{"op":"put","table":"t/items","row":{"id":"b","n":9223372036854775808}}])", kMeta, &r);
  EXPECT_EQ(st.code(), Code::kInvalidArgs) << st.ToString();
  st = store->Commit(R"([{"op":"put","table":"t/items","row":{"id":"b","n":-99999999999999999999}}])", kMeta, &r);
  EXPECT_EQ(st.code(), Code::kInvalidArgs) << st.ToString();
}

TEST(BadInputRegressions, ACommitTimeBeyondAnInt64IsRefusedNotConverted) {
  // {"at":1e300} was converted to an int64 (undefined behaviour; a trap in
  // wasm): UBSan, fuzz target ops, tests/fuzz/corpus/ops/regression-commit-at-1e300.
  auto store = Open();
  std::string r;
  ASSERT_TRUE(store->Commit(kTable, kMeta, &r).ok());
  const int64_t head = store->head();
  for (const char* meta : {R"({"owner":"t","at":1e300})", R"({"owner":"t","at":-1e19})",
                           R"({"owner":"t","at":18446744073709551615})"}) {
    Status st = store->Commit(R"([{"op":"put","table":"t/items","row":{"id":"a"}}])", meta, &r);
    EXPECT_EQ(st.code(), Code::kInvalidArgs) << meta << ": " << st.ToString();
    EXPECT_NE(st.message().find("at "), std::string::npos) << st.message();
  }
  EXPECT_EQ(store->head(), head);
  // In range, a fraction is cut to milliseconds as before.
  ASSERT_TRUE(store->Commit(R"([])", R"({"owner":"t","at":1700000000000.5})", &r).ok()) << r;
  EXPECT_NE(r.find("\"at\":1700000000000"), std::string::npos) << r;
}

// The fuzz finding batch-0ae46b65 (tests/fuzz/corpus/batch/
// regression-diverged-replica-malformed-batch): a diverged replica answered a
// malformed batch with invalid/args, telling a sync driver to fetch the batch
// again, where nothing it fetches can apply. Every batch a diverged replica is
// handed, well-formed or not, is refused with sync/diverged.
TEST(BadInputRegressions, ADivergedReplicaAnswersEveryBatchMalformedOrNotWithDiverged) {
  auto replica_store = Open(/*replica=*/true);
  std::unique_ptr<Replica> replica;
  ASSERT_TRUE(Replica::Attach(replica_store.get(), &replica).ok());
  std::string r;
  // A malformed batch on a replica that has not diverged: invalid/args.
  Status st = replica->ApplyBatch(R"({"from":0,"to":1,"commits":[)", &r);
  EXPECT_EQ(st.code(), Code::kInvalidArgs) << st.ToString();
  // An update of a row the replica does not hold: it diverges.
  st = replica->ApplyBatch(
      R"({"from":0,"to":2,"commits":[{"seq":1,"from":0,"at":1,"owner":"t","ops":)"s + kTable +
          R"(},{"seq":2,"from":1,"at":1,"owner":"t","ops":[{"op":"update","table":"t/items",)"
          R"("key":["nope"],"set":{"n":{"value":1}}}]}]})",
      &r);
  ASSERT_EQ(st.code(), Code::kSyncDiverged) << st.ToString();
  ASSERT_FALSE(replica->diverged().empty());
  // Not JSON, not a batch, a batch of the wrong length, a good batch: all
  // sync/diverged, and nothing applied.
  for (const std::string& batch :
       {R"({"from":0,"to":1,"commits":[)"s, "[1,2]"s, R"({"from":2,"to":3,"commits":[]})"s,
        R"({"from":0,"to":1,"commits":[{"seq":1,"from":0,"at":1,"owner":"t","ops":[]}]})"s,
        R"({"from":0,"to":0,"commits":[]})"s + '\0' + "x"}) {
    st = replica->ApplyBatch(batch, &r);
    EXPECT_EQ(st.code(), Code::kSyncDiverged) << batch << ": " << st.ToString();
  }
  EXPECT_EQ(replica_store->head(), 0);
}

// The fuzz findings of 1 December (tests/fuzz/corpus/where_set/
// regression-negative-zero, tests/fuzz/corpus/query/regression-negative-zero):
// a num cell of negative zero (`-0e-300`) stayed -0.0 on the memory backend
// and read back as 0 from SQLite, so the two stores' content differed. A num
// of negative zero, however it is spelled or wherever it is written, is
// stored as 0 on every backend.
TEST(BadInputRegressions, ANumOfNegativeZeroIsStoredAsZeroOnEveryBackend) {
  OpenOptions o;
  o.backend = "sqlite";
  o.path = ":memory:";
  o.id = "bad-input";
  std::unique_ptr<Store> sql;
  ASSERT_TRUE(Store::Open(o, &sql).ok());
  auto mem = Open();
  const char kNums[] =
      R"([{"op":"table","table":"t/nums","columns":{"id":{"type":"str"},)"
      R"("x":{"type":"num","optional":true,"default":-0.0}},"key":["id"]}])";
  const std::string puts =
      R"([{"op":"put","table":"t/nums","row":{"id":"a","x":-0}},)"
      R"({"op":"put","table":"t/nums","row":{"id":"b","x":-0.0}},)"
      R"({"op":"put","table":"t/nums","row":{"id":"c","x":-0e-300}},)"
      R"({"op":"put","table":"t/nums","row":{"id":"d","x":-1e-400}},)"
      R"({"op":"put","table":"t/nums","row":{"id":"e"}},)"
      R"({"op":"put","table":"t/nums","row":{"id":"f","x":1}},)"
      R"({"op":"update","table":"t/nums","key":["f"],"set":{"x":{"value":-0.0}}},)"
      R"({"op":"put","table":"t/nums","row":{"id":"g","x":2}}])";
  std::string pages[2];
  std::string fps[2];
  Store* stores[2] = {mem.get(), sql.get()};
  for (int i = 0; i < 2; ++i) {
    std::string r;
    ASSERT_TRUE(stores[i]->Commit(kNums, kMeta, &r).ok()) << r;
    ASSERT_TRUE(stores[i]->Commit(puts, kMeta, &r).ok()) << r;
    // A where on -0 matches the zeros; a set to -0 writes 0.
    ASSERT_TRUE(stores[i]
                    ->Commit(R"([{"op":"update","table":"t/nums","where":{"eq":["x",-0.0]},)"
                             R"("set":{"x":{"max":[{"col":"x"},{"value":-0.0}]}}},)"
                             R"({"op":"update","table":"t/nums","key":["g"],"set":{"x":-0e-5}}])",
                             kMeta, &r)
                    .ok())
        << r;
    ASSERT_TRUE(stores[i]->Page("t/nums", "{}", 100, "", &pages[i]).ok());
    ASSERT_TRUE(Fingerprint(stores[i], &fps[i]).ok());
    EXPECT_EQ(pages[i].find("-0"), std::string::npos) << pages[i];
    EXPECT_EQ(pages[i].find("-"), std::string::npos) << pages[i];
    int64_t zeros = -1;
    ASSERT_TRUE(stores[i]->Count("t/nums", R"({"where":{"eq":["x",0]}})", &zeros).ok());
    EXPECT_EQ(zeros, 7) << pages[i];
  }
  EXPECT_EQ(pages[0], pages[1]);
  EXPECT_EQ(fps[0], fps[1]);
}

}  // namespace
}  // namespace onestore
