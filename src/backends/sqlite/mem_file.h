// An in-memory FileSystem (a fake for tests, usable by anyone who wants a
// store that lives in memory but goes through the VFS), and FaultFileSystem,
// a wrapper over another FileSystem that fails a chosen write or sync, after
// leveldb's FaultInjectionTestEnv.
//
// Neither is thread-safe; SQLite is built single-threaded.
#ifndef ONESTORE_BACKENDS_SQLITE_MEM_FILE_H_
#define ONESTORE_BACKENDS_SQLITE_MEM_FILE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "backends/sqlite/file.h"
#include "onestore/status.h"

namespace onestore {

// A file that lives in memory and belongs to no FileSystem (the VFS uses it
// for SQLite's nameless temporary files).
std::unique_ptr<File> NewMemFile();

// Files in memory, by path. Each file remembers what it held at its last
// Sync, so a test can simulate a crash that loses every unsynced write.
// Several opens of one path share one file.
class MemFileSystem : public FileSystem {
 public:
  MemFileSystem() = default;
  MemFileSystem(const MemFileSystem&) = delete;
  MemFileSystem& operator=(const MemFileSystem&) = delete;

  // Opening a missing path without `create` fails with not_found.
  Status Open(const std::string& path, bool create, std::unique_ptr<File>* out) override;
  // Deleting a missing path fails with not_found.
  Status Delete(const std::string& path) override;
  Status Exists(const std::string& path, bool* exists) override;

  // Simulates a crash: every file goes back to what it held at its last Sync
  // (a file never synced becomes empty). Open File objects see the change.
  void DropUnsyncedWrites();
  // The current bytes of the file at path; false if there is none.
  bool Contents(const std::string& path, std::string* out) const;

  struct Node {
    std::string data;    // what a read sees
    std::string synced;  // what survives DropUnsyncedWrites
  };

 private:
  std::map<std::string, std::shared_ptr<Node>> files_;
};

// Forwards every call to `base`, counting WriteAt and Sync calls over all
// files opened through it, and fails the chosen ones with storage_failed
// (the file is left as it was). `base` must outlive this object and every
// file opened through it.
class FaultFileSystem : public FileSystem {
 public:
  explicit FaultFileSystem(FileSystem* base) : base_(base) {}
  FaultFileSystem(const FaultFileSystem&) = delete;
  FaultFileSystem& operator=(const FaultFileSystem&) = delete;

  Status Open(const std::string& path, bool create, std::unique_ptr<File>* out) override;
  Status Delete(const std::string& path) override;
  Status Exists(const std::string& path, bool* exists) override;

  // The n-th WriteAt from now (1 = the next one) fails; with `sticky`, so
  // does every later one, as with a device that went away.
  void FailWrite(int64_t n, bool sticky = false);
  // The n-th Sync from now fails; with `sticky`, every later one too.
  void FailSync(int64_t n, bool sticky = false);
  // Stops failing anything.
  void Heal();

  int64_t writes() const { return writes_; }      // WriteAt calls so far
  int64_t syncs() const { return syncs_; }        // Sync calls so far
  int64_t failures() const { return failures_; }  // calls failed so far

 private:
  friend class FaultFile;
  // Counts one call of a kind and says whether it fails.
  Status Count(bool is_sync, const std::string& path);

  FileSystem* base_;
  int64_t writes_ = 0;
  int64_t syncs_ = 0;
  int64_t failures_ = 0;
  int64_t fail_write_at_ = -1;  // absolute call number, -1: none
  int64_t fail_sync_at_ = -1;
  bool sticky_write_ = false;
  bool sticky_sync_ = false;
};

}  // namespace onestore

#endif  // ONESTORE_BACKENDS_SQLITE_MEM_FILE_H_
