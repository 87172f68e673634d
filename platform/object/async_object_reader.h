// AsyncObjectReader: one-sided object reads from an event loop that shares its fabric Worker with other
// layers (the msg layer). Reads are posted with this layer's completion tag; the loop hands each
// completion to OnCompletion, which checks the copy (object_codec.h) and either finishes the read or posts
// it again (torn or locked copies are retried, bounded by ReadPolicy::max_attempts, with backoff taken
// from later Poll calls instead of sleeping).
//
//   AsyncObjectReader reader(policy, clock);
//   RETURN_IF_ERROR(reader.Read(endpoint, remote_region, ref, [](absl::StatusOr<std::span<const std::byte>> r) {...}));
//   // event loop:
//   for (const Completion& c : completions) if (!messenger.OnCompletion(c)) reader.OnCompletion(c);
//   reader.Poll();   // re-posts reads whose backoff has passed; flushes
#ifndef FATHOM_PLATFORM_OBJECT_ASYNC_OBJECT_READER_H_
#define FATHOM_PLATFORM_OBJECT_ASYNC_OBJECT_READER_H_

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "platform/base/clock.h"
#include "platform/fabric/fabric.h"
#include "platform/object/object_layout.h"
#include "platform/object/object_reader.h"

namespace fathom::object {

// Completion contexts of this layer: [tag 'O':8 | serial:56]. The msg layer uses 'M'.
inline constexpr uint64_t kObjectContextTag = 0x4F;
constexpr bool IsObjectContext(uint64_t context) { return (context >> 56) == kObjectContextTag; }

// absl::AnyInvocable, not std::function: it keeps a callable of up to two pointers (a shared_ptr) without
// allocating, where std::function allocates for anything not trivially copyable. Reads are the data path.
using ObjectCallback = absl::AnyInvocable<void(absl::StatusOr<std::span<const std::byte>>)>;

// A checked copy: the header (version included) and the payload.
struct VersionedObject {
  ObjectHeader header;
  std::span<const std::byte> payload;
};
using VersionedObjectCallback = absl::AnyInvocable<void(absl::StatusOr<VersionedObject>)>;

class AsyncObjectReader {
 public:
  explicit AsyncObjectReader(ReadPolicy policy = {}, const Clock* clock = Clock::Real())
      : policy_(std::move(policy)), clock_(clock) {}

  // Starts reading `ref` through `endpoint` (which must outlive the read: a failed endpoint finishes its
  // reads through their error completions), where `region` is the import of
  // ref.address.region. `done` runs exactly once, inside OnCompletion or Poll, unless Read returns an error.
  // The span it gets is valid only during the callback.
  absl::Status Read(fabric::Endpoint& endpoint, fabric::RemoteRegion region, const ObjectRef& ref,
                    ObjectCallback done);
  // Read, handing back the header too (transactions record the version they read). With
  // `fail_if_locked`, a locked copy ends the read with Aborted at once instead of being retried.
  absl::Status ReadVersioned(fabric::Endpoint& endpoint, fabric::RemoteRegion region, const ObjectRef& ref,
                             VersionedObjectCallback done, bool fail_if_locked = false);
  // Returns false if the completion is not this layer's.
  bool OnCompletion(const fabric::Completion& completion);
  // Re-posts reads whose backoff has passed. Returns how many it posted.
  size_t Poll();

  // `endpoint` is about to be destroyed: reads through it finish with Cancelled when their completion
  // arrives (their buffers live until then) and are never posted again.
  void Forget(const fabric::Endpoint& endpoint);

  size_t in_flight() const { return reads_.size(); }
  const ReadStats& stats() const { return stats_; }

 private:
  struct PendingRead {
    fabric::Endpoint* endpoint;
    fabric::RemoteRegion region;
    ObjectRef ref;
    VersionedObjectCallback done;
    bool fail_if_locked = false;
    std::vector<std::byte> buffer;
    int attempts = 0;
    absl::Duration backoff = absl::Microseconds(1);
    absl::Time retry_at = absl::InfinitePast();
    bool posted = false;
  };
  absl::Status Post(uint64_t serial, PendingRead& read);
  void Finish(uint64_t serial, absl::StatusOr<VersionedObject> result);

  ReadPolicy policy_;
  const Clock* clock_;
  uint64_t next_serial_ = 1;
  absl::flat_hash_map<uint64_t, PendingRead> reads_;
  std::vector<uint64_t> waiting_;  // reads backing off, re-posted by Poll
  // Buffers of finished reads, for the next ones (the data path does not allocate).
  static constexpr size_t kSpareBuffers = 64;
  std::vector<std::vector<std::byte>> spare_buffers_;
  ReadStats stats_;
};

}  // namespace fathom::object

#endif  // FATHOM_PLATFORM_OBJECT_ASYNC_OBJECT_READER_H_
