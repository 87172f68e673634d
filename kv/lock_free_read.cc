#include "kv/lock_free_read.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "platform/base/status_macros.h"
#include "platform/object/object_codec.h"

namespace fathom::kv {
namespace {

// Copies of local objects, reused: a GET's callback may start another GET (and so another local read)
// before the first copy is done with, hence a stack of buffers rather than one.
class LocalCopies {
 public:
  std::vector<std::byte> Take(size_t bytes) {
    std::vector<std::byte> buffer;
    if (!spare_.empty()) {
      buffer = std::move(spare_.back());
      spare_.pop_back();
    }
    if (buffer.size() < bytes) buffer.resize(bytes);
    return buffer;
  }
  void Give(std::vector<std::byte> buffer) {
    if (spare_.size() < kKept) spare_.push_back(std::move(buffer));
  }

 private:
  static constexpr size_t kKept = 16;
  std::vector<std::vector<std::byte>> spare_;
};

thread_local LocalCopies local_copies;

}  // namespace

absl::StatusOr<LockFreeRead> ReadLockFree(txn::TxnThread& thread, const object::ObjectRef& ref,
                                          object::VersionedObjectCallback done) {
  node::NodeThread& node_thread = thread.thread();
  absl::StatusOr<uint32_t> primary = node_thread.region_map().PrimaryOf(ref.address.region);
  if (!primary.ok()) return absl::UnavailableError(primary.status().message());
  if (*primary == thread.node_id()) {
    auto object = node_thread.store().Resolve(ref);
    if (!object.ok()) {
      // NotFound: a region this node is primary of but does not serve yet (a promotion in progress).
      return absl::Status(absl::IsNotFound(object.status()) ? absl::StatusCode::kUnavailable
                                                            : absl::StatusCode::kInvalidArgument,
                          object.status().message());
    }
    std::vector<std::byte> buffer = local_copies.Take(ref.capacity);
    std::span<std::byte> copy(buffer.data(), ref.capacity);
    object->CopyTo(copy);
    object::ObjectCheck check = object::CheckObjectCopy(copy, ref);
    if (object::IsRetryable(check.verdict)) {
      local_copies.Give(std::move(buffer));
      return LockFreeRead::kLocalBusy;
    }
    if (check.verdict == object::Verdict::kValid) {
      done(object::VersionedObject{check.header, check.payload});
    } else {
      done(object::VerdictStatus(check.verdict, ref));
    }
    local_copies.Give(std::move(buffer));
    return LockFreeRead::kStarted;
  }
  ASSIGN_OR_RETURN(node::NodeThread::Route route, node_thread.RouteTo(ref.address.region));
  RETURN_IF_ERROR(node_thread.reader().ReadVersioned(*route.endpoint, *route.region, ref, std::move(done)));
  return LockFreeRead::kStarted;
}

}  // namespace fathom::kv
