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
#include <deque>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "platform/base/clock.h"
#include "platform/fabric/fabric.h"
#include "platform/object/object_layout.h"
#include "platform/object/object_reader.h"

namespace fathom::object {

// Completion contexts of this layer: [tag 'O':8 | read id:56]. The msg layer uses 'M'.
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
  // Asks `endpoint`'s peer to run its call handler `handler` on `argument` (fabric::Endpoint::PostCall),
  // with room for a reply of `capacity` bytes. `done` gets the reply (valid only during the call) or the
  // call's error, exactly once, inside OnCompletion, unless Call returns an error. Never retried.
  absl::Status Call(fabric::Endpoint& endpoint, uint32_t handler, absl::Span<const std::byte> argument,
                    size_t capacity, ObjectCallback done);
  // Returns false if the completion is not this layer's.
  bool OnCompletion(const fabric::Completion& completion);
  // Re-posts reads whose backoff has passed. Returns how many it posted.
  size_t Poll();

  // `endpoint` is about to be destroyed: reads through it finish with Unavailable (a transient failure:
  // the next connection serves the read) when their completion arrives (their buffers live until then)
  // and are never posted again.
  void Forget(const fabric::Endpoint& endpoint);

  size_t in_flight() const { return in_flight_; }
  size_t backing_off() const { return waiting_.size(); }
  // The reads backing off (at most a few): object, attempts, what the last copy showed. For a stall report.
  std::string DescribeWaiting() const;
  const ReadStats& stats() const { return stats_; }

 private:
  struct PendingRead {
    fabric::Endpoint* endpoint;
    fabric::RemoteRegion region;
    ObjectRef ref;
    VersionedObjectCallback done;
    ObjectCallback call_done;  // a call's (Call), instead of `done`
    bool call = false;
    bool fail_if_locked = false;
    std::vector<std::byte> buffer;
    int attempts = 0;
    Verdict last_verdict = Verdict::kValid;  // of the last copy checked
    absl::Duration backoff = absl::Microseconds(1);
    absl::Time retry_at = absl::InfinitePast();
    bool posted = false;
    bool live = false;        // the slot holds a read
    uint32_t generation = 0;  // of the slot's current (or last) read, in its completion context
  };
  // A read's id, in its completion context: [slot:24 | generation:32]. A completion whose generation is
  // not the slot's (a read finished by Forget's cancellation, the slot reused) finds no read.
  static constexpr uint64_t Id(uint32_t slot, uint32_t generation) { return uint64_t{slot} << 32 | generation; }
  // The live read `id` names, or null.
  PendingRead* Find(uint64_t id);
  // A free slot, live from now on, and the id of its new read.
  absl::StatusOr<uint64_t> AcquireSlot();
  absl::Status Post(uint64_t id, PendingRead& read);
  // Frees the slot of a read that never started.
  void Release(uint32_t slot, PendingRead& read);
  void Finish(uint64_t id, absl::StatusOr<VersionedObject> result);
  void FinishCall(uint64_t id, absl::StatusOr<std::span<const std::byte>> result);

  ReadPolicy policy_;
  const Clock* clock_;
  // Reads by slot (a deque: references stay valid as it grows), reused through free_slots_: the data path
  // neither hashes nor allocates. A slot's buffer stays with it for the next read.
  std::deque<PendingRead> slots_;
  std::vector<uint32_t> free_slots_;
  size_t in_flight_ = 0;
  std::vector<uint64_t> waiting_;  // reads backing off, re-posted by Poll
  ReadStats stats_;
};

}  // namespace fathom::object

#endif  // FATHOM_PLATFORM_OBJECT_ASYNC_OBJECT_READER_H_
