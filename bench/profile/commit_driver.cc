// A native driver for profiling the commit step with callgrind (perf does not
// work on the project's VM): N one-put commits on the memory backend, with the
// ops text and the commit context exactly as the JS package sends them.
// Not part of any build; see bench/README.md, "Profiling".
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "commit/store.h"

using onestore::OpenOptions;
using onestore::Status;
using onestore::Store;

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 20000;
  OpenOptions o;
  o.backend = "memory";
  o.id = "profile";
  std::unique_ptr<Store> st;
  if (!Store::Open(o, &st).ok()) return 1;
  std::string records;
  Status s = st->Declare(
      R"({"op":"table","table":"bench/edits","version":1,"columns":{"id":{"type":"str"},)"
      R"("path":{"type":"str"},"entry":{"type":"int"},"at":{"type":"int"},"meta":{"type":"json"}},)"
      R"("key":["id"],"indexes":{"byPath":["path","at"]}})",
      &records);
  std::string result;
  if (s.ok()) s = st->Commit(records, R"({"owner":"bench"})", &result);
  for (int i = 0; s.ok() && i < n; ++i) {
    char ops[512];
    std::snprintf(ops, sizeof ops,
                  R"([{"op":"put","table":"bench/edits","row":{"id":"e%07d","path":"src/dir%d/file%d.ts",)"
                  R"("entry":%d,"at":%d,"meta":{"lines":%d}}}])",
                  i, i % 10, i, i, i, i % 7);
    s = st->Commit(ops, R"({"owner":"bench","at":1795967523735})", &result);
  }
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("%s\n", result.c_str());
  return 0;
}
