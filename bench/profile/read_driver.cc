// A native driver for profiling the reads of issue 13 with callgrind (see
// bench/README.md, "Profiling"): N gets by key, then N pages of a derive's
// query (the first 10 rows of one group of 20), with the texts the JS package
// sends. The backend is the first argument: "memory" or a sqlite file path
// (opened as the Node runtime opens one: exclusive WAL, the lock held).
// Not part of any build.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "commit/store.h"

using onestore::OpenOptions;
using onestore::Status;
using onestore::Store;

int main(int argc, char** argv) {
  const std::string backend = argc > 1 ? argv[1] : "memory";
  const int n = argc > 2 ? std::atoi(argv[2]) : 20000;
  OpenOptions o;
  o.backend = backend == "memory" ? "memory" : "sqlite";
  if (backend != "memory") {
    o.path = backend;
    o.hold_lock = true;
    o.durability_full = false;
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
  std::string ops = "[";
  for (int i = 0; i < 2000; ++i) {
    char op[256];
    std::snprintf(op, sizeof op,
                  R"(%s{"op":"put","table":"bench/edits","row":{"id":"g%03d/%03d","path":"src/dir%d/file%d.ts",)"
                  R"("entry":%d,"at":%d,"meta":{"lines":%d}}})",
                  i ? "," : "", i / 20, i % 20, i % 10, i, i, i, i % 7);
    ops += op;
  }
  ops += "]";
  if (s.ok()) s = st->Commit(ops, R"({"owner":"bench","at":1795967523735})", &result);
  std::string row;
  unsigned x = 12345;
  for (int i = 0; s.ok() && i < n; ++i) {
    x = x * 1103515245u + 12345u;
    const int k = static_cast<int>((x >> 8) % 2000);
    char key[32];
    std::snprintf(key, sizeof key, R"(["g%03d/%03d"])", k / 20, k % 20);
    s = st->Get("bench/edits", key, &row);
  }
  std::string page;
  for (int i = 0; s.ok() && i < n; ++i) {
    char q[96];
    std::snprintf(q, sizeof q, R"({"where":{"prefix":["id","g%03d/"]},"orderBy":[]})", i % 100);
    s = st->Page("bench/edits", q, 10, "", &page);
  }
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("%s\n%s\n", row.c_str(), page.c_str());
  return 0;
}
