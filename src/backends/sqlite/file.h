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
};

// POSIX files (native builds only; not compiled into the wasm module).
FileSystem* PosixFileSystem();

}  // namespace onestore

#endif  // ONESTORE_BACKENDS_SQLITE_FILE_H_
