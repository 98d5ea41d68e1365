// Fuzz target: queries (where, orderBy), limits and cursors, tampered ones
// included, through Store::Page and Store::Count on a memory store and a
// sqlite :memory: store side by side (src/query/).
//
// Input lines: 0 the setup ops, 1 the table, 2 the query ({"where"?,
// "orderBy"?}), 3 a cursor, 4 the limit (decimal). The cursor line is the
// cursor text itself ("" for the first page), or "raw:<text>" for the
// cursor holding <text> (c1. and its base64url, so that mutations reach the
// JSON inside), or "next:<json>" for the first page's real next cursor with
// its position (the order values) replaced by <json>.
// Invariants: both stores answer the same page (rows and next cursor) or
// refuse with the same documented code; following next cursors (up to 8
// pages) gives the same pages on both and never fails; a refusal leaves the
// store able to commit and read.
#include <cstdlib>

#include "../cpp/base64url.h"
#include "fuzz_common.h"

namespace onestore {
namespace fuzz {

namespace {

// The "next" of a page answer, or "" (the text is JSON the core wrote).
std::string NextOf(const std::string& page) {
  Json j = Json::parse(page, nullptr, false);
  FUZZ_CHECK(!j.is_discarded(), "a page answer that is not JSON: " + page);
  auto it = j.find("next");
  if (it == j.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

// The bytes of base64url text, or "" when it is not base64url.
std::string FromBase64Url(const std::string& in) {
  std::string out;
  return test::FromBase64Url(in, &out) ? out : std::string();
}

// The cursor line made into a cursor text (see above).
std::string CursorOf(Store* s, const std::string& table, const std::string& query, int64_t limit,
                     const std::string& line) {
  if (line.rfind("raw:", 0) == 0) return "c1." + test::ToBase64Url(line.substr(4));
  if (line.rfind("next:", 0) != 0) return line;
  std::string page;
  if (!s->Page(table, query, limit, "", &page).ok()) return "";
  std::string next = NextOf(page);
  if (next.size() < 3) return "";
  Json inside = Json::parse(FromBase64Url(next.substr(3)), nullptr, false);
  FUZZ_CHECK(inside.is_array() && inside.size() == 4, "a next cursor the core cannot have made");
  Json position = Json::parse(line.substr(5), nullptr, false);
  if (position.is_discarded()) return next;
  inside[3] = position;
  return "c1." + test::ToBase64Url(inside.dump());
}

}  // namespace

ONESTORE_FUZZ_TARGET(query) {
  std::vector<std::string> lines = Lines(data, size, 5);
  if (lines.size() < 5) return 0;
  Pair p;
  p.Commit(lines[0]);
  const std::string& table = lines[1];
  const std::string& query = lines[2];
  int64_t limit = std::strtoll(lines[4].c_str(), nullptr, 10);
  std::string cursor = CursorOf(p.mem.get(), table, query, limit, lines[3]);
  for (int page = 0; page < 8; ++page) {
    std::string a, b;
    Status s1 = p.mem->Page(table, query, limit, cursor, &a);
    Status s2 = p.sql->Page(table, query, limit, cursor, &b);
    FUZZ_CHECK(s1.code() == s2.code(),
               "page: memory and sqlite disagree: " + s1.ToString() + " vs " + s2.ToString());
    if (!s1.ok()) {
      FUZZ_CHECK(page == 0, "following a next cursor failed: " + s1.ToString());
      CheckRefusal(s1, ReadRefusals(), "page");
      break;
    }
    FUZZ_CHECK(a == b, "page: memory and sqlite answer differently:\n" + a + "\n" + b);
    cursor = NextOf(a);
    if (cursor.empty()) break;
  }
  int64_t c1 = -1, c2 = -1;
  Status s1 = p.mem->Count(table, query, &c1);
  Status s2 = p.sql->Count(table, query, &c2);
  FUZZ_CHECK(s1.code() == s2.code(),
             "count: memory and sqlite disagree: " + s1.ToString() + " vs " + s2.ToString());
  if (s1.ok()) FUZZ_CHECK(c1 == c2, "count: memory and sqlite differ");
  else CheckRefusal(s1, ReadRefusals(), "count");
  p.CheckStillWork();
  return 0;
}

}  // namespace fuzz
}  // namespace onestore
