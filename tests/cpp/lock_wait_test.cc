// The wait for a file's lock that another process holds ends when the lock
// timeout has passed by the clock, however long each try takes: a try (in
// Node, the lock file read and its holder's pid checked) has a cost of its
// own, and a wait that counted only its 2 ms pauses between tries lasted
// 1.3 to 3.7 times lockTimeout on a loaded machine (docs/api.md,
// "lockTimeout"). Here every try takes 20 ms, so a wait of 100 ms has room
// for at most seven tries (five that fit in it, the first and the last),
// where counting pauses made 51.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "backends/sqlite/mem_file.h"
#include "backends/sqlite/sqlite_backend.h"
#include "backends/sqlite/vfs.h"
#include "commit/store.h"

namespace onestore {
namespace {

// Files in memory whose lock another process holds and never lets go; each
// try to take it takes kTryMs.
class HeldLockFiles : public MemFileSystem {
 public:
  static constexpr int kTryMs = 20;
  Status Lock(const std::string& path, bool* busy) override {
    ++tries;
    std::this_thread::sleep_for(std::chrono::milliseconds(kTryMs));
    *busy = true;
    return Status::OK();
  }
  int tries = 0;
};

class LockWait : public testing::Test {
 protected:
  void TearDown() override { RegisterVfs(PosixFileSystem()); }
};

TEST_F(LockWait, EndsWhenTheTimeoutHasPassedByTheClockNotByItsPauses) {
  HeldLockFiles files;
  ASSERT_TRUE(RegisterVfs(&files).ok());
  SqliteOptions o;
  o.path = "/held.sqlite";
  o.exclusive = true;
  o.plain_when_closed = true;
  o.lock_timeout_ms = 100;
  std::unique_ptr<Store> s;
  const auto start = std::chrono::steady_clock::now();
  Status st = Store::OpenWith(NewSqliteBackend(o), "s1", &s);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(st.code(), Code::kStorageFailed) << st.message();
  EXPECT_NE(st.message().find("locked"), std::string::npos) << st.message();
  // At least the timeout (the deadline is the clock's); at most the tries
  // that fit in it, each at least kTryMs long (sleep_for never returns
  // early), plus the first one and the last.
  EXPECT_GE(waited, std::chrono::milliseconds(o.lock_timeout_ms));
  EXPECT_GE(files.tries, 1);
  EXPECT_LE(files.tries, o.lock_timeout_ms / HeldLockFiles::kTryMs + 2) << "tries: " << files.tries;
}

}  // namespace
}  // namespace onestore
