// A native driver for profiling a replica's applyBatch (workload 10 of
// bench/run.mjs) with callgrind: reads outbox batches, one JSON text a line
// (the texts the JS package sends; dump them from bench/lib/common.mjs's
// replicaBatches), and applies them into a fresh replica on a sqlite file
// opened as the Node runtime opens one (exclusive WAL, the lock held;
// durability relaxed unless the third argument is "full"), or on "memory".
// Prints the CPU time of the applies.
//
//   /tmp/replica_driver /tmp/r.sqlite /tmp/replica-batches.txt relaxed
//
// Not part of any build.
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "commit/store.h"
#include "sync/replica.h"

using onestore::OpenOptions;
using onestore::Replica;
using onestore::Status;
using onestore::Store;

int main(int argc, char** argv) {
  const std::string backend = argc > 1 ? argv[1] : "/tmp/r.sqlite";
  const std::string batches_path = argc > 2 ? argv[2] : "/tmp/replica-batches.txt";
  const bool full = argc > 3 && std::string(argv[3]) == "full";
  std::vector<std::string> batches;
  {
    std::ifstream in(batches_path);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) batches.push_back(line);
  }
  OpenOptions o;
  o.backend = backend == "memory" ? "memory" : "sqlite";
  if (backend != "memory") {
    std::remove(backend.c_str());
    o.path = backend;
    o.hold_lock = true;
    o.durability_full = full;
  }
  o.id = "profile";
  o.replica = true;
  std::unique_ptr<Store> st;
  Status s = Store::Open(o, &st);
  std::unique_ptr<Replica> r;
  if (s.ok()) s = Replica::Attach(st.get(), &r);
  const std::clock_t c0 = std::clock();
  std::string result;
  for (size_t i = 0; s.ok() && i < batches.size(); ++i) s = r->ApplyBatch(batches[i], &result);
  const double ms = 1000.0 * (std::clock() - c0) / CLOCKS_PER_SEC;
  if (s.ok()) s = st->Close();
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("%zu batches applied (%s) in %.1f ms CPU\n", batches.size(), result.c_str(), ms);
  return 0;
}
