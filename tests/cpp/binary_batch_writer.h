// A binary ops batch written as js/ops-buffer.js writes one (wasm/ABI.md,
// "Binary ops"), for the tests that hand the core a batch directly
// (commit_path_test.cc, allocs/commit_allocs_test.cc).
#ifndef ONESTORE_TESTS_CPP_BINARY_BATCH_WRITER_H_
#define ONESTORE_TESTS_CPP_BINARY_BATCH_WRITER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace onestore {

struct BatchWriter {
  std::string bytes = std::string(1, '\xb1');
  std::vector<size_t> ends;  // where each record ends
  void Varint(uint64_t v) {
    while (v >= 128) {
      bytes.push_back(static_cast<char>((v & 127) | 128));
      v >>= 7;
    }
    bytes.push_back(static_cast<char>(v));
  }
  void Str(const std::string& s) {
    Varint(s.size());
    bytes += s;
  }
  void Shape(const std::string& table, const std::vector<std::string>& names) {
    bytes.push_back('S');
    Str(table);
    Varint(names.size());
    for (const auto& n : names) Str(n);
    ends.push_back(bytes.size());
  }
  // Values: null, false or true (tags 0-2: no text), a str (tag 4), an int
  // (tag 3, or 7 for a negative one: the text's digits) or JSON text (tag 6).
  void Put(const std::vector<std::pair<int, std::string>>& values) {
    bytes.push_back('P');
    for (const auto& [tag, v] : values) {
      bytes.push_back(static_cast<char>(tag));
      if (tag <= 2) continue;
      if (tag == 3 || tag == 7) {
        Varint(std::stoull(v));
      } else {
        Str(v);
      }
    }
    ends.push_back(bytes.size());
  }
  void JsonOp(const std::string& text) {
    bytes.push_back('J');
    Str(text);
    ends.push_back(bytes.size());
  }
};

}  // namespace onestore

#endif  // ONESTORE_TESTS_CPP_BINARY_BATCH_WRITER_H_
