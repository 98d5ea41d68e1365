// Checks changes of a stored table through Store: Declare turns a higher
// version's migrations into alter and index records (and refuses what they
// do not explain), and an alter commit that fails at any write or sync of
// the file, a crash included, leaves either the old table whole or the new
// one whole after reopening.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "backends/sqlite/mem_file.h"
#include "backends/sqlite/sqlite_backend.h"
#include "backends/sqlite/vfs.h"
#include "commit/store.h"
#include "sqlite3.h"

namespace onestore {
namespace {

const char kV1[] =
    R"({"op":"table","table":"t/items","version":1,"columns":{"id":{"type":"int"},)"
    R"("title":{"type":"str"},"note":{"type":"str","optional":true},"n":{"type":"int"}},)"
    R"("key":["id"],"indexes":{"byTitle":["title"]}})";

// Version 2: title renamed to name, note dropped, size added; indexes byName
// and bySize instead of byTitle.
const char kV2[] =
    R"({"op":"table","table":"t/items","version":2,"columns":{"id":{"type":"int"},)"
    R"("name":{"type":"str"},"n":{"type":"int"},"size":{"type":"int","default":7}},)"
    R"("key":["id"],"indexes":{"byName":["name"],"bySize":["size"]},)"
    R"("migrations":{"2":{"alter":{"drop":["note"],"rename":{"title":"name"},)"
    R"("add":{"size":{"type":"int","default":7}}}}}})";

Status Open(const std::string& path, std::unique_ptr<Store>* out) {
  SqliteOptions o;
  o.path = path;
  return Store::OpenWith(NewSqliteBackend(o), "s1", out);
}

std::string MustDeclareAndCommit(Store* store, const std::string& decl) {
  std::string records, result;
  Status s = store->Declare(decl, &records);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (records.empty() || records == "[]") return "";
  s = store->Commit(records, R"({"owner":"t"})", &result);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return records;
}

TEST(SchemaChangeTest, DeclareRecordsTheAltersAboveTheStoredVersionThenTheIndexDifference) {
  std::unique_ptr<Store> store;
  OpenOptions o;
  o.backend = "memory";
  ASSERT_TRUE(Store::Open(o, &store).ok());
  MustDeclareAndCommit(store.get(), kV1);
  EXPECT_EQ(MustDeclareAndCommit(store.get(), kV2),
            R"([{"op":"alter","table":"t/items","version":2,"drop":["note"],)"
            R"("rename":{"title":"name"},"add":{"size":{"type":"int","default":7}}},)"
            R"({"op":"index","table":"t/items","version":2,"drop":["byTitle"],)"
            R"("create":{"byName":["name"],"bySize":["size"]}}])");
  // Declared again: nothing to record; the older version: schema/newer.
  std::string records;
  ASSERT_TRUE(store->Declare(kV2, &records).ok());
  EXPECT_EQ(records, "");
  EXPECT_EQ(store->Declare(kV1, &records).code(), Code::kSchemaNewer);
}

TEST(SchemaChangeTest, AHigherVersionThatItsMigrationsDoNotExplainIsRefusedNamingTheColumn) {
  std::unique_ptr<Store> store;
  OpenOptions o;
  o.backend = "memory";
  ASSERT_TRUE(Store::Open(o, &store).ok());
  MustDeclareAndCommit(store.get(), kV1);
  std::string bare = kV2;
  bare.erase(bare.find(R"(,"migrations")"), std::string::npos);
  bare += "}";
  std::string records;
  Status s = store->Declare(bare, &records);
  EXPECT_EQ(s.code(), Code::kInvalidArgs);
  EXPECT_NE(s.message().find("\"name\""), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("no migration"), std::string::npos) << s.message();
  std::string late = kV2;
  late.replace(late.find(R"("migrations":{"2")"), 17, R"("migrations":{"3")");
  s = store->Declare(late, &records);
  EXPECT_EQ(s.code(), Code::kInvalidArgs);
  EXPECT_NE(s.message().find("table.migrations.3"), std::string::npos) << s.message();
  // An alter cannot say its own version (or table): the step's key does.
  std::string sneaky = kV2;
  sneaky.replace(sneaky.find(R"("alter":{)"), 9, R"("alter":{"version":9,)");
  s = store->Declare(sneaky, &records);
  EXPECT_EQ(s.code(), Code::kInvalidArgs);
  EXPECT_NE(s.message().find("table.migrations.2.alter.version"), std::string::npos)
      << s.message();
  EXPECT_EQ(store->head(), 1);
}

struct FaultCase {
  bool sync;
  int k;
  bool crash;
};

class AlterFaultTest : public testing::TestWithParam<FaultCase> {};

// The old table: v1 with its 300 rows, note and title as written.
void ExpectOld(Store* store) {
  std::string row;
  ASSERT_TRUE(store->Get("t/items", "[17]", &row).ok());
  EXPECT_EQ(row, R"([17,"t17","n17",17])");
  int64_t count = 0;
  ASSERT_TRUE(store->Count("t/items", "{}", &count).ok());
  EXPECT_EQ(count, 300);
}

void ExpectNew(Store* store) {
  std::string row;
  ASSERT_TRUE(store->Get("t/items", "[17]", &row).ok());
  EXPECT_EQ(row, R"([17,"t17",17,7])");
  int64_t count = 0;
  ASSERT_TRUE(store->Count("t/items", R"({"where":{"eq":["size",7]}})", &count).ok());
  EXPECT_EQ(count, 300);
}

TEST_P(AlterFaultTest, AnAlterThatFailsOrCrashesLeavesTheOldTableOrTheNewOneWhole) {
  const FaultCase& c = GetParam();
  MemFileSystem mem;
  FaultFileSystem fault(&mem);
  ASSERT_TRUE(RegisterVfs(&fault).ok());
  const std::string path = "/alter.sqlite";
  bool failed = false;
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Open(path, &store).ok());
    MustDeclareAndCommit(store.get(), kV1);
    std::string ops = "[";
    for (int i = 0; i < 300; ++i) {
      if (i) ops += ",";
      std::string n = std::to_string(i);
      ops += R"({"op":"put","table":"t/items","row":{"id":)" + n + R"(,"title":"t)" + n +
             R"(","note":"n)" + n + R"(","n":)" + n + "}}";
    }
    std::string result;
    ASSERT_TRUE(store->Commit(ops + "]", R"({"owner":"t"})", &result).ok());
    if (c.sync) {
      fault.FailSync(c.k, /*sticky=*/true);
    } else {
      fault.FailWrite(c.k, /*sticky=*/true);
    }
    std::string records;
    ASSERT_TRUE(store->Declare(kV2, &records).ok());
    failed = !store->Commit(records, R"({"owner":"t"})", &result).ok();
    store->Close();
  }
  if (c.crash) mem.DropUnsyncedWrites();
  fault.Heal();
  std::unique_ptr<Store> store;
  Status s = Open(path, &store);
  ASSERT_TRUE(s.ok()) << s.ToString();
  if (store->head() == 2) {
    EXPECT_TRUE(failed) << "an acknowledged alter was lost";
    ExpectOld(store.get());
    // Old code still opens it; the alter can run again.
    std::string records;
    ASSERT_TRUE(store->Declare(kV1, &records).ok());
    EXPECT_EQ(records, "");
    MustDeclareAndCommit(store.get(), kV2);
  } else {
    ASSERT_EQ(store->head(), 3);
  }
  ExpectNew(store.get());
  store->Close();
  RegisterVfs(PosixFileSystem());
}

std::vector<FaultCase> Cases() {
  std::vector<FaultCase> cases;
  for (bool sync : {false, true}) {
    for (int k = 1; k <= (sync ? 3 : 8); ++k) {
      for (bool crash : {false, true}) cases.push_back({sync, k, crash});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Calls, AlterFaultTest, testing::ValuesIn(Cases()), [](const auto& info) {
  return std::string(info.param.sync ? "sync" : "write") + std::to_string(info.param.k) +
         (info.param.crash ? "_crash" : "");
});

}  // namespace
}  // namespace onestore
