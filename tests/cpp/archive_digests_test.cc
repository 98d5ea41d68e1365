// FingerprintAndDigests (src/sync/fingerprint.h), what an archive's export
// and import check with one read of each table: its fingerprint is
// Fingerprint's and each table's row count and digest are TableDigest's, on
// memory and sqlite, for an empty table too.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "commit/store.h"
#include "sync/fingerprint.h"

namespace onestore {
namespace {

std::unique_ptr<Store> Open(const std::string& backend) {
  OpenOptions o;
  o.backend = backend;
  o.path = backend == "sqlite" ? ":memory:" : "";
  o.id = "digests";
  std::unique_ptr<Store> s;
  EXPECT_TRUE(Store::Open(o, &s).ok());
  return s;
}

void Commit(Store* s, const std::string& ops) {
  std::string result;
  Status st = s->Commit(ops, "{}", &result);
  ASSERT_TRUE(st.ok()) << st.message();
}

class ArchiveDigests : public ::testing::TestWithParam<std::string> {};

TEST_P(ArchiveDigests, OneReadGivesTheFingerprintAndEachTablesDigest) {
  auto s = Open(GetParam());
  Commit(s.get(),
         R"([{"op":"table","table":"a/items","version":1,"columns":{"id":{"type":"str"},"n":{"type":"int"},"j":{"type":"json","optional":true}},"key":["id"]},)"
         R"({"op":"table","table":"b/other","version":1,"columns":{"k":{"type":"int"},"v":{"type":"num"}},"key":["k"]},)"
         R"({"op":"table","table":"c/empty","version":1,"columns":{"k":{"type":"int"}},"key":["k"]}])");
  std::string ops = "[";
  for (int i = 0; i < 1500; ++i) {
    if (i) ops += ",";
    ops += R"({"op":"put","table":"a/items","row":{"id":"k)" + std::to_string(i) + R"(","n":)" +
           std::to_string(i) + R"(,"j":{"x":[1,"y"]}}},{"op":"put","table":"b/other","row":{"k":)" +
           std::to_string(i) + R"(,"v":)" + std::to_string(i) + R"(.5}})";
  }
  Commit(s.get(), ops + "]");

  std::string fingerprint;
  std::vector<TableDigestEntry> tables;
  ASSERT_TRUE(FingerprintAndDigests(s.get(), &fingerprint, &tables).ok());
  std::string want;
  ASSERT_TRUE(Fingerprint(s.get(), &want).ok());
  EXPECT_EQ(fingerprint, want);
  ASSERT_EQ(tables.size(), 3u);
  const std::vector<std::string> names = {"a/items", "b/other", "c/empty"};
  const std::vector<int64_t> counts = {1500, 1500, 0};
  for (size_t i = 0; i < tables.size(); ++i) {
    EXPECT_EQ(tables[i].table, names[i]);
    int64_t rows = -1;
    std::string digest;
    ASSERT_TRUE(TableDigest(s.get(), names[i], &rows, &digest).ok());
    EXPECT_EQ(tables[i].rows, counts[i]);
    EXPECT_EQ(tables[i].rows, rows);
    EXPECT_EQ(tables[i].digest, digest);
  }
  EXPECT_NE(tables[0].digest, tables[1].digest);
}

INSTANTIATE_TEST_SUITE_P(Backends, ArchiveDigests, ::testing::Values("memory", "sqlite"));

}  // namespace
}  // namespace onestore
