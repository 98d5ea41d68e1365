// JsFileSystem (js_file_system.h): File and FileSystem over the synchronous
// JS files object, reached through the imports of wasm/files_library.js.
//
// The import list below and the functions in files_library.js must stay in
// step: same names, same arguments, same return codes.
#include "js_file_system.h"  // wasm/ sources include their neighbours by name

#include <climits>
#include <cstdint>
#include <memory>
#include <string>

extern "C" {
// Each returns a negative code on failure (kJsFailed, or kJsNotFound when the
// file does not exist); onestore_files_last_error then gives the message.
// Offsets and sizes are doubles: exact up to 2^53 bytes.
int onestore_files_open(const char* path, int create);             // a file id >= 0
int onestore_files_read(int id, void* buf, int n, double offset);  // bytes read
int onestore_files_write(int id, const void* buf, int n, double offset);
int onestore_files_truncate(int id, double size);
int onestore_files_sync(int id);
double onestore_files_size(int id);  // the size, or a negative code
int onestore_files_close(int id);
int onestore_files_delete(const char* path);
int onestore_files_exists(const char* path);  // 1 or 0
// The lock of a database between processes (FileSystem::Lock): 1 taken,
// 0 busy.
int onestore_files_lock(const char* path);
int onestore_files_unlock(const char* path);
int onestore_files_lock_held(const char* path);  // 1 held by another, or 0
// Copies the last failure's message (UTF-8, NUL-terminated, cut to fit) into
// buf; returns the message's full length in bytes.
int onestore_files_last_error(char* buf, int cap);
}

namespace onestore {

namespace {

constexpr int kJsNotFound = -2;
// The largest read or write handed to JS in one call.
constexpr size_t kMaxChunk = 1 << 24;

std::string LastJsError() {
  std::string msg(256, '\0');
  int n = onestore_files_last_error(&msg[0], static_cast<int>(msg.size()));
  if (n >= static_cast<int>(msg.size())) {
    msg.assign(static_cast<size_t>(n) + 1, '\0');
    n = onestore_files_last_error(&msg[0], static_cast<int>(msg.size()));
  }
  msg.resize(n < 0 ? 0 : static_cast<size_t>(n));
  return msg;
}

Status JsError(int code, const std::string& what, const std::string& path) {
  std::string msg = what + " " + path + ": " + LastJsError();
  if (code == kJsNotFound) return Status::NotFound(msg);
  return Status::StorageFailed(msg);
}

class JsFile : public File {
 public:
  JsFile(int id, std::string path) : id_(id), path_(std::move(path)) {}
  ~JsFile() override {
    if (id_ >= 0) onestore_files_close(id_);
  }

  Status ReadAt(uint64_t offset, void* buf, size_t n, size_t* got) override {
    size_t done = 0;
    char* p = static_cast<char*>(buf);
    while (done < n) {
      size_t chunk = n - done < kMaxChunk ? n - done : kMaxChunk;
      int r = onestore_files_read(id_, p + done, static_cast<int>(chunk),
                                  static_cast<double>(offset + done));
      if (r < 0) {
        *got = done;
        return JsError(r, "read", path_);
      }
      done += static_cast<size_t>(r);
      if (static_cast<size_t>(r) < chunk) break;  // end of file
    }
    *got = done;
    return Status::OK();
  }

  Status WriteAt(uint64_t offset, const void* buf, size_t n) override {
    size_t done = 0;
    const char* p = static_cast<const char*>(buf);
    while (done < n) {
      size_t chunk = n - done < kMaxChunk ? n - done : kMaxChunk;
      int r = onestore_files_write(id_, p + done, static_cast<int>(chunk),
                                   static_cast<double>(offset + done));
      if (r < 0) return JsError(r, "write", path_);
      done += chunk;
    }
    return Status::OK();
  }

  Status Truncate(uint64_t size) override {
    int r = onestore_files_truncate(id_, static_cast<double>(size));
    return r < 0 ? JsError(r, "truncate", path_) : Status::OK();
  }

  Status Sync() override {
    int r = onestore_files_sync(id_);
    return r < 0 ? JsError(r, "sync", path_) : Status::OK();
  }

  Status Size(uint64_t* size) override {
    double s = onestore_files_size(id_);
    if (s < 0) return JsError(static_cast<int>(s), "size of", path_);
    *size = static_cast<uint64_t>(s);
    return Status::OK();
  }

  Status Close() override {
    if (id_ < 0) return Status::OK();
    int r = onestore_files_close(id_);
    id_ = -1;
    return r < 0 ? JsError(r, "close", path_) : Status::OK();
  }

 private:
  int id_;
  std::string path_;
};

class JsFs : public FileSystem {
 public:
  Status Open(const std::string& path, bool create, std::unique_ptr<File>* out) override {
    int id = onestore_files_open(path.c_str(), create ? 1 : 0);
    if (id < 0) return JsError(id, "open", path);
    *out = std::make_unique<JsFile>(id, path);
    return Status::OK();
  }

  Status Delete(const std::string& path) override {
    int r = onestore_files_delete(path.c_str());
    return r < 0 ? JsError(r, "delete", path) : Status::OK();
  }

  Status Exists(const std::string& path, bool* exists) override {
    int r = onestore_files_exists(path.c_str());
    if (r < 0) return JsError(r, "exists", path);
    *exists = r != 0;
    return Status::OK();
  }

  Status Lock(const std::string& path, bool* busy) override {
    int r = onestore_files_lock(path.c_str());
    if (r < 0) return JsError(r, "lock", path);
    *busy = r == 0;
    return Status::OK();
  }

  Status Unlock(const std::string& path) override {
    int r = onestore_files_unlock(path.c_str());
    return r < 0 ? JsError(r, "unlock", path) : Status::OK();
  }

  Status LockHeld(const std::string& path, bool* held) override {
    int r = onestore_files_lock_held(path.c_str());
    if (r < 0) return JsError(r, "check the lock of", path);
    *held = r != 0;
    return Status::OK();
  }
};

}  // namespace

FileSystem* JsFileSystem() {
  static JsFs* fs = new JsFs();
  return fs;
}

}  // namespace onestore
