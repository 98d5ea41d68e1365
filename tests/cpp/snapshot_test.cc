// Snapshots and restore in the core (src/snapshot/snapshot.h): a memory copy
// and a sqlite file copy (SQLite's backup API) each restore to the
// snapshot's fingerprint in one commit whose record starts with the marker;
// a replica applying that record matches; a restore op is refused from an
// owner's commit; a copy into an empty replica (store.at's start) takes the
// snapshot's head and then applies only the records after it.
#include "snapshot/snapshot.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "commit/store.h"
#include "store_fixtures.h"
#include "sync/replica.h"

namespace onestore {
namespace {

constexpr char kTable[] =
    R"([{"op":"table","table":"t/items","version":1,"columns":{"id":{"type":"str"},"n":{"type":"int"}},"key":["id"]}])";

using test::CommitOps;
using test::FingerprintOf;

std::unique_ptr<Store> Open(const std::string& backend, const std::string& path, bool replica = false) {
  return test::OpenTestStore(backend, path, "", replica);
}

std::string TempPath(const std::string& name) { return test::FreshStorePath("snapshot", name); }

void Seed(Store* s) {
  CommitOps(s, kTable);
  CommitOps(s, R"([{"op":"put","table":"t/items","row":{"id":"a","n":1}},{"op":"put","table":"t/items","row":{"id":"b","n":2}}])");
}

void Change(Store* s) {
  CommitOps(s, R"([{"op":"put","table":"t/items","row":{"id":"c","n":3}},{"op":"update","table":"t/items","key":["a"],"set":{"n":10}},{"op":"delete","table":"t/items","key":["b"]}])");
}

// Restores `snap` into `s`, then feeds the record to a fresh memory replica
// that followed `s` before: it must end with the same fingerprint.
void RestoreAndFollow(Store* s, Store* snap, const std::string& before) {
  auto r = Open("memory", "", /*replica=*/true);
  std::unique_ptr<Replica> replica;
  ASSERT_TRUE(Replica::Attach(r.get(), &replica).ok());
  std::string batch, result;
  ASSERT_TRUE(s->ReadOutbox(0, 100, &batch).ok());
  Status st = replica->ApplyBatch(batch, &result);
  ASSERT_TRUE(st.ok()) << st.message();

  const int64_t head = s->head();
  st = Snapshots::Restore(s, snap, R"({"op":"restore","snapshot":"s1","seq":2})", R"({"owner":"store"})",
                          &result);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(s->head(), head + 1);
  EXPECT_EQ(FingerprintOf(s), before);
  const std::string ops = s->LastOps();
  EXPECT_EQ(ops.rfind(R"([{"op":"restore","snapshot":"s1","seq":2})", 0), 0u) << ops;

  ASSERT_TRUE(s->ReadOutbox(head, 100, &batch).ok());
  st = replica->ApplyBatch(batch, &result);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(FingerprintOf(r.get()), before);
}

TEST(Snapshot, AMemoryCopyRestoresTheFingerprintInOneCommitThatAReplicaApplies) {
  auto s = Open("memory", "");
  Seed(s.get());
  const std::string before = FingerprintOf(s.get());
  std::unique_ptr<Store> copy;
  ASSERT_TRUE(Snapshots::CopyToMemory(s.get(), &copy).ok());
  Change(s.get());
  ASSERT_NE(FingerprintOf(s.get()), before);
  EXPECT_EQ(FingerprintOf(copy.get()), before);
  RestoreAndFollow(s.get(), copy.get(), before);
}

// With documents, the restore's record ends with a _restores row (its seq
// and the snapshot's): a document read at a seq between the two is
// not_found, on the store and on a replica that applied the record, and
// the fingerprint is still the snapshot's.
TEST(Snapshot, ARestoreWithDocumentsRecordsTheSeqsItTookBackAndReadsThereAreNotFound) {
  for (const std::string backend : {"memory", "sqlite"}) {
    auto s = Open(backend, backend == "sqlite" ? TempPath("docs-restore") : "");
    CommitOps(s.get(), R"([{"op":"doc.create","owner":"notes","id":1,"kind":"d","value":{"v":1}}])");  // 1
    const std::string before = FingerprintOf(s.get());
    std::unique_ptr<Store> copy;
    ASSERT_TRUE(Snapshots::CopyToMemory(s.get(), &copy).ok());
    CommitOps(s.get(), R"([{"op":"doc.change","owner":"notes","id":1,"patch":[{"op":"replace","path":"/v","value":2}]}])");  // 2
    std::string result;
    Status st = Snapshots::Restore(s.get(), copy.get(), R"({"op":"restore","snapshot":"s1","seq":1})",
                                   R"({"owner":"store"})", &result);  // 3
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(FingerprintOf(s.get()), before) << backend;
    const std::string ops = s->LastOps();
    EXPECT_NE(ops.find(R"({"op":"put","table":"_restores","row":{"seq":3,"snapshot":1}})"), std::string::npos) << ops;

    auto r = Open("memory", "", /*replica=*/true);
    std::unique_ptr<Replica> replica;
    ASSERT_TRUE(Replica::Attach(r.get(), &replica).ok());
    std::string batch;
    ASSERT_TRUE(s->ReadOutbox(0, 100, &batch).ok());
    st = replica->ApplyBatch(batch, &result);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(FingerprintOf(r.get()), before);

    for (Store* store : {s.get(), r.get()}) {
      std::string answer;
      st = store->Documents(R"({"call":"load","owner":"notes","id":1,"at":2})", &answer);
      EXPECT_EQ(st.code(), Code::kNotFound) << backend << ": " << st.message() << " " << answer;
      EXPECT_NE(st.message().find("the restore at seq 3"), std::string::npos) << st.message();
      ASSERT_TRUE(store->Documents(R"({"call":"load","owner":"notes","id":1,"at":1})", &answer).ok());
      EXPECT_NE(answer.find(R"("value":{"v":1})"), std::string::npos) << answer;
      ASSERT_TRUE(store->Documents(R"({"call":"load","owner":"notes","id":1,"at":3})", &answer).ok());
      EXPECT_NE(answer.find(R"("value":{"v":1})"), std::string::npos) << answer;
    }
  }
}

TEST(Snapshot, ASqliteFileCopiedWithTheBackupApiRestoresTheFingerprint) {
  auto s = Open("sqlite", TempPath("source"));
  Seed(s.get());
  const std::string before = FingerprintOf(s.get());
  const std::string copy_path = TempPath("copy");
  Status st = Snapshots::CopyToFile(s.get(), copy_path);
  ASSERT_TRUE(st.ok()) << st.message();
  Change(s.get());
  auto copy = Open("sqlite", copy_path);
  EXPECT_EQ(FingerprintOf(copy.get()), before);
  EXPECT_EQ(copy->head(), 2);
  RestoreAndFollow(s.get(), copy.get(), before);
}

TEST(Snapshot, AHoldKeepsAReadTransactionAndGivesTheHead) {
  auto s = Open("sqlite", TempPath("hold"));
  Seed(s.get());
  int64_t head = 0;
  ASSERT_TRUE(Snapshots::Hold(s.get(), &head).ok());
  EXPECT_EQ(head, 2);
  Snapshots::Release(s.get());
  Change(s.get());  // the hold is gone: commits go on
  EXPECT_EQ(s->head(), 3);
  auto m = Open("memory", "");
  EXPECT_EQ(Snapshots::Hold(m.get(), &head).code(), Code::kInvalidArgs);
}

TEST(Snapshot, AnOwnersCommitCannotHoldARestoreOp) {
  auto s = Open("memory", "");
  Seed(s.get());
  std::string result;
  Status st = s->Commit(R"([{"op":"restore","snapshot":"x","seq":0}])", "{}", &result);
  EXPECT_EQ(st.code(), Code::kInvalidArgs);
  EXPECT_NE(st.message().find("store.restore only"), std::string::npos) << st.message();
}

TEST(Snapshot, ACopyIntoAnEmptyReplicaStartsItAtTheSnapshotsHeadAndItAppliesOnlyTheRecordsAfter) {
  auto s = Open("sqlite", TempPath("into"));
  Seed(s.get());
  const std::string copy_path = TempPath("into_copy");
  ASSERT_TRUE(Snapshots::CopyToFile(s.get(), copy_path).ok());
  Change(s.get());
  auto snap = Open("sqlite", copy_path);

  auto r = Open("memory", "", /*replica=*/true);
  std::unique_ptr<Replica> replica;
  ASSERT_TRUE(Replica::Attach(r.get(), &replica).ok());
  Status st = Snapshots::CopyInto(snap.get(), r.get());
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(r->head(), 2);
  EXPECT_EQ(FingerprintOf(r.get()), FingerprintOf(snap.get()));
  std::string batch, result;
  ASSERT_TRUE(s->ReadOutbox(2, 100, &batch).ok());
  st = replica->ApplyBatch(batch, &result);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(r->head(), 3);
  EXPECT_EQ(FingerprintOf(r.get()), FingerprintOf(s.get()));
  EXPECT_EQ(snap->head(), 2);  // only read

  // Only into an empty store: a second copy would mix two heads.
  st = Snapshots::CopyInto(snap.get(), r.get());
  EXPECT_EQ(st.code(), Code::kInvalidArgs);
  EXPECT_NE(st.message().find("empty store"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace onestore
