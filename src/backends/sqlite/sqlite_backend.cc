// The sqlite backend (sqlite_backend.h).
//
// The file is an ordinary SQLite database that the `sqlite3` command line
// tool can read: a rollback journal (there is no shared memory for WAL), each
// table a STRICT table named "<type>/<name>", system tables _meta, _outbox and
// _tables. One owner: Open bumps the epoch in _meta, and each write
// transaction checks it, so an earlier owner of the same file is fenced.
// NORMAL locking mode makes every transaction re-read the file header, so an
// owner sees a newer epoch written by another. A connection that holds the
// lock for life (exclusive mode) skips the check: no other owner can open
// meanwhile, and its reads would not see one anyway (SqlBackendOptions).
// The head is the largest seq of _outbox, or _meta.head when that is larger
// (the outbox trimmed): an embedded store writes _meta.head only at open, at
// a trim and at close (head format 2, docs/formats.md).
#include "backends/sqlite/sqlite_backend.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "backends/sqlite/embedded_connection.h"
#include "onestore/cold.h"
#include "query/sql.h"
#include "values/json_text.h"
#include "writes/sql.h"

namespace onestore {

namespace {

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
    case Type::kVector:
      return "BLOB";  // n little-endian float32 (src/values/vector.h)
    case Type::kNull:
      break;
  }
  return "ANY";
}

ONESTORE_COLD std::string DescribeKey(const Key& key) {
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

// A value as a SQL constant (a column's DEFAULT): ints and bools as
// integers, nums with 17 digits (and a point, so that they stay REAL), text
// quoted with its quotes doubled.
ONESTORE_COLD std::string SqlLiteral(const Value& v, Type column) {
  switch (v.type()) {
    case Type::kBool:
      return v.bool_value() ? "1" : "0";
    case Type::kInt:
      if (column == Type::kNum) return std::to_string(v.int_value()) + ".0";
      return std::to_string(v.int_value());
    case Type::kNum: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", v.num_value());
      std::string out = buf;
      if (out.find_first_of(".eE") == std::string::npos) out += ".0";
      return out;
    }
    case Type::kStr:
    case Type::kJson: {
      std::string out = "'";
      for (char c : v.text()) {
        if (c == '\'') out += '\'';
        out += c;
      }
      return out + "'";
    }
    case Type::kVector: {
      static const char kHex[] = "0123456789ABCDEF";
      std::string out = "X'";
      for (unsigned char c : v.text()) {
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
      return out + "'";
    }
    case Type::kNull:
      break;
  }
  return "NULL";
}

// Same columns (name, type, nullability) and key: what a table's SQL holds.
ONESTORE_COLD bool SameStoredColumns(const TableSchema& a, const TableSchema& b) {
  if (a.columns.size() != b.columns.size() || a.key != b.key) return false;
  for (size_t i = 0; i < a.columns.size(); ++i) {
    const Column& x = a.columns[i];
    const Column& y = b.columns[i];
    if (x.name != y.name || x.type != y.type || x.optional != y.optional) return false;
  }
  return true;
}

class SqliteBackend : public Backend {
 public:
  // `foreign_path`: refuse a database that is not a store, naming this path
  // (SqliteOptions::adopt_foreign); empty: no check.
  SqliteBackend(std::unique_ptr<SqlConnection> conn, std::string foreign_path,
                const SqlBackendOptions& options)
      : conn_(std::move(conn)),
        dialect_(conn_->dialect()),
        foreign_path_(std::move(foreign_path)),
        options_(options) {}
  ONESTORE_COLD ~SqliteBackend() override { Close(); }

  Status Open(const std::string& new_id, BackendState* state) override;
  Status Begin() override;
  Status Apply(Op* op, const TableSchema* previous) override;
  Status AppendOutbox(int64_t seq, const std::string& record) override;
  Status OutboxStartsAfter(int64_t head) override;
  Status Commit() override;
  void Rollback() override;

  Status Get(const TableSchema& t, const Key& key, std::optional<Row>* row) override;
  Status Page(const Query& q, const std::vector<Value>* after, int64_t limit,
              std::vector<Row>* rows, PageBytes* bytes = nullptr) override;
  bool HoldNextPage(const TableSchema& t) override;
  Status Count(const TableSchema& t, const Predicate* where, int64_t* count) override;
  Status ScanKeys(const Query& q, const std::function<void(const Key&)>& visit) override;
  Status ScanColumns(const Query& q, const std::vector<bool>& wanted,
                     const std::function<bool(const Row&)>& visit) override;
  Status MaxIntKey(const TableSchema& t, int64_t* max) override;

  Status ReadOutbox(int64_t after, int64_t limit, std::vector<OutboxEntry>* out) override;
  Status TrimOutbox(int64_t up_to, int64_t* removed) override;
  Status ReadNote(const std::string& key, std::string* value) override;
  Status WriteNote(const std::string& key, const std::string& value) override;
  ONESTORE_COLD Status CopyTo(const std::string& path) override {
    ONESTORE_RETURN_IF_ERROR(CheckOpen());
    return conn_->CopyTo(path);
  }
  ONESTORE_COLD Status BeginRead(int64_t* head) override {
    ONESTORE_RETURN_IF_ERROR(CheckOpen());
    if (conn_->InTransaction()) return Status::InvalidArgs("a read hold: a transaction is open");
    // A store file held open runs a WAL (exclusive mode): its newest commits
    // are in <file>-wal, not in the file a runtime copies. Fold them into the
    // file first (a no-op in rollback mode), so the copy is the whole store.
    ONESTORE_RETURN_IF_ERROR(conn_->Exec("PRAGMA wal_checkpoint(TRUNCATE)"));
    ONESTORE_RETURN_IF_ERROR(conn_->Exec("BEGIN DEFERRED"));
    Status st = ReadHead(head);  // takes SQLite's shared lock
    if (!st.ok()) conn_->Rollback();
    return st;
  }
  void EndRead() override {
    if (open_) conn_->Rollback();
  }

  Status DiffWithCopy(const TableSchema& t, const std::string& copy, std::vector<Key>* gone,
                      std::vector<Row>* changed, std::vector<Row>* added) override;
  Status Close() override;

 private:
  Status CheckOpen() const {
    if (!open_) return Status::Closed("the sqlite store is closed");
    return Status::OK();
  }
  SqlBuilder Builder() const { return SqlBuilder(dialect_); }
  // Runs b's SQL with its parameters.
  // A statement with more parameters than the host binds has its small
  // literals written into its text (a wide put or update on a Durable
  // Object); what still does not fit gets the connection's `limit`.
  Status Run(const SqlBuilder& b, const std::string& what, SqlRows* rows = nullptr,
             bool count_changes = false) {
    if (dialect_.max_params > 0 && b.params().size() > dialect_.max_params) {
      SqlBuilder inlined = b;
      inlined.InlineSmallParams();
      return conn_->Run(inlined.sql(), inlined.params(), what, rows, count_changes);
    }
    return conn_->Run(b.sql(), b.params(), what, rows, count_changes);
  }
  // "SELECT c1, c2, ... FROM t": every column, ints as the dialect reads them.
  // `wanted`: one flag a column; the others are selected as NULL.
  void AppendSelectRow(const TableSchema& t, SqlBuilder* b,
                       const std::vector<bool>* wanted = nullptr) const;
  // Row `r` of `rows` (as AppendSelectRow selects it) in t's column types;
  // its str cells are moved out of `rows`.
  void ReadRow(SqlRows* rows, size_t r, const TableSchema& t, Row* row) const;
  // The open's reads and writes of _meta, one statement each.
  Status OpenMeta(const std::string& new_id, BackendState* st);
  // Sets _meta.key to v (inserting the row if missing).
  Status WriteMeta(const char* key, const Value& v);
  // The head: max(_meta.head, max(_outbox.seq)).
  Status ReadHead(int64_t* head);
  // Inside a write transaction: raises _meta.head to the outbox's largest
  // seq when it is behind (head format 2), so that it holds the head once
  // the outbox is trimmed, and for a reader of format 1.
  Status StoreHead();
  // Checks, inside a transaction, that this backend still owns the store.
  Status CheckEpoch();
  // Inside the open's transaction, before anything is created: refuses a
  // database that has tables but not the store's system tables.
  Status CheckIsStore();

  void AppendKeyWhere(const TableSchema& t, const Key& key, SqlBuilder* b) const;
  Status ApplyTable(const TableSchema& t, const TableSchema* previous);
  Status ApplyAlter(const TableSchema& t, const SchemaChange& change);
  Status ApplyPut(Op* op);

  // The statement of a get by key (SELECT every column WHERE the key), by
  // table, with the shape it was built for: built again when the table's
  // columns, types or key differ (an alter), else reused as it is, so a get
  // builds no SQL text and no message.
  struct GetStatement {
    std::vector<std::pair<std::string, Type>> columns;
    std::vector<int> key;
    std::string sql;
    std::string what;
  };
  const GetStatement& GetStatementOf(const TableSchema& t, const Key& key);
  std::map<std::string, GetStatement, std::less<>> get_statements_;

  // The head of a put's INSERT ("INSERT OR REPLACE INTO t (c1, ...) VALUES
  // "), by table, with the column names it was built for: a bulk put builds
  // no SQL text but its row's "(?, ...)".
  struct PutHead {
    std::vector<std::string> columns;
    std::string head;
    std::string what;
    // The row "(?, ...)" when the dialect binds every value as one `?`
    // (empty when an int binds through CAST: the row is built per put).
    std::string row;
  };
  const PutHead& PutHeadOf(const TableSchema& t);
  Status CheckHostRow(const TableSchema& t, const std::vector<Value>& row);
  Status HostRowTooBig(const TableSchema& t, const std::vector<Value>& row, size_t bytes, size_t limit);
  std::map<std::string, PutHead, std::less<>> put_heads_;

  std::unique_ptr<SqlConnection> conn_;
  const SqlDialect& dialect_;
  const std::string foreign_path_;
  const SqlBackendOptions options_;
  bool open_ = false;
  // The next Page leaves its rows with the host (HoldNextPage).
  bool hold_next_ = false;
  // A commit since Open: Close brings _meta.head up to date.
  bool committed_ = false;
  int64_t epoch_ = 0;
  // CheckEpoch's statement, built on its first use.
  struct EpochCheck {
    std::string sql;
    std::vector<Value> params;
    std::string what;
    Status fenced = Status::OK();
  } epoch_check_;
  // A put's values and, for a dialect that writes a row's text per put, its
  // row: kept with their room from one put to the next, and the outbox
  // record's INSERT (AppendOutbox), built on its first use (issue 13, the
  // fifteenth step: a commit allocated each anew).
  std::vector<Value> put_params_;
  SqlBuilder put_row_{dialect_};
  struct OutboxInsert {
    std::string sql;
    std::vector<Value> params;  // the seq and the record's text
    std::string what;
  } outbox_insert_;
};

void SqliteBackend::AppendSelectRow(const TableSchema& t, SqlBuilder* b,
                                    const std::vector<bool>* wanted) const {
  b->Append("SELECT ");
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (i > 0) b->Append(", ");
    if (wanted != nullptr && (i >= wanted->size() || !(*wanted)[i])) {
      b->Append("NULL");
      continue;
    }
    const std::string c = QuoteIdent(t.columns[i].name);
    b->Append(t.columns[i].type == Type::kInt ? IntResultSql(dialect_, c) : c);
  }
  b->Append(" FROM ").AppendIdent(t.name);
}

void SqliteBackend::ReadRow(SqlRows* rows, size_t r, const TableSchema& t, Row* row) const {
  row->clear();
  row->reserve(t.columns.size());
  for (size_t i = 0; i < t.columns.size(); ++i) {
    Value& cell = rows->cells[r * rows->columns + i];
    if (cell.is_null()) {
      row->emplace_back();
      continue;
    }
    switch (t.columns[i].type) {
      case Type::kInt:
        row->push_back(Value::Int(SqlCellInt(cell)));
        break;
      case Type::kBool:
        row->push_back(Value::Bool(SqlCellInt(cell) != 0));
        break;
      case Type::kNum:
        row->push_back(Value::Num(SqlCellNum(cell)));
        break;
      case Type::kStr:
        row->push_back(cell.type() == Type::kStr ? std::move(cell) : Value::Str(std::string()));
        break;
      case Type::kJson:
        row->push_back(Value::JsonText(cell.type() == Type::kStr ? cell.text() : std::string()));
        break;
      case Type::kVector:
        row->push_back(Value::Vector(cell.type() == Type::kVector ? cell.text() : std::string()));
        break;
      case Type::kNull:
        row->emplace_back();
        break;
    }
  }
}

ONESTORE_COLD Status SqliteBackend::WriteMeta(const char* key, const Value& v) {
  SqlBuilder b = Builder();
  b.Append("INSERT OR REPLACE INTO _meta (key, value) VALUES (")
      .AppendParam(Value::Str(key))
      .Append(", ")
      .AppendParam(v)
      .Append(")");
  return Run(b, std::string("writing _meta.") + key);
}

ONESTORE_COLD Status SqliteBackend::ReadHead(int64_t* head) {
  SqlRows rows;  // ('head', n); SqlCellInt also reads a host's whole num
  ONESTORE_RETURN_IF_ERROR(conn_->Run(kHeadSql, {}, "reading the head", &rows));
  *head = rows.size() > 0 ? SqlCellInt(rows.at(0, 1)) : 0;
  return Status::OK();
}

ONESTORE_COLD Status SqliteBackend::StoreHead() {
  return conn_->Exec(
      "UPDATE _meta SET value = (SELECT max(seq) FROM _outbox) WHERE key = 'head' AND "
      "value < (SELECT max(seq) FROM _outbox)");
}

// The open's part of _meta, in one read and at most one write (a statement
// each crosses to the host on a Durable Object, and is prepared again on
// every open): the epoch bumped (fencing the owner before), the head (head
// format 2: caught up with the outbox, which a crash may have left ahead of
// _meta.head), head_format, and the session id (`new_id` for a new store).
ONESTORE_COLD Status SqliteBackend::OpenMeta(const std::string& new_id, BackendState* st) {
  std::string sql = "SELECT key, " + IntResultSql(dialect_, "value") +
                    " FROM _meta WHERE key IN ('epoch', 'head', 'head_format', 'id')";
  if (!options_.head_per_commit) {
    sql += " UNION ALL SELECT 'outbox', " + IntResultSql(dialect_, "coalesce(max(seq), 0)") +
           " FROM _outbox";
  }
  SqlRows rows;
  ONESTORE_RETURN_IF_ERROR(conn_->Run(sql, {}, "reading _meta", &rows));
  int64_t epoch = 0, head = 0, outbox = 0, head_format = 0;
  bool has_head = false, has_id = false;
  for (size_t r = 0; r < rows.size(); ++r) {
    const Value& key = rows.at(r, 0);
    const Value& value = rows.at(r, 1);
    if (key.type() != Type::kStr || value.is_null()) continue;
    const std::string& k = key.text();
    if (k == "epoch") {
      epoch = SqlCellInt(value);
    } else if (k == "head") {
      head = SqlCellInt(value);
      has_head = true;
    } else if (k == "head_format") {
      head_format = SqlCellInt(value);
    } else if (k == "outbox") {
      outbox = SqlCellInt(value);
    } else if (k == "id") {
      has_id = true;
      if (value.type() == Type::kStr) st->id = value.text();
    }
  }
  epoch_ = epoch + 1;
  SqlBuilder b = Builder();
  b.Append("INSERT OR REPLACE INTO _meta (key, value) VALUES ('epoch', ")
      .AppendParam(Value::Int(epoch_))
      .Append(")");
  if (!has_head || outbox > head) {
    head = std::max(head, outbox);
    b.Append(", ('head', ").AppendParam(Value::Int(head)).Append(")");
  }
  if (!options_.head_per_commit && head_format != 2) b.Append(", ('head_format', 2)");
  // Outbox format 2 (docs/formats.md): long records continue in _outbox_parts.
  if (dialect_.max_outbox_part > 0) b.Append(", ('outbox_format', 2)");
  if (!has_id) {
    b.Append(", ('id', ").AppendParam(Value::Str(new_id)).Append(")");
    st->id = new_id;
  }
  st->head = head;
  return Run(b, "writing _meta");
}

Status SqliteBackend::CheckEpoch() {
  // A check the connection may defer: on a Durable Object it goes to the
  // host with the transaction's first writes, and none of them runs when
  // another owner's epoch is there.
  // Its SQL, params and failure are the same every time: built once (a
  // commit pays this check).
  if (epoch_check_.sql.empty()) {
    SqlBuilder b = Builder();
    b.Append("SELECT ")
        .Append(IntResultSql(dialect_, "value"))
        .Append(" FROM _meta WHERE key = ")
        .AppendParam(Value::Str("epoch"));
    epoch_check_.sql = b.sql();
    epoch_check_.params = b.params();
    epoch_check_.what = "reading _meta.epoch";
    epoch_check_.fenced = Status::Fenced("another owner holds the store");
  }
  return conn_->RunCheck(epoch_check_.sql, epoch_check_.params, epoch_check_.what, epoch_,
                         epoch_check_.fenced);
}

ONESTORE_COLD Status SqliteBackend::CheckIsStore() {
  SqlRows rows;
  ONESTORE_RETURN_IF_ERROR(conn_->Run(
      "SELECT type, name FROM sqlite_schema WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
      "ORDER BY name",
      {}, "reading the schema of " + foreign_path_, &rows));
  int system = 0;
  std::vector<std::string> others;
  bool views = false;
  for (size_t r = 0; r < rows.size(); ++r) {
    const std::string type = rows.at(r, 0).type() == Type::kStr ? rows.at(r, 0).text() : "";
    const std::string name = rows.at(r, 1).type() == Type::kStr ? rows.at(r, 1).text() : "";
    if (type == "table" && (name == "_meta" || name == "_outbox" || name == "_tables")) {
      ++system;
    } else if (type == "table" || type == "view") {
      views |= type == "view";
      others.push_back(name);
    }
  }
  // A store has all three system tables (the open that made it created them
  // in one transaction); a new or empty database has no table at all.
  if (system == 3 || (system == 0 && others.empty())) return Status::OK();
  std::string found;
  for (size_t i = 0; i < others.size() && i < 5; ++i) {
    if (i > 0) found += ", ";
    AppendJsonString(others[i], &found);
  }
  if (others.size() > 5) found += ", ... (" + std::to_string(others.size()) + " in all)";
  std::string shown;
  AppendJsonString(foreign_path_, &shown);
  return Status::InvalidArgs(
      "openStore: " + shown + " is a SQLite database of another application, not a store (" +
      (others.empty() ? std::string("only some of onestore's tables _meta, _outbox, _tables")
                      : (views ? "it has the tables and views " : "it has the tables ") + found) +
      "); open another path, or pass adoptForeign: true to add the store's tables to it");
}

ONESTORE_COLD Status SqliteBackend::Open(const std::string& new_id, BackendState* state) {
  if (open_) return Status::InvalidArgs("the sqlite store is already open");
  ONESTORE_RETURN_IF_ERROR(conn_->Open());
  open_ = true;
  Status s = conn_->Begin();
  if (s.ok() && !foreign_path_.empty()) s = CheckIsStore();
  if (s.ok()) {
    s = conn_->Exec(
        "CREATE TABLE IF NOT EXISTS _meta (key TEXT PRIMARY KEY, value ANY) STRICT;"
        "CREATE TABLE IF NOT EXISTS _outbox (seq INTEGER PRIMARY KEY, record TEXT NOT NULL) STRICT;"
        "CREATE TABLE IF NOT EXISTS _tables (name TEXT PRIMARY KEY, record TEXT NOT NULL) STRICT;");
    if (s.ok() && dialect_.max_outbox_part > 0) {
      // Outbox format 2 (docs/formats.md): long records continue here.
      s = conn_->Exec(
          "CREATE TABLE IF NOT EXISTS _outbox_parts (seq INTEGER NOT NULL, part INTEGER NOT NULL, "
          "text TEXT NOT NULL, PRIMARY KEY (seq, part)) STRICT;");
    }
    if (s.ok() && options_.head_per_commit && options_.head_by_trigger) {
      // Head format 1 kept by SQLite (docs/formats.md, "The head on a
      // Durable Object"): each outbox row sets _meta.head to its seq, in
      // the statement that inserts it. Made again by every open, since a
      // switch that drops the store's tables (an import) drops it too.
      s = conn_->Exec(
          "CREATE TRIGGER IF NOT EXISTS _outbox_head AFTER INSERT ON _outbox BEGIN "
          "UPDATE _meta SET value = NEW.seq WHERE key = 'head'; END;"
          // A commit follows the head on disk. A transaction of the app's
          // own around a commit (ctx.storage.transaction) makes the
          // store's a savepoint in it, which the app's rollback undoes
          // after the commit resolved: the store's head is then ahead of
          // the file's, and its next seq would leave a hole in the outbox
          // that no replica can cross. The insert is refused instead, and
          // the store is opened again (docs/formats.md). An import, whose
          // archive's outbox may start above seq 1, sets the head first
          // (OutboxStartsAfter). Until session 55 the trigger was
          // _outbox_next, which let any row follow head 0, so a rollback of
          // a store's very first commit went unseen; it is dropped (a no-op
          // once it is gone).
          "DROP TRIGGER IF EXISTS _outbox_next;"
          "CREATE TRIGGER IF NOT EXISTS _outbox_follows BEFORE INSERT ON _outbox WHEN (SELECT "
          "value FROM _meta WHERE key = 'head') != NEW.seq - 1 BEGIN SELECT RAISE(ABORT, "
          "'onestore: a commit was rolled back after it was done'); END;");
    }
    BackendState st;
    if (s.ok()) s = OpenMeta(new_id, &st);
    if (s.ok()) {
      SqlRows rows;
      s = conn_->Run("SELECT name, record FROM _tables ORDER BY name", {}, "reading _tables",
                     &rows);
      for (size_t r = 0; s.ok() && r < rows.size(); ++r) {
        const std::string name = rows.at(r, 0).type() == Type::kStr ? rows.at(r, 0).text() : "";
        const std::string text = rows.at(r, 1).type() == Type::kStr ? rows.at(r, 1).text() : "";
        Json j;
        bool too_deep = false;
        if (!TryParseJsonText(text, kMaxJsonDepth, &j, &too_deep) || !j.is_object()) {
          s = Status::StorageFailed("the stored record of table \"" + name +
                                    "\" is not a JSON object");
          break;
        }
        st.tables.push_back(std::move(j));
      }
    }
    if (s.ok()) s = conn_->Commit();
    if (s.ok()) s = conn_->Opened();
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
  if (conn_->InTransaction()) return Status::InvalidArgs("sqlite: a transaction is already open");
  ONESTORE_RETURN_IF_ERROR(conn_->Begin());
  // With the lock held for life the epoch read back would be this owner's
  // own (its page cache, its WAL index): only Open writes it, and no other
  // owner opens until this one has closed (docs/architecture.md, "One
  // writer").
  if (options_.lock_for_life) return Status::OK();
  Status s = CheckEpoch();
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
ONESTORE_COLD Status SqliteBackend::ApplyTable(const TableSchema& t, const TableSchema* previous) {
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
    ONESTORE_RETURN_IF_ERROR(conn_->Exec(sql));
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
      ONESTORE_RETURN_IF_ERROR(conn_->Exec("DROP INDEX IF EXISTS " + IndexSqlName(t, *ix)));
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
    ONESTORE_RETURN_IF_ERROR(conn_->Exec(sql));
  }
  SqlBuilder b = Builder();
  b.Append("INSERT OR REPLACE INTO _tables (name, record) VALUES (")
      .AppendParam(Value::Str(t.name))
      .Append(", ")
      .AppendParam(Value::Str(t.ToJson().dump()))
      .Append(")");
  return Run(b, "recording table " + t.name);
}

// An alter changes the table in place: ALTER TABLE ... DROP COLUMN, RENAME
// COLUMN, ADD COLUMN with the default as a constant, so SQLite fills old rows
// in when it reads them and rewrites none (SQLite allows no bound parameter
// in a column definition).
ONESTORE_COLD Status SqliteBackend::ApplyAlter(const TableSchema& t, const SchemaChange& ch) {
  const std::string table = QuoteIdent(t.name);
  for (const std::string& name : ch.dropped_indexes) {
    ONESTORE_RETURN_IF_ERROR(conn_->Exec("DROP INDEX IF EXISTS " + QuoteIdent(t.name + "/" + name)));
  }
  for (const std::string& name : ch.drop) {
    ONESTORE_RETURN_IF_ERROR(
        conn_->Exec("ALTER TABLE " + table + " DROP COLUMN " + QuoteIdent(name)));
  }
  for (const auto& [from, to] : ch.rename) {
    ONESTORE_RETURN_IF_ERROR(conn_->Exec("ALTER TABLE " + table + " RENAME COLUMN " +
                                         QuoteIdent(from) + " TO " + QuoteIdent(to)));
  }
  for (const Column& c : ch.add) {
    std::string sql = "ALTER TABLE " + table + " ADD COLUMN " + QuoteIdent(c.name) + " " +
                      SqlType(c.type);
    if (!c.optional) sql += " NOT NULL";
    if (c.has_default && !c.def.is_null()) sql += " DEFAULT " + SqlLiteral(c.def, c.type);
    ONESTORE_RETURN_IF_ERROR(conn_->Exec(sql));
  }
  SqlBuilder b = Builder();
  b.Append("INSERT OR REPLACE INTO _tables (name, record) VALUES (")
      .AppendParam(Value::Str(t.name))
      .Append(", ")
      .AppendParam(Value::Str(t.ToJson().dump()))
      .Append(")");
  return Run(b, "recording table " + t.name);
}

Status SqliteBackend::ApplyPut(Op* op) {
  const TableSchema& t = *op->table;
  if (op->row.size() != t.columns.size()) {
    return Status::InvalidArgs("put into table \"" + t.name + "\": the row has " +
                               std::to_string(op->row.size()) + " values for " +
                               std::to_string(t.columns.size()) + " columns");
  }
  // The head "INSERT OR REPLACE INTO t (c1, ...) VALUES " and the row
  // "(?, ...)": a connection joins the puts of a transaction into one table
  // into multi-row statements (RunRow).
  const PutHead& cached = PutHeadOf(t);
  // The row's values, moved out of the op when nothing reads it after this
  // (Op::row_spent), else copied.
  std::vector<Value>& params = put_params_;
  params.clear();
  for (size_t i = 0; i < t.columns.size(); ++i) {
    Value& v = op->row[i];
    if (t.columns[i].type == Type::kNum && v.type() == Type::kInt) {
      params.push_back(Value::Num(static_cast<double>(v.int_value())));
    } else if (op->row_spent) {
      params.push_back(std::move(v));
    } else {
      params.push_back(v);
    }
  }
  if (dialect_.max_row_bytes > 0) ONESTORE_RETURN_IF_ERROR(CheckHostRow(t, params));
  const bool wide = dialect_.max_params > 0 && params.size() > dialect_.max_params;
  // The row's text is the table's: only its values are new.
  if (!cached.row.empty() && !wide) return conn_->RunRow(cached.head, cached.row, &params, cached.what);
  auto append_row = [&](SqlBuilder* b) {
    b->Append("(");
    for (size_t i = 0; i < params.size(); ++i) {
      if (i > 0) b->Append(", ");
      b->AppendParam(std::move(params[i]));
    }
    b->Append(")");
  };
  if (wide) {
    // A wide row: its small values written into the text (Run).
    SqlBuilder head = Builder();
    head.Append(cached.head);
    append_row(&head);
    return Run(head, cached.what);
  }
  put_row_.Clear();
  append_row(&put_row_);
  return conn_->RunRow(cached.head, put_row_.sql(), put_row_.mutable_params(), cached.what);
}

// A host-bound SQLite (a Durable Object's) refuses a row whose values are
// too big together (SQLITE_TOOBIG, about 2.2 MB in workerd) with a message
// that names neither the row nor its size: a put above the per-value limit,
// in one value or in total, is refused here, naming its key and size.
// Texts, json and vectors count their bytes, every other value 8.
Status SqliteBackend::CheckHostRow(const TableSchema& t, const std::vector<Value>& row) {
  const size_t limit = dialect_.max_row_bytes;
  size_t bytes = 0;
  for (const Value& v : row) {
    const Type type = v.type();
    bytes += type == Type::kStr || type == Type::kJson || type == Type::kVector ? v.text().size() : 8;
  }
  if (bytes <= limit) return Status::OK();
  return HostRowTooBig(t, row, bytes, limit);
}

ONESTORE_COLD Status SqliteBackend::HostRowTooBig(const TableSchema& t, const std::vector<Value>& row,
                                                  size_t bytes, size_t limit) {
  Key key;
  for (int i : t.key) key.push_back(row[static_cast<size_t>(i)]);
  return Status::Limit("put into table \"" + t.name + "\": the row " + DescribeKey(key) + " is " +
                       std::to_string(bytes) + " bytes, above this backend's limit of " +
                       std::to_string(limit) + " bytes per value or row");
}

ONESTORE_COLD const SqliteBackend::PutHead& SqliteBackend::PutHeadOf(const TableSchema& t) {
  PutHead& p = put_heads_[t.name];
  bool same = !p.head.empty() && p.columns.size() == t.columns.size();
  for (size_t i = 0; same && i < t.columns.size(); ++i) same = p.columns[i] == t.columns[i].name;
  if (same) return p;
  p.columns.clear();
  for (const Column& c : t.columns) p.columns.push_back(c.name);
  SqlBuilder head = Builder();
  head.Append("INSERT OR REPLACE INTO ").AppendIdent(t.name).Append(" (");
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (i > 0) head.Append(", ");
    head.AppendIdent(t.columns[i].name);
  }
  head.Append(") VALUES ");
  p.head = head.sql();
  p.what = "put into table \"" + t.name + "\"";
  p.row.clear();
  if (!dialect_.int_params_as_text) {
    p.row = "(";
    for (size_t i = 0; i < t.columns.size(); ++i) p.row += i > 0 ? ", ?" : "?";
    p.row += ")";
  }
  return p;
}

Status SqliteBackend::Apply(Op* op, const TableSchema* previous) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  if (op == nullptr || op->table == nullptr)
    return Status::InvalidArgs("sqlite: an op without a table");
  const TableSchema& t = *op->table;
  switch (op->kind) {
    case OpKind::kDocument:  // expanded into puts by the commit step
      return Status::InvalidArgs("sqlite: a document op reached the backend");
    case OpKind::kRestore:  // a marker: the commit step skips it
      return Status::InvalidArgs("sqlite: a restore marker reached the backend");
    case OpKind::kTable:
      return ApplyTable(t, previous);
    case OpKind::kIndex:  // the same columns, other indexes: what a table record does
      return ApplyTable(t, op->change->before.get());
    case OpKind::kAlter:
      return ApplyAlter(t, *op->change);
    case OpKind::kPut:
      return ApplyPut(op);
    case OpKind::kUpdate:
    case OpKind::kDelete: {
      if (op->key.size() != t.key.size()) {
        return Status::InvalidArgs("table \"" + t.name + "\": the key " + DescribeKey(op->key) +
                                   " has " + std::to_string(op->key.size()) + " values for " +
                                   std::to_string(t.key.size()) + " key columns");
      }
      SqlBuilder b = Builder();
      const bool is_update = op->kind == OpKind::kUpdate;
      const bool probe = is_update && op->set.empty();
      if (!is_update) {
        b.Append("DELETE FROM ").AppendIdent(t.name);
      } else if (probe) {
        b.Append("SELECT 1 FROM ").AppendIdent(t.name);  // nothing to set: must exist
      } else {
        b.Append("UPDATE ").AppendIdent(t.name).Append(" SET ");
        AppendSetSql(t, op->set, &b);
      }
      AppendKeyWhere(t, op->key, &b);
      const std::string what = std::string(is_update ? "update" : "delete") + " in table \"" +
                               t.name + "\" of key " + DescribeKey(op->key);
      SqlRows rows;
      ONESTORE_RETURN_IF_ERROR(Run(b, what, &rows, !probe));
      if (is_update) {
        const bool found = probe ? rows.size() > 0 : rows.changes > 0;
        if (!found) {
          return Status::NotFound("update: table \"" + t.name + "\" has no row with key " +
                                  DescribeKey(op->key));
        }
      }
      // The commit's answer reports 1 or 0 for a key op (wasm/ABI.md); the
      // outbox record carries a count for bulk ops only (Op::AppendJson).
      op->count = is_update ? 1 : rows.changes;
      return Status::OK();
    }
    case OpKind::kUpdateWhere:
    case OpKind::kDeleteWhere: {
      const bool is_update = op->kind == OpKind::kUpdateWhere;
      const bool probe = is_update && op->set.empty();
      SqlBuilder b = Builder();
      if (probe) {
        b.Append("SELECT ").Append(IntResultSql(dialect_, "count(*)")).Append(" FROM ");
        b.AppendIdent(t.name);
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
      SqlRows rows;
      ONESTORE_RETURN_IF_ERROR(Run(
          b,
          std::string(is_update ? "updateWhere" : "deleteWhere") + " in table \"" + t.name + "\"",
          &rows, !probe));
      op->count = probe ? (rows.size() > 0 ? SqlCellInt(rows.at(0, 0)) : 0) : rows.changes;
      return Status::OK();
    }
  }
  return Status::InvalidArgs("sqlite: unknown op kind");
}

// The length of the next part of `text` from `at`: at most `max` bytes,
// ending on a UTF-8 character boundary (a host carries text as JS strings),
// and never empty.
size_t PartLength(const std::string& text, size_t at, size_t max) {
  size_t n = std::min(max, text.size() - at);
  if (at + n == text.size()) return n;
  size_t cut = n;
  // Back up over continuation bytes (10xxxxxx) to the start of a character.
  while (cut > 0 && (static_cast<unsigned char>(text[at + cut]) & 0xC0) == 0x80) --cut;
  return cut > 0 ? cut : n;
}

Status SqliteBackend::AppendOutbox(int64_t seq, const std::string& record) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  const size_t max = dialect_.max_outbox_part;
  const size_t first = max > 0 ? PartLength(record, 0, max) : record.size();
  {
    // The statement is the same for every record: built once, its text
    // parameter written in its own room.
    OutboxInsert& o = outbox_insert_;
    if (o.sql.empty()) {
      SqlBuilder b = Builder();
      b.Append("INSERT INTO _outbox (seq, record) VALUES (")
          .AppendParam(Value::Int(0))
          .Append(", ")
          .AppendParam(Value::Str(std::string()))
          .Append(")");
      o.sql = b.sql();
      o.params = b.TakeParams();
    }
    o.params[0] = Value::Int(seq);
    o.params[1].AssignStr(std::string_view(record).substr(0, first));
    o.what.assign("writing outbox record ");
    o.what += std::to_string(seq);
    Status s = conn_->Run(o.sql, o.params, o.what, nullptr);
    if (first > 65536) o.params[1] = Value();  // a bulk's text is let go
    ONESTORE_RETURN_IF_ERROR(s);
  }
  // Outbox format 2: the rest of a long record, part by part.
  int64_t part = 0;
  for (size_t at = first; at < record.size();) {
    const size_t n = PartLength(record, at, max);
    SqlBuilder b = Builder();
    b.Append("INSERT INTO _outbox_parts (seq, part, text) VALUES (")
        .AppendParam(Value::Int(seq))
        .Append(", ")
        .AppendParam(Value::Int(++part))
        .Append(", ")
        .AppendParam(Value::Str(record.substr(at, n)))
        .Append(")");
    ONESTORE_RETURN_IF_ERROR(Run(b, "writing part " + std::to_string(part) +
                                        " of outbox record " + std::to_string(seq)));
    at += n;
  }
  if (options_.head_per_commit && !options_.head_by_trigger) {
    SqlBuilder b = Builder();
    b.Append("UPDATE _meta SET value = ").AppendParam(Value::Int(seq)).Append(" WHERE key = 'head'");
    ONESTORE_RETURN_IF_ERROR(Run(b, "writing the head"));
  }
  // The last write of a commit: what the connection deferred runs now, so
  // that its failure is the commit's (with its own code), not COMMIT's.
  return conn_->Flush();
}

ONESTORE_COLD Status SqliteBackend::OutboxStartsAfter(int64_t head) {
  if (!options_.head_per_commit || !options_.head_by_trigger) return Status::OK();
  SqlBuilder b = Builder();
  b.Append("UPDATE _meta SET value = ").AppendParam(Value::Int(head)).Append(" WHERE key = 'head'");
  return Run(b, "writing the head");
}

Status SqliteBackend::Commit() {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  // Deferred writes not yet run (a path without AppendOutbox): their
  // failure is theirs; nothing was committed.
  ONESTORE_RETURN_IF_ERROR(conn_->Flush());
  Status s = conn_->Commit();
  if (!s.ok()) return Status::StorageFailed(s.message());
  committed_ = true;
  return Status::OK();
}

void SqliteBackend::Rollback() {
  if (!open_) return;
  conn_->Rollback();
}

const SqliteBackend::GetStatement& SqliteBackend::GetStatementOf(const TableSchema& t,
                                                                 const Key& key) {
  GetStatement& g = get_statements_[t.name];
  bool same = !g.sql.empty() && g.columns.size() == t.columns.size() && g.key == t.key;
  for (size_t i = 0; same && i < t.columns.size(); ++i) {
    same = g.columns[i].first == t.columns[i].name && g.columns[i].second == t.columns[i].type;
  }
  if (same) return g;
  g.columns.clear();
  for (const Column& c : t.columns) g.columns.emplace_back(c.name, c.type);
  g.key = t.key;
  // The parameters' types are the key columns' (ParseKey): the text the
  // dialect writes for them is the same for every key of the table.
  SqlBuilder b = Builder();
  AppendSelectRow(t, &b);
  AppendKeyWhere(t, key, &b);
  g.sql = b.sql();
  g.what = "get from table \"" + t.name + "\"";
  return g;
}

Status SqliteBackend::Get(const TableSchema& t, const Key& key, std::optional<Row>* row) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  if (key.size() != t.key.size()) {
    return Status::InvalidArgs("table \"" + t.name + "\": the key " + DescribeKey(key) + " has " +
                               std::to_string(key.size()) + " values for " +
                               std::to_string(t.key.size()) + " key columns");
  }
  SqlRows rows;
  if (dialect_.max_params > 0 && key.size() > dialect_.max_params) {
    SqlBuilder b = Builder();
    AppendSelectRow(t, &b);
    AppendKeyWhere(t, key, &b);
    ONESTORE_RETURN_IF_ERROR(Run(b, "get from table \"" + t.name + "\"", &rows));
  } else {
    const GetStatement& get = GetStatementOf(t, key);
    ONESTORE_RETURN_IF_ERROR(conn_->Run(get.sql, key, get.what, &rows, false));
  }
  row->reset();
  if (rows.size() > 0) {
    Row r;
    ReadRow(&rows, 0, t, &r);
    *row = std::move(r);
  }
  return Status::OK();
}

// Only where the host's own values are the package's: str, int (a safe one
// a number, else its text), num, json (its text); not bool (0 or 1) or
// vector (bytes).
bool SqliteBackend::HoldNextPage(const TableSchema& t) {
  hold_next_ = conn_->CanHoldRows();
  for (const Column& c : t.columns) {
    if (c.type == Type::kBool || c.type == Type::kVector) hold_next_ = false;
  }
  return hold_next_;
}

Status SqliteBackend::Page(const Query& q, const std::vector<Value>* after, int64_t limit,
                           std::vector<Row>* rows, PageBytes* bytes) {
  const bool hold = hold_next_;
  hold_next_ = false;
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
  SqlBuilder b = Builder();
  AppendSelectRow(t, &b);
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
  // The limit is written into the text, not bound: SQLite reads a bound
  // LIMIT while preparing (sqlite3ExprIsInteger) and so re-prepares the
  // statement every time it is bound again, which cost a page on a file
  // about a third of its time (docs/performance.md, "Issue 13, links and
  // gets"). A text per limit is one cached statement per limit a caller uses.
  b.Append(" LIMIT ").Append(std::to_string(limit));
  SqlRows result;
  result.hold = hold;
  if (bytes != nullptr) result.max_bytes = kReadBytes;
  ONESTORE_RETURN_IF_ERROR(Run(b, "page of table \"" + t.name + "\"", &result));
  if (bytes != nullptr) bytes->cut = result.cut;
  // Held: the last rows' cells only (HoldNextPage).
  const size_t skip = hold ? result.held - result.size() : 0;
  rows->resize(skip + result.size());
  for (size_t r = 0; r < result.size(); ++r) ReadRow(&result, r, t, &(*rows)[skip + r]);
  return Status::OK();
}

ONESTORE_COLD Status SqliteBackend::ScanColumns(const Query& q, const std::vector<bool>& wanted,
                                              const std::function<bool(const Row&)>& visit) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  if (q.table == nullptr) return Status::InvalidArgs("sqlite: a query without a table");
  const TableSchema& t = *q.table;
  SqlBuilder b = Builder();
  AppendSelectRow(t, &b, &wanted);
  if (q.where) {
    b.Append(" WHERE ");
    AppendPredicateSql(t, *q.where, &b);
  }
  SqlRows rows;
  ONESTORE_RETURN_IF_ERROR(Run(b, "columns of table \"" + t.name + "\"", &rows));
  Row row;
  for (size_t r = 0; r < rows.size(); ++r) {
    ReadRow(&rows, r, t, &row);
    if (!visit(row)) break;
  }
  return Status::OK();
}

ONESTORE_COLD Status SqliteBackend::ScanKeys(const Query& q, const std::function<void(const Key&)>& visit) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  if (q.table == nullptr) return Status::InvalidArgs("sqlite: a query without a table");
  const TableSchema& t = *q.table;
  SqlBuilder b = Builder();
  b.Append("SELECT ");
  for (size_t i = 0; i < t.key.size(); ++i) {
    if (i > 0) b.Append(", ");
    const Column& c = t.columns[t.key[i]];
    const std::string name = QuoteIdent(c.name);
    b.Append(c.type == Type::kInt ? IntResultSql(dialect_, name) : name);  // as AppendSelectRow
  }
  b.Append(" FROM ").AppendIdent(t.name);
  if (q.where) {
    b.Append(" WHERE ");
    AppendPredicateSql(t, *q.where, &b);
  }
  SqlRows rows;
  ONESTORE_RETURN_IF_ERROR(Run(b, "keys of table \"" + t.name + "\"", &rows));
  // Key columns are str or int (schema.h), never null.
  Key key(t.key.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t i = 0; i < t.key.size(); ++i) {
      const Value& cell = rows.at(r, i);
      key[i] = t.columns[t.key[i]].type == Type::kInt
                   ? Value::Int(SqlCellInt(cell))
                   : Value::Str(cell.type() == Type::kStr ? cell.text() : std::string());
    }
    visit(key);
  }
  return Status::OK();
}

ONESTORE_COLD Status SqliteBackend::Count(const TableSchema& t, const Predicate* where, int64_t* count) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  SqlBuilder b = Builder();
  b.Append("SELECT ").Append(IntResultSql(dialect_, "count(*)")).Append(" FROM ");
  b.AppendIdent(t.name);
  if (where != nullptr) {
    b.Append(" WHERE ");
    AppendPredicateSql(t, *where, &b);
  }
  SqlRows rows;
  ONESTORE_RETURN_IF_ERROR(Run(b, "count of table \"" + t.name + "\"", &rows));
  *count = rows.size() > 0 ? SqlCellInt(rows.at(0, 0)) : 0;
  return Status::OK();
}

ONESTORE_COLD Status SqliteBackend::MaxIntKey(const TableSchema& t, int64_t* max) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  if (!t.HasIntKey()) {
    return Status::InvalidArgs("table \"" + t.name + "\" does not have a single int key");
  }
  SqlBuilder b = Builder();
  b.Append("SELECT ")
      .Append(IntResultSql(dialect_, "max(" + QuoteIdent(t.columns[t.key[0]].name) + ")"))
      .Append(" FROM ")
      .AppendIdent(t.name);
  SqlRows rows;
  ONESTORE_RETURN_IF_ERROR(Run(b, "max key of table \"" + t.name + "\"", &rows));
  *max = (rows.size() > 0 && !rows.at(0, 0).is_null()) ? SqlCellInt(rows.at(0, 0)) : 0;
  return Status::OK();
}

Status SqliteBackend::ReadOutbox(int64_t after, int64_t limit, std::vector<OutboxEntry>* out) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  out->clear();
  if (limit <= 0) return Status::OK();
  SqlBuilder b = Builder();
  b.Append("SELECT ")
      .Append(IntResultSql(dialect_, "seq"))
      .Append(", record FROM _outbox WHERE seq > ")
      .AppendParam(Value::Int(after))
      .Append(" ORDER BY seq LIMIT ")
      .Append(std::to_string(limit));  // not bound: see Page
  SqlRows rows;
  rows.max_bytes = kReadBytes;
  ONESTORE_RETURN_IF_ERROR(Run(b, "reading the outbox", &rows));
  out->reserve(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    OutboxEntry e;
    e.seq = SqlCellInt(rows.at(r, 0));
    if (rows.at(r, 1).type() == Type::kStr) e.record = rows.at(r, 1).text();
    out->push_back(std::move(e));
  }
  if (dialect_.max_outbox_part == 0 || out->empty()) return Status::OK();
  // Outbox format 2: the records' further parts, appended in order.
  SqlBuilder p = Builder();
  p.Append("SELECT ")
      .Append(IntResultSql(dialect_, "seq"))
      .Append(", text FROM _outbox_parts WHERE seq >= ")
      .AppendParam(Value::Int(out->front().seq))
      .Append(" AND seq <= ")
      .AppendParam(Value::Int(out->back().seq))
      .Append(" ORDER BY seq, part");
  SqlRows parts;
  ONESTORE_RETURN_IF_ERROR(Run(p, "reading the outbox's long records", &parts));
  size_t i = 0;
  for (size_t r = 0; r < parts.size(); ++r) {
    const int64_t seq = SqlCellInt(parts.at(r, 0));
    while (i < out->size() && (*out)[i].seq < seq) ++i;
    if (i == out->size()) break;
    if ((*out)[i].seq == seq && parts.at(r, 1).type() == Type::kStr) {
      (*out)[i].record += parts.at(r, 1).text();
    }
  }
  // The page stops once its whole records hold kReadBytes, as on every
  // backend: a Durable Object's connection does not cut (its first parts
  // are small), so its pages of long records held every record up to
  // `limit` (12 records of 1.4 MB gave one page of 17 MB).
  size_t used = 0;
  for (size_t k = 0; k < out->size(); ++k) {
    used += (*out)[k].record.size();
    if (used >= kReadBytes) {
      out->resize(k + 1);
      break;
    }
  }
  return Status::OK();
}

ONESTORE_COLD Status SqliteBackend::TrimOutbox(int64_t up_to, int64_t* removed) {
  ONESTORE_RETURN_IF_ERROR(Begin());
  // Head format 2: the head is kept in _meta before its records go.
  Status st = options_.head_per_commit ? Status::OK() : StoreHead();
  SqlBuilder b = Builder();
  b.Append("DELETE FROM _outbox WHERE seq <= ").AppendParam(Value::Int(up_to));
  SqlRows rows;
  if (st.ok()) st = Run(b, "trimming the outbox", &rows, true);
  if (st.ok() && dialect_.max_outbox_part > 0) {
    SqlBuilder p = Builder();
    p.Append("DELETE FROM _outbox_parts WHERE seq <= ").AppendParam(Value::Int(up_to));
    SqlRows ignored;
    st = Run(p, "trimming the outbox's long records", &ignored);
  }
  if (!st.ok()) {
    Rollback();
    return st;
  }
  *removed = rows.changes;
  return Commit();
}

// Notes live in _meta under "note:<key>", apart from id, head and epoch.
ONESTORE_COLD Status SqliteBackend::ReadNote(const std::string& key, std::string* value) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  SqlBuilder b = Builder();
  b.Append("SELECT value FROM _meta WHERE key = ").AppendParam(Value::Str("note:" + key));
  SqlRows rows;
  ONESTORE_RETURN_IF_ERROR(Run(b, "reading _meta note " + key, &rows));
  value->clear();
  if (rows.size() > 0 && rows.at(0, 0).type() == Type::kStr) *value = rows.at(0, 0).text();
  return Status::OK();
}

ONESTORE_COLD Status SqliteBackend::WriteNote(const std::string& key, const std::string& value) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  if (!conn_->InTransaction()) {
    return Status::InvalidArgs("sqlite: a note is written inside a write transaction");
  }
  ONESTORE_RETURN_IF_ERROR(WriteMeta(("note:" + key).c_str(), Value::Str(value)));
  return conn_->Flush();
}

ONESTORE_COLD Status SqliteBackend::DiffWithCopy(const TableSchema& t, const std::string& copy,
                                                 std::vector<Key>* gone, std::vector<Row>* changed,
                                                 std::vector<Row>* added) {
  ONESTORE_RETURN_IF_ERROR(CheckOpen());
  const std::string what = "comparing table \"" + t.name + "\" with its snapshot copy";
  // "a.k1 = b.k1 AND ...": the same key in the two tables.
  auto same_key = [&](const char* a, const char* b) {
    std::string out;
    for (size_t i = 0; i < t.key.size(); ++i) {
      const std::string c = QuoteIdent(t.columns[t.key[i]].name);
      if (i > 0) out += " AND ";
      out += std::string(a) + "." + c + " = " + b + "." + c;
    }
    return out;
  };
  const std::string table = QuoteIdent(t.name);
  const std::string copied = QuoteIdent(copy);
  // The keys of t's rows that the copy lacks, read as a row of the key's columns.
  TableSchema keys;
  keys.name = t.name;
  for (int k : t.key) keys.columns.push_back(t.columns[k]);
  {
    SqlBuilder b = Builder();
    b.Append("SELECT ");
    for (size_t i = 0; i < keys.columns.size(); ++i) {
      if (i > 0) b.Append(", ");
      const std::string c = "t." + QuoteIdent(keys.columns[i].name);
      b.Append(keys.columns[i].type == Type::kInt ? IntResultSql(dialect_, c) : c);
    }
    b.Append(" FROM " + table + " AS t WHERE NOT EXISTS (SELECT 1 FROM " + copied + " AS c WHERE " +
             same_key("c", "t") + ")");
    SqlRows rows;
    ONESTORE_RETURN_IF_ERROR(Run(b, what, &rows));
    gone->resize(rows.size());
    for (size_t r = 0; r < rows.size(); ++r) ReadRow(&rows, r, keys, &(*gone)[r]);
  }
  // The copy's rows that t does not hold as they are (a differing column
  // compared with IS: NULLs alike), and whether t holds their key.
  {
    SqlBuilder b = Builder();
    b.Append("SELECT ");
    for (size_t i = 0; i < t.columns.size(); ++i) {
      if (i > 0) b.Append(", ");
      const std::string c = "c." + QuoteIdent(t.columns[i].name);
      b.Append(t.columns[i].type == Type::kInt ? IntResultSql(dialect_, c) : c);
    }
    // Every column IS its copy, joined as a balanced tree of ANDs: a chain
    // of one AND per column is an expression as deep as the table is wide,
    // and a Durable Object's SQLite allows a depth of 100 (a table of 46
    // columns failed to restore there).
    std::vector<std::string> terms{same_key("t", "c")};
    for (size_t i = 0; i < t.columns.size(); ++i) {
      const std::string c = QuoteIdent(t.columns[i].name);
      terms.push_back("t." + c + " IS c." + c);
    }
    while (terms.size() > 1) {
      std::vector<std::string> joined;
      for (size_t i = 0; i < terms.size(); i += 2) {
        joined.push_back(i + 1 < terms.size() ? "(" + terms[i] + " AND " + terms[i + 1] + ")" : terms[i]);
      }
      terms.swap(joined);
    }
    const std::string& same_row = terms[0];
    b.Append(", EXISTS (SELECT 1 FROM " + table + " AS t WHERE " + same_key("t", "c") + ") FROM " +
             copied + " AS c WHERE NOT EXISTS (SELECT 1 FROM " + table + " AS t WHERE " + same_row +
             ")");
    SqlRows rows;
    ONESTORE_RETURN_IF_ERROR(Run(b, what, &rows));
    for (size_t r = 0; r < rows.size(); ++r) {
      Row row;
      ReadRow(&rows, r, t, &row);
      (SqlCellInt(rows.at(r, t.columns.size())) != 0 ? changed : added)->push_back(std::move(row));
    }
  }
  return Status::OK();
}

ONESTORE_COLD Status SqliteBackend::Close() {
  if (!open_) return conn_->Close();
  Rollback();
  // Head format 2: a closed file's _meta.head is its head, as a reader of
  // format 1 expects. Only with the lock held for life, so closing never
  // waits for another process's lock; a failure leaves the head to the next
  // open (the outbox holds it).
  if (committed_ && options_.lock_for_life && !options_.head_per_commit && conn_->Begin().ok()) {
    if (!StoreHead().ok() || !conn_->Commit().ok()) conn_->Rollback();
  }
  open_ = false;
  return conn_->Close();
}

}  // namespace

std::unique_ptr<Backend> NewSqlBackend(std::unique_ptr<SqlConnection> connection,
                                       const SqlBackendOptions& options) {
  return std::make_unique<SqliteBackend>(std::move(connection), std::string(), options);
}

std::unique_ptr<Backend> NewSqliteBackend(const SqliteOptions& options) {
  // ":memory:" is always new; any file may hold another application's data.
  const bool check = !options.adopt_foreign && options.path != ":memory:";
  SqlBackendOptions backend;
  backend.lock_for_life = options.exclusive;
  backend.head_per_commit = false;
  return std::make_unique<SqliteBackend>(NewEmbeddedConnection(options),
                                         check ? options.path : std::string(), backend);
}

}  // namespace onestore
