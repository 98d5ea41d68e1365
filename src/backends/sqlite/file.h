// The small file interface under the SQLite backend. SQLite reaches files
// only through onestore's VFS (vfs.h), and the VFS only through this
// interface. Node files (wasm/), OPFS sync access handles (wasm/, later),
// POSIX files (native builds and tests) and an in-memory fake implement it; a
// wrapper that forwards every call lets a test fail one call.
//
// Every method is synchronous and returns a Status; none throws.
#ifndef ONESTORE_BACKENDS_SQLITE_FILE_H_
#define ONESTORE_BACKENDS_SQLITE_FILE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "onestore/status.h"

namespace onestore {

class File {
 public:
  virtual ~File() = default;
  // Reads up to n bytes at offset into buf; sets *got to the number read
  // (short at end of file).
  virtual Status ReadAt(uint64_t offset, void* buf, size_t n, size_t* got) = 0;
  // Writes all n bytes at offset. A short write is an error.
  virtual Status WriteAt(uint64_t offset, const void* buf, size_t n) = 0;
  virtual Status Truncate(uint64_t size) = 0;
  // Makes every write so far durable.
  virtual Status Sync() = 0;
  virtual Status Size(uint64_t* size) = 0;
  virtual Status Close() = 0;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // Opens (and with `create`, creates) the file at path.
  virtual Status Open(const std::string& path, bool create, std::unique_ptr<File>* out) = 0;
  virtual Status Delete(const std::string& path) = 0;
  virtual Status Exists(const std::string& path, bool* exists) = 0;

  // The lock of the database at `path`, between processes. SQLite takes it
  // for every transaction, read or write (its SHARED lock and above), and
  // drops it when the transaction ends, so that no process reads pages that
  // another one is writing, and only one writes at a time. The epoch in
  // _meta then tells a fenced owner that another one took over. A file
  // system whose files only one process can reach (memory, an OPFS store
  // under its Web Lock) keeps these defaults.
  //
  // Takes the lock; sets *busy (and takes nothing) when another live
  // process, or another connection of this one, holds it, or when another
  // process announced that it waits for it: waiters are served in turn
  // (the POSIX and Node file systems: "<database>-lock.want").
  virtual Status Lock(const std::string& path, bool* busy) {
    *busy = false;
    return Status::OK();
  }
  // Releases a lock taken by Lock.
  virtual Status Unlock(const std::string& path) { return Status::OK(); }
  // Sets *held when a live holder other than the caller has the lock (SQLite
  // asks this to decide whether a journal is hot).
  virtual Status LockHeld(const std::string& path, bool* held) {
    *held = false;
    return Status::OK();
  }
};

// The lock file of Lock in the POSIX and Node file systems:
// "<database>-lock", holding "<pid>@<host>" of its holder. A lock whose
// holder on this host is no longer running is stale and taken over. A
// process that found it held writes "<database>-lock.want" ("<pid>@<host>",
// rewritten at each try) and the others let it go first while that is less
// than a second old and its process runs; it removes it once it holds the
// lock. js/files-node.js does the same: keep the two in step.
inline std::string LockPath(const std::string& db_path) { return db_path + "-lock"; }

// POSIX files (native builds only; not compiled into the wasm module).
FileSystem* PosixFileSystem();

}  // namespace onestore

#endif  // ONESTORE_BACKENDS_SQLITE_FILE_H_
