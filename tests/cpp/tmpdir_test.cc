// Gives every test process a temporary folder of its own. ctest runs each
// TEST() as its own process, several at once (-j), and many tests name their
// files by a fixed name or a per-process counter under ::testing::TempDir():
// two processes would share "store_test_0.sqlite" and break each other. So,
// before any test runs, this file points TEST_TMPDIR (which TempDir() reads)
// at a fresh folder made under the one the run gave, and removes it when the
// process ends. Forked children inherit it (they end with _exit).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

pid_t creator = 0;
std::string folder;

void RemoveFolder() {
  if (::getpid() != creator || folder.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(folder, ec);
}

const bool kPrivateTmpdir = [] {
  std::string base = ::testing::TempDir();  // TEST_TMPDIR, or /tmp/
  std::string pattern = base + "onestore-test-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return false;
  folder = pattern;
  creator = ::getpid();
  ::setenv("TEST_TMPDIR", (folder + "/").c_str(), 1);
  std::atexit(RemoveFolder);
  return true;
}();

TEST(PrivateTmpdirTest, EachTestProcessWritesInAFolderOfItsOwn) {
  ASSERT_TRUE(kPrivateTmpdir);
  EXPECT_EQ(::testing::TempDir(), folder + "/");
  EXPECT_TRUE(std::filesystem::is_directory(folder));
  EXPECT_NE(folder.find("onestore-test-"), std::string::npos);
}

}  // namespace
