// onestore's sqlite3_vfs over the File interface (file.h).
//
// The store has one owner, so locks are kept by the owner for as long as it
// runs; fencing (an epoch in _meta checked in each commit's transaction)
// protects the data when a second owner takes over.
#ifndef ONESTORE_BACKENDS_SQLITE_VFS_H_
#define ONESTORE_BACKENDS_SQLITE_VFS_H_

#include <string>

#include "backends/sqlite/file.h"
#include "onestore/status.h"

namespace onestore {

// Registers the VFS named "onestore" over `fs` and makes it SQLite's
// default. Call once before opening a database; `fs` must outlive SQLite.
Status RegisterVfs(FileSystem* fs);

// The first failure, since the last call for `db_path`, to release the
// database `db_path` or its WAL: its lock between processes (xUnlock) or
// closing a file (xClose). SQLite ignores both in sqlite3_close, so the
// connection asks here after closing (EmbeddedConnection::Close). OK if none.
Status TakeReleaseFailure(const std::string& db_path);

}  // namespace onestore

#endif  // ONESTORE_BACKENDS_SQLITE_VFS_H_
