// Store::Close on a sqlite file whose release fails: SQLite ignores a failed
// xUnlock or xClose while it closes, so the VFS keeps the failure and Close
// returns it (storage_failed, saying that the commits are kept); the file
// reopens with every acknowledged commit. The faults are injected through
// FaultFileSystem, on a file opened as a Node store file is (exclusive
// lock, WAL, plain when closed). A close that fails nothing returns OK.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "backends/sqlite/mem_file.h"
#include "backends/sqlite/sqlite_backend.h"
#include "backends/sqlite/vfs.h"
#include "commit/store.h"
#include "store_fixtures.h"

namespace onestore {
namespace {

constexpr char kTable[] =
    R"([{"op":"table","table":"t/items","version":1,"columns":{"id":{"type":"str"}},"key":["id"]}])";

std::unique_ptr<Store> OpenFile(const std::string& path) {
  SqliteOptions o;
  o.path = path;
  o.exclusive = true;
  o.plain_when_closed = true;
  std::unique_ptr<Store> s;
  Status st = Store::OpenWith(NewSqliteBackend(o), "s1", &s);
  EXPECT_TRUE(st.ok()) << st.message();
  return s;
}

class CloseFaults : public testing::TestWithParam<IoCall> {
 protected:
  void TearDown() override { RegisterVfs(PosixFileSystem()); }
};

TEST_P(CloseFaults, AFailedReleaseIsReportedByCloseAndTheCommitsStay) {
  MemFileSystem mem;
  FaultFileSystem fault(&mem);
  ASSERT_TRUE(RegisterVfs(&fault).ok());
  {
    auto s = OpenFile("/close.sqlite");
    ASSERT_NE(s, nullptr);
    test::CommitOps(s.get(), kTable);
    test::CommitOps(s.get(), R"([{"op":"put","table":"t/items","row":{"id":"a"}}])");
    fault.FailCall(GetParam(), 1, /*sticky=*/true);
    Status st = s->Close();
    EXPECT_EQ(st.code(), Code::kStorageFailed) << st.message();
    EXPECT_NE(st.message().find("every commit it acknowledged is kept"), std::string::npos)
        << st.message();
    EXPECT_NE(st.message().find("/close.sqlite"), std::string::npos) << st.message();
    EXPECT_TRUE(s->Close().ok()) << "a second close has nothing left to release";
  }
  fault.Heal();
  auto again = OpenFile("/close.sqlite");
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->head(), 2);
  EXPECT_TRUE(again->Close().ok());
}

INSTANTIATE_TEST_SUITE_P(Calls, CloseFaults, testing::Values(IoCall::kUnlock, IoCall::kClose),
                         [](const testing::TestParamInfo<IoCall>& info) {
                           return info.param == IoCall::kUnlock ? "Unlock" : "Close";
                         });

TEST(CloseFaultsBaseline, ACloseThatFailsNothingReturnsOk) {
  MemFileSystem mem;
  ASSERT_TRUE(RegisterVfs(&mem).ok());
  auto s = OpenFile("/fine.sqlite");
  ASSERT_NE(s, nullptr);
  test::CommitOps(s.get(), kTable);
  EXPECT_TRUE(s->Close().ok());
  RegisterVfs(PosixFileSystem());
}

}  // namespace
}  // namespace onestore
