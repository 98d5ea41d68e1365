// A native driver for profiling a Node store file's commits with callgrind
// (see bench/README.md, "Profiling"): N one-put commits, then one
// transaction of B puts, with the texts the JS package sends, on a sqlite
// file opened as the Node runtime opens one (exclusive WAL, the lock held;
// durability relaxed unless the third argument is "full"), or on "memory".
// The native build runs the same VFS as the wasm one, with POSIX files.
//
//   /tmp/file_commit_driver /tmp/p.sqlite 5000 relaxed 25000
//
// Not part of any build.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "commit/store.h"

using onestore::OpenOptions;
using onestore::Status;
using onestore::Store;

namespace {

void AppendPut(int i, bool comma, std::string* ops) {
  char op[256];
  std::snprintf(op, sizeof op,
                R"(%s{"op":"put","table":"bench/edits","row":{"id":"e%07d","path":"src/dir%d/file%d.ts",)"
                R"("entry":%d,"at":%d,"meta":{"lines":%d}}})",
                comma ? "," : "", i, i % 10, i, i, i, i % 7);
  *ops += op;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string backend = argc > 1 ? argv[1] : "/tmp/p.sqlite";
  const int n = argc > 2 ? std::atoi(argv[2]) : 5000;
  const bool full = argc > 3 && std::string(argv[3]) == "full";
  const int bulk = argc > 4 ? std::atoi(argv[4]) : 0;
  OpenOptions o;
  o.backend = backend == "memory" ? "memory" : "sqlite";
  if (backend != "memory") {
    std::remove(backend.c_str());
    o.path = backend;
    o.hold_lock = true;
    o.durability_full = full;
  }
  o.id = "profile";
  std::unique_ptr<Store> st;
  Status s = Store::Open(o, &st);
  std::string records;
  if (s.ok()) {
    s = st->Declare(
        R"({"op":"table","table":"bench/edits","version":1,"columns":{"id":{"type":"str"},)"
        R"("path":{"type":"str"},"entry":{"type":"int"},"at":{"type":"int"},"meta":{"type":"json"}},)"
        R"("key":["id"],"indexes":{"byPath":["path","at"]}})",
        &records);
  }
  std::string result;
  if (s.ok()) s = st->Commit(records, R"({"owner":"bench"})", &result);
  int next = 0;
  for (int i = 0; s.ok() && i < n; ++i) {
    std::string ops = "[";
    AppendPut(next++, false, &ops);
    ops += "]";
    s = st->Commit(ops, R"({"owner":"bench","at":1795967523735})", &result);
  }
  if (s.ok() && bulk > 0) {
    std::string ops = "[";
    for (int i = 0; i < bulk; ++i) AppendPut(next++, i > 0, &ops);
    ops += "]";
    s = st->Commit(ops, R"({"owner":"bench","at":1795967523735})", &result);
  }
  if (s.ok()) s = st->Close();
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("%d commits, then %d puts in one\n", n, bulk);
  return 0;
}
