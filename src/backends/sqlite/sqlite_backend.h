// The sqlite backend: each table a real SQLite table "<type>/<name>" with real
// columns (STRICT), system tables starting with "_" (_meta, _outbox,
// _tables), statements prepared once and cached, an updateWhere or a
// deleteWhere as one SQL statement.
#ifndef ONESTORE_BACKENDS_SQLITE_SQLITE_BACKEND_H_
#define ONESTORE_BACKENDS_SQLITE_SQLITE_BACKEND_H_

#include <memory>
#include <string>

#include "backends/backend.h"

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
};

std::unique_ptr<Backend> NewSqliteBackend(const SqliteOptions& options);

}  // namespace onestore

#endif  // ONESTORE_BACKENDS_SQLITE_SQLITE_BACKEND_H_
