// A native driver of the bench's order for bulk puts (docs/performance.md,
// "Issue 13, a tenth step"): a fresh memory store, 300 one-put commits, then
// one commit of N bench rows as the binary batch js/ops-buffer.js writes
// (keys ascending, as the bench's); R rounds; prints the median CPU time of
// the big commit. Built as bulk_driver.cc is (bench/README.md, "Profiling"):
//   g++ -O2 -g -std=c++17 -I src -I build/native/include-nlohmann bench/profile/bulk_order_driver.cc \
//     build/native/libonestore_core.a -lpthread -ldl -o /tmp/bulk_order_driver
//   /tmp/bulk_order_driver 25000 7
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>
#include <algorithm>
#include "commit/store.h"
using onestore::OpenOptions; using onestore::Status; using onestore::Store;
static void Varint(std::string* b, uint64_t v) { while (v >= 128) { b->push_back(char((v & 127) | 128)); v >>= 7; } b->push_back(char(v)); }
static void Str(std::string* b, const std::string& s) { Varint(b, s.size()); b->append(s); }
static std::string Batch(int from, int to) {
  std::string ops;
  ops.push_back(char(0xB1));
  ops.push_back('S'); Str(&ops, "bench/edits"); Varint(&ops, 5);
  for (const char* k : {"id", "path", "entry", "at", "meta"}) Str(&ops, k);
  for (int i = from; i < to; ++i) {
    char buf[64];
    ops.push_back('P');
    std::snprintf(buf, sizeof buf, "e%07d", i); ops.push_back(4); Str(&ops, buf);
    std::snprintf(buf, sizeof buf, "src/dir%d/file%d.ts", i % 10, i); ops.push_back(4); Str(&ops, buf);
    ops.push_back(3); Varint(&ops, i); ops.push_back(3); Varint(&ops, 1795967523735LL + i);
    std::snprintf(buf, sizeof buf, "{\"lines\":%d}", i % 7); ops.push_back(6); Str(&ops, buf);
  }
  return ops;
}
static double Cpu() { timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 25000;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 7;
  std::vector<double> ms;
  for (int r = 0; r < rounds; ++r) {
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
    for (int i = 0; i < 300 && s.ok(); ++i) s = st->Commit(Batch(i, i + 1), R"({"owner":"bench","at":1795967523735})", &result);
    std::string big = Batch(300, 300 + n);
    double t0 = Cpu();
    if (s.ok()) s = st->Commit(big, R"({"owner":"bench","at":1795967523735})", &result);
    ms.push_back(Cpu() - t0);
    if (!s.ok()) { std::fprintf(stderr, "%s\n", s.ToString().c_str()); return 1; }
  }
  std::sort(ms.begin(), ms.end());
  std::printf("median %.2f ms (min %.2f max %.2f) of %d\n", ms[ms.size() / 2], ms[0], ms.back(), rounds);
  return 0;
}
