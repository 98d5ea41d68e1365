// SqlConnection: what runs the SQL of the sqlite backend. The backend
// (sqlite_backend.h) builds every statement once, with query/sql.h and
// writes/sql.h; a connection only runs it. Two implement it:
//   - the embedded sqlite3 C API (embedded_connection.h), with a cache of
//     prepared statements, over a file of the VFS or ":memory:";
//   - a host's SQLite reached through a JS library (in wasm/: a Durable
//     Object's ctx.storage.sql.exec, wasm/durable_connection.cc), whose
//     transactions belong to the host (ctx.storage.transactionSync).
// Every call is synchronous.
#ifndef ONESTORE_BACKENDS_SQLITE_CONNECTION_H_
#define ONESTORE_BACKENDS_SQLITE_CONNECTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "onestore/status.h"
#include "query/sql.h"
#include "values/value.h"

namespace onestore {

// The rows of one statement, row-major, each cell as SQLite returned it: null,
// int, num (REAL), str (TEXT) or, for a BLOB (a vector column's bytes), a
// kVector Value holding the blob's bytes. A host-bound connection returns an integer
// that it cannot tell from a double as int when it is integral, num
// otherwise; the backend reads int results beyond 2^53 through CAST(x AS TEXT) there
// (SqlDialect::int_results_as_text) and a num column accepts an int cell.
struct SqlRows {
  size_t columns = 0;
  std::vector<Value> cells;
  // Rows changed by the statement (sqlite3_changes), when asked for.
  int64_t changes = 0;
  // Asked by the caller: a host that can (SqlConnection::CanHoldRows) keeps
  // the rows on its side, answers their number in `held` and gives `cells`
  // of the last two only (all of them when fewer).
  bool hold = false;
  size_t held = 0;
  // Asked by the caller: stop once the rows' text and blobs hold this many
  // bytes (kReadBytes; 0: never), and say in `cut` that a row follows. The
  // embedded connection cuts; a host-bound one gives every row.
  size_t max_bytes = 0;
  bool cut = false;

  size_t size() const { return columns == 0 ? 0 : cells.size() / columns; }
  const Value& at(size_t row, size_t column) const { return cells[row * columns + column]; }
};

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;

  // The dialect the backend builds its SQL in for this connection.
  virtual const SqlDialect& dialect() const = 0;

  // Opens the database (the embedded one: the file and its configuration).
  // Fails with storage_failed.
  virtual Status Open() = 0;

  // Runs one statement with its parameters (bound in order, as SqlBuilder
  // describes) and collects every row into *rows (may be null when the
  // statement returns none). With `count_changes`, rows->changes is the number
  // of rows it changed. Fails with invalid/args for a constraint or an
  // integer overflow, `limit` for a host's limit (a value, row or statement
  // too big, too many parameters), storage_failed otherwise. The message
  // names `what`.
  virtual Status Run(const std::string& sql, const std::vector<Value>& params,
                     const std::string& what, SqlRows* rows, bool count_changes = false) = 0;

  // Runs SQL text of one or more statements without parameters or rows
  // (DDL). Fails as Run.
  virtual Status Exec(const std::string& sql) = 0;

  // Deferred writes. Inside a transaction a connection may defer a statement
  // of Run that returns no rows and counts no changes (rows == nullptr,
  // !count_changes), and those of RunRow and RunCheck: it runs them, in
  // order, before the next statement that answers (Run with rows or
  // count_changes, Exec), in Flush, or in Commit, and reports the first
  // failure there, named by that statement's own `what`; nothing after a
  // failing statement runs. Rollback drops them. The embedded connection
  // defers only RunRow's puts, to join them (its calls cost no crossing); a
  // host-bound one (a Durable Object's) sends what it deferred in one call to
  // its host, each put a statement of its own.

  // Runs `head` + `row` (an INSERT's "INSERT ... VALUES " and one row's
  // "(?, ...)") with `params`. A connection that defers writes may join
  // consecutive calls with the same head into one statement "head row, row,
  // ..." within its host's limits: the same rows written in the same order.
  // The values of *params may be moved from; the vector stays the caller's
  // (a put's list of values, kept with its room from one put to the next).
  virtual Status RunRow(const std::string& head, const std::string& row,
                        std::vector<Value>* params, const std::string& what) {
    return Run(head + row, *params, what, nullptr);
  }

  // Runs a statement whose first cell must be the int `expect` (as
  // SqlCellInt reads it); fails with `mismatch` when it is not, or when there
  // is no row. May be deferred like a write: the check then runs before what
  // was deferred after it, which does not run when it fails.
  virtual Status RunCheck(const std::string& sql, const std::vector<Value>& params,
                          const std::string& what, int64_t expect, const Status& mismatch);

  // Runs what was deferred (OK when nothing was); its first failure.
  virtual Status Flush() { return Status::OK(); }

  // Whether a read's rows can stay with the host (SqlRows::hold): a page
  // the package reads from the host's own values (js/loader-workerd.js).
  virtual bool CanHoldRows() const { return false; }

  // A write transaction. Begin fails with storage_failed when it cannot start
  // one (the file is locked; the host has no transaction around the call).
  // Commit's failure is storage_failed: the outcome is unknown. Rollback
  // never fails and does nothing outside a transaction.
  virtual Status Begin() = 0;
  virtual Status Commit() = 0;
  virtual void Rollback() = 0;
  virtual bool InTransaction() const = 0;

  // Copies the committed database into the new file `path` (Backend::CopyTo).
  // A host's SQLite (a Durable Object's) has no backup API: invalid/args.
  virtual Status CopyTo(const std::string& path) {
    return Status::InvalidArgs("this SQLite (a host's, such as a Durable Object's) has no backup "
                               "API and no ATTACH, so it cannot copy itself to " + path);
  }

  // Called by the backend once its open's transaction has committed. The
  // embedded connection runs that transaction without syncs when the open
  // starts a new WAL on a file with pages (ConfigureEmbeddedConnection) and
  // sets the durability's synchronous here, before any commit.
  virtual Status Opened() { return Status::OK(); }

  // Releases the database. Further calls are not allowed. Returns what
  // failed in releasing it (its lock, closing its files: storage_failed);
  // the database is released anyway, and every commit made is kept.
  virtual Status Close() = 0;
};

// Reads an int cell: an int, or the decimal text of CAST(x AS TEXT) (exact to
// 64 bits), or an integral num (a safe integer a host returned as a double). Anything else (null included) is 0 with
// *ok false.
int64_t SqlCellInt(const Value& cell, bool* ok = nullptr);

// Reads a num cell: a num, or an int (a host returns integral REALs as ints).
double SqlCellNum(const Value& cell);

// "x", or, when the dialect reads ints as text, x itself when it is a safe
// integer (|x| < 2^53) and CAST(x AS TEXT) otherwise: the one place an int
// result is wrapped.
std::string IntResultSql(const SqlDialect& d, const std::string& expr);

// The limits of a host-bound SQLite (a Durable Object's: 100 bound
// parameters, 100 KB of SQL per statement, 2 MB per value or row), checked
// before a statement goes to the host so that the error names the limit.
struct HostLimits {
  size_t max_params = 100;
  size_t max_statement_bytes = 100000;
  size_t max_value_bytes = 2000000;  // workerd itself refuses above 2,200,000
};

// `limit` naming the limit and `what` when the statement or one of its values
// exceeds `limits`; OK otherwise. A row whose values pass one by one can still
// be too big together: the host reports it (HostSqlError).
Status CheckHostLimits(const HostLimits& limits, const std::string& sql,
                       const std::vector<Value>& params, const std::string& what);

// The text SQLite's own integer overflow error starts with (abs() of the
// smallest int, in the plain SQL of SqlDialect::HostBound's add and sub).
constexpr char kHostOverflowMessage[] = "integer overflow";

// The Status of a host's SQL error message (a Durable Object's Error text,
// "<sqlite message>: SQLITE_<CODE>"): invalid/args for a constraint or an
// integer overflow, `limit` for SQLITE_TOOBIG ("string or blob too big",
// "statement too long"), "too many SQL variables" and the refusal of BEGIN
// or SAVEPOINT (which names state.storage.transaction), storage_failed
// otherwise.
Status HostSqlError(const std::string& message, const std::string& what);

}  // namespace onestore

#endif  // ONESTORE_BACKENDS_SQLITE_CONNECTION_H_
