// PosixFileSystem: the FileSystem of native builds, over open/pread/pwrite.
// Not compiled into the wasm module (CMakeLists.txt leaves it out): there,
// files are reached through wasm/files_library.js.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <set>
#include <string>

#include "backends/sqlite/file.h"

namespace onestore {

namespace {

Status PosixError(const std::string& what, const std::string& path, int err) {
  return Status::StorageFailed(what + " " + path + ": " + std::strerror(err));
}

class PosixFile : public File {
 public:
  PosixFile(int fd, std::string path, bool created)
      : fd_(fd), path_(std::move(path)), sync_dir_(created) {}
  ~PosixFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  Status ReadAt(uint64_t offset, void* buf, size_t n, size_t* got) override {
    size_t done = 0;
    char* p = static_cast<char*>(buf);
    while (done < n) {
      ssize_t r = ::pread(fd_, p + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        *got = done;
        return PosixError("read", path_, errno);
      }
      if (r == 0) break;  // end of file
      done += static_cast<size_t>(r);
    }
    *got = done;
    return Status::OK();
  }

  Status WriteAt(uint64_t offset, const void* buf, size_t n) override {
    size_t done = 0;
    const char* p = static_cast<const char*>(buf);
    while (done < n) {
      ssize_t r = ::pwrite(fd_, p + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        return PosixError("write", path_, errno);
      }
      if (r == 0) return Status::StorageFailed("write " + path_ + ": no progress");
      done += static_cast<size_t>(r);
    }
    return Status::OK();
  }

  Status Truncate(uint64_t size) override {
    while (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      if (errno != EINTR) return PosixError("truncate", path_, errno);
    }
    return Status::OK();
  }

  // fdatasync where there is one: the file's data and what reading it back
  // needs (its size), not its times, as SQLite's own VFS syncs on Linux.
  Status Sync() override {
#if defined(__linux__)
    while (::fdatasync(fd_) != 0) {
#else
    while (::fsync(fd_) != 0) {
#endif
      if (errno != EINTR) return PosixError("sync", path_, errno);
    }
    if (sync_dir_) {
      // The first sync of a file this process created also syncs its
      // directory, as SQLite's own VFS does: until then the file's name may
      // not survive a power cut, and with it every commit in it.
      ONESTORE_RETURN_IF_ERROR(SyncDirectory());
      sync_dir_ = false;
    }
    return Status::OK();
  }

  Status Size(uint64_t* size) override {
    struct stat st;
    if (::fstat(fd_, &st) != 0) return PosixError("stat", path_, errno);
    *size = static_cast<uint64_t>(st.st_size);
    return Status::OK();
  }

  Status Close() override {
    if (fd_ < 0) return Status::OK();
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return PosixError("close", path_, errno);
    return Status::OK();
  }

 private:
  Status SyncDirectory() {
    size_t slash = path_.rfind('/');
    std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path_.substr(0, slash);
    int fd;
    do {
      fd = ::open(dir.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECTORY);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return PosixError("open directory", dir, errno);
    int rc;
    do {
      rc = ::fsync(fd);
    } while (rc != 0 && errno == EINTR);
    int err = errno;
    ::close(fd);
    if (rc != 0) return PosixError("sync directory", dir, err);
    return Status::OK();
  }

  int fd_;
  std::string path_;
  bool sync_dir_;  // created by this process; its directory not synced yet
};

class PosixFs : public FileSystem {
 public:
  Status Open(const std::string& path, bool create, std::unique_ptr<File>* out) override {
    int fd;
    bool created = false;
    do {
      fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT && create) {
        // O_EXCL: only a file this call creates gets its directory synced.
        fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_CREAT | O_EXCL, 0644);
        created = fd >= 0;
        if (fd < 0 && errno == EEXIST) errno = EINTR;  // appeared in between: open it
      }
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
      if (errno == ENOENT) return Status::NotFound("no file " + path);
      return PosixError("open", path, errno);
    }
    *out = std::make_unique<PosixFile>(fd, path, created);
    return Status::OK();
  }

  Status Delete(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) {
      if (errno == ENOENT) return Status::NotFound("no file " + path);
      return PosixError("delete", path, errno);
    }
    return Status::OK();
  }

  Status Exists(const std::string& path, bool* exists) override {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) {
      *exists = true;
      return Status::OK();
    }
    if (errno == ENOENT || errno == ENOTDIR) {
      *exists = false;
      return Status::OK();
    }
    return PosixError("stat", path, errno);
  }

  // Fairness as in js/files-node.js: a process that finds the lock held
  // announces itself in "<lock>.want"; the others, the holder included,
  // leave the lock to it while its announcement is fresh (kWantFreshSeconds
  // since its last try) and its process runs.
  Status Lock(const std::string& path, bool* busy) override {
    const std::string lock = LockPath(path);
    const std::string want = lock + ".want";
    *busy = true;
    if (WaiterAhead(want)) return Status::OK();
    for (int attempt = 0; attempt < 3; ++attempt) {
      int fd = ::open(lock.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
      if (fd >= 0) {
        std::string me = Holder();
        ssize_t n = ::write(fd, me.data(), me.size());
        ::close(fd);
        if (n != static_cast<ssize_t>(me.size())) {
          ::unlink(lock.c_str());
          return PosixError("write", lock, errno);
        }
        *busy = false;
        if (announced_.erase(path) > 0 && ReadSmall(want) == me) ::unlink(want.c_str());
        return Status::OK();
      }
      if (errno != EEXIST) return PosixError("create", lock, errno);
      HolderState state;
      ONESTORE_RETURN_IF_ERROR(ReadHolder(lock, &state));
      if (state == HolderState::kLive) break;
      // kGone: released since; try again. Never unlink then: the file may
      // already be a new holder's.
      if (state == HolderState::kStale) ONESTORE_RETURN_IF_ERROR(BreakStale(lock));
    }
    // Busy: announce this process as the next one.
    int fd = ::open(want.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return PosixError("create", want, errno);
    std::string me = Holder();
    ssize_t n = ::write(fd, me.data(), me.size());
    ::close(fd);
    if (n != static_cast<ssize_t>(me.size())) return PosixError("write", want, errno);
    announced_.insert(path);
    return Status::OK();
  }

  Status Unlock(const std::string& path) override {
    const std::string lock = LockPath(path);
    if (::unlink(lock.c_str()) != 0 && errno != ENOENT) return PosixError("unlink", lock, errno);
    return Status::OK();
  }

  Status LockHeld(const std::string& path, bool* held) override {
    HolderState state;
    ONESTORE_RETURN_IF_ERROR(ReadHolder(LockPath(path), &state));
    *held = state == HolderState::kLive;
    return Status::OK();
  }

 private:
  static constexpr double kWantFreshSeconds = 1.0;

  // Up to 300 bytes of a small file; "" when it is missing or unreadable.
  static std::string ReadSmall(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) return "";
    char buf[300];
    ssize_t n = ::read(fd, buf, sizeof(buf));
    ::close(fd);
    return std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
  }

  // Whether another process announced in `want` that it waits for the lock,
  // and still does.
  static bool WaiterAhead(const std::string& want) {
    struct stat st;
    if (::stat(want.c_str(), &st) != 0) return false;
    struct timespec now;
    ::clock_gettime(CLOCK_REALTIME, &now);
    const double age = static_cast<double>(now.tv_sec - st.st_mtim.tv_sec) +
                       static_cast<double>(now.tv_nsec - st.st_mtim.tv_nsec) / 1e9;
    if (age > kWantFreshSeconds) return false;
    const std::string text = ReadSmall(want);
    if (text == Holder()) return false;
    return !Ended(text);
  }

  // Whether "<pid>@<host>" names a process of this host that no longer runs
  // (the Node runtime's locks name a role after it: "<pid>@<host> store").
  static bool Ended(const std::string& text) {
    size_t at = text.find('@');
    if (at == std::string::npos || text.substr(at + 1, text.find(' ', at) - at - 1) != Host()) return false;
    long pid = std::strtol(text.c_str(), nullptr, 10);
    return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
  }

  static std::string Host() {
    char host[256] = {0};
    ::gethostname(host, sizeof(host) - 1);
    return host;
  }
  static std::string Holder() { return std::to_string(::getpid()) + "@" + Host(); }

  // kGone: no lock file. kStale: its holder was a process of this host that
  // no longer runs, or it names no holder and is a few seconds old (cut short
  // by a crash). A holder on another host is taken to be live.
  enum class HolderState { kGone, kLive, kStale };

  // Removes a stale lock file, holding "<lock>.break" while it looks again,
  // so that of two waiters that judged the same lock stale only one removes
  // it: the other finds the first one's new lock (live) or none. A breaker
  // left by a crash is removed once it is a few seconds old.
  static Status BreakStale(const std::string& lock) {
    const std::string breaker = lock + ".break";
    int fd = ::open(breaker.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) {
      if (errno != EEXIST) return PosixError("create", breaker, errno);
      struct stat st;
      if (::stat(breaker.c_str(), &st) == 0 && st.st_mtime + 2 < ::time(nullptr)) {
        ::unlink(breaker.c_str());
      }
      return Status::OK();
    }
    std::string me = Holder();
    ssize_t n = ::write(fd, me.data(), me.size());
    (void)n;  // the breaker's content is for people; its existence is the lock
    ::close(fd);
    HolderState state;
    Status s = ReadHolder(lock, &state);
    if (s.ok() && state == HolderState::kStale) ::unlink(lock.c_str());
    ::unlink(breaker.c_str());
    return s;
  }

  static Status ReadHolder(const std::string& lock, HolderState* state) {
    int fd = ::open(lock.c_str(), O_RDONLY);
    if (fd < 0) {
      if (errno == ENOENT) {
        *state = HolderState::kGone;
        return Status::OK();
      }
      return PosixError("open", lock, errno);
    }
    char buf[300] = {0};
    ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
    struct stat st;
    bool old = ::fstat(fd, &st) == 0 && st.st_mtime + 2 < ::time(nullptr);
    ::close(fd);
    std::string text(buf, n > 0 ? static_cast<size_t>(n) : 0);
    *state = HolderState::kLive;
    if (text.find('@') == std::string::npos) {
      if (old) *state = HolderState::kStale;  // else: being written right now
      return Status::OK();
    }
    if (Ended(text)) *state = HolderState::kStale;
    return Status::OK();
  }

  std::set<std::string> announced_;  // databases this process announced it waits for
};

}  // namespace

FileSystem* PosixFileSystem() {
  static PosixFs* fs = new PosixFs();  // never destroyed: SQLite may use it until exit
  return fs;
}

}  // namespace onestore
