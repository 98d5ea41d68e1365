// Fuzz target: the ops text of a commit, through both readers (the fast
// reader of puts, src/writes/fast_puts.cc, and the DOM path, ParseOps), on a
// memory store and a sqlite :memory: store side by side.
//
// Input: line 0 is the commit context (meta) text; every later line is one
// commit's ops text, committed in order (a seed's first line declares its
// tables). Invariants, for every line:
// - where the fast reader takes the text, the DOM path takes it too and
//   reads the same ops (same normalized wire JSON);
// - both stores accept it or both refuse it with the same code; a refusal
//   is a write refusal code with a message, and leaves head and fingerprint
//   as they were; after it the store still commits and reads;
// - after every accepted commit both stores have the same fingerprint.
#include "fuzz_common.h"
#include "values/json_text.h"
#include "writes/writes.h"

namespace onestore {
namespace fuzz {
namespace {

std::string OpsJson(const std::vector<Op>& ops) {
  std::string out;
  for (const Op& op : ops) {
    op.AppendJson(&out);
    out.push_back('\n');
  }
  return out;
}

// The fast reader against the DOM path, over the store's catalog.
void CompareReaders(Store* s, const std::string& text) {
  Catalog catalog;
  for (const auto& t : s->Tables()) catalog.Put(t);
  TableResolver fast_tables(&catalog);
  std::vector<Op> fast_ops;
  if (!ParsePutsFast(text, &fast_tables, &fast_ops)) {
    FUZZ_CHECK(fast_ops.empty(), "ParsePutsFast declined but left ops behind");
    return;
  }
  Json j;
  Status st = ParseJsonText(text, "ops", &j);
  FUZZ_CHECK(st.ok(), "the fast reader took text the DOM reader refuses: " + st.ToString());
  TableResolver dom_tables(&catalog);
  std::vector<Op> dom_ops;
  st = ParseOps(j, &dom_tables, &dom_ops);
  FUZZ_CHECK(st.ok(), "the fast reader took ops ParseOps refuses: " + st.ToString());
  std::string a = OpsJson(fast_ops), b = OpsJson(dom_ops);
  FUZZ_CHECK(a == b, "the fast reader and ParseOps read different ops:\nfast: " + a + "\ndom:  " + b);
}

}  // namespace

ONESTORE_FUZZ_TARGET(ops) {
  std::vector<std::string> lines = Lines(data, size, 16);
  if (lines.size() < 2) return 0;
  const std::string& meta = lines[0];
  auto mem = OpenMemory();
  auto sql = OpenSqliteMemory();
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string& ops = lines[i];
    CompareReaders(mem.get(), ops);
    State before = StateOf(mem.get());
    std::string r1, r2;
    Status s1 = mem->Commit(ops, meta, &r1);
    Status s2 = sql->Commit(ops, meta, &r2);
    FUZZ_CHECK(s1.code() == s2.code(),
               "memory and sqlite disagree on line " + std::to_string(i) + ": " + s1.ToString() +
                   " vs " + s2.ToString());
    if (s1.ok()) {
      FUZZ_CHECK(mem->head() == before.head + 1, "an accepted commit did not take one seq");
      FUZZ_CHECK(Fp(mem.get()) == Fp(sql.get()), "memory and sqlite differ after line " +
                                                     std::to_string(i));
      continue;
    }
    CheckRefusal(s1, WriteRefusals(), "commit");
    FUZZ_CHECK(StateOf(mem.get()) == before,
               "a refused commit changed the memory store: " + s1.ToString());
    FUZZ_CHECK(StateOf(sql.get()) == before,
               "a refused commit changed the sqlite store: " + s2.ToString());
  }
  CheckStillWorks(mem.get(), "memory");
  CheckStillWorks(sql.get(), "sqlite");
  return 0;
}

}  // namespace fuzz
}  // namespace onestore
