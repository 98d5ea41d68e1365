// The core's part of archives (src/archive/archive.h): a store's row lines,
// tables and retained outbox restored into a new store, on memory and
// sqlite, give the same fingerprint, table digests, head and records; lines
// that are not rows are invalid/archive; only a new store takes a restore.
#include "archive/archive.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "commit/store.h"
#include "store_fixtures.h"

namespace onestore {
namespace {

constexpr char kTable[] =
    R"([{"op":"table","table":"t/items","version":1,"columns":{"id":{"type":"str"},"n":{"type":"int"},"j":{"type":"json","optional":true}},"key":["id"]}])";
// An int beyond 2^53 in an int column, restored exactly.
constexpr char kBig[] =
    R"([{"op":"put","table":"t/items","row":{"id":"big","n":9007199254740993,"j":null}}])";

using test::CommitOps;
using test::FingerprintOf;

std::unique_ptr<Store> Open(const std::string& backend, const std::string& id) {
  return test::OpenTestStore(backend, backend == "sqlite" ? ":memory:" : "", id);
}


// A source store: a table, 2500 rows over three commits, one update.
std::unique_ptr<Store> Source(const std::string& backend) {
  auto s = Open(backend, "session-1");
  CommitOps(s.get(), kTable);
  std::string ops = "[";
  for (int i = 0; i < 2500; ++i) {
    if (i) ops += ",";
    ops += R"({"op":"put","table":"t/items","row":{"id":"k)" + std::to_string(i) +
           R"(","n":)" + std::to_string(i) + R"(,"j":{"a":[1,"x\n"],"big":9007199254740993}}})";
  }
  CommitOps(s.get(), ops + "]");
  CommitOps(s.get(), R"([{"op":"update","table":"t/items","key":["k7"],"set":{"n":-7}}])");
  CommitOps(s.get(), kBig);
  return s;
}

// Copies src into dst the way an import does.
Status Copy(Store* src, Store* dst) {
  Archiver in(dst);
  ONESTORE_RETURN_IF_ERROR(in.RestoreTables(src->TablesJson()));
  for (const auto& t : src->Tables()) {
    std::string cursor, lines, next;
    do {
      ONESTORE_RETURN_IF_ERROR(Archiver(src).RowLines(t->name, cursor, 1000, &lines, &next));
      ONESTORE_RETURN_IF_ERROR(in.RestoreRows(t->name, lines));
      cursor = next;
    } while (!cursor.empty());
  }
  std::string batch;
  ONESTORE_RETURN_IF_ERROR(src->ReadOutbox(0, 1000, &batch));
  Json b = Json::parse(batch);
  std::string records;
  for (const Json& r : b["commits"]) records += r.dump() + "\n";
  return in.RestoreOutbox(records, src->head());
}

class ArchiveBackends : public ::testing::TestWithParam<const char*> {};

TEST_P(ArchiveBackends, ARestoredStoreHasTheSameContentHeadAndRecords) {
  auto src = Source(GetParam());
  for (const char* to : {"memory", "sqlite"}) {
    auto dst = Open(to, "session-1");
    Status st = Copy(src.get(), dst.get());
    ASSERT_TRUE(st.ok()) << st.message();
    std::string la, lb, na, nb;
    ASSERT_TRUE(Archiver(src.get()).RowLines("t/items", "", 3000, &la, &na).ok());
    ASSERT_TRUE(Archiver(dst.get()).RowLines("t/items", "", 3000, &lb, &nb).ok());
    EXPECT_EQ(la, lb);  // json cells (text of JSON) included
    EXPECT_EQ(FingerprintOf(dst.get()), FingerprintOf(src.get()));
    EXPECT_EQ(dst->head(), src->head());
    std::string a, b;
    ASSERT_TRUE(src->ReadOutbox(0, 100, &a).ok());
    ASSERT_TRUE(dst->ReadOutbox(0, 100, &b).ok());
    EXPECT_EQ(a, b);
    int64_t rows = 0, rows2 = 0;
    std::string d1, d2;
    ASSERT_TRUE(TableDigest(src.get(), "t/items", &rows, &d1).ok());
    ASSERT_TRUE(TableDigest(dst.get(), "t/items", &rows2, &d2).ok());
    EXPECT_EQ(rows, 2501);
    EXPECT_EQ(d1, d2);
    EXPECT_EQ(d1.size(), 67u);
    // The restored store goes on from the head.
    CommitOps(dst.get(), R"([{"op":"put","table":"t/items","row":{"id":"new","n":1}}])");
    EXPECT_EQ(dst->head(), src->head() + 1);
  }
}

TEST_P(ArchiveBackends, AFullyTrimmedOutboxKeepsTheHeadWithoutRecords) {
  auto src = Source(GetParam());
  int64_t removed = 0;
  ASSERT_TRUE(src->TrimOutbox(src->head(), &removed).ok());
  auto dst = Open(GetParam(), "session-1");
  ASSERT_TRUE(Copy(src.get(), dst.get()).ok());
  EXPECT_EQ(dst->head(), 4);
  std::string batch;
  ASSERT_TRUE(dst->ReadOutbox(0, 100, &batch).ok());
  EXPECT_EQ(Json::parse(batch)["commits"].size(), 0u);
  EXPECT_EQ(FingerprintOf(dst.get()), FingerprintOf(src.get()));
}

TEST_P(ArchiveBackends, LinesThatAreNotRowsAreInvalidArchive) {
  auto dst = Open(GetParam(), "s");
  Archiver in(dst.get());
  ASSERT_TRUE(in.RestoreTables(std::string(kTable)).ok());
  for (const char* bad : {"[\"a\",1]\n", "[\"a\",\"one\",null]\n", "[\"a\",1,null]", "{\"id\":\"a\"}\n",
                          "[\"a\",1,null\n", "[null,1,null]\n"}) {
    Status st = in.RestoreRows("t/items", bad);
    EXPECT_EQ(st.code(), Code::kInvalidArchive) << bad << ": " << st.message();
  }
  EXPECT_EQ(in.RestoreRows("t/other", "[1]\n").code(), Code::kInvalidArchive);
  EXPECT_EQ(in.RestoreOutbox("{\"seq\":2}\n{\"seq\":4}\n", 4).code(), Code::kInvalidArchive);
  EXPECT_EQ(in.RestoreOutbox("{\"seq\":1}\n", 2).code(), Code::kInvalidArchive);
  EXPECT_EQ(in.RestoreTables("[{\"op\":\"put\"}]").code(), Code::kInvalidArgs);  // not new: has tables
  std::string fp = FingerprintOf(dst.get());
  EXPECT_EQ(dst->head(), 0);
  EXPECT_EQ(fp, FingerprintOf(dst.get()));
}

TEST_P(ArchiveBackends, OnlyANewStoreTakesARestore) {
  auto src = Source(GetParam());
  Archiver in(src.get());
  EXPECT_EQ(in.RestoreRows("t/items", "[\"z\",1,null]\n").code(), Code::kInvalidArgs);
  EXPECT_EQ(in.RestoreOutbox("", 9).code(), Code::kInvalidArgs);
  EXPECT_EQ(src->head(), 4);
}

INSTANTIATE_TEST_SUITE_P(MemoryAndSqlite, ArchiveBackends, ::testing::Values("memory", "sqlite"));

}  // namespace
}  // namespace onestore
