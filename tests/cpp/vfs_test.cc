// Checks the file systems under the SQLite backend (the in-memory fake, the
// fault-injecting wrapper, POSIX files) and the "onestore" VFS over them:
// reads, short reads, writes, syncs, crashes that drop unsynced writes, and
// an SQLite database living on each file system.
#include "backends/sqlite/vfs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backends/sqlite/file.h"
#include "backends/sqlite/mem_file.h"
#include "commit/store.h"
#include "sqlite3.h"

namespace onestore {
namespace {

std::string Read(File* f, uint64_t offset, size_t n) {
  std::string buf(n, '\0');
  size_t got = 0;
  Status s = f->ReadAt(offset, &buf[0], n, &got);
  EXPECT_TRUE(s.ok()) << s.ToString();
  buf.resize(got);
  return buf;
}

std::string TempPath(const char* name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/onestore-vfs-" +
         std::to_string(::getpid()) + "-" + name;
}

// --- the file systems, through the File interface ----------------------------

enum class FsKind { kMem, kPosix };

class FileSystemTest : public testing::TestWithParam<FsKind> {
 protected:
  void SetUp() override {
    if (GetParam() == FsKind::kMem) {
      fs_ = &mem_;
      path_ = "/mem/file";
    } else {
      fs_ = PosixFileSystem();
      path_ = TempPath("file");
      std::remove(path_.c_str());
    }
  }
  void TearDown() override {
    if (GetParam() == FsKind::kPosix) std::remove(path_.c_str());
  }

  MemFileSystem mem_;
  FileSystem* fs_ = nullptr;
  std::string path_;
};

TEST_P(FileSystemTest, OpeningAMissingFileWithoutCreateIsNotFound) {
  std::unique_ptr<File> f;
  Status s = fs_->Open(path_, false, &f);
  EXPECT_EQ(s.code(), Code::kNotFound) << s.ToString();
  bool exists = true;
  ASSERT_TRUE(fs_->Exists(path_, &exists).ok());
  EXPECT_FALSE(exists);
}

TEST_P(FileSystemTest, WritesReadBackAndReadsPastTheEndAreShort) {
  std::unique_ptr<File> f;
  ASSERT_TRUE(fs_->Open(path_, true, &f).ok());
  ASSERT_TRUE(f->WriteAt(0, "hello", 5).ok());
  ASSERT_TRUE(f->WriteAt(8, "world", 5).ok());  // leaves a hole of zeros
  uint64_t size = 0;
  ASSERT_TRUE(f->Size(&size).ok());
  EXPECT_EQ(size, 13u);
  EXPECT_EQ(Read(f.get(), 0, 13), std::string("hello\0\0\0world", 13));
  EXPECT_EQ(Read(f.get(), 10, 100), "rld");
  EXPECT_EQ(Read(f.get(), 100, 10), "");
  ASSERT_TRUE(f->Truncate(4).ok());
  ASSERT_TRUE(f->Size(&size).ok());
  EXPECT_EQ(size, 4u);
  ASSERT_TRUE(f->Sync().ok());
  ASSERT_TRUE(f->Close().ok());

  bool exists = false;
  ASSERT_TRUE(fs_->Exists(path_, &exists).ok());
  EXPECT_TRUE(exists);
  std::unique_ptr<File> again;
  ASSERT_TRUE(fs_->Open(path_, false, &again).ok());
  EXPECT_EQ(Read(again.get(), 0, 10), "hell");
  ASSERT_TRUE(again->Close().ok());
  ASSERT_TRUE(fs_->Delete(path_).ok());
  ASSERT_TRUE(fs_->Exists(path_, &exists).ok());
  EXPECT_FALSE(exists);
  EXPECT_EQ(fs_->Delete(path_).code(), Code::kNotFound);
}

TEST_P(FileSystemTest, TwoOpensOfOnePathShareTheFile) {
  std::unique_ptr<File> a, b;
  ASSERT_TRUE(fs_->Open(path_, true, &a).ok());
  ASSERT_TRUE(fs_->Open(path_, true, &b).ok());
  ASSERT_TRUE(a->WriteAt(0, "abc", 3).ok());
  EXPECT_EQ(Read(b.get(), 0, 3), "abc");
}

INSTANTIATE_TEST_SUITE_P(Kinds, FileSystemTest, testing::Values(FsKind::kMem, FsKind::kPosix),
                         [](const auto& info) {
                           return info.param == FsKind::kMem ? "Mem" : "Posix";
                         });

TEST(MemFileSystemTest, ACrashDropsEveryWriteSinceTheLastSync) {
  MemFileSystem mem;
  std::unique_ptr<File> f;
  ASSERT_TRUE(mem.Open("/a", true, &f).ok());
  ASSERT_TRUE(f->WriteAt(0, "durable", 7).ok());
  ASSERT_TRUE(f->Sync().ok());
  ASSERT_TRUE(f->WriteAt(0, "lost!!!", 7).ok());
  ASSERT_TRUE(f->WriteAt(7, "more", 4).ok());
  mem.DropUnsyncedWrites();
  EXPECT_EQ(Read(f.get(), 0, 100), "durable");
  std::string contents;
  ASSERT_TRUE(mem.Contents("/a", &contents));
  EXPECT_EQ(contents, "durable");

  std::unique_ptr<File> g;
  ASSERT_TRUE(mem.Open("/never-synced", true, &g).ok());
  ASSERT_TRUE(g->WriteAt(0, "x", 1).ok());
  mem.DropUnsyncedWrites();
  EXPECT_EQ(Read(g.get(), 0, 10), "");
}

TEST(FaultFileSystemTest, FailsExactlyTheChosenWriteAndLeavesTheFileAsItWas) {
  MemFileSystem mem;
  FaultFileSystem fault(&mem);
  std::unique_ptr<File> f;
  ASSERT_TRUE(fault.Open("/a", true, &f).ok());
  fault.FailWrite(2);
  EXPECT_TRUE(f->WriteAt(0, "1", 1).ok());
  Status s = f->WriteAt(1, "2", 1);
  EXPECT_EQ(s.code(), Code::kStorageFailed);
  EXPECT_NE(s.message().find("/a"), std::string::npos) << s.message();
  EXPECT_TRUE(f->WriteAt(1, "3", 1).ok());  // not sticky
  EXPECT_EQ(Read(f.get(), 0, 10), "13");
  EXPECT_EQ(fault.writes(), 3);
  EXPECT_EQ(fault.failures(), 1);
}

TEST(FaultFileSystemTest, AStickySyncFailureKeepsFailingUntilHealed) {
  MemFileSystem mem;
  FaultFileSystem fault(&mem);
  std::unique_ptr<File> f;
  ASSERT_TRUE(fault.Open("/a", true, &f).ok());
  fault.FailSync(1, /*sticky=*/true);
  ASSERT_TRUE(f->WriteAt(0, "x", 1).ok());
  EXPECT_FALSE(f->Sync().ok());
  EXPECT_FALSE(f->Sync().ok());
  mem.DropUnsyncedWrites();
  EXPECT_EQ(Read(f.get(), 0, 10), "");  // the failed syncs made nothing durable
  fault.Heal();
  ASSERT_TRUE(f->WriteAt(0, "y", 1).ok());
  EXPECT_TRUE(f->Sync().ok());
  mem.DropUnsyncedWrites();
  EXPECT_EQ(Read(f.get(), 0, 10), "y");
  EXPECT_EQ(fault.syncs(), 3);
  EXPECT_EQ(fault.failures(), 2);
}

// --- the VFS's own methods ----------------------------------------------------

class VfsTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterVfs(&fault_).ok());
    vfs_ = sqlite3_vfs_find(nullptr);
    ASSERT_NE(vfs_, nullptr);
  }
  void TearDown() override { RegisterVfs(PosixFileSystem()); }

  sqlite3_file* OpenFile(const char* name, int flags) {
    storage_.assign(static_cast<size_t>(vfs_->szOsFile), 0);
    auto* f = reinterpret_cast<sqlite3_file*>(storage_.data());
    int out = 0;
    int rc = vfs_->xOpen(vfs_, name, f, flags, &out);
    return rc == SQLITE_OK ? f : nullptr;
  }

  MemFileSystem mem_;
  FaultFileSystem fault_{&mem_};
  sqlite3_vfs* vfs_ = nullptr;
  std::vector<char> storage_;  // the sqlite3_file, sized szOsFile
};

TEST_F(VfsTest, IsTheDefaultVfsAndNamedOnestore) {
  EXPECT_STREQ(vfs_->zName, "onestore");
  EXPECT_EQ(sqlite3_vfs_find("onestore"), vfs_);
}

TEST_F(VfsTest, AShortReadZeroFillsTheRestAndSaysSo) {
  sqlite3_file* f =
      OpenFile("/db", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MAIN_DB);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->pMethods->xWrite(f, "0123456789", 10, 0), SQLITE_OK);
  char buf[20];
  std::memset(buf, 0xAB, sizeof(buf));
  EXPECT_EQ(f->pMethods->xRead(f, buf, 20, 4), SQLITE_IOERR_SHORT_READ);
  EXPECT_EQ(std::string(buf, 6), "456789");
  for (int i = 6; i < 20; ++i) EXPECT_EQ(buf[i], 0) << i;
  EXPECT_EQ(f->pMethods->xRead(f, buf, 4, 0), SQLITE_OK);
  sqlite3_int64 size = 0;
  EXPECT_EQ(f->pMethods->xFileSize(f, &size), SQLITE_OK);
  EXPECT_EQ(size, 10);
  EXPECT_EQ(f->pMethods->xSectorSize(f), 4096);
  EXPECT_EQ(f->pMethods->xClose(f), SQLITE_OK);
}

TEST_F(VfsTest, AFailingWriteBecomesAnIoErrorWithItsMessageKept) {
  sqlite3_file* f =
      OpenFile("/db", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MAIN_DB);
  ASSERT_NE(f, nullptr);
  fault_.FailWrite(1);
  EXPECT_EQ(f->pMethods->xWrite(f, "x", 1, 0), SQLITE_IOERR_WRITE);
  char msg[256] = {0};
  vfs_->xGetLastError(vfs_, sizeof(msg), msg);
  EXPECT_NE(std::string(msg).find("injected write failure"), std::string::npos) << msg;
  fault_.FailSync(1);
  EXPECT_EQ(f->pMethods->xSync(f, SQLITE_SYNC_NORMAL), SQLITE_IOERR_FSYNC);
  EXPECT_EQ(f->pMethods->xClose(f), SQLITE_OK);
}

TEST_F(VfsTest, OpenWithoutCreateOfAMissingFileCannotOpen) {
  EXPECT_EQ(OpenFile("/missing", SQLITE_OPEN_READWRITE | SQLITE_OPEN_MAIN_DB), nullptr);
  int exists = 1;
  EXPECT_EQ(vfs_->xAccess(vfs_, "/missing", SQLITE_ACCESS_EXISTS, &exists), SQLITE_OK);
  EXPECT_EQ(exists, 0);
}

TEST_F(VfsTest, ANamelessFileLivesInMemoryAndDeleteOnCloseRemovesAFile) {
  sqlite3_file* f = OpenFile(nullptr, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                          SQLITE_OPEN_TEMP_JOURNAL | SQLITE_OPEN_DELETEONCLOSE);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->pMethods->xWrite(f, "tmp", 3, 0), SQLITE_OK);
  char buf[3];
  EXPECT_EQ(f->pMethods->xRead(f, buf, 3, 0), SQLITE_OK);
  EXPECT_EQ(std::string(buf, 3), "tmp");
  EXPECT_EQ(f->pMethods->xClose(f), SQLITE_OK);

  f = OpenFile("/gone", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_DELETEONCLOSE);
  ASSERT_NE(f, nullptr);
  bool exists = false;
  ASSERT_TRUE(mem_.Exists("/gone", &exists).ok());
  EXPECT_TRUE(exists);
  EXPECT_EQ(f->pMethods->xClose(f), SQLITE_OK);
  ASSERT_TRUE(mem_.Exists("/gone", &exists).ok());
  EXPECT_FALSE(exists);
}

TEST_F(VfsTest, TimeAndRandomnessComeFromTheRealClockAndASource) {
  sqlite3_int64 ms = 0;
  ASSERT_EQ(vfs_->xCurrentTimeInt64(vfs_, &ms), SQLITE_OK);
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  EXPECT_NEAR(static_cast<double>(ms - 210866760000000LL), static_cast<double>(now), 5000.0);
  double days = 0;
  ASSERT_EQ(vfs_->xCurrentTime(vfs_, &days), SQLITE_OK);
  EXPECT_NEAR(days, 2440587.5 + static_cast<double>(now) / 86400000.0, 0.001);
  char a[32] = {0}, b[32] = {0};
  EXPECT_EQ(vfs_->xRandomness(vfs_, 32, a), 32);
  EXPECT_EQ(vfs_->xRandomness(vfs_, 32, b), 32);
  EXPECT_NE(std::memcmp(a, b, 32), 0);
}

// --- a database on the VFS ------------------------------------------------------

TEST_F(VfsTest, ADatabaseLivesInTheRegisteredFileSystem) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2("/store.db", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "PRAGMA journal_mode=TRUNCATE; PRAGMA synchronous=FULL;"
                         "CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER) STRICT;"
                         "INSERT INTO t VALUES ('a', 1), ('b', 2);",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  std::string contents;
  ASSERT_TRUE(mem_.Contents("/store.db", &contents));
  EXPECT_EQ(contents.substr(0, 16), std::string("SQLite format 3\0", 16));
  EXPECT_GT(fault_.syncs(), 0);
  std::string journal;
  ASSERT_TRUE(mem_.Contents("/store.db-journal", &journal));  // TRUNCATE keeps it, empty
  EXPECT_EQ(journal.size(), 0u);

  // Everything was synced: a crash loses nothing.
  mem_.DropUnsyncedWrites();
  ASSERT_EQ(sqlite3_open_v2("/store.db", &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT sum(v) FROM t", -1, &s, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(s, 0), 3);
  sqlite3_finalize(s);
  sqlite3_close(db);
}

TEST_F(VfsTest, AnIoErrorReachesTheSqlCallerWithTheFileSystemsMessage) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2("/store.db", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t (v INTEGER) STRICT", nullptr, nullptr, nullptr),
            SQLITE_OK);
  fault_.FailWrite(1, /*sticky=*/true);
  int rc = sqlite3_exec(db, "INSERT INTO t VALUES (1)", nullptr, nullptr, nullptr);
  EXPECT_EQ(rc & 0xFF, SQLITE_IOERR) << sqlite3_errmsg(db);
  fault_.Heal();
  sqlite3_close(db);
  ASSERT_EQ(sqlite3_open_v2("/store.db", &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &s, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(s, 0), 0);  // the failed insert left nothing
  sqlite3_finalize(s);
  sqlite3_close(db);
}

// --- the "opfs" backend's mode: one owner, exclusive lock, WAL without shm ---

constexpr const char* kOpfsTable =
    R"([{"op":"table","table":"t/kv","columns":{"k":{"type":"str"},"v":{"type":"int"}},"key":["k"]}])";

std::string PutKv(int i) {
  return R"([{"op":"put","table":"t/kv","row":{"k":"k)" + std::to_string(i) + R"(","v":)" +
         std::to_string(i) + "}}]";
}

// A power cut: what the files held at their last Sync, copied into `to`.
void CopySynced(MemFileSystem* from, MemFileSystem* to, const std::string& db) {
  from->DropUnsyncedWrites();
  for (const char* suffix : {"", "-wal", "-journal"}) {
    std::string bytes;
    if (!from->Contents(db + suffix, &bytes)) continue;
    std::unique_ptr<File> f;
    ASSERT_TRUE(to->Open(db + suffix, true, &f).ok());
    ASSERT_TRUE(f->WriteAt(0, bytes.data(), bytes.size()).ok());
    ASSERT_TRUE(f->Sync().ok());
  }
}

std::string IntegrityOf(const std::string& db_path) {
  sqlite3* db = nullptr;
  std::string out = "cannot open";
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    // A WAL without shared memory opens only in exclusive mode.
    sqlite3_exec(db, "PRAGMA locking_mode=EXCLUSIVE", nullptr, nullptr, nullptr);
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, nullptr) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    } else {
      out = sqlite3_errmsg(db);
    }
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return out;
}

class OpfsModeTest : public VfsTest {
 protected:
  std::unique_ptr<Store> OpenOpfs(const char* durability) {
    OpenOptions o;
    EXPECT_TRUE(ParseOpenOptions(std::string(R"({"backend":"opfs","path":"/o.db","durability":")") +
                                     durability + R"("})",
                                 &o)
                    .ok());
    std::unique_ptr<Store> store;
    Status s = Store::Open(o, &store);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return store;
  }
  void Commit(Store* store, const std::string& ops) {
    std::string result;
    Status s = store->Commit(ops, R"({"owner":"t"})", &result);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
};

TEST_F(OpfsModeTest, FullDurabilityFlushesTheWalAtEveryCommitAndACrashLosesNone) {
  auto store = OpenOpfs("full");
  ASSERT_NE(store, nullptr);
  Commit(store.get(), kOpfsTable);
  for (int i = 1; i <= 5; ++i) {
    const int64_t before = fault_.syncs();
    Commit(store.get(), PutKv(i));
    EXPECT_GE(fault_.syncs() - before, 1) << "commit " << i << " did not flush";
  }
  std::string wal, shm;
  ASSERT_TRUE(mem_.Contents("/o.db-wal", &wal));
  EXPECT_GT(wal.size(), 0u);                          // the commits are in the WAL
  EXPECT_FALSE(mem_.Contents("/o.db-shm", &shm));     // no shared memory file
  MemFileSystem after;
  CopySynced(&mem_, &after, "/o.db");
  ASSERT_TRUE(RegisterVfs(&after).ok());
  EXPECT_EQ(IntegrityOf("/o.db"), "ok");
  auto reopened = OpenOpfs("full");
  ASSERT_NE(reopened, nullptr);
  EXPECT_EQ(reopened->head(), 6);
  std::string row;
  ASSERT_TRUE(reopened->Get("t/kv", R"(["k5"])", &row).ok());
  EXPECT_EQ(row, R"(["k5",5])");
  reopened.reset();
  RegisterVfs(&fault_);  // the first store still closes on its own files
}

TEST_F(OpfsModeTest, RelaxedDurabilityDoesNotFlushCommitsAndACrashLeavesAWholePrefix) {
  auto store = OpenOpfs("relaxed");
  ASSERT_NE(store, nullptr);
  Commit(store.get(), kOpfsTable);
  store.reset();  // a close checkpoints and syncs: the table is durable
  store = OpenOpfs("relaxed");
  ASSERT_NE(store, nullptr);
  const int64_t before = fault_.syncs();
  for (int i = 1; i <= 5; ++i) Commit(store.get(), PutKv(i));
  EXPECT_EQ(fault_.syncs(), before);  // no flush per commit
  MemFileSystem after;
  CopySynced(&mem_, &after, "/o.db");
  ASSERT_TRUE(RegisterVfs(&after).ok());
  EXPECT_EQ(IntegrityOf("/o.db"), "ok");
  auto reopened = OpenOpfs("relaxed");
  ASSERT_NE(reopened, nullptr);
  const int64_t head = reopened->head();
  EXPECT_GE(head, 1);
  EXPECT_LE(head, 6);
  // Every commit up to the head is there, none after it.
  for (int i = 1; i <= 5; ++i) {
    std::string row;
    ASSERT_TRUE(reopened->Get("t/kv", R"(["k)" + std::to_string(i) + R"("])", &row).ok());
    EXPECT_EQ(row != "null", i + 1 <= head) << "k" << i << " at head " << head;
  }
  reopened.reset();
  RegisterVfs(&fault_);
}

TEST_F(OpfsModeTest, ACommitsWalFramesGoToTheFileInOneWrite) {
  auto store = OpenOpfs("relaxed");
  ASSERT_NE(store, nullptr);
  Commit(store.get(), kOpfsTable);
  for (int i = 1; i <= 5; ++i) {
    const int64_t before = fault_.writes();
    Commit(store.get(), PutKv(i));
    EXPECT_EQ(fault_.writes() - before, 1) << "commit " << i;
  }
}

// A failed WAL write fails the COMMIT (storage_failed), stops the store, and
// leaves a file that reopens with every acknowledged commit. Not sticky, the
// failure also checks that closing the store does not checkpoint the frames
// that never reached the WAL into the database: after 400 commits the WAL
// has been checkpointed and restarted from its start, so the lost frames'
// place in the file holds older frames, which must not be copied.
TEST_F(OpfsModeTest, AFailedWalWriteStopsTheStoreAndAReopenHasEveryAcknowledgedCommit) {
  for (bool sticky : {true, false}) {
    SCOPED_TRACE(sticky ? "sticky" : "once");
    mem_.Delete("/o.db");  // a fresh store each round (missing on the first)
    mem_.Delete("/o.db-wal");
    mem_.Delete("/o.db-journal");
    auto store = OpenOpfs("full");
    ASSERT_NE(store, nullptr);
    Commit(store.get(), kOpfsTable);
    for (int i = 1; i <= 400; ++i) Commit(store.get(), PutKv(i));
    fault_.FailWrite(1, sticky);
    std::string result;
    Status s = store->Commit(R"([{"op":"put","table":"t/kv","row":{"k":"k1","v":-1}}])",
                             R"({"owner":"t"})", &result);
    EXPECT_EQ(s.code(), Code::kStorageFailed) << s.ToString();
    EXPECT_NE(s.message().find("injected write failure"), std::string::npos) << s.message();
    s = store->Commit(PutKv(401), R"({"owner":"t"})", &result);
    EXPECT_EQ(s.code(), Code::kStorageFailed) << s.ToString();
    store.reset();  // closes: no checkpoint of the lost frames
    fault_.Heal();
    EXPECT_EQ(IntegrityOf("/o.db"), "ok");
    auto reopened = OpenOpfs("full");
    ASSERT_NE(reopened, nullptr);
    EXPECT_EQ(reopened->head(), 401);
    for (int i = 1; i <= 400; ++i) {
      std::string row;
      ASSERT_TRUE(reopened->Get("t/kv", R"(["k)" + std::to_string(i) + R"("])", &row).ok());
      ASSERT_EQ(row, R"(["k)" + std::to_string(i) + R"(",)" + std::to_string(i) + "]");
    }
  }
}

// A WAL write that fails before COMMIT (a transaction big enough that SQLite
// spills pages to the WAL, on a full disk) fails that transaction alone: its
// frames were never committed, so the WAL is not closed, and the store goes
// on. Before, any failed combined write closed the WAL to every later call
// (a Node store file, which runs this mode, then refused every read).
TEST_F(OpfsModeTest, AFailedWalWriteBeforeCommitFailsOnlyItsTransaction) {
  auto store = OpenOpfs("relaxed");
  ASSERT_NE(store, nullptr);
  Commit(store.get(), kOpfsTable);
  Commit(store.get(), PutKv(1));
  // More dirty pages than the 16 MiB page cache holds (its rows and its
  // outbox record are about 9 and 10 MB), so that SQLite spills before COMMIT.
  std::string big = "[";
  for (int i = 0; i < 40000; ++i) {
    if (i) big += ",";
    big += R"({"op":"put","table":"t/kv","row":{"k":"big)" + std::to_string(i) + R"(-)" +
           std::string(200, 'x') + R"(","v":1}})";
  }
  big += "]";
  fault_.FailWrite(1, /*sticky=*/false);
  std::string result;
  Status s = store->Commit(big, R"({"owner":"t"})", &result);
  EXPECT_EQ(s.code(), Code::kStorageFailed) << s.ToString();
  EXPECT_NE(s.message().find("injected write failure"), std::string::npos) << s.message();
  fault_.Heal();
  EXPECT_EQ(store->head(), 2);
  std::string row;
  ASSERT_TRUE(store->Get("t/kv", R"(["k1"])", &row).ok());
  EXPECT_EQ(row, R"(["k1",1])");
  Commit(store.get(), PutKv(2));
  EXPECT_EQ(store->head(), 3);
  store.reset();
  EXPECT_EQ(IntegrityOf("/o.db"), "ok");
  auto reopened = OpenOpfs("relaxed");
  ASSERT_NE(reopened, nullptr);
  EXPECT_EQ(reopened->head(), 3);
  ASSERT_TRUE(reopened->Get("t/kv", R"(["k2"])", &row).ok());
  EXPECT_EQ(row, R"(["k2",2])");
}

// A Node store file (holdLock) is a rollback-journal file while closed and
// a WAL while open. Its open and close switch the mode without syncs of
// their own (docs/performance.md, "Issue 13, the open and close of a Node
// store file"), and the open of a file with pages syncs nothing at all: its
// transaction (the epoch) and the WAL it starts are synced by the first
// commit or the close's checkpoint ("Issue 13, an open that syncs
// nothing"). A power cut right after the open, the close or a commit (every
// unsynced write dropped) leaves a file that opens with every acknowledged
// commit: after the close, a file still marked WAL, with no WAL beside it.
class NodeFileModeTest : public OpfsModeTest {
 protected:
  std::unique_ptr<Store> OpenStoreFile() {
    OpenOptions o;
    EXPECT_TRUE(ParseOpenOptions(
                    R"({"backend":"sqlite","path":"/n.db","durability":"full","holdLock":true})", &o)
                    .ok());
    std::unique_ptr<Store> store;
    Status s = Store::Open(o, &store);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return store;
  }
  // Byte 18 of the file's header: 1 for a rollback journal, 2 for a WAL.
  int ModeByte(MemFileSystem* fs) {
    std::string bytes;
    if (!fs->Contents("/n.db", &bytes) || bytes.size() < 100) return -1;
    return bytes[18];
  }
  std::string RowOf(Store* store, int i) {
    std::string row;
    Status s = store->Get("t/kv", R"(["k)" + std::to_string(i) + R"("])", &row);
    return s.ok() ? row : s.ToString();
  }
};

TEST_F(NodeFileModeTest, OpenAndCloseSwitchModesWithoutSyncsAndAPowerCutAfterEitherLosesNothing) {
  auto store = OpenStoreFile();
  ASSERT_NE(store, nullptr);
  Commit(store.get(), kOpfsTable);
  Commit(store.get(), PutKv(1));
  store.reset();
  EXPECT_EQ(ModeByte(&mem_), 1);
  std::string wal;
  EXPECT_FALSE(mem_.Contents("/n.db-wal", &wal));
  // The closed file as it is once the system has written everything back.
  MemFileSystem flushed;
  std::string bytes;
  ASSERT_TRUE(mem_.Contents("/n.db", &bytes));
  std::unique_ptr<File> f;
  ASSERT_TRUE(flushed.Open("/n.db", true, &f).ok());
  ASSERT_TRUE(f->WriteAt(0, bytes.data(), bytes.size()).ok());
  ASSERT_TRUE(f->Sync().ok());
  f.reset();

  int64_t before = fault_.syncs();
  store = OpenStoreFile();
  ASSERT_NE(store, nullptr);
  // No sync at all: the switch, the WAL's header and the open's transaction
  // (the epoch) are synced by the first commit or the close's checkpoint.
  // Two before, 5 with a synced switch.
  EXPECT_EQ(fault_.syncs() - before, 0);
  EXPECT_EQ(ModeByte(&mem_), 2);
  {
    // A power cut right after that open: every acknowledged commit is there.
    MemFileSystem now, after_open;
    mem_.CopyTo(&now);
    CopySynced(&now, &after_open, "/n.db");
    ASSERT_TRUE(RegisterVfs(&after_open).ok());
    EXPECT_EQ(IntegrityOf("/n.db"), "ok");
    auto reopened = OpenStoreFile();
    ASSERT_NE(reopened, nullptr);
    EXPECT_EQ(reopened->head(), 2);
    EXPECT_EQ(RowOf(reopened.get(), 1), R"(["k1",1])");
    reopened.reset();
    ASSERT_TRUE(RegisterVfs(&fault_).ok());
  }
  Commit(store.get(), PutKv(2));
  before = fault_.syncs();
  store.reset();
  // The checkpoint's; 8 with a synced switch.
  EXPECT_LE(fault_.syncs() - before, 3);
  EXPECT_EQ(ModeByte(&mem_), 1);

  // A power cut right after the close: the switch back is lost.
  MemFileSystem after_close;
  CopySynced(&mem_, &after_close, "/n.db");
  EXPECT_EQ(ModeByte(&after_close), 2);
  EXPECT_FALSE(after_close.Contents("/n.db-wal", &wal) && !wal.empty());
  ASSERT_TRUE(RegisterVfs(&after_close).ok());
  EXPECT_EQ(IntegrityOf("/n.db"), "ok");
  store = OpenStoreFile();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->head(), 3);
  EXPECT_EQ(RowOf(store.get(), 2), R"(["k2",2])");
  store.reset();
  EXPECT_EQ(ModeByte(&after_close), 1);

  // A power cut right after an acknowledged commit of an open of the
  // flushed file: the switch to WAL is lost, the WAL is not, and SQLite
  // reads it.
  ASSERT_TRUE(RegisterVfs(&flushed).ok());
  store = OpenStoreFile();
  ASSERT_NE(store, nullptr);
  Commit(store.get(), PutKv(3));
  MemFileSystem after_commit;
  CopySynced(&flushed, &after_commit, "/n.db");
  EXPECT_EQ(ModeByte(&after_commit), 1);
  ASSERT_TRUE(after_commit.Contents("/n.db-wal", &wal));
  EXPECT_GT(wal.size(), 0u);
  ASSERT_TRUE(RegisterVfs(&after_commit).ok());
  auto reopened = OpenStoreFile();
  ASSERT_NE(reopened, nullptr);
  EXPECT_EQ(reopened->head(), 3);
  EXPECT_EQ(RowOf(reopened.get(), 3), R"(["k3",3])");
  reopened.reset();
  EXPECT_EQ(IntegrityOf("/n.db"), "ok");
  RegisterVfs(&flushed);  // the first store still closes on its own files
  store.reset();
}

}  // namespace
}  // namespace onestore
