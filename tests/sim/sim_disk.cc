#include "tests/sim/sim_disk.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace fathom::sim {

// Remembers, per file, how many bytes were written and how many of them were synced, so a power loss
// can cut each file back to its synced length.
class SimDisk::TrackingFileSystem : public rocksdb::FileSystemWrapper {
 public:
  explicit TrackingFileSystem(const std::shared_ptr<rocksdb::FileSystem>& base) : FileSystemWrapper(base) {}
  static const char* kClassName() { return "SimDiskTrackingFileSystem"; }
  const char* Name() const override { return kClassName(); }

  rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override {
    std::unique_ptr<rocksdb::FSWritableFile> file;
    rocksdb::IOStatus s = target()->NewWritableFile(name, options, &file, dbg);
    if (!s.ok()) return s;
    {
      absl::MutexLock lock(&mu_);
      sizes_[name] = Sizes{};  // a new file is empty, and its (empty) creation counts as synced
    }
    *result = std::make_unique<File>(std::move(file), this, name);
    return s;
  }
  rocksdb::IOStatus DeleteFile(const std::string& name, const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = target()->DeleteFile(name, options, dbg);
    if (s.ok()) {
      absl::MutexLock lock(&mu_);
      sizes_.erase(name);
    }
    return s;
  }
  rocksdb::IOStatus RenameFile(const std::string& from, const std::string& to, const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = target()->RenameFile(from, to, options, dbg);
    if (s.ok()) {
      absl::MutexLock lock(&mu_);
      auto it = sizes_.find(from);
      if (it != sizes_.end()) {
        sizes_[to] = it->second;
        sizes_.erase(it);
      }
    }
    return s;
  }

  absl::Status LoseUnsyncedUnder(const std::string& dir) {
    absl::MutexLock lock(&mu_);
    for (auto& [name, sizes] : sizes_) {
      if (!Under(name, dir) || sizes.written == sizes.synced) continue;
      rocksdb::IOStatus s = target()->Truncate(name, sizes.synced, rocksdb::IOOptions(), nullptr);
      if (!s.ok()) return absl::InternalError(absl::StrCat("cutting ", name, " back: ", s.ToString()));
      sizes.written = sizes.synced;
    }
    return absl::OkStatus();
  }
  uint64_t UnsyncedBytesUnder(const std::string& dir) const {
    absl::MutexLock lock(&mu_);
    uint64_t bytes = 0;
    for (const auto& [name, sizes] : sizes_) {
      if (Under(name, dir)) bytes += sizes.written - sizes.synced;
    }
    return bytes;
  }

 private:
  struct Sizes {
    uint64_t written = 0;
    uint64_t synced = 0;
  };
  static bool Under(const std::string& name, const std::string& dir) {
    return absl::StartsWith(name, dir) && (name.size() == dir.size() || name[dir.size()] == '/');
  }
  void Wrote(const std::string& name, uint64_t bytes) {
    absl::MutexLock lock(&mu_);
    sizes_[name].written += bytes;
  }
  void Synced(const std::string& name) {
    absl::MutexLock lock(&mu_);
    Sizes& sizes = sizes_[name];
    sizes.synced = sizes.written;
  }

  class File : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    File(std::unique_ptr<rocksdb::FSWritableFile> file, TrackingFileSystem* fs, std::string name)
        : FSWritableFileOwnerWrapper(std::move(file)), fs_(fs), name_(std::move(name)) {}
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override {
      rocksdb::IOStatus s = FSWritableFileOwnerWrapper::Append(data, options, dbg);
      if (s.ok()) fs_->Wrote(name_, data.size());
      return s;
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             const rocksdb::DataVerificationInfo& info, rocksdb::IODebugContext* dbg) override {
      rocksdb::IOStatus s = FSWritableFileOwnerWrapper::Append(data, options, info, dbg);
      if (s.ok()) fs_->Wrote(name_, data.size());
      return s;
    }
    rocksdb::IOStatus Sync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
      rocksdb::IOStatus s = FSWritableFileOwnerWrapper::Sync(options, dbg);
      if (s.ok()) fs_->Synced(name_);
      return s;
    }
    rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
      rocksdb::IOStatus s = FSWritableFileOwnerWrapper::Fsync(options, dbg);
      if (s.ok()) fs_->Synced(name_);
      return s;
    }

   private:
    TrackingFileSystem* const fs_;
    const std::string name_;
  };

  mutable absl::Mutex mu_;
  std::map<std::string, Sizes> sizes_ ABSL_GUARDED_BY(mu_);
};

SimDisk::SimDisk() : base_(rocksdb::NewMemEnv(rocksdb::Env::Default())) {
  full_ = std::make_shared<logging::testing::DiskFullFileSystem>(base_->GetFileSystem());
  tracking_ = std::make_shared<TrackingFileSystem>(full_);
  env_ = rocksdb::NewCompositeEnv(tracking_);
}

SimDisk::~SimDisk() = default;

absl::Status SimDisk::LoseUnsyncedUnder(const std::string& dir) { return tracking_->LoseUnsyncedUnder(dir); }

uint64_t SimDisk::UnsyncedBytesUnder(const std::string& dir) const { return tracking_->UnsyncedBytesUnder(dir); }

}  // namespace fathom::sim
