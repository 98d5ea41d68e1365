// The embedded SqlConnection (embedded_connection.h).
#include "backends/sqlite/embedded_connection.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <unordered_map>
#include <utility>

#include "backends/sqlite/list_table.h"
#include "backends/sqlite/sqlite_backend.h"
#include "backends/sqlite/vfs.h"
#include "onestore/cold.h"
#include "onestore/heap.h"
#include "sqlite3.h"
#include "writes/sql.h"

namespace onestore {

namespace {

// Cached prepared statements beyond this many are finalized (those not in use).
constexpr size_t kMaxCachedStatements = 256;

// Runs SQL without parameters or results on `db`.
Status ExecOn(sqlite3* db, const std::string& sql);

class EmbeddedConnection : public SqlConnection {
 public:
  explicit EmbeddedConnection(SqliteOptions options) : options_(std::move(options)) {}
  ~EmbeddedConnection() override { Close(); }

  const SqlDialect& dialect() const override { return SqlDialect::Embedded(); }
  Status Open() override;
  Status Run(const std::string& sql, const std::vector<Value>& params, const std::string& what,
             SqlRows* rows, bool count_changes) override;
  Status RunRow(const std::string& head, const std::string& row, std::vector<Value>* params,
                const std::string& what) override;
  Status Flush() override;
  Status Exec(const std::string& sql) override;
  Status Begin() override;
  Status Commit() override;
  void Rollback() override;
  bool InTransaction() const override { return db_ != nullptr && !sqlite3_get_autocommit(db_); }
  Status CopyTo(const std::string& path) override;
  Status Opened() override;
  Status Close() override;

 private:
  struct Cached {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };
  // A statement borrowed from the cache (or owned when the cached one is
  // busy); reset, unbound and given back when it goes out of scope.
  class Borrowed {
   public:
    ~Borrowed() {
      if (stmt == nullptr) return;
      sqlite3_reset(stmt);
      sqlite3_clear_bindings(stmt);
      if (owned) {
        sqlite3_finalize(stmt);
      } else if (in_use != nullptr) {
        *in_use = false;
      }
    }
    sqlite3_stmt* stmt = nullptr;
    bool owned = false;
    bool* in_use = nullptr;
  };

  Status CheckOpen() const {
    if (db_ == nullptr) return Status::Closed("the sqlite store is closed");
    return Status::OK();
  }
  Status Error(int rc, const std::string& what) const;
  Status Prepare(const std::string& sql, Borrowed* stmt);
  Status Bind(sqlite3_stmt* s, int index, const Value& v);
  // Run without flushing the joined rows first (Flush runs them with it),
  // with the `count` values at `params`.
  Status RunNow(const std::string& sql, const Value* params, size_t count, const std::string& what,
                SqlRows* rows, bool count_changes);

  // The puts of a transaction waiting to be joined (RunRow): consecutive
  // rows with the same head, row text and `what`, their values in order.
  // They run as statements of kJoinedRowSizes rows (the largest first,
  // so a transaction of any size prepares at most one statement per size
  // and table) before any other statement, in Flush and in Commit; a
  // rollback drops them.
  struct JoinedRows {
    std::string head;
    std::string row;
    std::string what;
    size_t width = 0;  // values per row
    size_t count = 0;  // rows waiting
    std::vector<Value> params;
    std::string sql;  // Flush's statement text, kept with its room
  };
  JoinedRows joined_;
  SqliteOptions options_;
  sqlite3* db_ = nullptr;
  // In WAL mode by this connection, to be put back in rollback mode at Close
  // (SqliteOptions::plain_when_closed). False when the open failed: a file
  // whose lock is held elsewhere is left alone.
  bool wal_open_ = false;
  // The open's transaction runs without syncs (ConfigureEmbeddedConnection's
  // `unsynced_open`); Opened sets the durability's synchronous.
  bool unsynced_open_ = false;
  std::unordered_map<std::string, Cached> cache_;
};

// The synchronous level of `options`' durability. Relaxed durability is
// NORMAL in WAL mode only (ConfigureEmbeddedConnection says why).
const char* SynchronousPragma(const SqliteOptions& options) {
  return options.durability_full || !options.exclusive ? "PRAGMA synchronous = FULL"
                                                       : "PRAGMA synchronous = NORMAL";
}

// The file system's own message of the last failed file call (the VFS
// keeps it: "ENOSPC: no space left on device, write"), as " (...)" after
// an I/O failure's message; empty for any other failure.
std::string FileSystemReason(int rc) {
  const int primary = rc & 0xFF;
  if (primary != SQLITE_IOERR && primary != SQLITE_CANTOPEN && primary != SQLITE_FULL) return "";
  sqlite3_vfs* vfs = sqlite3_vfs_find(nullptr);
  if (vfs == nullptr || vfs->xGetLastError == nullptr) return "";
  char buf[512] = {0};
  vfs->xGetLastError(vfs, sizeof(buf), buf);
  return buf[0] != '\0' ? std::string(" (") + buf + ")" : std::string();
}

ONESTORE_COLD Status ExecOn(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return Status::OK();
  // A statement's own text says what failed; the file system says why
  // (a full disk's checkpoint at close said only "disk I/O error").
  std::string msg = sql + ": " + (err != nullptr ? err : sqlite3_errstr(rc)) + FileSystemReason(rc);
  sqlite3_free(err);
  const int primary = rc & 0xFF;
  if (primary == SQLITE_CONSTRAINT) return Status::InvalidArgs(msg);
  return Status::StorageFailed(msg);
}

ONESTORE_COLD Status EmbeddedConnection::Error(int rc, const std::string& what) const {
  std::string msg = what + ": ";
  msg += db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  msg += FileSystemReason(rc);
  const int primary = rc & 0xFF;
  if (primary == SQLITE_CONSTRAINT) return Status::InvalidArgs(msg);
  // SQLite could not allocate (a value of hundreds of MB in the wasm heap):
  // the statement failed and its transaction rolls back, the store stays
  // sound. A limit of the platform, as a value too big is.
  if (primary == SQLITE_NOMEM) return Status::Limit(msg);
  if (primary == SQLITE_ERROR && db_ != nullptr &&
      std::string(sqlite3_errmsg(db_)).rfind(kSqlOverflowMessage, 0) == 0) {
    return Status::InvalidArgs(msg);
  }
  return Status::StorageFailed(msg);
}

ONESTORE_COLD Status EmbeddedConnection::Open() {
  if (db_ != nullptr) return Status::InvalidArgs("the sqlite store is already open");
  if (options_.path.empty())
    return Status::InvalidArgs("sqlite: a path is needed (or \":memory:\")");
  int rc = sqlite3_open_v2(options_.path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                           nullptr);
  if (rc != SQLITE_OK) {
    Status s = Error(rc, "opening " + options_.path);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    return Status::StorageFailed(s.message());
  }
  Status s = ConfigureEmbeddedConnection(db_, options_, &unsynced_open_);
  if (!s.ok()) {
    Close();
    // SQLite's first read of the file happens here ("file is not a
    // database"): the message names the file, as the open's own does.
    return Status(s.code(), "opening " + options_.path + ": " + s.message());
  }
  wal_open_ = options_.exclusive && options_.plain_when_closed;
  return s;
}

// The open's transaction has committed: commits sync as the durability says.
ONESTORE_COLD Status EmbeddedConnection::Opened() {
  if (!unsynced_open_) return Status::OK();
  unsynced_open_ = false;
  return ExecOn(db_, SynchronousPragma(options_));
}

ONESTORE_COLD Status EmbeddedConnection::CopyTo(const std::string& path) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  if (InTransaction()) return Status::InvalidArgs("copy to " + path + ": a transaction is open");
  sqlite3* dst = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::string err;
  if (rc == SQLITE_OK) {
    // One step copies every page at once: the source is read at one
    // committed state, and the copy is durable when it is finished.
    sqlite3_backup* b = sqlite3_backup_init(dst, "main", db_, "main");
    if (b == nullptr) {
      rc = sqlite3_errcode(dst);
      err = sqlite3_errmsg(dst);
    } else {
      rc = sqlite3_backup_step(b, -1);
      const int fin = sqlite3_backup_finish(b);
      if (rc == SQLITE_DONE) rc = fin;
      if (rc != SQLITE_OK) err = sqlite3_errstr(rc);
    }
  } else {
    err = dst != nullptr ? sqlite3_errmsg(dst) : sqlite3_errstr(rc);
  }
  sqlite3_close_v2(dst);
  if (rc != SQLITE_OK) return Status::StorageFailed("copy to " + path + ": " + err);
  return Status::OK();
}

Status EmbeddedConnection::Prepare(const std::string& sql, Borrowed* stmt) {
  auto it = cache_.find(sql);
  if (it != cache_.end() && !it->second.in_use) {
    it->second.in_use = true;
    stmt->stmt = it->second.stmt;
    stmt->in_use = &it->second.in_use;
    return Status::OK();
  }
  const bool cache = it == cache_.end();
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                              cache ? SQLITE_PREPARE_PERSISTENT : 0, &s, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(s);
    return Error(rc, "preparing " + sql);
  }
  if (!cache) {  // the cached one is busy (a nested use): this one is private
    stmt->stmt = s;
    stmt->owned = true;
    return Status::OK();
  }
  if (cache_.size() >= kMaxCachedStatements) {
    for (auto c = cache_.begin(); c != cache_.end();) {
      if (c->second.in_use) {
        ++c;
      } else {
        sqlite3_finalize(c->second.stmt);
        c = cache_.erase(c);
      }
    }
  }
  Cached& entry = cache_[sql];  // rehashing keeps element addresses stable
  entry.stmt = s;
  entry.in_use = true;
  stmt->stmt = s;
  stmt->in_use = &entry.in_use;
  return Status::OK();
}

Status EmbeddedConnection::Bind(sqlite3_stmt* s, int index, const Value& v) {
  int rc = SQLITE_OK;
  switch (v.type()) {
    case Type::kNull:
      rc = sqlite3_bind_null(s, index);
      break;
    case Type::kBool:
      rc = sqlite3_bind_int64(s, index, v.bool_value() ? 1 : 0);
      break;
    case Type::kInt:
      rc = sqlite3_bind_int64(s, index, v.int_value());
      break;
    case Type::kNum:
      rc = sqlite3_bind_double(s, index, v.num_value());
      break;
    case Type::kStr:
    case Type::kJson:
      // Explicit length: the bytes as they are; SQLite compares TEXT with
      // memcmp (BINARY). The caller's params outlive the statement's use.
      rc = sqlite3_bind_text(s, index, v.text().data(), static_cast<int>(v.text().size()),
                             SQLITE_STATIC);
      break;
    case Type::kVector:
      // A BLOB of the little-endian float32 (src/values/vector.h).
      rc = sqlite3_bind_blob(s, index, v.text().data(), static_cast<int>(v.text().size()),
                             SQLITE_STATIC);
      break;
  }
  if (rc != SQLITE_OK) return Error(rc, "binding parameter " + std::to_string(index));
  return Status::OK();
}

// The sizes of a joined statement, in rows: a row count is run as a sum of
// them, largest first, so that few statement texts are prepared and cached.
// The values of one statement stay within SQLite's 32766 (and within 999,
// its limit before 3.32, for a table up to 15 columns wide at 64 rows).
constexpr size_t kJoinedRowSizes[] = {64, 16, 4, 1};
constexpr size_t kMaxJoinedValues = 999;

Status EmbeddedConnection::RunRow(const std::string& head, const std::string& row,
                                  std::vector<Value>* values, const std::string& what) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  std::vector<Value>& params = *values;
  if (!InTransaction() || params.empty() || params.size() > kMaxJoinedValues) {
    ONESTORE_RETURN_IF_ERROR(Flush());
    return RunNow(head + row, params.data(), params.size(), what, nullptr, false);
  }
  JoinedRows& j = joined_;
  if (j.count > 0 && (j.width != params.size() || j.head != head || j.row != row || j.what != what)) {
    ONESTORE_RETURN_IF_ERROR(Flush());
  }
  if (j.count == 0) {
    j.head = head;
    j.row = row;
    j.what = what;
    j.width = params.size();
    j.params.clear();
  }
  for (Value& v : params) j.params.push_back(std::move(v));
  ++j.count;
  // A full statement of the largest size runs at once (the values waiting
  // stay few).
  const size_t most = std::min(kJoinedRowSizes[0], kMaxJoinedValues / j.width);
  if (j.count >= most) return Flush();
  return Status::OK();
}

Status EmbeddedConnection::Flush() {
  JoinedRows& j = joined_;
  Status s;
  size_t done = 0;  // rows run
  std::string& sql = j.sql;
  for (size_t size : kJoinedRowSizes) {
    if (size * j.width > kMaxJoinedValues) continue;
    if (s.ok() && j.count - done >= size) {
      // "head row, row, ..." of `size` rows.
      sql = j.head;
      for (size_t i = 0; i < size; ++i) {
        if (i > 0) sql.push_back(',');
        sql += j.row;
      }
    }
    while (s.ok() && j.count - done >= size) {
      s = RunNow(sql, j.params.data() + done * j.width, size * j.width, j.what, nullptr, false);
      done += size;
    }
  }
  // Nothing after a failing statement runs: the rest is dropped with it
  // (the transaction is rolled back).
  j.count = 0;
  j.params.clear();
  return s;
}

Status EmbeddedConnection::Run(const std::string& sql, const std::vector<Value>& params,
                               const std::string& what, SqlRows* rows, bool count_changes) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  // Still too many after SqlBuilder::InlineSmallParams (long strings).
  if (params.size() > SqlDialect::Embedded().max_params) {
    return Status::Limit(what + ": the statement binds " + std::to_string(params.size()) +
                         " values, above SQLite's limit of " +
                         std::to_string(SqlDialect::Embedded().max_params) +
                         " per statement (values of 256 bytes or less are written into its text)");
  }
  if (joined_.count > 0) ONESTORE_RETURN_IF_ERROR(Flush());
  return RunNow(sql, params.data(), params.size(), what, rows, count_changes);
}

Status EmbeddedConnection::RunNow(const std::string& sql, const Value* params, size_t count,
                                  const std::string& what, SqlRows* rows, bool count_changes) {
  Borrowed b;
  ONESTORE_RETURN_IF_ERROR(Prepare(sql, &b));
  for (size_t i = 0; i < count; ++i) {
    ONESTORE_RETURN_IF_ERROR(Bind(b.stmt, static_cast<int>(i + 1), params[i]));
  }
  const int n = sqlite3_column_count(b.stmt);
  if (rows != nullptr) {
    rows->columns = static_cast<size_t>(n);
    rows->cells.clear();
    rows->changes = 0;
    rows->cut = false;
  }
  size_t used = 0;
  for (;;) {
    const int rc = sqlite3_step(b.stmt);
    if (rc == SQLITE_DONE) break;
    // sqlite3_reset returns the same error; the message is on the connection.
    if (rc != SQLITE_ROW) return Error(rc, what);
    if (rows == nullptr) continue;
    if (rows->max_bytes != 0 && used >= rows->max_bytes) {
      rows->cut = true;
      break;
    }
    for (int c = 0; c < n; ++c) {
      switch (sqlite3_column_type(b.stmt, c)) {
        case SQLITE_NULL:
          rows->cells.emplace_back();
          break;
        case SQLITE_INTEGER:
          rows->cells.push_back(Value::Int(sqlite3_column_int64(b.stmt, c)));
          break;
        case SQLITE_FLOAT:
          rows->cells.push_back(Value::Num(sqlite3_column_double(b.stmt, c)));
          break;
        case SQLITE_BLOB: {  // a vector column's bytes
          const void* blob = sqlite3_column_blob(b.stmt, c);
          const size_t size = static_cast<size_t>(sqlite3_column_bytes(b.stmt, c));
          // A value above kReadBytes asks the heap before it is copied (SQLite
          // has it in its own buffer already): the copy and the answer's text.
          if (size > kReadBytes) ONESTORE_RETURN_IF_ERROR(ReadRoom(size, 3.0, what));
          used += size;
          rows->cells.push_back(Value::Vector(
              size == 0 ? std::string() : std::string(static_cast<const char*>(blob), size)));
          break;
        }
        default: {
          const unsigned char* text = sqlite3_column_text(b.stmt, c);
          const size_t size = static_cast<size_t>(sqlite3_column_bytes(b.stmt, c));
          if (size > kReadBytes) ONESTORE_RETURN_IF_ERROR(ReadRoom(size, 3.0, what));
          used += size;
          rows->cells.push_back(
              Value::Str(std::string(reinterpret_cast<const char*>(text), size)));
          break;
        }
      }
    }
  }
  if (rows != nullptr && count_changes) rows->changes = sqlite3_changes64(db_);
  return Status::OK();
}

ONESTORE_COLD Status EmbeddedConnection::Exec(const std::string& sql) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  if (joined_.count > 0) ONESTORE_RETURN_IF_ERROR(Flush());
  return ExecOn(db_, sql);
}

Status EmbeddedConnection::Begin() {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  if (!sqlite3_get_autocommit(db_))
    return Status::InvalidArgs("sqlite: a transaction is already open");
  // Prepared once and cached, as COMMIT (sqlite3_exec parsed each anew:
  // about 5% of a one-put commit's instructions).
  Status s = RunNow("BEGIN IMMEDIATE", nullptr, 0, "BEGIN IMMEDIATE", nullptr, false);
  if (!s.ok()) return Status::StorageFailed(s.message());
  return Status::OK();
}

Status EmbeddedConnection::Commit() {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  // The joined rows' failure is theirs, named by their `what`: nothing was
  // committed.
  if (joined_.count > 0) ONESTORE_RETURN_IF_ERROR(Flush());
  Status s = RunNow("COMMIT", nullptr, 0, "COMMIT", nullptr, false);
  if (!s.ok()) return Status::StorageFailed(s.message());
  return Status::OK();
}

void EmbeddedConnection::Rollback() {
  joined_.count = 0;
  joined_.params.clear();
  if (db_ == nullptr || sqlite3_get_autocommit(db_)) return;
  sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

ONESTORE_COLD Status EmbeddedConnection::Close() {
  if (db_ == nullptr) return Status::OK();
  Rollback();
  for (auto& [sql, c] : cache_) sqlite3_finalize(c.stmt);
  cache_.clear();
  Status checkpoint;
  // An open that failed after its transaction committed still checkpoints
  // at the durability's syncs, never unsynced.
  if (unsynced_open_) Opened();
  if (wal_open_) {
    // Checkpoints the WAL into the file, synced as the durability syncs a
    // checkpoint, then deletes the WAL and marks the file as a
    // rollback-journal database again (SqliteOptions::plain_when_closed)
    // without syncs: after the checkpoint that switch rewrites only the
    // header's mode bytes (18, 19) and its counters, and a power cut that
    // loses it leaves a file in WAL mode with an empty or missing WAL,
    // which opens as it is (docs/performance.md, "Issue 13, the open and
    // close of a Node store file"). journal_mode=OFF rather than DELETE: the
    // switch's one write of page 1 needs no journal file (created, written
    // and deleted unsynced, it protected nothing: "Issue 13, an open that
    // syncs nothing"), and the file format is the same. If the checkpoint
    // fails (a full disk), nothing after it runs and the WAL stays: the next
    // open recovers it, and the close says so.
    checkpoint = ExecOn(db_, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA synchronous = OFF; "
                             "PRAGMA journal_mode = OFF");
    wal_open_ = false;
  }
  // SQLite ignores a failure to release the file's lock or to close a file
  // (xUnlock, xClose) while closing; the VFS keeps the first one for us.
  const int rc = sqlite3_close_v2(db_);
  db_ = nullptr;
  Status released = TakeReleaseFailure(options_.path);
  if (rc != SQLITE_OK && released.ok()) {
    released = Status::StorageFailed("closing " + options_.path + ": SQLite answered " +
                                     sqlite3_errstr(rc));
  }
  if (released.ok()) released = checkpoint;  // its message names the checkpoint
  if (released.ok()) return released;
  return Status::StorageFailed("the store " + options_.path +
                               " is closed and every commit it acknowledged is kept, but "
                               "releasing it failed: " + released.message());
}

// SQLite's busy handler for the lock between processes: another try every
// kBusyStepMs, until the lock timeout (passed as the handler's argument) has
// passed by the clock since the first refusal. SQLite's own handler backs
// off to 100 ms between tries, which made every hand-over of the lock
// (FileSystem::Lock: a process that announced it waits goes first, and the
// others wait for its next try) cost up to 100 ms; with a short step it
// costs one step. The deadline is the clock's, not a count of the pauses:
// a try (the lock file read, its holder checked) takes time of its own, and
// on a loaded machine counting pauses alone waited 1.3 to 3.7 times the
// timeout. One wait at a time: a busy handler runs inside one SQLite call,
// and a store's calls are serialized.
constexpr int kBusyStepMs = 2;

int RetryLock(void* timeout_ms, int tries) {
  using Clock = std::chrono::steady_clock;
  static Clock::time_point deadline;
  const Clock::time_point now = Clock::now();
  if (tries == 0) deadline = now + std::chrono::milliseconds(reinterpret_cast<intptr_t>(timeout_ms));
  if (now >= deadline) return 0;
  sqlite3_sleep(kBusyStepMs);
  return 1;
}

}  // namespace

ONESTORE_COLD Status ConfigureEmbeddedConnection(sqlite3* db, const SqliteOptions& options,
                                                bool* unsynced_open) {
  bool unsynced = false;
  sqlite3_extended_result_codes(db, 1);
  // Another process holding the file's lock (its transaction under way) is
  // waited for this long before a transaction gives up with "database is
  // locked". A commit's fsyncs can take seconds on a loaded disk.
  sqlite3_busy_handler(db, RetryLock,
                       reinterpret_cast<void*>(static_cast<intptr_t>(options.lock_timeout_ms)));
  Status s = RegisterSqlFunctions(db);
  if (s.ok()) s = RegisterListTable(db);
  if (s.ok()) s = RegisterEmptyQuickCheck(db);
  if (s.ok() && options.exclusive) {
    // One owner for life (SqliteOptions::exclusive: the opfs backend, and a
    // Node store file): the lock is kept, so a WAL needs no shared memory.
    // EXCLUSIVE must come before WAL; temp_store=MEMORY so that no temporary
    // file is needed. The pages read stay valid from one transaction to the
    // next, so the page cache is 16 MiB (cache_size in KiB) instead of
    // SQLite's 2 MB (kept with small_page_cache): the pages a get of a
    // 100k-row table touches stay in memory (docs/performance.md, "Issue 13,
    // the page cache"). It fills only as pages are read. Two whole literals
    // rather than one built at run time: the download has no bytes to spare.
    s = ExecOn(db, options.small_page_cache
                       ? "PRAGMA locking_mode = EXCLUSIVE; PRAGMA temp_store = MEMORY"
                       : "PRAGMA locking_mode = EXCLUSIVE; PRAGMA temp_store = MEMORY; "
                         "PRAGMA cache_size = -16384");
    std::string pages, mode;  // SQLite answers with text
    auto keep = [](void* out, int, char** values, char**) {
      *static_cast<std::string*>(out) = values[0] != nullptr ? values[0] : "";
      return 0;
    };
    // A file with pages switches to WAL without syncs (synchronous=OFF until
    // the durability's, set below): the switch rewrites only the header's
    // mode bytes and counters, and a power cut that loses it leaves the file
    // in rollback mode beside its WAL, which SQLite then opens. An empty
    // file (a new store) keeps the synced switch, which writes its page 1:
    // SQLite deletes a WAL found beside an empty file (docs/performance.md,
    // "Issue 13, the open and close of a Node store file").
    int rc = s.ok() ? sqlite3_exec(db, "PRAGMA page_count", keep, &pages, nullptr) : 0;
    if (s.ok() && rc == SQLITE_OK && pages != "0") {
      s = ExecOn(db, "PRAGMA synchronous = OFF");
      // With no WAL beside the file, the switch starts a new one, and the
      // open's transaction (the epoch bump) stays unsynced too: the first
      // commit's sync (full) or the close's checkpoint syncs that WAL, its
      // header and the transaction at once, and its folder. A power cut
      // before then loses only the epoch bump, which fences live owners
      // only (they read it through the page cache), and head and format
      // notes that the next open writes again. A WAL found at open (a
      // crash's) keeps SQLite's syncs: its header may be rewritten over
      // old frames. docs/performance.md, "Issue 13, an open that syncs
      // nothing".
      sqlite3_vfs* vfs = sqlite3_vfs_find(nullptr);
      const std::string wal_path = options.path + "-wal";
      int wal = 1;  // unknown: as if there were one
      if (vfs != nullptr &&
          vfs->xAccess(vfs, wal_path.c_str(), SQLITE_ACCESS_EXISTS, &wal) == SQLITE_OK) {
        unsynced = wal == 0;
      }
    }
    // The unsynced switch of a file in rollback mode writes its page 1 with
    // no journal file (journal_mode=OFF first), as the close's switch back
    // does. A file already marked WAL (a close's switch lost, an opfs
    // store) is in WAL mode from its first read: no switch.
    if (s.ok() && unsynced) {
      rc = sqlite3_exec(db, "PRAGMA journal_mode", keep, &mode, nullptr);
      if (rc == SQLITE_OK && mode != "wal") s = ExecOn(db, "PRAGMA journal_mode = OFF");
    }
    rc = s.ok() ? sqlite3_exec(db, "PRAGMA journal_mode = WAL", keep, &mode, nullptr) : 0;
    if (s.ok() && (rc != SQLITE_OK || mode != "wal"))
      s = Status::StorageFailed("PRAGMA journal_mode = WAL on " + options.path + ": the mode is \"" +
                                mode + "\" (" + sqlite3_errmsg(db) + ")");
  } else {
    // A rollback journal, truncated rather than deleted after each commit
    // (no file is created and deleted per commit). NORMAL locking so that
    // every transaction re-reads the header and sees another owner's epoch.
    if (s.ok()) s = ExecOn(db, "PRAGMA journal_mode = TRUNCATE");
    if (s.ok()) s = ExecOn(db, "PRAGMA locking_mode = NORMAL");
  }
  // Relaxed durability is NORMAL in WAL mode only: a commit is not synced,
  // a checkpoint is, and a power cut loses the newest commits, never
  // corrupts. With a rollback journal NORMAL writes a journal's record count
  // and its records with one sync, so a power cut that keeps the count and
  // loses records can play zeroed pages back over the database (SQLite
  // documents the risk; tests/cpp/crash_points_test.cc hit it): a rollback
  // journal always runs FULL.
  // An unsynced open keeps OFF until SqlConnection::Opened.
  if (s.ok() && !unsynced) s = ExecOn(db, SynchronousPragma(options));
  if (s.ok()) *unsynced_open = unsynced;
  return s;
}

std::unique_ptr<SqlConnection> NewEmbeddedConnection(const SqliteOptions& options) {
  return std::make_unique<EmbeddedConnection>(options);
}

ONESTORE_COLD Status PeekSqliteStore(const std::string& path, bool private_copy, StorePeek* out) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db,
                           private_copy ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY, nullptr);
  Status st;
  if (rc == SQLITE_OK && private_copy) {
    rc = sqlite3_exec(db, "PRAGMA locking_mode=EXCLUSIVE", nullptr, nullptr, nullptr);
  }
  if (rc != SQLITE_OK) {
    st = Status::StorageFailed(path + ": " + (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
  } else {
    sqlite3_busy_timeout(db, 2000);
    sqlite3_stmt* stmt = nullptr;
    // The head as head format 2 has it (docs/formats.md): _meta.head may be
    // behind the outbox.
    rc = sqlite3_prepare_v2(db,
                            "SELECT key, value FROM _meta WHERE key IN ('id', 'note:role') "
                            "UNION ALL " ONESTORE_HEAD_SQL,
                            -1, &stmt, nullptr);
    if (rc != SQLITE_OK) {
      const std::string msg = sqlite3_errmsg(db);
      st = msg.rfind("no such table", 0) == 0
               ? Status::NotFound(path +
                                  " is a SQLite database, not a store (no _meta or _outbox)")
               : Status::StorageFailed(path + ": " + msg);
    } else {
      bool has_id = false;
      while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        const std::string key = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
        if (key == "id") {
          const unsigned char* v = sqlite3_column_text(stmt, 1);
          out->id = v != nullptr ? reinterpret_cast<const char*>(v) : "";
          has_id = !out->id.empty();
        } else if (key == "head") {
          out->head = sqlite3_column_int64(stmt, 1);
        } else {
          const unsigned char* v = sqlite3_column_text(stmt, 1);
          out->replica = v != nullptr && std::string(reinterpret_cast<const char*>(v)) == "replica";
        }
      }
      if (rc != SQLITE_DONE) {
        st = Status::StorageFailed(path + ": " + sqlite3_errmsg(db));
      } else if (!has_id) {
        st = Status::NotFound(path + " is a SQLite database, not a store (no id in _meta)");
      }
      sqlite3_finalize(stmt);
    }
  }
  sqlite3_close_v2(db);
  return st;
}

}  // namespace onestore
