// A native driver for profiling bulk puts with callgrind: two commits of N
// puts of the bench's row on the memory backend, the ops as wire JSON text
// (argv[2] "json") or as the binary batch js/ops-buffer.js writes (wasm/ABI.md,
// "Binary ops"). Not part of any build; built as commit_driver.cc is
// (bench/README.md, "Profiling"):
//   g++ -O2 -g -std=c++17 -I src -I build/native/include-nlohmann bench/profile/bulk_driver.cc \
//     build/native/libonestore_core.a -lpthread -ldl -o /tmp/bulk_driver
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out /tmp/bulk_driver 25000 binary
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include "commit/store.h"
using onestore::OpenOptions; using onestore::Status; using onestore::Store;
static void Varint(std::string* b, uint64_t v) { while (v >= 128) { b->push_back(char((v & 127) | 128)); v >>= 7; } b->push_back(char(v)); }
static void Str(std::string* b, const std::string& s) { Varint(b, s.size()); b->append(s); }
int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 25000;
  bool json = argc > 2 && std::strcmp(argv[2], "json") == 0;
  OpenOptions o; o.backend = "memory"; o.id = "profile";
  std::unique_ptr<Store> st;
  if (!Store::Open(o, &st).ok()) return 1;
  std::string records;
  Status s = st->Declare(
      R"({"op":"table","table":"bench/edits","version":1,"columns":{"id":{"type":"str"},)"
      R"("path":{"type":"str"},"entry":{"type":"int"},"at":{"type":"int"},"meta":{"type":"json"}},)"
      R"("key":["id"],"indexes":{"byPath":["path","at"]}})", &records);
  std::string result;
  if (s.ok()) s = st->Commit(records, R"({"owner":"bench"})", &result);
  for (int r = 0; r < 2 && s.ok(); ++r) {
    std::string ops;
    if (json) {
      ops = "[";
      for (int i = r * n; i < (r + 1) * n; ++i) {
        char buf[512];
        std::snprintf(buf, sizeof buf, R"({"op":"put","table":"bench/edits","row":{"id":"e%07d","path":"src/dir%d/file%d.ts",)"
                      R"("entry":%d,"at":%d,"meta":{"lines":%d}}})", i, i % 10, i, i, i, i % 7);
        if (i > r * n) ops += ",";
        ops += buf;
      }
      ops += "]";
    } else {
      ops.push_back(char(0xB1));
      ops.push_back('S'); Str(&ops, "bench/edits"); Varint(&ops, 5);
      for (const char* k : {"id", "path", "entry", "at", "meta"}) Str(&ops, k);
      for (int i = r * n; i < (r + 1) * n; ++i) {
        char buf[64];
        ops.push_back('P');
        std::snprintf(buf, sizeof buf, "e%07d", i); ops.push_back(4); Str(&ops, buf);
        std::snprintf(buf, sizeof buf, "src/dir%d/file%d.ts", i % 10, i); ops.push_back(4); Str(&ops, buf);
        ops.push_back(3); Varint(&ops, i); ops.push_back(3); Varint(&ops, i);
        std::snprintf(buf, sizeof buf, "{\"lines\":%d}", i % 7); ops.push_back(6); Str(&ops, buf);
      }
    }
    s = st->Commit(ops, R"({"owner":"bench","at":1795967523735})", &result);
  }
  if (!s.ok()) { std::fprintf(stderr, "%s\n", s.ToString().c_str()); return 1; }
  std::printf("%s\n", result.substr(0, 40).c_str());
  return 0;
}
