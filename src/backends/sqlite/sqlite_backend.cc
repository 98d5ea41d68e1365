// The sqlite backend (sqlite_backend.h).
//
// The file is an ordinary SQLite database that the `sqlite3` command line
// tool can read: a rollback journal (there is no shared memory for WAL), each
// table a STRICT table named "<type>/<name>", system tables _meta, _outbox and
// _tables. One owner: Open bumps the epoch in _meta, and each write
// transaction checks it, so an earlier owner of the same file is fenced.
// NORMAL locking mode makes every transaction re-read the file header, so an
// owner sees a newer epoch written by another.
#include "backends/sqlite/sqlite_backend.h"

#include <map>
#include <unordered_map>
#include <utility>

#include "query/sql.h"
#include "sqlite3.h"
#include "writes/sql.h"

namespace onestore {

namespace {

// Cached prepared statements beyond this many are finalized (those not in use).
constexpr size_t kMaxCachedStatements = 256;

const char* SqlType(Type t) {
  switch (t) {
    case Type::kStr:
      return "TEXT";
    case Type::kInt:
      return "INTEGER";
    case Type::kBool:
      return "INTEGER";
    case Type::kNum:
      return "REAL";
    case Type::kJson:
      return "TEXT";
    case Type::kNull:
      break;
  }
  return "ANY";
}

std::string DescribeKey(const Key& key) {
  std::string out = "[";
  for (size_t i = 0; i < key.size(); ++i) {
    if (i > 0) out += ", ";
    out += key[i].Describe();
  }
  return out + "]";
}

std::string IndexSqlName(const TableSchema& t, const Index& ix) {
  return QuoteIdent(t.name + "/" + ix.name);
}

// Same columns (name, type, nullability) and key: what a table's SQL holds.
bool SameStoredColumns(const TableSchema& a, const TableSchema& b) {
  if (a.columns.size() != b.columns.size() || a.key != b.key) return false;
  for (size_t i = 0; i < a.columns.size(); ++i) {
    const Column& x = a.columns[i];
    const Column& y = b.columns[i];
    if (x.name != y.name || x.type != y.type || x.optional != y.optional) return false;
  }
  return true;
}

class SqliteBackend;

// A prepared statement borrowed from the cache (or owned, when the cached one
// is busy). Resets it and clears its bindings when it goes out of scope.
class Stmt {
 public:
  Stmt() = default;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt() { Release(); }

  sqlite3_stmt* get() const { return stmt_; }

 private:
  friend class SqliteBackend;
  void Release() {
    if (stmt_ == nullptr) return;
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    if (owned_) {
      sqlite3_finalize(stmt_);
    } else if (in_use_ != nullptr) {
      *in_use_ = false;
    }
    stmt_ = nullptr;
    in_use_ = nullptr;
  }

  sqlite3_stmt* stmt_ = nullptr;
  bool owned_ = false;
  bool* in_use_ = nullptr;
  std::vector<Value> params_;  // keeps bound text alive (bound SQLITE_STATIC)
};

class SqliteBackend : public Backend {
 public:
  explicit SqliteBackend(SqliteOptions options) : options_(std::move(options)) {}
  ~SqliteBackend() override { Close(); }

  Status Open(const std::string& new_id, BackendState* state) override;
  Status Begin() override;
  Status Apply(Op* op, const TableSchema* previous) override;
  Status AppendOutbox(int64_t seq, const std::string& record) override;
  Status Commit() override;
  void Rollback() override;

  Status Get(const TableSchema& t, const Key& key, std::optional<Row>* row) override;
  Status Page(const Query& q, const std::vector<Value>* after, int64_t limit,
              std::vector<Row>* rows) override;
  Status Count(const TableSchema& t, const Predicate* where, int64_t* count) override;
  Status MaxIntKey(const TableSchema& t, int64_t* max) override;

  Status ReadOutbox(int64_t after, int64_t limit, std::vector<OutboxEntry>* out) override;
  Status TrimOutbox(int64_t up_to, int64_t* removed) override;

  void Close() override;

 private:
  struct Cached {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };

  Status CheckOpen() const {
    if (db_ == nullptr) return Status::Closed("the sqlite store is closed");
    return Status::OK();
  }
  // A Status for SQLite result `rc` while doing `what`: a constraint or an
  // integer overflow is invalid/args, anything else storage_failed.
  Status Error(int rc, const std::string& what) const;
  // Runs SQL without parameters or results (pragmas, DDL, transactions).
  Status Exec(const std::string& sql);
  // Prepares (or takes from the cache) the statement for `sql`.
  Status Prepare(const std::string& sql, Stmt* stmt);
  // Prepares b's SQL and binds its parameters.
  Status Prepare(SqlBuilder b, Stmt* stmt);
  Status Bind(Stmt* stmt, int index, const Value& v);
  // Steps a statement that returns no rows.
  Status Run(Stmt* stmt, const std::string& what);
  // Steps once: *row is true when a row is ready.
  Status Step(Stmt* stmt, const std::string& what, bool* row);
  void ReadRow(sqlite3_stmt* s, const TableSchema& t, Row* row) const;
  Status ReadMetaInt(const char* key, int64_t* value, bool* found);
  // Sets _meta.key to v (inserting the row if missing).
  Status WriteMeta(const char* key, const Value& v);
  // Checks, inside a transaction, that this backend still owns the store.
  Status CheckEpoch();

  void AppendKeyWhere(const TableSchema& t, const Key& key, SqlBuilder* b) const;
  Status ApplyTable(const TableSchema& t, const TableSchema* previous);
  Status ApplyPut(const Op& op);

  SqliteOptions options_;
  sqlite3* db_ = nullptr;
  int64_t epoch_ = 0;
  std::unordered_map<std::string, Cached> cache_;
};

Status SqliteBackend::Error(int rc, const std::string& what) const {
  std::string msg = what + ": ";
  msg += db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  const int primary = rc & 0xFF;
  if (primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN || primary == SQLITE_FULL) {
    // The VFS keeps the file system's own message.
    sqlite3_vfs* vfs = sqlite3_vfs_find(nullptr);
    if (vfs != nullptr && vfs->xGetLastError != nullptr) {
      char buf[512] = {0};
      vfs->xGetLastError(vfs, sizeof(buf), buf);
      if (buf[0] != '\0') msg += std::string(" (") + buf + ")";
    }
  }
  if (primary == SQLITE_CONSTRAINT) return Status::InvalidArgs(msg);
  if (primary == SQLITE_ERROR && db_ != nullptr &&
      std::string(sqlite3_errmsg(db_)).rfind(kSqlOverflowMessage, 0) == 0) {
    return Status::InvalidArgs(msg);
  }
  return Status::StorageFailed(msg);
}

Status SqliteBackend::Exec(const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err != nullptr ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    Status s = Error(rc, sql);
    return Status(s.code(), sql + ": " + msg);
  }
  return Status::OK();
}

Status SqliteBackend::Prepare(const std::string& sql, Stmt* stmt) {
  stmt->Release();
  auto it = cache_.find(sql);
  if (it != cache_.end() && !it->second.in_use) {
    it->second.in_use = true;
    stmt->stmt_ = it->second.stmt;
    stmt->in_use_ = &it->second.in_use;
    stmt->owned_ = false;
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
    stmt->stmt_ = s;
    stmt->owned_ = true;
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
  stmt->stmt_ = s;
  stmt->in_use_ = &entry.in_use;
  stmt->owned_ = false;
  return Status::OK();
}

Status SqliteBackend::Bind(Stmt* stmt, int index, const Value& v) {
  sqlite3_stmt* s = stmt->stmt_;
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
      // Explicit length: the bytes as they are (a prefix's upper bound may be
      // invalid UTF-8); SQLite compares TEXT with memcmp (BINARY).
      rc = sqlite3_bind_text(s, index, v.text().data(), static_cast<int>(v.text().size()),
                             SQLITE_STATIC);
      break;
  }
  if (rc != SQLITE_OK) return Error(rc, "binding parameter " + std::to_string(index));
  return Status::OK();
}

Status SqliteBackend::Prepare(SqlBuilder b, Stmt* stmt) {
  ONESTORE_RETURN_IF_ERROR(Prepare(b.sql(), stmt));
  // The Stmt owns the values, so SQLITE_STATIC text stays valid until reset.
  stmt->params_ = b.TakeParams();
  for (size_t i = 0; i < stmt->params_.size(); ++i) {
    ONESTORE_RETURN_IF_ERROR(Bind(stmt, static_cast<int>(i + 1), stmt->params_[i]));
  }
  return Status::OK();
}

Status SqliteBackend::Step(Stmt* stmt, const std::string& what, bool* row) {
  int rc = sqlite3_step(stmt->stmt_);
  if (rc == SQLITE_ROW) {
    *row = true;
    return Status::OK();
  }
  *row = false;
  if (rc == SQLITE_DONE) return Status::OK();
  // sqlite3_reset returns the same error; the message is on the connection.
  return Error(rc, what);
}

Status SqliteBackend::Run(Stmt* stmt, const std::string& what) {
  bool row = false;
  ONESTORE_RETURN_IF_ERROR(Step(stmt, what, &row));
  while (row) ONESTORE_RETURN_IF_ERROR(Step(stmt, what, &row));
  return Status::OK();
}

void SqliteBackend::ReadRow(sqlite3_stmt* s, const TableSchema& t, Row* row) const {
  row->clear();
  row->reserve(t.columns.size());
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const int c = static_cast<int>(i);
    if (sqlite3_column_type(s, c) == SQLITE_NULL) {
      row->emplace_back();
      continue;
    }
    switch (t.columns[i].type) {
      case Type::kInt:
        row->push_back(Value::Int(sqlite3_column_int64(s, c)));
        break;
      case Type::kBool:
        row->push_back(Value::Bool(sqlite3_column_int64(s, c) != 0));
        break;
      case Type::kNum:
        row->push_back(Value::Num(sqlite3_column_double(s, c)));
        break;
      case Type::kStr:
      case Type::kJson: {
        const unsigned char* text = sqlite3_column_text(s, c);
        std::string str(reinterpret_cast<const char*>(text),
                        static_cast<size_t>(sqlite3_column_bytes(s, c)));
        row->push_back(t.columns[i].type == Type::kStr ? Value::Str(std::move(str))
                                                       : Value::JsonText(std::move(str)));
        break;
      }
      case Type::kNull:
        row->emplace_back();
        break;
    }
  }
}

Status SqliteBackend::ReadMetaInt(const char* key, int64_t* value, bool* found) {
  Stmt s;
  SqlBuilder b;
  b.Append("SELECT value FROM _meta WHERE key = ").AppendParam(Value::Str(key));
  ONESTORE_RETURN_IF_ERROR(Prepare(std::move(b), &s));
  bool row = false;
  ONESTORE_RETURN_IF_ERROR(Step(&s, std::string("reading _meta.") + key, &row));
  *found = row && sqlite3_column_type(s.get(), 0) != SQLITE_NULL;
  *value = *found ? sqlite3_column_int64(s.get(), 0) : 0;
  return Status::OK();
}

Status SqliteBackend::WriteMeta(const char* key, const Value& v) {
  Stmt w;
  SqlBuilder b;
  b.Append("INSERT OR REPLACE INTO _meta (key, value) VALUES (")
      .AppendParam(Value::Str(key))
      .Append(", ")
      .AppendParam(v)
      .Append(")");
  ONESTORE_RETURN_IF_ERROR(Prepare(std::move(b), &w));
  return Run(&w, std::string("writing _meta.") + key);
}

Status SqliteBackend::CheckEpoch() {
  int64_t epoch = 0;
  bool found = false;
  ONESTORE_RETURN_IF_ERROR(ReadMetaInt("epoch", &epoch, &found));
  if (epoch != epoch_) return Status::Fenced("another owner holds the store");
  return Status::OK();
}

Status SqliteBackend::Open(const std::string& new_id, BackendState* state) {
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
  sqlite3_extended_result_codes(db_, 1);
  // Another process holding the file's lock (its transaction under way) is
  // waited for this long before a transaction gives up with "database is
  // locked". A commit's fsyncs can take seconds on a loaded disk.
  sqlite3_busy_timeout(db_, static_cast<int>(options_.lock_timeout_ms));
  Status s = RegisterSqlFunctions(db_);
  // A rollback journal, truncated rather than deleted after each commit (no
  // file is created and deleted per commit). NORMAL locking so that every
  // transaction re-reads the header and sees another owner's epoch.
  if (s.ok() && options_.exclusive) {
    // One owner for life (SqliteOptions::exclusive): the lock is kept, so a
    // WAL needs no shared memory. EXCLUSIVE must come before WAL.
    s = Exec("PRAGMA locking_mode = EXCLUSIVE; PRAGMA temp_store = MEMORY");
    std::string mode;  // SQLite answers with the mode it is in
    auto keep = [](void* out, int, char** values, char**) {
      *static_cast<std::string*>(out) = values[0] != nullptr ? values[0] : "";
      return 0;
    };
    int rc = s.ok() ? sqlite3_exec(db_, "PRAGMA journal_mode = WAL", keep, &mode, nullptr) : 0;
    if (s.ok() && (rc != SQLITE_OK || mode != "wal"))
      s = Status::StorageFailed("PRAGMA journal_mode = WAL on " + options_.path + ": the mode is \"" +
                                mode + "\" (" + sqlite3_errmsg(db_) + ")");
  } else {
    if (s.ok()) s = Exec("PRAGMA journal_mode = TRUNCATE");
    if (s.ok()) s = Exec("PRAGMA locking_mode = NORMAL");
  }
  if (s.ok())
    s = Exec(options_.durability_full ? "PRAGMA synchronous = FULL"
                                      : "PRAGMA synchronous = NORMAL");
  if (s.ok()) s = Exec("BEGIN IMMEDIATE");
  if (s.ok()) {
    s = Exec(
        "CREATE TABLE IF NOT EXISTS _meta (key TEXT PRIMARY KEY, value ANY) STRICT;"
        "CREATE TABLE IF NOT EXISTS _outbox (seq INTEGER PRIMARY KEY, record TEXT NOT NULL) STRICT;"
        "CREATE TABLE IF NOT EXISTS _tables (name TEXT PRIMARY KEY, record TEXT NOT NULL) STRICT;");
    int64_t epoch = 0, head = 0, unused = 0;
    bool found = false;
    if (s.ok()) s = ReadMetaInt("epoch", &epoch, &found);
    if (s.ok()) {
      epoch_ = epoch + 1;
      s = WriteMeta("epoch", Value::Int(epoch_));
    }
    if (s.ok()) s = ReadMetaInt("head", &head, &found);
    if (s.ok() && !found) s = WriteMeta("head", Value::Int(0));
    if (s.ok()) {
      // The id is text; ReadMetaInt only tells whether it is there.
      s = ReadMetaInt("id", &unused, &found);
    }
    if (s.ok() && !found) s = WriteMeta("id", Value::Str(new_id));
    BackendState st;
    st.head = head;
    if (s.ok()) {
      Stmt r;
      s = Prepare("SELECT value FROM _meta WHERE key = 'id'", &r);
      bool row = false;
      if (s.ok()) s = Step(&r, "reading _meta.id", &row);
      if (s.ok() && row) {
        const unsigned char* text = sqlite3_column_text(r.get(), 0);
        if (text != nullptr)
          st.id.assign(reinterpret_cast<const char*>(text), sqlite3_column_bytes(r.get(), 0));
      }
    }
    if (s.ok()) {
      Stmt r;
      s = Prepare("SELECT name, record FROM _tables ORDER BY name", &r);
      bool row = false;
      if (s.ok()) s = Step(&r, "reading _tables", &row);
      while (s.ok() && row) {
        std::string name(reinterpret_cast<const char*>(sqlite3_column_text(r.get(), 0)),
                         sqlite3_column_bytes(r.get(), 0));
        std::string text(reinterpret_cast<const char*>(sqlite3_column_text(r.get(), 1)),
                         sqlite3_column_bytes(r.get(), 1));
        Json j = Json::parse(text, nullptr, false);
        if (j.is_discarded() || !j.is_object()) {
          s = Status::StorageFailed("the stored record of table \"" + name +
                                    "\" is not a JSON object");
          break;
        }
        st.tables.push_back(std::move(j));
        s = Step(&r, "reading _tables", &row);
      }
    }
    if (s.ok()) s = Exec("COMMIT");
    if (s.ok() && state != nullptr) *state = std::move(st);
  }
  if (!s.ok()) {
    Close();
    return s;
  }
  return Status::OK();
}

Status SqliteBackend::Begin() {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  if (!sqlite3_get_autocommit(db_))
    return Status::InvalidArgs("sqlite: a transaction is already open");
  Status s = Exec("BEGIN IMMEDIATE");
  if (!s.ok()) return Status::StorageFailed(s.message());
  s = CheckEpoch();
  if (!s.ok()) Rollback();
  return s;
}

void SqliteBackend::AppendKeyWhere(const TableSchema& t, const Key& key, SqlBuilder* b) const {
  b->Append(" WHERE ");
  for (size_t i = 0; i < t.key.size(); ++i) {
    if (i > 0) b->Append(" AND ");
    b->AppendIdent(t.columns[t.key[i]].name).Append(" = ").AppendParam(key[i]);
  }
}

Status SqliteBackend::ApplyTable(const TableSchema& t, const TableSchema* previous) {
  const std::string table = QuoteIdent(t.name);
  if (previous == nullptr) {
    std::string sql = "CREATE TABLE " + table + " (";
    for (const Column& c : t.columns) {
      sql += QuoteIdent(c.name) + " " + SqlType(c.type);
      if (!c.optional) sql += " NOT NULL";
      sql += ", ";
    }
    sql += "PRIMARY KEY (";
    for (size_t i = 0; i < t.key.size(); ++i) {
      if (i > 0) sql += ", ";
      sql += QuoteIdent(t.columns[t.key[i]].name);
    }
    sql += ")) STRICT";
    // A single int key is the rowid itself (INTEGER PRIMARY KEY): one B-tree,
    // and max(key) for mintId is one seek. Any other key makes a WITHOUT
    // ROWID table, whose primary key B-tree holds the rows, instead of a rowid
    // table plus a separate unique index on the key that every lookup and
    // write would pay for twice.
    if (!t.HasIntKey()) sql += ", WITHOUT ROWID";
    ONESTORE_RETURN_IF_ERROR(Exec(sql));
  } else if (!SameStoredColumns(t, *previous)) {
    return Status::InvalidArgs("table \"" + t.name +
                               "\": its columns or key differ from the stored table; a column "
                               "change needs a migration");
  }
  // Indexes: drop those no longer declared (or declared differently), create
  // the new ones.
  std::map<std::string, const Index*> want;
  for (const Index& ix : t.indexes) want[ix.name] = &ix;
  std::map<std::string, const Index*> have;
  if (previous != nullptr) {
    for (const Index& ix : previous->indexes) have[ix.name] = &ix;
  }
  for (const auto& [name, ix] : have) {
    auto w = want.find(name);
    if (w == want.end() || w->second->columns != ix->columns) {
      ONESTORE_RETURN_IF_ERROR(Exec("DROP INDEX IF EXISTS " + IndexSqlName(t, *ix)));
    }
  }
  for (const Index& ix : t.indexes) {
    auto h = have.find(ix.name);
    if (h != have.end() && h->second->columns == ix.columns) continue;
    std::string sql = "CREATE INDEX " + IndexSqlName(t, ix) + " ON " + table + " (";
    for (size_t i = 0; i < ix.columns.size(); ++i) {
      if (i > 0) sql += ", ";
      sql += QuoteIdent(t.columns[ix.columns[i]].name);
    }
    sql += ")";
    ONESTORE_RETURN_IF_ERROR(Exec(sql));
  }
  Stmt s;
  SqlBuilder b;
  b.Append("INSERT OR REPLACE INTO _tables (name, record) VALUES (")
      .AppendParam(Value::Str(t.name))
      .Append(", ")
      .AppendParam(Value::Str(t.ToJson().dump()))
      .Append(")");
  ONESTORE_RETURN_IF_ERROR(Prepare(std::move(b), &s));
  return Run(&s, "recording table " + t.name);
}

Status SqliteBackend::ApplyPut(const Op& op) {
  const TableSchema& t = *op.table;
  if (op.row.size() != t.columns.size()) {
    return Status::InvalidArgs("put into table \"" + t.name + "\": the row has " +
                               std::to_string(op.row.size()) + " values for " +
                               std::to_string(t.columns.size()) + " columns");
  }
  SqlBuilder b;
  b.Append("INSERT OR REPLACE INTO ").AppendIdent(t.name).Append(" (");
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (i > 0) b.Append(", ");
    b.AppendIdent(t.columns[i].name);
  }
  b.Append(") VALUES (");
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (i > 0) b.Append(", ");
    const Value& v = op.row[i];
    if (t.columns[i].type == Type::kNum && v.type() == Type::kInt) {
      b.AppendParam(Value::Num(static_cast<double>(v.int_value())));
    } else {
      b.AppendParam(v);
    }
  }
  b.Append(")");
  Stmt s;
  ONESTORE_RETURN_IF_ERROR(Prepare(std::move(b), &s));
  return Run(&s, "put into table \"" + t.name + "\"");
}

Status SqliteBackend::Apply(Op* op, const TableSchema* previous) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  if (op == nullptr || op->table == nullptr)
    return Status::InvalidArgs("sqlite: an op without a table");
  const TableSchema& t = *op->table;
  switch (op->kind) {
    case OpKind::kTable:
      return ApplyTable(t, previous);
    case OpKind::kPut:
      return ApplyPut(*op);
    case OpKind::kUpdate:
    case OpKind::kDelete: {
      if (op->key.size() != t.key.size()) {
        return Status::InvalidArgs("table \"" + t.name + "\": the key " + DescribeKey(op->key) +
                                   " has " + std::to_string(op->key.size()) + " values for " +
                                   std::to_string(t.key.size()) + " key columns");
      }
      SqlBuilder b;
      const bool is_update = op->kind == OpKind::kUpdate;
      if (!is_update) {
        b.Append("DELETE FROM ").AppendIdent(t.name);
      } else if (op->set.empty()) {
        b.Append("SELECT 1 FROM ").AppendIdent(t.name);  // nothing to set: must exist
      } else {
        b.Append("UPDATE ").AppendIdent(t.name).Append(" SET ");
        AppendSetSql(t, op->set, &b);
      }
      AppendKeyWhere(t, op->key, &b);
      Stmt s;
      ONESTORE_RETURN_IF_ERROR(Prepare(std::move(b), &s));
      const std::string what = std::string(is_update ? "update" : "delete") + " in table \"" +
                               t.name + "\" of key " + DescribeKey(op->key);
      bool row = false;
      ONESTORE_RETURN_IF_ERROR(Step(&s, what, &row));
      if (is_update) {
        const bool found = op->set.empty() ? row : sqlite3_changes(db_) > 0;
        if (!found) {
          return Status::NotFound("update: table \"" + t.name + "\" has no row with key " +
                                  DescribeKey(op->key));
        }
      }
      // The commit's answer reports 1 or 0 for a key op (wasm/ABI.md); the
      // outbox record carries a count for bulk ops only (Op::AppendJson).
      op->count = is_update ? 1 : sqlite3_changes64(db_);
      return Status::OK();
    }
    case OpKind::kUpdateWhere:
    case OpKind::kDeleteWhere: {
      const bool is_update = op->kind == OpKind::kUpdateWhere;
      SqlBuilder b;
      if (is_update && op->set.empty()) {
        b.Append("SELECT count(*) FROM ").AppendIdent(t.name);
      } else if (is_update) {
        b.Append("UPDATE ").AppendIdent(t.name).Append(" SET ");
        AppendSetSql(t, op->set, &b);
      } else {
        b.Append("DELETE FROM ").AppendIdent(t.name);
      }
      if (op->where) {
        b.Append(" WHERE ");
        AppendPredicateSql(t, *op->where, &b);
      }
      Stmt s;
      ONESTORE_RETURN_IF_ERROR(Prepare(std::move(b), &s));
      bool row = false;
      ONESTORE_RETURN_IF_ERROR(Step(
          &s,
          std::string(is_update ? "updateWhere" : "deleteWhere") + " in table \"" + t.name + "\"",
          &row));
      op->count = (is_update && op->set.empty()) ? (row ? sqlite3_column_int64(s.get(), 0) : 0)
                                                 : sqlite3_changes64(db_);
      return Status::OK();
    }
  }
  return Status::InvalidArgs("sqlite: unknown op kind");
}

Status SqliteBackend::AppendOutbox(int64_t seq, const std::string& record) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  {
    Stmt s;
    SqlBuilder b;
    b.Append("INSERT INTO _outbox (seq, record) VALUES (")
        .AppendParam(Value::Int(seq))
        .Append(", ")
        .AppendParam(Value::Str(record))
        .Append(")");
    ONESTORE_RETURN_IF_ERROR(Prepare(std::move(b), &s));
    ONESTORE_RETURN_IF_ERROR(Run(&s, "writing outbox record " + std::to_string(seq)));
  }
  Stmt s;
  SqlBuilder b;
  b.Append("UPDATE _meta SET value = ").AppendParam(Value::Int(seq)).Append(" WHERE key = 'head'");
  ONESTORE_RETURN_IF_ERROR(Prepare(std::move(b), &s));
  return Run(&s, "writing the head");
}

Status SqliteBackend::Commit() {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  int rc = sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    Status s = Error(rc, "COMMIT");
    return Status::StorageFailed(s.message());
  }
  return Status::OK();
}

void SqliteBackend::Rollback() {
  if (db_ == nullptr || sqlite3_get_autocommit(db_)) return;
  sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

Status SqliteBackend::Get(const TableSchema& t, const Key& key, std::optional<Row>* row) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  if (key.size() != t.key.size()) {
    return Status::InvalidArgs("table \"" + t.name + "\": the key " + DescribeKey(key) + " has " +
                               std::to_string(key.size()) + " values for " +
                               std::to_string(t.key.size()) + " key columns");
  }
  SqlBuilder b;
  b.Append("SELECT ");
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (i > 0) b.Append(", ");
    b.AppendIdent(t.columns[i].name);
  }
  b.Append(" FROM ").AppendIdent(t.name);
  AppendKeyWhere(t, key, &b);
  Stmt s;
  ONESTORE_RETURN_IF_ERROR(Prepare(std::move(b), &s));
  bool found = false;
  ONESTORE_RETURN_IF_ERROR(Step(&s, "get from table \"" + t.name + "\"", &found));
  row->reset();
  if (found) {
    Row r;
    ReadRow(s.get(), t, &r);
    *row = std::move(r);
  }
  return Status::OK();
}

Status SqliteBackend::Page(const Query& q, const std::vector<Value>* after, int64_t limit,
                           std::vector<Row>* rows) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  rows->clear();
  if (q.table == nullptr) return Status::InvalidArgs("sqlite: a query without a table");
  if (limit < 0)
    return Status::InvalidArgs("page: limit " + std::to_string(limit) + " is negative");
  if (after != nullptr && after->size() != q.order.size()) {
    return Status::InvalidCursor("page: the cursor holds " + std::to_string(after->size()) +
                                 " values for an order of " + std::to_string(q.order.size()));
  }
  if (limit == 0) return Status::OK();
  const TableSchema& t = *q.table;
  SqlBuilder b;
  b.Append("SELECT ");
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (i > 0) b.Append(", ");
    b.AppendIdent(t.columns[i].name);
  }
  b.Append(" FROM ").AppendIdent(t.name);
  const bool has_after = after != nullptr && !q.order.empty();
  if (q.where || has_after) {
    b.Append(" WHERE ");
    if (q.where) AppendPredicateSql(t, *q.where, &b);
    if (q.where && has_after) b.Append(" AND ");
    if (has_after) AppendAfterSql(q, *after, &b);
  }
  if (!q.order.empty()) {
    b.Append(" ");
    AppendOrderBySql(q, &b);
  }
  b.Append(" LIMIT ").AppendParam(Value::Int(limit));
  Stmt s;
  ONESTORE_RETURN_IF_ERROR(Prepare(std::move(b), &s));
  const std::string what = "page of table \"" + t.name + "\"";
  bool row = false;
  ONESTORE_RETURN_IF_ERROR(Step(&s, what, &row));
  while (row) {
    rows->emplace_back();
    ReadRow(s.get(), t, &rows->back());
    ONESTORE_RETURN_IF_ERROR(Step(&s, what, &row));
  }
  return Status::OK();
}

Status SqliteBackend::Count(const TableSchema& t, const Predicate* where, int64_t* count) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  SqlBuilder b;
  b.Append("SELECT count(*) FROM ").AppendIdent(t.name);
  if (where != nullptr) {
    b.Append(" WHERE ");
    AppendPredicateSql(t, *where, &b);
  }
  Stmt s;
  ONESTORE_RETURN_IF_ERROR(Prepare(std::move(b), &s));
  bool row = false;
  ONESTORE_RETURN_IF_ERROR(Step(&s, "count of table \"" + t.name + "\"", &row));
  *count = row ? sqlite3_column_int64(s.get(), 0) : 0;
  return Status::OK();
}

Status SqliteBackend::MaxIntKey(const TableSchema& t, int64_t* max) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  if (!t.HasIntKey()) {
    return Status::InvalidArgs("table \"" + t.name + "\" does not have a single int key");
  }
  SqlBuilder b;
  b.Append("SELECT max(")
      .AppendIdent(t.columns[t.key[0]].name)
      .Append(") FROM ")
      .AppendIdent(t.name);
  Stmt s;
  ONESTORE_RETURN_IF_ERROR(Prepare(std::move(b), &s));
  bool row = false;
  ONESTORE_RETURN_IF_ERROR(Step(&s, "max key of table \"" + t.name + "\"", &row));
  *max = (row && sqlite3_column_type(s.get(), 0) != SQLITE_NULL) ? sqlite3_column_int64(s.get(), 0)
                                                                 : 0;
  return Status::OK();
}

Status SqliteBackend::ReadOutbox(int64_t after, int64_t limit, std::vector<OutboxEntry>* out) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  out->clear();
  if (limit <= 0) return Status::OK();
  Stmt s;
  SqlBuilder b;
  b.Append("SELECT seq, record FROM _outbox WHERE seq > ")
      .AppendParam(Value::Int(after))
      .Append(" ORDER BY seq LIMIT ")
      .AppendParam(Value::Int(limit));
  ONESTORE_RETURN_IF_ERROR(Prepare(std::move(b), &s));
  bool row = false;
  ONESTORE_RETURN_IF_ERROR(Step(&s, "reading the outbox", &row));
  while (row) {
    OutboxEntry e;
    e.seq = sqlite3_column_int64(s.get(), 0);
    e.record.assign(reinterpret_cast<const char*>(sqlite3_column_text(s.get(), 1)),
                    static_cast<size_t>(sqlite3_column_bytes(s.get(), 1)));
    out->push_back(std::move(e));
    ONESTORE_RETURN_IF_ERROR(Step(&s, "reading the outbox", &row));
  }
  return Status::OK();
}

Status SqliteBackend::TrimOutbox(int64_t up_to, int64_t* removed) {
  ONESTORE_RETURN_IF_ERROR(Begin());
  Status st;
  {
    Stmt s;
    SqlBuilder b;
    b.Append("DELETE FROM _outbox WHERE seq <= ").AppendParam(Value::Int(up_to));
    st = Prepare(std::move(b), &s);
    if (st.ok()) st = Run(&s, "trimming the outbox");
    if (st.ok()) *removed = sqlite3_changes64(db_);
  }
  if (!st.ok()) {
    Rollback();
    return st;
  }
  return Commit();
}

void SqliteBackend::Close() {
  if (db_ == nullptr) return;
  Rollback();
  for (auto& [sql, c] : cache_) sqlite3_finalize(c.stmt);
  cache_.clear();
  sqlite3_close_v2(db_);
  db_ = nullptr;
}

}  // namespace

std::unique_ptr<Backend> NewSqliteBackend(const SqliteOptions& options) {
  return std::make_unique<SqliteBackend>(options);
}

}  // namespace onestore
