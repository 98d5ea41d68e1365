// onestore's sqlite3_vfs over the File interface (file.h).
//
// The store has one owner, so locks are kept by the owner for as long as it
// runs; fencing (an epoch in _meta checked in each commit's transaction)
// protects the data when a second owner takes over.
#ifndef ONESTORE_BACKENDS_SQLITE_VFS_H_
#define ONESTORE_BACKENDS_SQLITE_VFS_H_

#include "backends/sqlite/file.h"
#include "onestore/status.h"

namespace onestore {

// Registers the VFS named "onestore" over `fs` and makes it SQLite's
// default. Call once before opening a database; `fs` must outlive SQLite.
Status RegisterVfs(FileSystem* fs);

}  // namespace onestore

#endif  // ONESTORE_BACKENDS_SQLITE_VFS_H_
