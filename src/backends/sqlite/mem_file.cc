#include "backends/sqlite/mem_file.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <utility>

namespace onestore {

namespace {

using Node = MemFileSystem::Node;
using Unsynced = MemFileSystem::Unsynced;

// Applies one logged write or truncate to `d`, as MemFile did.
void ApplyTo(std::string* d, const Unsynced& u) {
  if (u.truncate) {
    d->resize(static_cast<size_t>(u.offset), '\0');
    return;
  }
  if (u.offset + u.bytes.size() > d->size()) d->resize(static_cast<size_t>(u.offset + u.bytes.size()), '\0');
  std::memcpy(&(*d)[static_cast<size_t>(u.offset)], u.bytes.data(), u.bytes.size());
}

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
    Unsynced u;
    u.offset = offset;
    u.bytes.assign(static_cast<const char*>(buf), n);
    ApplyTo(&node_->data, u);
    Log(std::move(u));
    return Status::OK();
  }

  Status Truncate(uint64_t size) override {
    Unsynced u;
    u.truncate = true;
    u.offset = size;
    ApplyTo(&node_->data, u);
    Log(std::move(u));
    return Status::OK();
  }

  Status Sync() override {
    node_->synced = node_->data;
    node_->unsynced.clear();
    return Status::OK();
  }

  Status Size(uint64_t* size) override {
    *size = node_->data.size();
    return Status::OK();
  }

  Status Close() override { return Status::OK(); }

 private:
  // Keeps an unsynced change for MemFileSystem::Crash (a nameless file,
  // which no crash concerns, keeps none).
  void Log(Unsynced u) {
    if (!node_->clock) return;
    u.order = ++*node_->clock;
    node_->unsynced.push_back(std::move(u));
  }

  std::shared_ptr<Node> node_;
};

}  // namespace

const char* IoCallName(IoCall kind) {
  static const char* const kNames[kIoCallKinds] = {
      "open", "delete", "exists", "read", "write", "truncate",
      "sync", "size",   "close",  "lock", "unlock", "lockHeld"};
  return kNames[static_cast<int>(kind)];
}

std::unique_ptr<File> NewMemFile() { return std::make_unique<MemFile>(std::make_shared<Node>()); }

Status MemFileSystem::Open(const std::string& path, bool create, std::unique_ptr<File>* out) {
  auto it = files_.find(path);
  if (it == files_.end()) {
    if (!create) return Status::NotFound("no file " + path);
    auto node = std::make_shared<Node>();
    node->clock = clock_;
    it = files_.emplace(path, std::move(node)).first;
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

void MemFileSystem::DropUnsyncedWrites() { Crash(Damage::kDropAll, 0); }

std::string MemFileSystem::Crash(Damage damage, uint64_t seed) {
  std::string report;
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(damage));
  // The newest unsynced change, for kTearLast.
  const Unsynced* newest = nullptr;
  for (auto& [path, node] : files_) {
    for (const Unsynced& u : node->unsynced) {
      if (newest == nullptr || u.order > newest->order) newest = &u;
    }
  }
  for (auto& [path, node] : files_) {
    std::vector<const Unsynced*> kept;
    for (const Unsynced& u : node->unsynced) {
      switch (damage) {
        case Damage::kDropAll:
          break;
        case Damage::kTearLast:
          kept.push_back(&u);
          break;
        case Damage::kDropSome:
        case Damage::kReorderSome:
          if (rng() & 1) kept.push_back(&u);
          break;
      }
    }
    if (damage == Damage::kReorderSome) std::shuffle(kept.begin(), kept.end(), rng);
    if (!node->unsynced.empty()) {
      report += (report.empty() ? "" : "; ") + path + ": " + std::to_string(kept.size()) + "/" +
                std::to_string(node->unsynced.size()) + " kept:";
      for (const Unsynced* u : kept) {
        report += std::string(" ") + (u->truncate ? "t" : "w") + std::to_string(u->offset) +
                  (u->truncate ? "" : "+" + std::to_string(u->bytes.size()));
      }
    }
    std::string data = node->synced;
    for (const Unsynced* u : kept) {
      if (u != newest || damage != Damage::kTearLast) {
        ApplyTo(&data, *u);
        continue;
      }
      if (u->truncate) continue;  // a torn truncate did not happen
      // The bytes up to one of the sector boundaries inside the write (or
      // none of them).
      constexpr uint64_t kSector = 512;
      std::vector<uint64_t> cuts = {0};
      for (uint64_t b = (u->offset / kSector + 1) * kSector; b < u->offset + u->bytes.size();
           b += kSector) {
        cuts.push_back(b - u->offset);
      }
      Unsynced part = *u;
      part.bytes.resize(static_cast<size_t>(cuts[rng() % cuts.size()]));
      report += " (torn to " + std::to_string(part.bytes.size()) + ")";
      if (!part.bytes.empty()) ApplyTo(&data, part);
    }
    node->data = data;
    node->synced = std::move(data);
    node->unsynced.clear();
  }
  return report;
}

int64_t MemFileSystem::unsynced() const {
  int64_t n = 0;
  for (const auto& [path, node] : files_) n += static_cast<int64_t>(node->unsynced.size());
  return n;
}

void MemFileSystem::CopyTo(MemFileSystem* to) const {
  to->files_.clear();
  *to->clock_ = *clock_;
  for (const auto& [path, node] : files_) {
    auto copy = std::make_shared<Node>(*node);
    copy->clock = to->clock_;
    to->files_.emplace(path, std::move(copy));
  }
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
    ONESTORE_RETURN_IF_ERROR(fs_->Count(IoCall::kRead, path_));
    return base_->ReadAt(offset, buf, n, got);
  }
  Status WriteAt(uint64_t offset, const void* buf, size_t n) override {
    ONESTORE_RETURN_IF_ERROR(fs_->Count(IoCall::kWrite, path_));
    return base_->WriteAt(offset, buf, n);
  }
  Status Truncate(uint64_t size) override {
    ONESTORE_RETURN_IF_ERROR(fs_->Count(IoCall::kTruncate, path_));
    return base_->Truncate(size);
  }
  Status Sync() override {
    ONESTORE_RETURN_IF_ERROR(fs_->Count(IoCall::kSync, path_));
    return base_->Sync();
  }
  Status Size(uint64_t* size) override {
    ONESTORE_RETURN_IF_ERROR(fs_->Count(IoCall::kSize, path_));
    return base_->Size(size);
  }
  Status Close() override {
    ONESTORE_RETURN_IF_ERROR(fs_->Count(IoCall::kClose, path_));
    return base_->Close();
  }

 private:
  FaultFileSystem* fs_;
  std::string path_;
  std::unique_ptr<File> base_;
};

Status FaultFileSystem::Open(const std::string& path, bool create, std::unique_ptr<File>* out) {
  ONESTORE_RETURN_IF_ERROR(Count(IoCall::kOpen, path));
  std::unique_ptr<File> base;
  ONESTORE_RETURN_IF_ERROR(base_->Open(path, create, &base));
  *out = std::make_unique<FaultFile>(this, path, std::move(base));
  return Status::OK();
}

Status FaultFileSystem::Delete(const std::string& path) {
  ONESTORE_RETURN_IF_ERROR(Count(IoCall::kDelete, path));
  return base_->Delete(path);
}

Status FaultFileSystem::Exists(const std::string& path, bool* exists) {
  ONESTORE_RETURN_IF_ERROR(Count(IoCall::kExists, path));
  return base_->Exists(path, exists);
}

Status FaultFileSystem::Lock(const std::string& path, bool* busy) {
  ONESTORE_RETURN_IF_ERROR(Count(IoCall::kLock, path));
  return base_->Lock(path, busy);
}

Status FaultFileSystem::Unlock(const std::string& path) {
  ONESTORE_RETURN_IF_ERROR(Count(IoCall::kUnlock, path));
  return base_->Unlock(path);
}

Status FaultFileSystem::LockHeld(const std::string& path, bool* held) {
  ONESTORE_RETURN_IF_ERROR(Count(IoCall::kLockHeld, path));
  return base_->LockHeld(path, held);
}

void FaultFileSystem::FailCall(IoCall kind, int64_t n, bool sticky) {
  const int i = static_cast<int>(kind);
  fail_at_[i] = count_[i] + n;
  sticky_[i] = sticky;
}

void FaultFileSystem::CrashAt(int64_t n) { crash_at_ = calls_ + n; }

void FaultFileSystem::FailWrite(int64_t n, bool sticky) { FailCall(IoCall::kWrite, n, sticky); }

void FaultFileSystem::FailSync(int64_t n, bool sticky) { FailCall(IoCall::kSync, n, sticky); }

void FaultFileSystem::Heal() {
  fail_at_.fill(0);
  sticky_.fill(false);
  crash_at_ = -1;
}

Status FaultFileSystem::Count(IoCall kind, const std::string& path) {
  const int i = static_cast<int>(kind);
  const int64_t n = ++count_[i];
  ++calls_;
  if (trace_ != nullptr) trace_->push_back(kind);
  if (before_call_) before_call_(calls_);
  const bool crashed = crash_at_ > 0 && calls_ >= crash_at_;
  if (crashed || (fail_at_[i] > 0 && (n == fail_at_[i] || (sticky_[i] && n > fail_at_[i])))) {
    ++failures_;
    return Status::StorageFailed(std::string("injected ") + (crashed ? "crash: " : "") +
                                 IoCallName(kind) + " failure #" + std::to_string(n) + " on " +
                                 path);
  }
  return Status::OK();
}

}  // namespace onestore
