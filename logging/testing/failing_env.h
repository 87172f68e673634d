// A RocksDB file system whose disk can be made "full" by a test: while it is, every new file and every
// append, flush or sync of an open one fails with NoSpace, as a full disk would (leveldb/RocksDB's
// fault-injection environments are the model).
#ifndef FATHOM_LOGGING_TESTING_FAILING_ENV_H_
#define FATHOM_LOGGING_TESTING_FAILING_ENV_H_

#include <atomic>
#include <memory>
#include <string>

#include "rocksdb/env.h"
#include "rocksdb/file_system.h"

namespace fathom::logging::testing {

class DiskFullFileSystem : public rocksdb::FileSystemWrapper {
 public:
  explicit DiskFullFileSystem(const std::shared_ptr<rocksdb::FileSystem>& base) : FileSystemWrapper(base) {}
  static const char* kClassName() { return "DiskFullFileSystem"; }
  const char* Name() const override { return kClassName(); }

  void set_full(bool full) { full_.store(full, std::memory_order_relaxed); }
  bool full() const { return full_.load(std::memory_order_relaxed); }
  int failures() const { return failures_.load(std::memory_order_relaxed); }

  rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override {
    if (full()) return Fail();
    std::unique_ptr<rocksdb::FSWritableFile> file;
    rocksdb::IOStatus s = target()->NewWritableFile(name, options, &file, dbg);
    if (s.ok()) *result = std::make_unique<File>(std::move(file), this);
    return s;
  }

 private:
  class File : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    File(std::unique_ptr<rocksdb::FSWritableFile> file, DiskFullFileSystem* fs)
        : FSWritableFileOwnerWrapper(std::move(file)), fs_(fs) {}
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override {
      if (fs_->full()) return fs_->Fail();
      return FSWritableFileOwnerWrapper::Append(data, options, dbg);
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             const rocksdb::DataVerificationInfo& info, rocksdb::IODebugContext* dbg) override {
      if (fs_->full()) return fs_->Fail();
      return FSWritableFileOwnerWrapper::Append(data, options, info, dbg);
    }
    rocksdb::IOStatus Flush(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
      if (fs_->full()) return fs_->Fail();
      return FSWritableFileOwnerWrapper::Flush(options, dbg);
    }
    rocksdb::IOStatus Sync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
      if (fs_->full()) return fs_->Fail();
      return FSWritableFileOwnerWrapper::Sync(options, dbg);
    }

   private:
    DiskFullFileSystem* fs_;
  };

  rocksdb::IOStatus Fail() {
    failures_.fetch_add(1, std::memory_order_relaxed);
    return rocksdb::IOStatus::NoSpace("disk full (injected by the test)");
  }

  std::atomic<bool> full_{false};
  std::atomic<int> failures_{0};
};

}  // namespace fathom::logging::testing

#endif  // FATHOM_LOGGING_TESTING_FAILING_ENV_H_
