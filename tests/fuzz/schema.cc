// Fuzz target: open options (ParseOpenOptions, Store::Open) and table
// definitions with their migrations (Store::Declare, src/schema/), on a
// memory store and a sqlite :memory: store side by side.
//
// Input lines: 0 open options, 1 a table declaration, 2 ops committed after
// it, 3 a second declaration of the table (a new version, migrations).
// Invariants: options are taken or refused with invalid/args; options naming
// the memory backend or sqlite ":memory:" open a working store or are
// refused with invalid/args; a
// declaration gives the same records (or the same refusal) on both stores,
// the records commit alike, and a refusal changes nothing.
#include "fuzz_common.h"

namespace onestore {
namespace fuzz {

namespace {

void Declare(Pair* p, const std::string& decl) {
  State before = StateOf(p->mem.get());
  std::string r1, r2;
  Status s1 = p->mem->Declare(decl, &r1);
  Status s2 = p->sql->Declare(decl, &r2);
  FUZZ_CHECK(s1.code() == s2.code(),
             "declare: memory and sqlite disagree: " + s1.ToString() + " vs " + s2.ToString());
  if (!s1.ok()) {
    CheckRefusal(s1, {Code::kInvalidArgs, Code::kSchemaNewer, Code::kLimit}, "declare");
    FUZZ_CHECK(StateOf(p->mem.get()) == before, "a refused declaration changed the store");
    return;
  }
  FUZZ_CHECK(r1 == r2, "declare: memory and sqlite give different records:\n" + r1 + "\n" + r2);
  // "rows" markers are for js/migrate.js to replace; the rest commits.
  if (!r1.empty() && r1.find("\"op\":\"rows\"") == std::string::npos) p->Commit(r1);
}

}  // namespace

ONESTORE_FUZZ_TARGET(schema) {
  std::vector<std::string> lines = Lines(data, size, 4);
  OpenOptions o;
  Status st = ParseOpenOptions(lines[0], &o);
  if (!st.ok()) {
    CheckRefusal(st, {Code::kInvalidArgs}, "open options");
  } else if (o.backend == "memory" || (o.backend == "sqlite" && o.path == ":memory:")) {
    std::unique_ptr<Store> s;
    st = Store::Open(o, &s);
    if (st.ok()) CheckStillWorks(s.get(), "opened store");
    else CheckRefusal(st, {Code::kInvalidArgs}, "open with parsed options");
  }
  if (lines.size() < 2) return 0;
  Pair p;
  Declare(&p, lines[1]);
  if (lines.size() > 2) p.Commit(lines[2]);
  if (lines.size() > 3) Declare(&p, lines[3]);
  p.CheckStillWork();
  return 0;
}

}  // namespace fuzz
}  // namespace onestore
