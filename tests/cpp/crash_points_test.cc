// Crashes a commit workload at every I/O call and damages what was not synced
// (issue 14, item 1), and fails each kind of I/O call, and each call at and
// after COMMIT's sync (item 2), in every journal mode and durability the
// store uses; after each, checks that the store reopens, integrity_check is
// ok, every acknowledged commit is there (with `full`), no commit is
// partial, the outbox is contiguous (from seq 1, or after the workload's
// trim of the whole outbox, whose head _meta.head then holds: head format
// 2), and the tables equal a replay of the outbox on a memory store.
//
// The short form samples crash points and seeds; ONESTORE_CRASH_POINTS=all
// (tests/torture/crash-points.sh) runs every crash point with 10 damage
// seeds and every fault. Each test prints its figures.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "backends/sqlite/file.h"
#include "backends/sqlite/mem_file.h"
#include "backends/sqlite/vfs.h"
#include "commit/store.h"
#include "sqlite3.h"
#include "sync/replica.h"
#include "values/value.h"

namespace onestore {
namespace {

constexpr const char* kPath = "/crash.db";
constexpr const char* kId = "crash-session";
constexpr int64_t kAt = 1000;  // commit i of the workload is at kAt + i

bool LongForm() {
  const char* v = std::getenv("ONESTORE_CRASH_POINTS");
  return v != nullptr && std::string(v) == "all";
}

// --- the modes the store runs SQLite in ---------------------------------------

struct Mode {
  const char* name;
  const char* backend;  // "sqlite" or "opfs"
  bool hold_lock;       // a Node store file: WAL in exclusive mode, rollback once closed
  bool full;            // durability
  // SQLite's 2 MB page cache (OpenOptions::small_page_cache), so that the
  // workload's transaction of 2,600 rows of 1 KB spills pages before COMMIT;
  // false: the 16 MiB a store that holds its lock keeps, which it does not
  // fill.
  bool small_cache = true;
};

// A native sqlite store: a rollback journal (TRUNCATE) and NORMAL locking.
// A Node store file (holdLock): WAL with exclusive locking, put back in
// rollback mode at close. An OPFS store: WAL with exclusive locking. The
// last two: a Node store file and an OPFS store as they run, with their
// 16 MiB page cache.
const Mode kModes[] = {
    {"rollback_full", "sqlite", false, true},
    {"rollback_relaxed", "sqlite", false, false},
    {"nodewal_full", "sqlite", true, true},
    {"nodewal_relaxed", "sqlite", true, false},
    {"opfswal_full", "opfs", false, true},
    {"opfswal_relaxed", "opfs", false, false},
    {"nodewal_full_16mib", "sqlite", true, true, false},
    {"opfswal_full_16mib", "opfs", false, true, false},
};
constexpr int kModeCount = static_cast<int>(sizeof(kModes) / sizeof(kModes[0]));

OpenOptions OptionsOf(const Mode& m) {
  OpenOptions o;
  o.backend = m.backend;
  o.path = kPath;
  o.id = kId;
  o.durability_full = m.full;
  o.hold_lock = m.hold_lock;
  o.small_page_cache = m.small_cache;
  return o;
}

// --- the workload -----------------------------------------------------------------

struct Step {
  bool reopen = false;  // close the store and open it again
  bool trim = false;    // with reopen: first trim the whole outbox
  std::string ops;      // else: one commit
};

std::string Str(const std::string& s) { return "\"" + s + "\""; }

std::string PutKv(const std::string& k, int v, const std::string& s) {
  return R"({"op":"put","table":"t/kv","row":{"k":)" + Str(k) + R"(,"v":)" + std::to_string(v) +
         R"(,"s":)" + Str(s) + "}}";
}

// Puts, updates, deletes, bulk updates and deletes by a where, table, alter
// and index records, vectors, edges and documents (create, change, retire),
// a transaction big enough to spill SQLite's page cache (2 MB with
// Mode::small_cache) before COMMIT, a large bulk delete, and a close and
// reopen in the middle (a Node store file goes back to rollback mode and to
// WAL again) after a trim of the whole outbox (the head is then
// _meta.head's alone: head format 2).
std::vector<Step> Workload() {
  std::vector<Step> w;
  auto commit = [&](const std::string& ops) { w.push_back({false, false, "[" + ops + "]"}); };
  commit(R"({"op":"table","table":"t/kv","version":1,"columns":{"k":{"type":"str"},"v":{"type":"int"},)"
         R"("s":{"type":"str","optional":true}},"key":["k"],"indexes":{"byV":["v"]}})");
  commit(R"({"op":"table","table":"t/log","version":1,"columns":{"id":{"type":"int"},"text":{"type":"str"}},)"
         R"("key":["id"]})");
  for (int i = 0; i < 6; ++i)
    commit(PutKv("k" + std::to_string(i), i, std::string(40 + 30 * i, 'a' + i)) + "," +
           PutKv("k1" + std::to_string(i), 10 + i, "x"));
  commit(R"({"op":"update","table":"t/kv","key":["k2"],"set":{"v":{"add":[{"col":"v"},{"value":5}]}}})");
  commit(R"({"op":"delete","table":"t/kv","key":["k3"]})");
  commit(R"({"op":"update","table":"t/kv","where":{"gte":["v",4]},"set":{"v":{"add":[{"col":"v"},{"value":100}]}}})");
  commit(R"({"op":"delete","table":"t/kv","where":{"prefix":["k","k1"]}})");
  {
    std::string big;
    for (int i = 0; i < 2600; ++i) {
      if (i) big += ",";
      big += R"({"op":"put","table":"t/log","row":{"id":)" + std::to_string(i) + R"(,"text":")" +
             std::to_string(i) + std::string(1000, 'a' + i % 26) + R"("}})";
    }
    commit(big + "," + PutKv("big", 1, "big"));
  }
  w.push_back({true, true, ""});
  // Vectors (a vector column: base64 float32s, a BLOB in SQLite), edges (the
  // table shape defineEdges makes: key from, kind, to and a reverse index;
  // deleteEdges is a delete by a where) and documents (their own tables).
  commit(R"({"op":"table","table":"t/vec","version":1,"columns":{"id":{"type":"str"},)"
         R"("v":{"type":"vector","dims":4}},"key":["id"]},)"
         R"({"op":"table","table":"t/edges","version":1,"columns":{"from":{"type":"str"},)"
         R"("to":{"type":"str"},"kind":{"type":"str"},"w":{"type":"int","optional":true}},)"
         R"("key":["from","kind","to"],"indexes":{"byTo":["to","kind","from"]}})");
  commit(R"({"op":"put","table":"t/vec","row":{"id":"a","v":"AACAPwAAAEAAAEBAAACAQA=="}},)"
         R"({"op":"put","table":"t/vec","row":{"id":"b","v":"AAAAPwAAgL8AAAAAAAAAQA=="}},)"
         R"({"op":"put","table":"t/edges","row":{"from":"a","to":"b","kind":"links","w":1}},)"
         R"({"op":"put","table":"t/edges","row":{"from":"a","to":"c","kind":"links"}},)"
         R"({"op":"put","table":"t/edges","row":{"from":"b","to":"c","kind":"cites"}},)"
         R"({"op":"doc.create","owner":"notes","id":1,"kind":"note","key":"n1","value":{"title":"a","tags":["x"]}})");
  commit(R"({"op":"put","table":"t/vec","row":{"id":"a","v":"AABAQAAAQEAAAEBAAABAQA=="}},)"
         R"({"op":"delete","table":"t/edges","where":{"and":[{"eq":["from","a"]},{"eq":["kind","links"]}]}},)"
         R"({"op":"doc.change","owner":"notes","id":1,"patch":[{"op":"replace","path":"/title","value":"b"},)"
         R"({"op":"add","path":"/tags/-","value":"y"}]},)"
         R"({"op":"doc.create","owner":"notes","id":2,"kind":"note","key":"n2","value":{"n":2}})");
  commit(R"({"op":"alter","table":"t/kv","version":2,"add":{"tag":{"type":"str","default":"-"}}})");
  commit(R"({"op":"index","table":"t/kv","version":2,"create":{"byTag":["tag"]}})");
  commit(R"({"op":"put","table":"t/kv","row":{"k":"k7","v":7,"s":null,"tag":"t7"}})");
  commit(R"({"op":"delete","table":"t/log","where":{"lt":["id",2000]}})");
  commit(R"({"op":"update","table":"t/kv","key":["k0"],"set":{"tag":{"value":"zero"}}})");
  commit(R"({"op":"doc.retire","owner":"notes","id":2},)"
         R"({"op":"delete","table":"t/vec","key":["b"]},)"
         R"({"op":"put","table":"t/edges","row":{"from":"c","to":"a","kind":"links","w":3}})");
  return w;
}

// The commits before the workload's trim: its outbox then starts at seq 1,
// or after them once the trim committed.
int TrimmedUpTo() {
  static const int n = [] {
    int commits = 0;
    for (const Step& step : Workload()) {
      if (step.trim) return commits;
      if (!step.reopen) ++commits;
    }
    return 0;
  }();
  return n;
}

// What a run of the workload did.
struct Outcome {
  int acked = 0;      // commits acknowledged (the first `acked` of the workload)
  int attempted = 0;  // commits started (acked, or acked + 1: one failed)
  Status failure;     // the first failure, OK if none
  bool in_commit = false;  // the failure was a commit's
  std::unique_ptr<Store> store;  // still open (not closed by the run)
};

// Runs the workload from the start (opening the store) until the first
// failure, or to its end with the store left open.
Outcome RunWorkload(const Mode& mode, const std::vector<Step>& steps,
                const std::function<void(size_t step)>& before_step = nullptr) {
  Outcome run;
  run.failure = Store::Open(OptionsOf(mode), &run.store);
  if (!run.failure.ok()) {
    run.store.reset();
    return run;
  }
  int commit = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (before_step) before_step(i);
    if (steps[i].reopen) {
      int64_t removed = 0;
      if (steps[i].trim) run.failure = run.store->TrimOutbox(run.store->head(), &removed);
      if (!run.failure.ok()) return run;
      run.store.reset();
      run.failure = Store::Open(OptionsOf(mode), &run.store);
      if (!run.failure.ok()) {
        run.store.reset();
        return run;
      }
      continue;
    }
    std::string result;
    ++run.attempted;
    run.failure = run.store->Commit(
        steps[i].ops, R"({"owner":"t","at":)" + std::to_string(kAt + commit) + "}", &result);
    if (!run.failure.ok()) {
      run.in_commit = true;
      return run;
    }
    ++run.acked;
    ++commit;
  }
  return run;
}

// --- checking a store after a crash or a fault ------------------------------------

std::string IntegrityOf(const std::string& path) {
  sqlite3* db = nullptr;
  std::string out = "cannot open";
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    // A WAL without shared memory opens only in exclusive mode.
    sqlite3_exec(db, "PRAGMA locking_mode=EXCLUSIVE", nullptr, nullptr, nullptr);
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, nullptr) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    } else {
      out = sqlite3_errmsg(db);
    }
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return out;
}

// Every table record and every row of every table, as text.
Status Dump(Store* s, std::string* out) {
  *out = s->TablesJson(true);
  for (const auto& t : s->Tables()) {
    std::string page;
    ONESTORE_RETURN_IF_ERROR(s->Page(t->name, "{}", 100000, "", &page));
    *out += "\n" + t->name + " " + page;
  }
  return Status::OK();
}

// The ops of each commit of the workload (as its outbox record holds them),
// and the tables after the first n commits (a replay on a memory store).
class Reference {
 public:
  Reference(std::vector<std::string> ops, std::vector<std::string> records)
      : ops_(std::move(ops)), records_(std::move(records)) {}
  size_t commits() const { return ops_.size(); }
  const std::string& ops(size_t i) const { return ops_[i]; }
  // The outbox record of commit i as the run without faults wrote it.
  const std::string& record(size_t i) const { return records_[i]; }
  bool HasModel(int n) const { return models_.count(n) != 0; }

  // The model: the outbox `batch` (of the first n commits) applied to a
  // memory store, dumped. Cached by n (the caller has checked that the
  // batch's records are the workload's first n).
  Status Model(int n, const std::string& batch, std::string* out) {
    auto it = models_.find(n);
    if (it != models_.end()) {
      *out = it->second;
      return Status::OK();
    }
    OpenOptions o;
    o.backend = "memory";
    o.id = kId;
    o.replica = true;
    std::unique_ptr<Store> store;
    ONESTORE_RETURN_IF_ERROR(Store::Open(o, &store));
    std::unique_ptr<Replica> replica;
    ONESTORE_RETURN_IF_ERROR(Replica::Attach(store.get(), &replica));
    std::string result;
    ONESTORE_RETURN_IF_ERROR(replica->ApplyBatch(batch, &result));
    ONESTORE_RETURN_IF_ERROR(Dump(store.get(), out));
    models_[n] = *out;
    return Status::OK();
  }

 private:
  std::vector<std::string> ops_;
  std::vector<std::string> records_;
  std::map<int, std::string> models_;
};

// The checks after a crash or a fault, on the files now registered: ""
// when they pass, else what failed. `lo`..`hi`: the commits the reopened
// store may hold (the first lo at least, hi at most). Sets *held to the
// number it holds.
std::string CheckReopened(const Mode& mode, Reference* ref, int lo, int hi, int* held) {
  *held = -1;
  std::unique_ptr<Store> store;
  Status s = Store::Open(OptionsOf(mode), &store);
  if (!s.ok()) return "reopen failed: " + s.ToString();
  const int64_t head = store->head();
  std::vector<OutboxEntry> entries;
  s = store->ReadOutboxEntries(0, 100000, &entries);
  if (!s.ok()) return "outbox read failed: " + s.ToString();
  // The outbox is whole (seqs 1 ... head) or, once the workload's trim
  // committed, seqs TrimmedUpTo() + 1 ... head: the head of an emptied
  // outbox is _meta.head's.
  const int64_t first = entries.empty() ? head + 1 : entries[0].seq;
  if (first != 1 && first != TrimmedUpTo() + 1)
    return "the outbox starts at seq " + std::to_string(first) + " (head " +
           std::to_string(head) + ")";
  if (static_cast<int64_t>(entries.size()) != head - first + 1)
    return "head " + std::to_string(head) + " but " + std::to_string(entries.size()) +
           " outbox records from seq " + std::to_string(first);
  for (size_t k = 0; k < entries.size(); ++k) {
    const OutboxEntry& e = entries[k];
    const size_t i = static_cast<size_t>(first - 1) + k;  // the commit's index
    const std::string where = "outbox record " + std::to_string(i + 1);
    if (e.seq != static_cast<int64_t>(i + 1))
      return where + " has seq " + std::to_string(e.seq) + ": the outbox is not contiguous";
    // The same text as the run without faults wrote: that commit's record
    // (the usual case; the JSON checks below word any other).
    if (i < ref->commits() && e.record == ref->record(i)) continue;
    Json rec = Json::parse(e.record, nullptr, false);
    if (rec.is_discarded() || !rec.is_object() || !rec.contains("ops"))
      return where + " is not a record: " + e.record.substr(0, 200);
    if (rec["at"] != Json(kAt + static_cast<int64_t>(i)))
      return where + " is another commit's (at " + rec["at"].dump() + ")";
    if (i >= ref->commits() || rec["ops"].dump() != ref->ops(i))
      return where + " differs from the commit's ops: a partial or foreign commit";
  }
  *held = static_cast<int>(head);
  if (head < lo) {
    return "an acknowledged commit is lost: head " + std::to_string(head) + ", " +
           std::to_string(lo) + " acknowledged";
  }
  if (head > hi)
    return "head " + std::to_string(head) + " beyond the " + std::to_string(hi) + " commits made";
  // The model of the first `head` commits (the records are theirs, checked
  // above): computed once per run by TraceWorkload, so the outbox is read as
  // a batch only for a head it did not reach.
  std::string batch, model, tables;
  if (!ref->HasModel(static_cast<int>(head))) s = store->ReadOutbox(0, 100000, &batch);
  if (s.ok()) s = ref->Model(static_cast<int>(head), batch, &model);
  if (!s.ok()) return "the model replay failed: " + s.ToString();
  s = Dump(store.get(), &tables);
  if (!s.ok()) return "reading the tables failed: " + s.ToString();
  if (tables != model) return "the tables differ from the replay of the outbox";
  // The store goes on: one more commit.
  std::string result;
  s = store->Commit(R"([{"op":"table","table":"t/after","columns":{"id":{"type":"int"}},"key":["id"]}])",
                    R"({"owner":"t"})", &result);
  if (!s.ok()) return "a commit after the reopen failed: " + s.ToString();
  store.reset();
  const std::string integrity = IntegrityOf(kPath);
  if (integrity != "ok") return "integrity_check: " + integrity;
  return "";
}

// The reference run of a mode: the workload without faults, its I/O calls
// (their kinds in order), and where each step's calls start.
struct Traced {
  std::vector<IoCall> calls;
  std::vector<int64_t> step_start;  // the index in calls of each step's first call
  int64_t end_of_steps = 0;         // calls before the final close
  std::unique_ptr<Reference> ref;
};

Traced TraceWorkload(const Mode& mode, const std::vector<Step>& steps) {
  Traced t;
  MemFileSystem mem;
  FaultFileSystem fault(&mem);
  RegisterVfs(&fault);
  fault.Trace(&t.calls);
  Outcome run = RunWorkload(mode, steps, [&](size_t) {
    t.step_start.push_back(static_cast<int64_t>(t.calls.size()));
  });
  EXPECT_TRUE(run.failure.ok()) << run.failure.ToString();
  t.end_of_steps = static_cast<int64_t>(t.calls.size());
  run.store.reset();  // the final close is part of the workload
  fault.Trace(nullptr);
  // The outbox of every commit, from a run of the same workload without its
  // trim (the records are the same: a trim takes no seq) on files of its
  // own, through a VFS that counts nothing: the trace holds the workload's
  // calls and nothing else, as a crashed run makes them.
  MemFileSystem whole;
  RegisterVfs(&whole);
  std::vector<Step> untrimmed = steps;
  for (Step& step : untrimmed) step.trim = false;
  {
    Outcome plain = RunWorkload(mode, untrimmed);
    EXPECT_TRUE(plain.failure.ok()) << plain.failure.ToString();
  }
  std::vector<OutboxEntry> entries;
  std::vector<std::string> batches;  // the outbox of the first n commits, n = 1..head
  {
    std::unique_ptr<Store> store;
    Status st = Store::Open(OptionsOf(mode), &store);
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_TRUE(store->ReadOutboxEntries(0, 100000, &entries).ok());
    for (size_t i = 1; i <= entries.size(); ++i) {
      std::string batch;
      EXPECT_TRUE(store->ReadOutbox(0, static_cast<int64_t>(i), &batch).ok());
      batches.push_back(batch);
    }
  }
  RegisterVfs(PosixFileSystem());
  std::vector<std::string> ops, records;
  for (const OutboxEntry& e : entries) {
    ops.push_back(Json::parse(e.record)["ops"].dump());
    records.push_back(e.record);
  }
  t.ref = std::make_unique<Reference>(std::move(ops), std::move(records));
  // Every model now, once: a crash point's check runs in a child process,
  // whose cache would not outlive it.
  std::string model;
  EXPECT_TRUE(t.ref->Model(0, R"({"from":0,"to":0,"commits":[]})", &model).ok());
  for (size_t i = 0; i < batches.size(); ++i) {
    Status st = t.ref->Model(static_cast<int>(i + 1), batches[i], &model);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  return t;
}

// A hash of every file's bytes (two damaged states that hash alike are
// checked once).
size_t HashFiles(const MemFileSystem& fs) {
  size_t h = 0;
  for (const char* suffix : {"", "-wal", "-journal"}) {
    std::string bytes;
    if (!fs.Contents(std::string(kPath) + suffix, &bytes)) bytes = "<none>";
    h = h * 1000003u ^ std::hash<std::string>()(bytes);
  }
  return h;
}

struct Failures {
  int64_t count = 0;
  std::vector<std::string> first;
  void Add(const std::string& what) {
    ++count;
    if (first.size() < 12) first.push_back(what);
  }
  std::string Text() const {
    std::string out;
    for (const std::string& f : first) out += "\n  " + f;
    return out;
  }
};

// --- 1. a crash at every I/O call ------------------------------------------------

class CrashAtEveryIoCall : public testing::TestWithParam<int> {};

// What the check of one crash point found, sent back by the process that
// checked it: one line per item, "hash <h> <acked>" for each damaged state
// checked (the parent skips it from then on), "fail <text>", and a last
// "sums <cases> <distinct> <max lost> <unsynced>".
struct PointResult {
  std::vector<std::pair<size_t, int>> checked;
  std::vector<std::string> failures;
  int64_t cases = 0, distinct = 0, max_lost = 0, unsynced = 0;
  bool complete = false;

  std::string Encode() const {
    std::string out;
    for (const auto& [h, a] : checked) out += "hash " + std::to_string(h) + " " + std::to_string(a) + "\n";
    for (std::string f : failures) {
      for (char& c : f) if (c == '\n') c = ' ';
      out += "fail " + f + "\n";
    }
    out += "sums " + std::to_string(cases) + " " + std::to_string(distinct) + " " +
           std::to_string(max_lost) + " " + std::to_string(unsynced) + "\n";
    return out;
  }
  static PointResult Decode(const std::string& text) {
    PointResult r;
    size_t at = 0;
    while (at < text.size()) {
      size_t nl = text.find('\n', at);
      if (nl == std::string::npos) break;  // a cut line: the child died
      const std::string line = text.substr(at, nl - at);
      at = nl + 1;
      if (line.rfind("hash ", 0) == 0) {
        unsigned long long h = 0;
        int a = 0;
        if (std::sscanf(line.c_str() + 5, "%llu %d", &h, &a) == 2) r.checked.push_back({h, a});
      } else if (line.rfind("fail ", 0) == 0) {
        r.failures.push_back(line.substr(5));
      } else if (line.rfind("sums ", 0) == 0) {
        long long c = 0, d = 0, m = 0, u = 0;
        r.complete = std::sscanf(line.c_str() + 5, "%lld %lld %lld %lld", &c, &d, &m, &u) == 4;
        r.cases = c, r.distinct = d, r.max_lost = m, r.unsynced = u;
      }
    }
    return r;
  }
};

// Reads all of fd until its end.
std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

TEST_P(CrashAtEveryIoCall, NoAcknowledgedCommitIsLostNoneIsPartialAndTheFileIsIntact) {
  const Mode& mode = kModes[GetParam()];
  const std::vector<Step> steps = Workload();
  Traced traced = TraceWorkload(mode, steps);
  const int64_t n = static_cast<int64_t>(traced.calls.size());
  ASSERT_GT(n, 100);
  // ONESTORE_CRASH_AT=k: that crash point alone (to look into a failure).
  const char* only = std::getenv("ONESTORE_CRASH_AT");

  // Which crash points and how many seeds: every one in the long form (10
  // seeds, or ONESTORE_CRASH_SEEDS), a seeded sample in the short one.
  int seeds = LongForm() ? 10 : 4;
  if (const char* v = std::getenv("ONESTORE_CRASH_SEEDS")) seeds = std::max(1, std::atoi(v));
  std::vector<int64_t> points;
  if (only != nullptr) {
    points.push_back(std::atoll(only));
  } else if (LongForm()) {
    // ONESTORE_CRASH_STRIDE=s with ONESTORE_CRASH_OFFSET=o: the points k with
    // k % s == o alone, so that a long run can be split into s passes, each
    // spread over the whole workload (every point once all s have run).
    int64_t stride = 1, offset = 0;
    if (const char* v = std::getenv("ONESTORE_CRASH_STRIDE")) stride = std::max<int64_t>(1, std::atoll(v));
    if (const char* v = std::getenv("ONESTORE_CRASH_OFFSET")) offset = std::atoll(v) % stride;
    for (int64_t k = 1; k <= n; ++k)
      if (k % stride == offset) points.push_back(k);
  } else {
    std::mt19937_64 rng(20261201 + GetParam());
    std::set<int64_t> chosen;
    while (static_cast<int64_t>(chosen.size()) < std::min<int64_t>(n, 10))
      chosen.insert(1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(n)));
    points.assign(chosen.begin(), chosen.end());
  }

  // One run of the workload, forked at each crash point: the child crashes
  // there (that call and every later one fail, so nothing after it reaches
  // the files), checks what the files hold under each damage seed and reports
  // back; the parent waits for it and goes on with the calls. Each crash
  // point costs the check alone, not a run of the workload up to it.
  Failures failures;
  std::set<std::pair<size_t, int>> seen;
  int64_t cases = 0, distinct = 0, max_lost = 0, unsynced_max = 0, done = 0;
  MemFileSystem mem;
  FaultFileSystem fault(&mem);
  RegisterVfs(&fault);
  size_t next = 0;
  int64_t crashed_at = 0;  // in a child: its crash point
  int report_fd = -1;      // in a child: where its PointResult goes
  fault.BeforeCall([&](int64_t call) {
    if (crashed_at != 0 || next >= points.size() || points[next] != call) return;
    ++next;
    std::fflush(stdout);
    std::fflush(stderr);
    int fds[2];
    if (pipe(fds) != 0) {
      failures.Add("crash at call " + std::to_string(call) + ": pipe failed");
      return;
    }
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      report_fd = fds[1];
      crashed_at = call;
      fault.CrashAt(0);  // this call and every later one
      return;
    }
    close(fds[1]);
    const std::string text = pid > 0 ? ReadAll(fds[0]) : "";
    close(fds[0]);
    int status = 0;
    if (pid > 0) waitpid(pid, &status, 0);
    PointResult r = PointResult::Decode(text);
    const std::string at = "crash at call " + std::to_string(call) + " (" +
                           IoCallName(traced.calls[static_cast<size_t>(call - 1)]) + ")";
    if (pid < 0 || !r.complete || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      failures.Add(at + ": the checking process " +
                   (pid < 0 ? std::string("could not start")
                            : WIFSIGNALED(status) ? "died of signal " + std::to_string(WTERMSIG(status))
                                                  : "exited with " + std::to_string(WEXITSTATUS(status))));
    }
    for (const auto& c : r.checked) seen.insert(c);
    for (const std::string& f : r.failures) failures.Add(at + ", " + f);
    cases += r.cases;
    distinct += r.distinct;
    max_lost = std::max(max_lost, r.max_lost);
    unsynced_max = std::max(unsynced_max, r.unsynced);
    // Progress with the figures so far, so that a long run stopped early
    // still reports what it covered.
    if (++done % 50 == 0) {
      std::fprintf(stderr,
                   "crash points %s: %lld of %zu points done (up to call %lld): %lld cases, %lld "
                   "distinct states, %lld failures, at most %lld acknowledged commits lost\n",
                   mode.name, static_cast<long long>(done), points.size(),
                   static_cast<long long>(call), static_cast<long long>(cases),
                   static_cast<long long>(distinct), static_cast<long long>(failures.count),
                   static_cast<long long>(max_lost));
    }
  });
  Outcome run = RunWorkload(mode, steps);
  const Status result = run.failure;
  run.store.reset();  // the final close: its calls are crash points too (in a child: reaches nothing)
  if (crashed_at != 0) {
    // The child: the process is gone at `crashed_at`; what did it leave?
    fault.BeforeCall(nullptr);
    PointResult r;
    r.unsynced = mem.unsynced();
    for (int seed = 0; seed < seeds; ++seed) {
      ++r.cases;
      const auto damage = static_cast<MemFileSystem::Damage>(seed % 4);
      MemFileSystem after;
      mem.CopyTo(&after);
      const std::string damaged =
          after.Crash(damage, static_cast<uint64_t>(crashed_at) * 100 + static_cast<uint64_t>(seed));
      const std::pair<size_t, int> state{HashFiles(after), run.acked};
      if (seen.count(state) != 0) continue;
      bool fresh = true;
      for (const auto& c : r.checked) fresh = fresh && c != state;
      if (!fresh) continue;
      r.checked.push_back(state);
      ++r.distinct;
      RegisterVfs(&after);
      int held = 0;
      std::string why =
          CheckReopened(mode, traced.ref.get(), mode.full ? run.acked : 0, run.attempted, &held);
      if (!why.empty()) {
        r.failures.push_back("damage " + std::to_string(seed % 4) + ", seed " + std::to_string(seed) +
                             ", " + std::to_string(run.acked) + " acknowledged: " + why + " [" +
                             damaged + "]");
      } else {
        r.max_lost = std::max<int64_t>(r.max_lost, run.acked - held);
      }
    }
    const std::string out = r.Encode();
    size_t at = 0;
    while (at < out.size()) {
      ssize_t w = write(report_fd, out.data() + at, out.size() - at);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;
      at += static_cast<size_t>(w);
    }
    _exit(0);
  }
  fault.BeforeCall(nullptr);
  RegisterVfs(PosixFileSystem());
  EXPECT_TRUE(result.ok()) << result.ToString();
  EXPECT_EQ(done, static_cast<int64_t>(points.size())) << "crash points reached";
  std::printf(
      "crash points %s: %lld crash points x %d seeds = %lld cases (%lld distinct states; "
      "workload %lld I/O calls, up to %lld unsynced writes at a crash), %lld failures, "
      "at most %lld acknowledged commits lost\n",
      mode.name, static_cast<long long>(points.size()), seeds, static_cast<long long>(cases),
      static_cast<long long>(distinct), static_cast<long long>(n),
      static_cast<long long>(unsynced_max), static_cast<long long>(failures.count),
      static_cast<long long>(max_lost));
  EXPECT_EQ(failures.count, 0) << failures.Text();
  if (mode.full) {
    EXPECT_EQ(max_lost, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, CrashAtEveryIoCall, testing::Range(0, kModeCount),
                         [](const auto& info) { return std::string(kModes[info.param].name); });

// --- 2. faults at and after COMMIT's sync ------------------------------------------

// The calls of commit step `step` from COMMIT's first sync on (with
// relaxed WAL, which does not sync at a commit: from its last write, the
// WAL frames written at COMMIT), as indexes into traced.calls.
std::vector<int64_t> CommitPhaseCalls(const Traced& traced, size_t step, size_t steps) {
  const int64_t begin = traced.step_start[step];
  const int64_t end = step + 1 < steps ? traced.step_start[step + 1] : traced.end_of_steps;
  int64_t from = -1;
  for (int64_t i = begin; i < end && from < 0; ++i) {
    if (traced.calls[static_cast<size_t>(i)] == IoCall::kSync) from = i;
  }
  for (int64_t i = end - 1; i >= begin && from < 0; --i) {
    if (traced.calls[static_cast<size_t>(i)] == IoCall::kWrite) from = i;
  }
  std::vector<int64_t> out;
  for (int64_t i = from < 0 ? end : from; i < end; ++i) out.push_back(i);
  return out;
}

// The occurrence (1 = first) of the call at index i among the calls of its kind.
int64_t OccurrenceOf(const Traced& traced, int64_t i) {
  int64_t n = 0;
  for (int64_t j = 0; j <= i; ++j) n += traced.calls[static_cast<size_t>(j)] == traced.calls[static_cast<size_t>(i)];
  return n;
}

class CommitFaults : public testing::TestWithParam<int> {};

// Each call of each commit from COMMIT's sync on is failed once, and failed
// for good (sticky); then the files are reopened as they are, and after a
// power cut that drops every unsynced write.
TEST_P(CommitFaults, AFaultAtOrAfterCommitsSyncIsStorageFailedStopsTheStoreAndLeavesAllOrNone) {
  const Mode& mode = kModes[GetParam()];
  const std::vector<Step> steps = Workload();
  Traced traced = TraceWorkload(mode, steps);
  Failures failures;
  int64_t cases = 0, absorbed = 0, before_commit = 0;
  std::map<std::string, int64_t> by_kind;
  int commit = -1;
  for (size_t step = 0; step < steps.size(); ++step) {
    if (steps[step].reopen) continue;
    ++commit;
    // The short form: every sixth commit (the big one, 12, included).
    if (!LongForm() && commit % 6 != 0) continue;
    std::vector<int64_t> phase = CommitPhaseCalls(traced, step, steps.size());
    if (phase.empty()) {
      failures.Add("commit " + std::to_string(commit) + ": no I/O call at its COMMIT");
      continue;
    }
    if (!LongForm() && phase.size() > 6) {  // the first calls and the last
      std::vector<int64_t> some(phase.begin(), phase.begin() + 4);
      some.push_back(phase[phase.size() - 2]);
      some.push_back(phase.back());
      phase = some;
    }
    for (int64_t call : phase) {
      const IoCall kind = traced.calls[static_cast<size_t>(call)];
      for (bool sticky : {false, true}) {
        for (bool crash : {false, true}) {
          ++cases;
          ++by_kind[IoCallName(kind)];
          const std::string what = "commit " + std::to_string(commit) + ", " + IoCallName(kind) +
                                   " call " + std::to_string(call + 1) +
                                   (sticky ? " (sticky)" : "") + (crash ? ", then a power cut" : "");
          MemFileSystem mem;
          FaultFileSystem fault(&mem);
          RegisterVfs(&fault);
          fault.FailCall(kind, OccurrenceOf(traced, call), sticky);
          Outcome run = RunWorkload(mode, steps);
          if (run.failure.ok() || run.acked != commit) {
            // The fault came after the commit was durable (a checkpoint after
            // it, or the release of the lock): the commit is acknowledged.
            if (run.acked <= commit) {
              failures.Add(what + ": the workload stopped elsewhere: " + run.failure.ToString());
              continue;
            }
            ++absorbed;
          } else if (run.failure.message().find("COMMIT failed") == std::string::npos) {
            // A failure before COMMIT (a sync of pages a big transaction
            // spills to the journal): that transaction is rolled back and
            // the store goes on.
            ++before_commit;
            if (run.failure.code() != Code::kStorageFailed)
              failures.Add(what + ": " + run.failure.ToString() + " is not storage_failed");
            std::string row;
            Status later = run.store->Get("t/kv", R"(["k0"])", &row);
            // (A sticky fault may fail the read too: rolling the journal
            // back needs the device.)
            if (!later.ok() && (!sticky || later.code() != Code::kStorageFailed))
              failures.Add(what + ": a read after it answered " + later.ToString());
          } else {
            if (run.failure.code() != Code::kStorageFailed)
              failures.Add(what + ": " + run.failure.ToString() + " is not storage_failed");
            std::string row, result;
            Status later = run.store->Get("t/kv", R"(["k0"])", &row);
            if (later.code() != Code::kStorageFailed)
              failures.Add(what + ": a read after it answered " + later.ToString());
            later = run.store->Commit(R"([{"op":"delete","table":"t/kv","key":["k0"]}])",
                                      R"({"owner":"t"})", &result);
            if (later.code() != Code::kStorageFailed ||
                later.message().find("stopped") == std::string::npos)
              failures.Add(what + ": a commit after it answered " + later.ToString());
          }
          run.store.reset();
          fault.Heal();
          if (crash) mem.DropUnsyncedWrites();
          RegisterVfs(&mem);
          int held = 0;
          const bool may_lose = crash && !mode.full;
          std::string why =
              CheckReopened(mode, traced.ref.get(), may_lose ? 0 : run.acked, run.attempted, &held);
          if (!why.empty()) failures.Add(what + ": " + why);
        }
      }
    }
  }
  RegisterVfs(PosixFileSystem());
  std::string kinds;
  for (const auto& [k, n] : by_kind) kinds += " " + k + " " + std::to_string(n);
  std::printf(
      "commit faults %s: %lld cases (%s), %lld before COMMIT (a spill), %lld after the commit "
      "was durable, %lld failures\n",
      mode.name, static_cast<long long>(cases), kinds.c_str() + 1,
      static_cast<long long>(before_commit), static_cast<long long>(absorbed),
      static_cast<long long>(failures.count));
  EXPECT_EQ(failures.count, 0) << failures.Text();
}

INSTANTIATE_TEST_SUITE_P(Modes, CommitFaults, testing::Range(0, kModeCount),
                         [](const auto& info) { return std::string(kModes[info.param].name); });

// --- every kind of call failed ----------------------------------------------------

class EveryCallKind : public testing::TestWithParam<int> {};

// Each call of each kind the workload makes is failed once, and for good
// (sticky); the run stops at its first failure, which must be
// storage_failed; the healed files then reopen
// with every acknowledged commit (no power cut: nothing is lost, even
// relaxed), none partial, and pass integrity_check.
TEST_P(EveryCallKind, AFailedCallOfAnyKindIsStorageFailedAndCorruptsNothing) {
  const Mode& mode = kModes[GetParam()];
  const std::vector<Step> steps = Workload();
  Traced traced = TraceWorkload(mode, steps);
  Failures failures;
  int64_t cases = 0, absorbed = 0;
  std::string kinds;
  for (int k = 0; k < kIoCallKinds; ++k) {
    const IoCall kind = static_cast<IoCall>(k);
    int64_t total = 0;
    for (IoCall c : traced.calls) total += c == kind;
    kinds += std::string(" ") + IoCallName(kind) + " " + std::to_string(total);
    std::vector<int64_t> occurrences;
    const int64_t step = LongForm() || total <= 2 ? 1 : total / 2;
    for (int64_t n = 1; n <= total; n += step) occurrences.push_back(n);
    for (int64_t n : occurrences) {
      for (bool sticky : {false, true}) {
        ++cases;
        const std::string what = std::string(IoCallName(kind)) + " call " + std::to_string(n) +
                                 " of " + std::to_string(total) + (sticky ? " (sticky)" : "");
        MemFileSystem mem;
        FaultFileSystem fault(&mem);
        RegisterVfs(&fault);
        fault.FailCall(kind, n, sticky);
        Outcome run = RunWorkload(mode, steps);
        if (run.failure.ok()) {
          ++absorbed;  // SQLite went on without it (a failed close, say)
        } else if (run.failure.code() != Code::kStorageFailed) {
          failures.Add(what + ": " + run.failure.ToString());
        }
        run.store.reset();
        fault.Heal();
        RegisterVfs(&mem);
        int held = 0;
        std::string why = CheckReopened(mode, traced.ref.get(), run.acked, run.attempted, &held);
        if (!why.empty()) failures.Add(what + ": " + why);
      }
    }
  }
  RegisterVfs(PosixFileSystem());
  std::printf("call faults %s: %lld cases (calls in the workload:%s), %lld absorbed, %lld failures\n",
              mode.name, static_cast<long long>(cases), kinds.c_str(),
              static_cast<long long>(absorbed), static_cast<long long>(failures.count));
  EXPECT_EQ(failures.count, 0) << failures.Text();
}

INSTANTIATE_TEST_SUITE_P(Modes, EveryCallKind, testing::Range(0, kModeCount),
                         [](const auto& info) { return std::string(kModes[info.param].name); });

class RecoveryFaults : public testing::TestWithParam<int> {};

// The store is cut off in the middle of the big transaction's COMMIT (a hot
// rollback journal, or a WAL with frames to recover), and each call of the
// reopen that recovers it is failed once, and for good (sticky): the reopen
// is storage_failed or succeeds, and a later reopen finds the files intact
// with all of that commit or none of it. (This is where SQLite asks
// xCheckReservedLock, and deletes or truncates a hot journal.)
TEST_P(RecoveryFaults, AFaultWhileRecoveringACrashIsStorageFailedAndCorruptsNothing) {
  const Mode& mode = kModes[GetParam()];
  const std::vector<Step> steps = Workload();
  Traced traced = TraceWorkload(mode, steps);
  // The big transaction: the step with the most calls; cut off a few calls
  // after its COMMIT's first sync.
  size_t big = 0;
  int64_t most = -1;
  for (size_t i = 0; i + 1 < steps.size(); ++i) {
    const int64_t n = traced.step_start[i + 1] - traced.step_start[i];
    if (n > most) {
      most = n;
      big = i;
    }
  }
  std::vector<int64_t> phase = CommitPhaseCalls(traced, big, steps.size());
  ASSERT_FALSE(phase.empty());
  const int64_t cut = phase[std::min<size_t>(phase.size() - 1, 3)];
  MemFileSystem crashed;
  Outcome run;
  {
    FaultFileSystem fault(&crashed);
    RegisterVfs(&fault);
    fault.CrashAt(cut + 1);
    run = RunWorkload(mode, steps);
    run.store.reset();
  }
  crashed.DropUnsyncedWrites();
  // The calls of a reopen (and its close).
  std::vector<IoCall> calls;
  {
    MemFileSystem files;
    crashed.CopyTo(&files);
    FaultFileSystem fault(&files);
    RegisterVfs(&fault);
    fault.Trace(&calls);
    std::unique_ptr<Store> store;
    Status s = Store::Open(OptionsOf(mode), &store);
    ASSERT_TRUE(s.ok()) << s.ToString();
    store.reset();
    fault.Trace(nullptr);
  }
  Failures failures;
  int64_t cases = 0, refused = 0;
  std::map<std::string, int64_t> by_kind;
  std::map<int, int64_t> seen;
  // The short form: about 30 of the reopen's calls, evenly spread.
  const size_t stride = LongForm() || calls.size() <= 30 ? 1 : calls.size() / 30;
  for (size_t i = 0; i < calls.size(); ++i) {
    const IoCall c = calls[i];
    const int64_t n = ++seen[static_cast<int>(c)];
    if (i % stride != 0) continue;
    for (bool sticky : {false, true}) {
      ++cases;
      ++by_kind[IoCallName(c)];
      const std::string what = std::string(IoCallName(c)) + " call " + std::to_string(n) +
                               (sticky ? " (sticky)" : "");
      MemFileSystem files;
      crashed.CopyTo(&files);
      FaultFileSystem fault(&files);
      RegisterVfs(&fault);
      fault.FailCall(c, n, sticky);
      std::unique_ptr<Store> store;
      Status s = Store::Open(OptionsOf(mode), &store);
      if (!s.ok()) {
        ++refused;
        if (s.code() != Code::kStorageFailed) failures.Add(what + ": " + s.ToString());
      }
      store.reset();
      fault.Heal();
      RegisterVfs(&files);
      int held = 0;
      std::string why =
          CheckReopened(mode, traced.ref.get(), mode.full ? run.acked : 0, run.attempted, &held);
      if (!why.empty()) failures.Add(what + ": " + why);
    }
  }
  RegisterVfs(PosixFileSystem());
  std::string kinds;
  for (const auto& [k, n] : by_kind) kinds += " " + k + " " + std::to_string(n);
  std::printf("recovery faults %s: %lld cases (%s), %lld reopens refused, %lld failures\n",
              mode.name, static_cast<long long>(cases), kinds.c_str() + 1,
              static_cast<long long>(refused), static_cast<long long>(failures.count));
  EXPECT_EQ(failures.count, 0) << failures.Text();
}

INSTANTIATE_TEST_SUITE_P(Modes, RecoveryFaults, testing::Range(0, kModeCount),
                         [](const auto& info) { return std::string(kModes[info.param].name); });

// xFullPathname fails only for a path longer than the VFS allows: the
// store's open is storage_failed, naming the path.
TEST(VfsMethodFaults, APathTooLongForFullPathnameIsStorageFailed) {
  MemFileSystem mem;
  RegisterVfs(&mem);
  OpenOptions o;
  o.backend = "sqlite";
  o.path = "/" + std::string(1500, 'p') + ".db";
  std::unique_ptr<Store> store;
  Status s = Store::Open(o, &store);
  EXPECT_EQ(s.code(), Code::kStorageFailed) << s.ToString();
  EXPECT_NE(s.message().find("ppppp"), std::string::npos) << s.message();
  RegisterVfs(PosixFileSystem());
}

}  // namespace
}  // namespace onestore
