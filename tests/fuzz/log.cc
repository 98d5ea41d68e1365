// Fuzz target: store.log requests (ReadLog, src/history/log.cc) over a
// store's outbox, a memory store and a sqlite :memory: store side by side.
//
// Input lines: 0..n-2 commits (ops), n-1 the log request ({"seq":n} or a
// filter {"owner"?,"actor"?,"from"?,"to"?,"after"?,"limit"?}). Invariants:
// both stores give the same answer or the same refusal (invalid/args,
// not_found) with a message; following "next" (up to 8 pages) never fails.
#include "fuzz_common.h"
#include "history/log.h"

namespace onestore {
namespace fuzz {

ONESTORE_FUZZ_TARGET(log) {
  std::vector<std::string> lines = Lines(data, size, 8);
  if (lines.size() < 2) return 0;
  Pair p;
  for (size_t i = 0; i + 1 < lines.size(); ++i) p.Commit(lines[i]);
  std::string request = lines.back();
  for (int page = 0; page < 8; ++page) {
    std::string a, b;
    Status s1 = ReadLog(p.mem.get(), request, &a);
    Status s2 = ReadLog(p.sql.get(), request, &b);
    FUZZ_CHECK(s1.code() == s2.code(),
               "log: memory and sqlite disagree: " + s1.ToString() + " vs " + s2.ToString());
    if (!s1.ok()) {
      FUZZ_CHECK(page == 0, "following next failed: " + s1.ToString());
      CheckRefusal(s1, {Code::kInvalidArgs, Code::kNotFound}, "log");
      break;
    }
    FUZZ_CHECK(a == b, "log: different answers:\n" + a + "\n" + b);
    Json answer = Json::parse(a, nullptr, false);
    FUZZ_CHECK(!answer.is_discarded(), "a log answer that is not JSON");
    if (!answer.is_object() || !answer.contains("next")) break;
    Json req = Json::parse(request, nullptr, false);
    if (!req.is_object()) break;
    req["after"] = answer["next"];
    request = req.dump();
  }
  p.CheckStillWork();
  return 0;
}

}  // namespace fuzz
}  // namespace onestore
