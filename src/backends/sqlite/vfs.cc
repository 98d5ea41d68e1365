// The "onestore" sqlite3_vfs. SQLite is built with SQLITE_OS_OTHER=1, so it
// has no VFS of its own: sqlite3_os_init() below registers this one as the
// default, natively and in wasm alike. Files go to the FileSystem given to
// RegisterVfs; natively, PosixFileSystem() until one is given. The wasm
// module has no default (no POSIX files there): it registers its own
// (wasm/js_file_system.h) before opening a file, and a file opened before
// that fails with a message saying so.
//
// A VFS method returns an SQLite code and nothing else: a failing Status
// becomes an SQLITE_IOERR_* code and its message is kept for xGetLastError.
//
// A WAL's appends are combined: SQLite writes each frame as a 24-byte header
// and a page, one commit's frames one after another, and each call to the
// file system costs far more than its bytes (an OPFS write is a call into
// the browser). The contiguous writes of a WAL are kept in a buffer and
// written as one when SQLite reads, syncs, sizes or truncates that WAL, at
// SQLITE_FCNTL_COMMIT_PHASETWO (sent on the database right after a commit,
// so a commit's frames are in the file when COMMIT returns, synced or not),
// and at close. If the write at COMMIT_PHASETWO (or close) fails, the COMMIT
// fails, and the WAL refuses every later call until it is closed: the frames
// SQLite already counts as committed in its wal-index never reach the
// database by a checkpoint. A reopen then recovers the WAL up to its last
// whole commit. Any other combined write holds only frames of the
// transaction under way (the last commit's were written at its end): its
// failure is the error of the call that caused it (a read, a sync, a write),
// SQLite rolls that transaction back and forgets its frames, and the WAL
// goes on (a big transaction that spills pages to the WAL on a full disk
// fails alone, as with a rollback journal).
#include "backends/sqlite/vfs.h"

#include <chrono>
#include <map>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backends/sqlite/mem_file.h"
#include "sqlite3.h"

namespace onestore {

namespace {

std::string g_last_error;  // for xGetLastError

#if defined(__EMSCRIPTEN__)
// Answers every call with the reason: no file system was registered.
class NoFileSystem : public FileSystem {
 public:
  Status Open(const std::string& path, bool, std::unique_ptr<File>*) override { return Fail(path); }
  Status Delete(const std::string& path) override { return Fail(path); }
  Status Exists(const std::string& path, bool*) override { return Fail(path); }

 private:
  static Status Fail(const std::string& path) {
    return Status::StorageFailed("no file system for " + path +
                                 ": the wasm module must RegisterVfs one before opening a file");
  }
};
FileSystem* DefaultFileSystem() {
  static NoFileSystem* fs = new NoFileSystem();
  return fs;
}
#else
FileSystem* DefaultFileSystem() { return PosixFileSystem(); }
#endif

FileSystem* g_fs = nullptr;  // set by RegisterVfs

FileSystem* CurrentFileSystem() { return g_fs != nullptr ? g_fs : DefaultFileSystem(); }

int Fail(const Status& s, int code) {
  g_last_error = s.message();
  return code;
}

// The failures to release a database that SQLite ignores (xUnlock, xClose),
// by database path, the first of each kept until TakeReleaseFailure.
std::map<std::string, Status>& ReleaseFailures() {
  static auto* failures = new std::map<std::string, Status>();
  return *failures;
}

void RecordReleaseFailure(const std::string& db_path, const Status& s) {
  if (db_path.empty()) return;
  ReleaseFailures().emplace(db_path, s);  // keeps the first
}

// The sqlite3_file SQLite allocates (szOsFile bytes); constructed in place by
// xOpen and destroyed by xClose.
struct VfsFile {
  sqlite3_file base;  // first, so a sqlite3_file* is a VfsFile*
  std::unique_ptr<File> file;
  std::string path;          // empty for a nameless temporary file
  FileSystem* fs = nullptr;  // the file system it was opened on
  bool delete_on_close = false;
  bool main_db = false;  // the database itself (locks apply to it only)
  // SQLite's lock level on this file. Any level above NONE holds the file
  // system's lock between processes (FileLock).
  int lock = SQLITE_LOCK_NONE;
  // A WAL: its appends are combined (Flush). `pending` holds the bytes of
  // offset pending_at.. not written yet; `broken` is the failure of a
  // combined write, after which every call fails.
  bool wal = false;
  std::string db_path;  // a WAL's database (the path without "-wal")
  std::string pending;
  uint64_t pending_at = 0;
  Status broken;
};

// The WALs with combined writes, for COMMIT_PHASETWO on their database.
std::vector<VfsFile*>& Wals() {
  static std::vector<VfsFile*>* wals = new std::vector<VfsFile*>();
  return *wals;
}

// The largest combined write; a longer run is written in parts.
constexpr size_t kMaxPending = 1 << 20;

// Writes a WAL's pending bytes. A failure breaks the WAL when they hold
// committed frames (`committed`: at COMMIT_PHASETWO and close; see the top).
Status Flush(VfsFile* vf, bool committed) {
  if (!vf->broken.ok()) return vf->broken;
  if (vf->pending.empty()) return Status::OK();
  Status s = vf->file->WriteAt(vf->pending_at, vf->pending.data(), vf->pending.size());
  vf->pending.clear();
  if (!s.ok()) {
    if (committed) {
      vf->broken = Status::StorageFailed(
          "the WAL " + vf->path + " lost a write and is closed to every call: " + s.message());
    }
    return s;
  }
  return Status::OK();
}

VfsFile* Cast(sqlite3_file* f) { return reinterpret_cast<VfsFile*>(f); }

int FileClose(sqlite3_file* f) {
  VfsFile* vf = Cast(f);
  int rc = SQLITE_OK;
  if (vf->wal) {
    Status w = Flush(vf, /*committed=*/true);
    if (!w.ok()) rc = Fail(w, SQLITE_IOERR_WRITE);
    auto& wals = Wals();
    for (size_t i = 0; i < wals.size(); ++i) {
      if (wals[i] == vf) {
        wals.erase(wals.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
  }
  Status s = vf->file->Close();
  if (!s.ok() && rc == SQLITE_OK) rc = Fail(s, SQLITE_IOERR_CLOSE);
  if (rc != SQLITE_OK && (vf->main_db || vf->wal)) {
    RecordReleaseFailure(vf->wal ? vf->db_path : vf->path,
                         Status::StorageFailed("closing " + vf->path + ": " + g_last_error));
  }
  vf->file.reset();
  if (vf->delete_on_close && !vf->path.empty()) {
    Status d = vf->fs->Delete(vf->path);
    if (!d.ok() && d.code() != Code::kNotFound && rc == SQLITE_OK)
      rc = Fail(d, SQLITE_IOERR_DELETE);
  }
  vf->~VfsFile();
  return rc;
}

// Before a call other than an append on a WAL: its pending bytes go first.
// Returns SQLITE_OK or the error code `code`.
int FlushFirst(sqlite3_file* f, int code) {
  VfsFile* vf = Cast(f);
  if (!vf->wal) return SQLITE_OK;
  Status s = Flush(vf, /*committed=*/false);
  return s.ok() ? SQLITE_OK : Fail(s, code);
}

int FileRead(sqlite3_file* f, void* buf, int amount, sqlite3_int64 offset) {
  if (int rc = FlushFirst(f, SQLITE_IOERR_READ)) return rc;
  size_t got = 0;
  Status s =
      Cast(f)->file->ReadAt(static_cast<uint64_t>(offset), buf, static_cast<size_t>(amount), &got);
  if (!s.ok()) return Fail(s, SQLITE_IOERR_READ);
  if (got < static_cast<size_t>(amount)) {
    // SQLite requires the unread part zeroed.
    std::memset(static_cast<char*>(buf) + got, 0, static_cast<size_t>(amount) - got);
    return SQLITE_IOERR_SHORT_READ;
  }
  return SQLITE_OK;
}

int FileWrite(sqlite3_file* f, const void* buf, int amount, sqlite3_int64 offset) {
  VfsFile* vf = Cast(f);
  if (vf->wal) {
    const uint64_t at = static_cast<uint64_t>(offset);
    if (!vf->pending.empty() && at != vf->pending_at + vf->pending.size()) {
      if (int rc = FlushFirst(f, SQLITE_IOERR_WRITE)) return rc;
    }
    if (!vf->broken.ok()) return Fail(vf->broken, SQLITE_IOERR_WRITE);
    if (vf->pending.empty()) vf->pending_at = at;
    vf->pending.append(static_cast<const char*>(buf), static_cast<size_t>(amount));
    if (vf->pending.size() >= kMaxPending) return FlushFirst(f, SQLITE_IOERR_WRITE);
    return SQLITE_OK;
  }
  Status s =
      Cast(f)->file->WriteAt(static_cast<uint64_t>(offset), buf, static_cast<size_t>(amount));
  return s.ok() ? SQLITE_OK : Fail(s, SQLITE_IOERR_WRITE);
}

int FileTruncate(sqlite3_file* f, sqlite3_int64 size) {
  if (int rc = FlushFirst(f, SQLITE_IOERR_TRUNCATE)) return rc;
  Status s = Cast(f)->file->Truncate(static_cast<uint64_t>(size));
  return s.ok() ? SQLITE_OK : Fail(s, SQLITE_IOERR_TRUNCATE);
}

int FileSync(sqlite3_file* f, int /*flags*/) {
  if (int rc = FlushFirst(f, SQLITE_IOERR_FSYNC)) return rc;
  Status s = Cast(f)->file->Sync();
  return s.ok() ? SQLITE_OK : Fail(s, SQLITE_IOERR_FSYNC);
}

int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  if (int rc = FlushFirst(f, SQLITE_IOERR_FSTAT)) return rc;
  uint64_t n = 0;
  Status s = Cast(f)->file->Size(&n);
  if (!s.ok()) return Fail(s, SQLITE_IOERR_FSTAT);
  *size = static_cast<sqlite3_int64>(n);
  return SQLITE_OK;
}

// Any lock on the main database (SHARED and above) holds the file system's
// lock between processes, taken when SQLite goes from NONE to SHARED and
// released when it goes back to NONE: readers and writers of different
// processes take turns, and one transaction never sees another's half-written
// pages. A lock another process holds is SQLITE_BUSY (SQLite's busy handler
// waits and retries).
int FileLock(sqlite3_file* f, int level) {
  VfsFile* vf = Cast(f);
  if (level >= SQLITE_LOCK_SHARED && vf->lock == SQLITE_LOCK_NONE && vf->main_db) {
    bool busy = false;
    Status s = vf->fs->Lock(vf->path, &busy);
    if (!s.ok()) return Fail(s, SQLITE_IOERR_LOCK);
    if (busy) return SQLITE_BUSY;
  }
  if (level > vf->lock) vf->lock = level;
  return SQLITE_OK;
}

int FileUnlock(sqlite3_file* f, int level) {
  VfsFile* vf = Cast(f);
  if (level == SQLITE_LOCK_NONE && vf->lock != SQLITE_LOCK_NONE && vf->main_db) {
    Status s = vf->fs->Unlock(vf->path);
    if (!s.ok()) {
      RecordReleaseFailure(vf->path, Status::StorageFailed("releasing the lock of " + vf->path +
                                                           ": " + s.message()));
      return Fail(s, SQLITE_IOERR_UNLOCK);
    }
  }
  if (level < vf->lock) vf->lock = level;
  return SQLITE_OK;
}

int FileCheckReservedLock(sqlite3_file* f, int* out) {
  VfsFile* vf = Cast(f);
  bool held = false;
  if (vf->lock >= SQLITE_LOCK_RESERVED) {
    held = true;
  } else if (vf->lock == SQLITE_LOCK_NONE && vf->main_db) {
    // (Holding SHARED, this process excludes every other one.)
    Status s = vf->fs->LockHeld(vf->path, &held);
    if (!s.ok()) return Fail(s, SQLITE_IOERR_CHECKRESERVEDLOCK);
  }
  *out = held ? 1 : 0;
  return SQLITE_OK;
}

int FileControl(sqlite3_file* f, int op, void* arg) {
  if (op == SQLITE_FCNTL_LOCKSTATE) {
    *static_cast<int*>(arg) = Cast(f)->lock;
    return SQLITE_OK;
  }
  if (op == SQLITE_FCNTL_COMMIT_PHASETWO) {
    // A commit just ended: its WAL frames go to the file now.
    VfsFile* vf = Cast(f);
    for (VfsFile* w : Wals()) {
      if (w->db_path != vf->path) continue;
      Status s = Flush(w, /*committed=*/true);
      if (!s.ok()) return Fail(s, SQLITE_IOERR_WRITE);
    }
    return SQLITE_OK;
  }
  return SQLITE_NOTFOUND;
}

int FileSectorSize(sqlite3_file*) { return 4096; }

// Not SQLITE_IOCAP_SAFE_APPEND: with it SQLite writes a rollback journal's
// record count as "to the end of the file" before the records are synced,
// and trusts that a power cut never leaves the file longer than the data
// that reached it. A file system that writes back a later page before an
// earlier one leaves zeros there, and a zeroed page whose sampled bytes
// were zeros passes the record's checksum: the next open played it back
// over a page of the database that the cut transaction had not touched
// (tests/cpp/crash_points_test.cc found it). Without the flag the count is
// written only once the records are synced (SQLite's unix VFS does the
// same). WAL frames are checksummed whole and do not use it.
int FileDeviceCharacteristics(sqlite3_file*) { return SQLITE_IOCAP_POWERSAFE_OVERWRITE; }

const sqlite3_io_methods kIoMethods = {
    1,  // iVersion: no shared memory (no WAL), no memory mapping
    FileClose,
    FileRead,
    FileWrite,
    FileTruncate,
    FileSync,
    FileSize,
    FileLock,
    FileUnlock,
    FileCheckReservedLock,
    FileControl,
    FileSectorSize,
    FileDeviceCharacteristics,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

int VfsOpen(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
  f->pMethods = nullptr;  // SQLite calls xClose only when pMethods is set
  std::unique_ptr<File> file;
  std::string path;
  FileSystem* fs = CurrentFileSystem();
  if (name == nullptr) {
    // A temporary file with no name (SQLITE_TEMP_STORE=3 keeps these in
    // memory anyway): it lives in memory until closed.
    file = NewMemFile();
  } else {
    path = name;
    const bool create = (flags & SQLITE_OPEN_CREATE) != 0;
    Status s = fs->Open(path, create, &file);
    if (!s.ok()) return Fail(s, SQLITE_CANTOPEN);
  }
  VfsFile* vf = new (f) VfsFile();
  vf->file = std::move(file);
  vf->path = std::move(path);
  vf->fs = fs;
  vf->delete_on_close = (flags & SQLITE_OPEN_DELETEONCLOSE) != 0;
  vf->main_db = (flags & SQLITE_OPEN_MAIN_DB) != 0 && !vf->path.empty();
  constexpr char kWalSuffix[] = "-wal";
  if ((flags & SQLITE_OPEN_WAL) != 0 && vf->path.size() > 4 &&
      vf->path.compare(vf->path.size() - 4, 4, kWalSuffix) == 0) {
    vf->wal = true;
    vf->db_path = vf->path.substr(0, vf->path.size() - 4);
    Wals().push_back(vf);
  }
  vf->base.pMethods = &kIoMethods;
  if (out_flags != nullptr) *out_flags = flags;
  return SQLITE_OK;
}

int VfsDelete(sqlite3_vfs*, const char* name, int /*sync_dir*/) {
  Status s = CurrentFileSystem()->Delete(name);
  if (s.ok()) return SQLITE_OK;
  if (s.code() == Code::kNotFound) return Fail(s, SQLITE_IOERR_DELETE_NOENT);
  return Fail(s, SQLITE_IOERR_DELETE);
}

int VfsAccess(sqlite3_vfs*, const char* name, int /*flags*/, int* out) {
  bool exists = false;
  Status s = CurrentFileSystem()->Exists(name, &exists);
  if (!s.ok()) {
    *out = 0;
    return Fail(s, SQLITE_IOERR_ACCESS);
  }
  *out = exists ? 1 : 0;
  return SQLITE_OK;
}

int VfsFullPathname(sqlite3_vfs*, const char* name, int n_out, char* out) {
  size_t len = std::strlen(name);
  if (len + 1 > static_cast<size_t>(n_out)) {
    g_last_error = std::string("path too long: ") + name;
    return SQLITE_CANTOPEN;
  }
  std::memcpy(out, name, len + 1);
  return SQLITE_OK;
}

int VfsRandomness(sqlite3_vfs*, int n, char* out) {
  static std::random_device device;
  static std::mt19937_64 engine(
      (static_cast<uint64_t>(device()) << 32) ^ device() ^
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  for (int i = 0; i < n; ++i) out[i] = static_cast<char>(engine() & 0xFF);
  return n;
}

int VfsSleep(sqlite3_vfs*, int microseconds) {
  std::this_thread::sleep_for(std::chrono::microseconds(microseconds));
  return microseconds;
}

// Milliseconds since the Julian epoch (noon, November 24, 4714 BC).
int VfsCurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) {
  constexpr sqlite3_int64 kUnixEpochJulianMs = 210866760000000LL;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  *out = kUnixEpochJulianMs + static_cast<sqlite3_int64>(ms);
  return SQLITE_OK;
}

int VfsCurrentTime(sqlite3_vfs* vfs, double* out) {
  sqlite3_int64 ms = 0;
  VfsCurrentTimeInt64(vfs, &ms);
  *out = static_cast<double>(ms) / 86400000.0;
  return SQLITE_OK;
}

int VfsGetLastError(sqlite3_vfs*, int n, char* out) {
  if (n > 0) {
    size_t len = g_last_error.size() < static_cast<size_t>(n - 1) ? g_last_error.size()
                                                                  : static_cast<size_t>(n - 1);
    std::memcpy(out, g_last_error.data(), len);
    out[len] = '\0';
  }
  return 0;
}

sqlite3_vfs g_vfs = {
    2,                // iVersion: up to xCurrentTimeInt64
    sizeof(VfsFile),  // szOsFile
    1024,             // mxPathname
    nullptr,          // pNext
    "onestore",       // zName
    nullptr,          // pAppData
    VfsOpen,
    VfsDelete,
    VfsAccess,
    VfsFullPathname,
    nullptr,  // xDlOpen (no extensions)
    nullptr,  // xDlError
    nullptr,  // xDlSym
    nullptr,  // xDlClose
    VfsRandomness,
    VfsSleep,
    VfsCurrentTime,
    VfsGetLastError,
    VfsCurrentTimeInt64,
    nullptr,
    nullptr,
    nullptr,
};

}  // namespace

Status TakeReleaseFailure(const std::string& db_path) {
  auto& failures = ReleaseFailures();
  auto it = failures.find(db_path);
  if (it == failures.end()) return Status::OK();
  Status s = std::move(it->second);
  failures.erase(it);
  return s;
}

Status RegisterVfs(FileSystem* fs) {
  if (fs == nullptr) return Status::InvalidArgs("RegisterVfs: the file system is null");
  g_fs = fs;
  int rc = sqlite3_vfs_register(&g_vfs, 1);
  if (rc != SQLITE_OK) {
    return Status::StorageFailed(std::string("registering the onestore VFS: ") +
                                 sqlite3_errstr(rc));
  }
  return Status::OK();
}

}  // namespace onestore

// SQLite built with SQLITE_OS_OTHER=1 calls these from sqlite3_initialize()
// and sqlite3_shutdown().
extern "C" int sqlite3_os_init(void) { return sqlite3_vfs_register(&onestore::g_vfs, 1); }

extern "C" int sqlite3_os_end(void) { return SQLITE_OK; }
