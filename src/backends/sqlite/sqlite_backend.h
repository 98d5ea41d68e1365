// The sqlite backend: each table a real SQLite table "<type>/<name>" with real
// columns (STRICT), system tables starting with "_" (_meta, _outbox,
// _tables), an updateWhere or a deleteWhere as one SQL statement. It builds
// the SQL; a SqlConnection (connection.h) runs it: the embedded sqlite3 C API
// (statements prepared once and cached), or a host's SQLite such as a
// Durable Object's.
#ifndef ONESTORE_BACKENDS_SQLITE_SQLITE_BACKEND_H_
#define ONESTORE_BACKENDS_SQLITE_SQLITE_BACKEND_H_

#include <memory>
#include <string>

#include "backends/backend.h"
#include "backends/sqlite/connection.h"

namespace onestore {

struct SqliteOptions {
  std::string path;             // a file path, or ":memory:"
  bool durability_full = true;  // synchronous=FULL; false: NORMAL
  // How long a transaction waits for another process's lock on the file.
  int64_t lock_timeout_ms = 10000;
  // One owner for the life of the connection (the "opfs" backend, whose
  // files only this owner can reach): SQLite's lock is taken once and kept
  // (locking_mode=EXCLUSIVE, so the page cache survives between
  // transactions), and the journal is a WAL without shared memory
  // (journal_mode=WAL, allowed in exclusive mode). With durability_full a
  // commit flushes the WAL; without, only checkpoints flush (a power cut may
  // lose the newest commits, never corrupt the file).
  bool exclusive = false;
  // With exclusive: Close checkpoints the WAL and puts the file back in
  // rollback-journal mode (file format 1; the switch itself runs with
  // journal_mode=OFF and writes page 1 alone), so that a closed store is a
  // plain SQLite file with no -wal beside it, which any SQLite reads (the
  // sqlite3 command, a store opened without exclusive). A Node store file.
  bool plain_when_closed = false;
  // A file that is a SQLite database but not a store (it has tables, and
  // not onestore's _meta, _outbox and _tables) is refused with invalid/args,
  // so that opening the wrong path never adds tables to another
  // application's database. With adopt_foreign the store's tables are added
  // beside the others.
  bool adopt_foreign = false;
  // A connection that holds its lock (exclusive) keeps 16 MiB of pages
  // (ConfigureEmbeddedConnection); with small_page_cache, SQLite's own 2 MB,
  // as one without the lock: for tests whose big transaction must spill
  // pages before COMMIT (tests/cpp/crash_points_test.cc).
  bool small_page_cache = false;
};

// The sqlite backend over the embedded connection to options.path.
std::unique_ptr<Backend> NewSqliteBackend(const SqliteOptions& options);

// How the sqlite backend keeps ownership and the head over a connection.
struct SqlBackendOptions {
  // The connection holds the database's lock from Open to Close and no
  // other owner can take it meanwhile (SqliteOptions::exclusive: a Node
  // store file with holdLock, an opfs store): a commit does not read the
  // epoch back (docs/architecture.md, "One writer"). Otherwise each write
  // transaction checks it, and fails with `fenced` when another owner has
  // opened the store since.
  bool lock_for_life = false;
  // Each commit writes _meta.head (head format 1: a Durable Object's store).
  // False (head format 2, docs/formats.md): a commit writes no _meta row;
  // the head is max(_meta.head, max(_outbox.seq)), and _meta.head catches
  // up at open, in the transaction that trims the outbox, and at close when
  // the lock is held for life. It never runs ahead of the outbox.
  bool head_per_commit = true;
  // With head_per_commit: _meta.head is written by SQLite itself, by the
  // trigger _outbox_head (AFTER INSERT ON _outbox, created by every open),
  // not by a statement of each commit. The tables hold what they held
  // (head format 1: an older version reads them as before, and its own
  // head write sets what the trigger set); a commit sends one statement
  // fewer (a Durable Object's store; docs/formats.md, "The head on a Durable
  // Object").
  bool head_by_trigger = false;
};

// The head of a store (head format 2, docs/formats.md) as one row
// ('head', n): max(_meta.head, max(_outbox.seq)).
#define ONESTORE_HEAD_SQL                                                         \
  "SELECT 'head', max(coalesce((SELECT value FROM _meta WHERE key = 'head'), 0), " \
  "coalesce((SELECT max(seq) FROM _outbox), 0))"
constexpr char kHeadSql[] = ONESTORE_HEAD_SQL;

// The sqlite backend over any connection (not yet open; Backend::Open opens
// it). Its SQL is built in connection->dialect(). It does not refuse a
// database with other tables (SqliteOptions::adopt_foreign): a host's
// database, such as a Durable Object's, may keep its class's own tables
// beside the store's.
std::unique_ptr<Backend> NewSqlBackend(std::unique_ptr<SqlConnection> connection,
                                       const SqlBackendOptions& options = SqlBackendOptions());

// What listStores tells of a sqlite file without opening it as a store
// (which would take it over): its session id and head, read from _meta by a
// read-only connection. A SQLite database that is not a store (no _meta
// with an id) fails with not_found; a file that is not SQLite, with
// storage_failed. With `private_copy` (a copy only this call reads, such as
// the bytes of an OPFS store read by listStores) the connection is
// read-write in exclusive locking mode, so that a WAL is read with a
// wal-index in memory (the copy may be written; nobody sees it).
struct StorePeek {
  std::string id;
  int64_t head = 0;
  bool replica = false;
};
Status PeekSqliteStore(const std::string& path, bool private_copy, StorePeek* out);

}  // namespace onestore

#endif  // ONESTORE_BACKENDS_SQLITE_SQLITE_BACKEND_H_
