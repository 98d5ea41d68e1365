// Fuzz target: batches of outbox records applied to replicas
// (Replica::ApplyBatch, src/sync/replica.cc), a memory replica and a sqlite
// :memory: replica side by side.
//
// Input lines: each line is one batch, applied in order. Invariants: both
// replicas accept or refuse alike, with the same answer and content after;
// a refusal is invalid/args, sync/gap, sync/diverged or limit, with a
// message, and leaves head and fingerprint as they were; a diverged replica
// refuses every later batch with sync/diverged.
#include "fuzz_common.h"
#include "sync/replica.h"

namespace onestore {
namespace fuzz {

namespace {

std::unique_ptr<Store> OpenReplicaStore(bool sqlite) {
  OpenOptions o;
  o.backend = sqlite ? "sqlite" : "memory";
  if (sqlite) o.path = ":memory:";
  o.id = "fuzz";
  o.replica = true;
  std::unique_ptr<Store> s;
  Status st = Store::Open(o, &s);
  FUZZ_CHECK(st.ok(), "replica open: " + st.ToString());
  return s;
}

}  // namespace

ONESTORE_FUZZ_TARGET(batch) {
  std::vector<std::string> lines = Lines(data, size, 8);
  auto mem = OpenReplicaStore(false);
  auto sql = OpenReplicaStore(true);
  std::unique_ptr<Replica> rm, rs;
  FUZZ_CHECK(Replica::Attach(mem.get(), &rm).ok(), "attach memory");
  FUZZ_CHECK(Replica::Attach(sql.get(), &rs).ok(), "attach sqlite");
  for (const std::string& batch : lines) {
    State before = StateOf(mem.get());
    const bool diverged = !rm->diverged().empty();
    std::string a, b;
    Status s1 = rm->ApplyBatch(batch, &a);
    Status s2 = rs->ApplyBatch(batch, &b);
    FUZZ_CHECK(s1.code() == s2.code(),
               "applyBatch: memory and sqlite disagree: " + s1.ToString() + " vs " + s2.ToString());
    if (s1.ok()) {
      FUZZ_CHECK(!diverged, "a diverged replica took a batch");
      FUZZ_CHECK(a == b, "applyBatch: different answers: " + a + " vs " + b);
      FUZZ_CHECK(StateOf(mem.get()) == StateOf(sql.get()),
                 "applyBatch: the replicas differ after a batch");
      continue;
    }
    CheckRefusal(s1, {Code::kInvalidArgs, Code::kSyncGap, Code::kSyncDiverged, Code::kLimit},
                 "applyBatch");
    if (diverged) FUZZ_CHECK(s1.code() == Code::kSyncDiverged, "a diverged replica: " + s1.ToString());
    FUZZ_CHECK(StateOf(mem.get()) == before, "a refused batch changed memory: " + s1.ToString());
    FUZZ_CHECK(StateOf(sql.get()) == before, "a refused batch changed sqlite: " + s2.ToString());
    if (s1.code() == Code::kSyncDiverged) {
      FUZZ_CHECK(rm->RecordDivergence().ok(), "record divergence (memory)");
      FUZZ_CHECK(rs->RecordDivergence().ok(), "record divergence (sqlite)");
    }
  }
  // The replicas' reads still work.
  for (const auto& t : mem->Tables()) {
    std::string page;
    Status st = mem->Page(t->name, "{}", 10, "", &page);
    FUZZ_CHECK(st.ok(), "page of a replica's table: " + st.ToString());
  }
  return 0;
}

}  // namespace fuzz
}  // namespace onestore
