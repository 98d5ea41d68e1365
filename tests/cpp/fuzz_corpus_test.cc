// Replays every seed and regression input of tests/fuzz/corpus/<target>/
// through the fuzz targets' bodies (tests/fuzz/*.cc, linked into this
// binary) in the ordinary native build: the same invariants as under
// libFuzzer and the sanitizers (scripts/fuzz.sh), so an input that once
// broke one stays a ctest failure here even on a machine without clang.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../fuzz/fuzz_common.h"

namespace onestore {
namespace {

namespace fs = std::filesystem;

TEST(FuzzCorpus, EveryTargetHasASeedCorpusAndEveryInputKeepsTheInvariants) {
  const fs::path corpus = fs::path(ONESTORE_SOURCE_DIR) / "tests" / "fuzz" / "corpus";
  ASSERT_FALSE(fuzz::Targets().empty());
  for (const auto& [name, body] : fuzz::Targets()) {
    const fs::path dir = corpus / name;
    ASSERT_TRUE(fs::is_directory(dir)) << "no corpus for fuzz target " << name;
    int inputs = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (!entry.is_regular_file()) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      const std::string input = text.str();
      SCOPED_TRACE(entry.path().string());
      body(reinterpret_cast<const uint8_t*>(input.data()), input.size());  // aborts on a break
      ++inputs;
    }
    EXPECT_GT(inputs, 0) << "the corpus of " << name << " is empty";
  }
}

}  // namespace
}  // namespace onestore
