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
};

std::unique_ptr<Backend> NewSqliteBackend(const SqliteOptions& options);

}  // namespace onestore

#endif  // ONESTORE_BACKENDS_SQLITE_SQLITE_BACKEND_H_
