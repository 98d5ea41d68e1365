#include "backends/sqlite/mem_file.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace onestore {

namespace {

using Node = MemFileSystem::Node;

class MemFile : public File {
 public:
  explicit MemFile(std::shared_ptr<Node> node) : node_(std::move(node)) {}

  Status ReadAt(uint64_t offset, void* buf, size_t n, size_t* got) override {
    const std::string& d = node_->data;
    if (offset >= d.size()) {
      *got = 0;
      return Status::OK();
    }
    size_t avail = d.size() - static_cast<size_t>(offset);
    *got = std::min(n, avail);
    std::memcpy(buf, d.data() + offset, *got);
    return Status::OK();
  }

  Status WriteAt(uint64_t offset, const void* buf, size_t n) override {
    std::string& d = node_->data;
    if (offset + n > d.size()) d.resize(static_cast<size_t>(offset + n), '\0');
    std::memcpy(&d[static_cast<size_t>(offset)], buf, n);
    return Status::OK();
  }

  Status Truncate(uint64_t size) override {
    node_->data.resize(static_cast<size_t>(size), '\0');
    return Status::OK();
  }

  Status Sync() override {
    node_->synced = node_->data;
    return Status::OK();
  }

  Status Size(uint64_t* size) override {
    *size = node_->data.size();
    return Status::OK();
  }

  Status Close() override { return Status::OK(); }

 private:
  std::shared_ptr<Node> node_;
};

}  // namespace

std::unique_ptr<File> NewMemFile() { return std::make_unique<MemFile>(std::make_shared<Node>()); }

Status MemFileSystem::Open(const std::string& path, bool create, std::unique_ptr<File>* out) {
  auto it = files_.find(path);
  if (it == files_.end()) {
    if (!create) return Status::NotFound("no file " + path);
    it = files_.emplace(path, std::make_shared<Node>()).first;
  }
  *out = std::make_unique<MemFile>(it->second);
  return Status::OK();
}

Status MemFileSystem::Delete(const std::string& path) {
  if (files_.erase(path) == 0) return Status::NotFound("no file " + path);
  return Status::OK();
}

Status MemFileSystem::Exists(const std::string& path, bool* exists) {
  *exists = files_.count(path) > 0;
  return Status::OK();
}

void MemFileSystem::DropUnsyncedWrites() {
  for (auto& [path, node] : files_) node->data = node->synced;
}

bool MemFileSystem::Contents(const std::string& path, std::string* out) const {
  auto it = files_.find(path);
  if (it == files_.end()) return false;
  *out = it->second->data;
  return true;
}

class FaultFile : public File {
 public:
  FaultFile(FaultFileSystem* fs, std::string path, std::unique_ptr<File> base)
      : fs_(fs), path_(std::move(path)), base_(std::move(base)) {}

  Status ReadAt(uint64_t offset, void* buf, size_t n, size_t* got) override {
    return base_->ReadAt(offset, buf, n, got);
  }
  Status WriteAt(uint64_t offset, const void* buf, size_t n) override {
    ONESTORE_RETURN_IF_ERROR(fs_->Count(false, path_));
    return base_->WriteAt(offset, buf, n);
  }
  Status Truncate(uint64_t size) override { return base_->Truncate(size); }
  Status Sync() override {
    ONESTORE_RETURN_IF_ERROR(fs_->Count(true, path_));
    return base_->Sync();
  }
  Status Size(uint64_t* size) override { return base_->Size(size); }
  Status Close() override { return base_->Close(); }

 private:
  FaultFileSystem* fs_;
  std::string path_;
  std::unique_ptr<File> base_;
};

Status FaultFileSystem::Open(const std::string& path, bool create, std::unique_ptr<File>* out) {
  std::unique_ptr<File> base;
  ONESTORE_RETURN_IF_ERROR(base_->Open(path, create, &base));
  *out = std::make_unique<FaultFile>(this, path, std::move(base));
  return Status::OK();
}

Status FaultFileSystem::Delete(const std::string& path) { return base_->Delete(path); }

Status FaultFileSystem::Exists(const std::string& path, bool* exists) {
  return base_->Exists(path, exists);
}

void FaultFileSystem::FailWrite(int64_t n, bool sticky) {
  fail_write_at_ = writes_ + n;
  sticky_write_ = sticky;
}

void FaultFileSystem::FailSync(int64_t n, bool sticky) {
  fail_sync_at_ = syncs_ + n;
  sticky_sync_ = sticky;
}

void FaultFileSystem::Heal() {
  fail_write_at_ = fail_sync_at_ = -1;
  sticky_write_ = sticky_sync_ = false;
}

Status FaultFileSystem::Count(bool is_sync, const std::string& path) {
  int64_t& calls = is_sync ? syncs_ : writes_;
  const int64_t at = is_sync ? fail_sync_at_ : fail_write_at_;
  const bool sticky = is_sync ? sticky_sync_ : sticky_write_;
  ++calls;
  if (at > 0 && (calls == at || (sticky && calls > at))) {
    ++failures_;
    return Status::StorageFailed(std::string("injected ") + (is_sync ? "sync" : "write") +
                                 " failure #" + std::to_string(calls) + " on " + path);
  }
  return Status::OK();
}

}  // namespace onestore
