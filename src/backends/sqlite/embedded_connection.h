// The embedded SqlConnection: SQLite's C API in this process (the VFS of
// vfs.h, or ":memory:"), with a cache of prepared statements.
#ifndef ONESTORE_BACKENDS_SQLITE_EMBEDDED_CONNECTION_H_
#define ONESTORE_BACKENDS_SQLITE_EMBEDDED_CONNECTION_H_

#include <memory>
#include <string>

#include "backends/sqlite/connection.h"

struct sqlite3;

namespace onestore {

struct SqliteOptions;

// A connection to options.path (a file, or ":memory:"). Open() opens it and
// configures it with ConfigureEmbeddedConnection.
std::unique_ptr<SqlConnection> NewEmbeddedConnection(const SqliteOptions& options);

// The open-time configuration of an embedded connection, in one place: error
// codes, the busy timeout, onestore's SQL functions, the journal, the locking
// mode and synchronous. Runs once, right after sqlite3_open_v2. It may
// leave synchronous OFF for the open's transaction (an exclusive connection
// to a file with pages and no WAL beside it), and then sets *unsynced_open:
// the caller sets the durability's synchronous once that transaction has
// committed (SqlConnection::Opened).
Status ConfigureEmbeddedConnection(sqlite3* db, const SqliteOptions& options,
                                   bool* unsynced_open);

}  // namespace onestore

#endif  // ONESTORE_BACKENDS_SQLITE_EMBEDDED_CONNECTION_H_
