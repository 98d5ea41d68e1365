// Fuzz target: wheres and set expressions, in updateWhere, deleteWhere and
// count, on a memory store and a sqlite :memory: store side by side (the
// memory evaluator against the SQL compiler, src/query/, src/writes/).
//
// Input lines: 0 the setup ops (tables and rows, committed first), 1 the
// table, 2 a where (wire JSON), 3 a set ({col: expr}). Invariants: both
// stores accept or refuse alike, with the same counts and the same content
// after; a refusal has a documented code and changes nothing; the stores
// still commit and read after.
#include "fuzz_common.h"

namespace onestore {
namespace fuzz {

ONESTORE_FUZZ_TARGET(where_set) {
  std::vector<std::string> lines = Lines(data, size, 4);
  if (lines.size() < 4) return 0;
  Pair p;
  p.Commit(lines[0]);
  const std::string table = JsonString(lines[1]);
  const std::string& where = lines[2];
  const std::string& set = lines[3];
  // count {where}
  std::string query = "{\"where\":" + where + "}";
  int64_t c1 = -1, c2 = -1;
  Status s1 = p.mem->Count(lines[1], query, &c1);
  Status s2 = p.sql->Count(lines[1], query, &c2);
  FUZZ_CHECK(s1.code() == s2.code(),
             "count: memory and sqlite disagree: " + s1.ToString() + " vs " + s2.ToString());
  if (s1.ok()) {
    FUZZ_CHECK(c1 == c2, "count: memory " + std::to_string(c1) + ", sqlite " + std::to_string(c2));
  } else {
    CheckRefusal(s1, ReadRefusals(), "count");
  }
  p.Commit("[{\"op\":\"updateWhere\",\"table\":" + table + ",\"set\":" + set +
           ",\"where\":" + where + "}]");
  p.Commit("[{\"op\":\"updateWhere\",\"table\":" + table + ",\"set\":" + set + "}]");
  p.Commit("[{\"op\":\"deleteWhere\",\"table\":" + table + ",\"where\":" + where + "}]");
  p.CheckStillWork();
  return 0;
}

}  // namespace fuzz
}  // namespace onestore
