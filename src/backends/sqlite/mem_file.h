// An in-memory FileSystem (a fake for tests, usable by anyone who wants a
// store that lives in memory but goes through the VFS) that can simulate a
// power cut, and FaultFileSystem, a wrapper over another FileSystem that
// counts every call and fails a chosen one (or every call from one on: a
// crash), after leveldb's FaultInjectionTestEnv and SQLite's crash tests.
//
// Neither is thread-safe; SQLite is built single-threaded.
#ifndef ONESTORE_BACKENDS_SQLITE_MEM_FILE_H_
#define ONESTORE_BACKENDS_SQLITE_MEM_FILE_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

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

  // What a power cut leaves of the writes (and truncates) made since each
  // file's last Sync. A created or deleted file stays created or deleted.
  enum class Damage {
    kDropAll,      // none of them (DropUnsyncedWrites)
    kTearLast,     // all but the newest, and of the newest write only its
                   // bytes up to a random 512-byte sector boundary of the file
    kDropSome,     // a random half of them, in the order they were made
    kReorderSome,  // a random half of them, in a random order
  };
  // Applies `damage`, its random choices drawn from `seed`; then every file
  // holds what survived, as synced. Open File objects see the change.
  // Returns what it did to each file's unsynced changes, for a test's
  // failure message ("/db: 2/5 kept: w0+4096 t0 ...").
  std::string Crash(Damage damage, uint64_t seed);
  // Writes and truncates made since their file's last Sync, over all files.
  int64_t unsynced() const;
  // Makes `to` hold a copy of every file here (its bytes, its synced bytes
  // and its unsynced writes); files of `to` not here are removed.
  void CopyTo(MemFileSystem* to) const;
  // The current bytes of the file at path; false if there is none.
  bool Contents(const std::string& path, std::string* out) const;

  // A write (or, with `truncate`, a truncate to `offset`) not synced yet.
  struct Unsynced {
    uint64_t order = 0;  // over the whole file system, increasing
    bool truncate = false;
    uint64_t offset = 0;
    std::string bytes;
  };
  struct Node {
    std::string data;    // what a read sees
    std::string synced;  // what survives DropUnsyncedWrites
    std::vector<Unsynced> unsynced;  // synced + these, in order = data
    std::shared_ptr<uint64_t> clock;  // the file system's order counter
  };

 private:
  std::map<std::string, std::shared_ptr<Node>> files_;
  std::shared_ptr<uint64_t> clock_ = std::make_shared<uint64_t>(0);
};

// The calls a FaultFileSystem counts and can fail: every File and
// FileSystem method (each is one VFS method, or part of one: xLock and
// xUnlock call Lock and Unlock on the database, xCheckReservedLock calls
// LockHeld, xAccess calls Exists, xFileSize calls Size).
enum class IoCall {
  kOpen,
  kDelete,
  kExists,
  kRead,
  kWrite,
  kTruncate,
  kSync,
  kSize,
  kClose,
  kLock,
  kUnlock,
  kLockHeld,
};
constexpr int kIoCallKinds = 12;
const char* IoCallName(IoCall kind);

// Forwards every call to `base`, counting the calls of each kind (IoCall)
// over all files opened through it, and fails the chosen ones with
// storage_failed (the file is left as it was). `base` must outlive this
// object and every file opened through it.
class FaultFileSystem : public FileSystem {
 public:
  explicit FaultFileSystem(FileSystem* base) : base_(base) {}
  FaultFileSystem(const FaultFileSystem&) = delete;
  FaultFileSystem& operator=(const FaultFileSystem&) = delete;

  Status Open(const std::string& path, bool create, std::unique_ptr<File>* out) override;
  Status Delete(const std::string& path) override;
  Status Exists(const std::string& path, bool* exists) override;
  Status Lock(const std::string& path, bool* busy) override;
  Status Unlock(const std::string& path) override;
  Status LockHeld(const std::string& path, bool* held) override;

  // The n-th call of `kind` from now (1 = the next one) fails; with
  // `sticky`, so does every later one of that kind.
  void FailCall(IoCall kind, int64_t n, bool sticky = false);
  // A crash: the n-th call from now, of any kind, and every call after it
  // fail, so that nothing after it reaches the files.
  void CrashAt(int64_t n);
  // Appends the kind of every later call to `*trace` (nullptr: stops).
  void Trace(std::vector<IoCall>* trace) { trace_ = trace; }
  // Calls `hook` with each later call's number (calls(), counting it) before
  // the call is decided; CrashAt(0) there fails that call and every later
  // one. A test forks there to crash one copy of a run at every call
  // (tests/cpp/crash_points_test.cc). An empty hook stops.
  void BeforeCall(std::function<void(int64_t call)> hook) { before_call_ = std::move(hook); }

  // The n-th WriteAt from now (1 = the next one) fails; with `sticky`, so
  // does every later one, as with a device that went away.
  void FailWrite(int64_t n, bool sticky = false);
  // The n-th Sync from now fails; with `sticky`, every later one too.
  void FailSync(int64_t n, bool sticky = false);
  // Stops failing anything.
  void Heal();

  int64_t calls() const { return calls_; }  // calls of every kind so far
  int64_t calls(IoCall kind) const { return count_[static_cast<int>(kind)]; }
  int64_t writes() const { return calls(IoCall::kWrite); }  // WriteAt calls so far
  int64_t syncs() const { return calls(IoCall::kSync); }     // Sync calls so far
  int64_t failures() const { return failures_; }            // calls failed so far

 private:
  friend class FaultFile;
  // Counts one call of a kind and says whether it fails.
  Status Count(IoCall kind, const std::string& path);

  FileSystem* base_;
  int64_t calls_ = 0;
  int64_t failures_ = 0;
  int64_t crash_at_ = -1;  // absolute call number, -1: none
  std::array<int64_t, kIoCallKinds> count_{};
  std::array<int64_t, kIoCallKinds> fail_at_{};  // absolute, per kind; 0: none
  std::array<bool, kIoCallKinds> sticky_{};
  std::vector<IoCall>* trace_ = nullptr;
  std::function<void(int64_t)> before_call_;
};

}  // namespace onestore

#endif  // ONESTORE_BACKENDS_SQLITE_MEM_FILE_H_
