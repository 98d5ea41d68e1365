// Fuzz target: what the core parses of an archive (src/archive/): the
// tables, a table's row lines, the outbox lines and head of an import, and
// an export's row cursor; a memory store and a sqlite :memory: store side by
// side.
//
// Input: sections separated by a line "--": 0 the tables (one line, JSON),
// 1 a table name then its row lines, 2 the head (decimal) then the outbox
// record lines, 3 an export cursor then a page size. Invariants: both stores
// accept or refuse each step alike (same code, same content); a refusal is
// invalid/args, invalid/archive or limit and changes nothing; after the
// restore every table exports (RowLines) to the same lines on both stores;
// the export cursor is taken or refused with invalid/cursor or invalid/args.
#include <cstdlib>
#include <functional>

#include "archive/archive.h"
#include "fuzz_common.h"

namespace onestore {
namespace fuzz {

namespace {

std::vector<std::string> Sections(const uint8_t* data, size_t size) {
  std::vector<std::string> out(1);
  for (const std::string& line : Lines(data, size, 4096)) {
    if (line == "--") {
      out.emplace_back();
      continue;
    }
    out.back() += line;
    out.back() += '\n';
  }
  return out;
}

// Section `s` split at its first line.
std::pair<std::string, std::string> Head(const std::string& s) {
  size_t nl = s.find('\n');
  if (nl == std::string::npos) return {s, ""};
  return {s.substr(0, nl), s.substr(nl + 1)};
}

void Step(Pair* p, const char* what, const std::function<Status(Archiver*)>& step) {
  State before = StateOf(p->mem.get());
  Archiver am(p->mem.get()), as(p->sql.get());
  Status s1 = step(&am);
  Status s2 = step(&as);
  FUZZ_CHECK(s1.code() == s2.code(), std::string(what) + ": memory and sqlite disagree: " +
                                         s1.ToString() + " vs " + s2.ToString());
  if (s1.ok()) {
    FUZZ_CHECK(StateOf(p->mem.get()) == StateOf(p->sql.get()),
               std::string(what) + ": the stores differ after it");
    return;
  }
  CheckRefusal(s1, {Code::kInvalidArgs, Code::kInvalidArchive, Code::kLimit}, what);
  FUZZ_CHECK(StateOf(p->mem.get()) == before, std::string(what) + " refused but changed memory");
  FUZZ_CHECK(StateOf(p->sql.get()) == before, std::string(what) + " refused but changed sqlite");
}

}  // namespace

ONESTORE_FUZZ_TARGET(archive) {
  std::vector<std::string> sections = Sections(data, size);
  Pair p;
  Step(&p, "RestoreTables", [&](Archiver* a) { return a->RestoreTables(Head(sections[0]).first); });
  if (sections.size() > 1) {
    const auto rows = Head(sections[1]);  // (structured bindings: no lambda captures them in C++17)
    Step(&p, "RestoreRows", [&](Archiver* a) { return a->RestoreRows(rows.first, rows.second); });
  }
  if (sections.size() > 2) {
    const auto outbox = Head(sections[2]);
    int64_t h = std::strtoll(outbox.first.c_str(), nullptr, 10);
    Step(&p, "RestoreOutbox", [&](Archiver* a) { return a->RestoreOutbox(outbox.second, h); });
  }
  // Every table exports alike, page by page.
  for (const auto& t : p.mem->Tables()) {
    Archiver am(p.mem.get()), as(p.sql.get());
    std::string cursor;
    for (int page = 0; page < 100; ++page) {
      std::string l1, n1, l2, n2;
      Status s1 = am.RowLines(t->name, cursor, 3, &l1, &n1);
      Status s2 = as.RowLines(t->name, cursor, 3, &l2, &n2);
      FUZZ_CHECK(s1.ok() && s2.ok(), "export: " + s1.ToString() + " / " + s2.ToString());
      FUZZ_CHECK(l1 == l2 && n1 == n2, "export: memory and sqlite give different lines");
      if (n1.empty()) break;
      cursor = n1;
    }
  }
  if (sections.size() > 3 && !p.mem->Tables().empty()) {
    auto [cursor, rest] = Head(sections[3]);
    int64_t limit = std::strtoll(rest.c_str(), nullptr, 10);
    Archiver am(p.mem.get()), as(p.sql.get());
    const std::string table = p.mem->Tables().front()->name;
    std::string l1, n1, l2, n2;
    Status s1 = am.RowLines(table, cursor, limit, &l1, &n1);
    Status s2 = as.RowLines(table, cursor, limit, &l2, &n2);
    FUZZ_CHECK(s1.code() == s2.code(), "export with a cursor: memory and sqlite disagree");
    if (s1.ok()) FUZZ_CHECK(l1 == l2 && n1 == n2, "export with a cursor: different lines");
    else CheckRefusal(s1, {Code::kInvalidArgs, Code::kInvalidCursor}, "export with a cursor");
  }
  p.CheckStillWork();
  return 0;
}

}  // namespace fuzz
}  // namespace onestore
