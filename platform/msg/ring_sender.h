// RingSender: the writing end of one ring, owned by the sending thread. Messages are framed into a local
// staging copy of the ring and written into the receiver's memory with one-sided writes.
//
//   ASSIGN_OR_RETURN(auto sender, RingSender::Create(*endpoint, peer_ring, *credit_region, credit_offset,
//                                                     /*owner=*/0));
//   RETURN_IF_ERROR(sender->Send(/*type=*/7, "hello"));   // queued: framed into the staging copy
//   RETURN_IF_ERROR(sender->Send(7, "world"));
//   RETURN_IF_ERROR(sender->Flush());                     // one PostWrite for both (two if the ring wraps)
//   ... worker->Poll(done); sender->OnCompletion(c) for each completion whose context is the sender's
//
// Space: the receiver writes its head (how far it has consumed) back into the credit word in our registered
// memory, lazily (RingGeometry::CreditThreshold). Send reads that word when the ring looks full and
// returns ResourceExhausted if the record still does not fit: queued and unconsumed bytes are never
// overwritten. The caller then flushes, polls and retries (RPC callers see the same ResourceExhausted).
// Staging bytes are reused only once their write has completed and the receiver has consumed them.
//
// Waking (Wake): most messages wake the receiver. One its CPU is not waited on for (a replica's record it
// applies later) is sent kWhenAwake, and a Flush of only such messages uses Endpoint::FlushQuietly (no
// doorbell over shared memory): the receiver reads them when it next wakes. One whose handling is wanted
// soon but waited on by nobody now (a COMMIT-PRIMARY: the primary's locks wait for it, the coordinator
// does not) is sent kSoon: flushed quietly too, its doorbell owed (wake_owed()) until a later Flush
// wakes the receiver anyway or the owner calls WakeIfOwed (Messenger: after a delay, or before its thread
// sleeps). Once more than half the ring is unconsumed, every Flush wakes it, so quiet messages never fill
// the ring.
//
// Failures: a write the fabric drops (Unavailable on a still healthy endpoint) is posted again; any other
// failed write, a failed endpoint or a corrupt credit record marks the sender bad (health()) and every
// later call returns that status.
//
// Threading: one thread at a time, the thread of the endpoint's Worker.
#ifndef FATHOM_PLATFORM_MSG_RING_SENDER_H_
#define FATHOM_PLATFORM_MSG_RING_SENDER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "platform/fabric/fabric.h"
#include "platform/msg/ring_layout.h"
#include "platform/msg/ring_location.h"

namespace fathom::msg {

// Whether a message needs the receiver's CPU now, soon, or only when it next wakes (see above).
enum class Wake : uint8_t { kNow, kSoon, kWhenAwake };

struct RingSenderOptions {
  // Ring writes posted and not completed yet (a power of two); Flush leaves bytes queued beyond it.
  uint32_t max_writes_in_flight = 64;
  // A dropped write is posted again at most this many times in a row before the ring is marked bad.
  uint32_t max_write_retries = 16;
};

class RingSender {
 public:
  // `endpoint` reaches the receiver and must outlive the sender. `ring` is where the receiver keeps the
  // ring (imported on `endpoint` here). The credit record lives at `credit_offset` in `credit_region`, a
  // local registered region that must outlive the sender; Create zeroes it. `owner` goes into the
  // completion contexts (context.h).
  static absl::StatusOr<std::unique_ptr<RingSender>> Create(fabric::Endpoint& endpoint, const RingLocation& ring,
                                                            fabric::Region& credit_region, uint64_t credit_offset,
                                                            uint32_t owner, RingSenderOptions options = {});

  // Queues one message, payload = head followed by body. InvalidArgument for type 0 or a payload over
  // max_payload; ResourceExhausted if it does not fit now; the sender's failure if it is bad.
  // With `set_aside`, the message uses room set aside earlier (SetAside) and never fails for lack of room:
  // ReservationFor(payload length) bytes move from *set_aside to the message (FailedPrecondition if
  // *set_aside holds less).
  absl::Status Send(uint16_t type, std::string_view head, std::string_view body = {},
                    uint64_t* set_aside = nullptr, Wake wake = Wake::kNow);
  // The room a message of `payload_length` bytes can take, ring padding before it included (an upper bound).
  static uint64_t ReservationFor(size_t payload_length);
  // Sets `bytes` of room aside for later Sends that name it, so a protocol can make sure, before it starts,
  // that every message it will send fits (a commit must never stop half way for lack of log space).
  // ResourceExhausted if the room is not free now; other Sends can no longer use it.
  absl::Status SetAside(uint64_t bytes);
  // Gives back room set aside and not used.
  void ReleaseSetAside(uint64_t bytes);
  uint64_t set_aside() const { return set_aside_; }
  // Whether a message of `payload_length` bytes would fit now (reads the credit word if needed).
  bool HasRoom(size_t payload_length);
  // Posts every queued byte: one write per contiguous run (two when the queued bytes wrap), then flushes
  // the endpoint, quietly if no queued message wakes the receiver and the ring is at most half full.
  // ResourceExhausted if writes in flight (or the worker) left some bytes queued.
  absl::Status Flush();
  // Whether a flush left a kSoon message's doorbell unrung (no flush since woke the receiver).
  bool wake_owed() const { return wake_owed_; }
  // Rings the doorbell owed (Endpoint::Wake), if any; returns whether one was.
  bool WakeIfOwed();
  // A completion whose context carries this sender's owner.
  void OnCompletion(const fabric::Completion& completion);

  absl::Status health() const { return health_; }
  const RingGeometry& geometry() const { return geometry_; }
  uint32_t owner() const { return owner_; }
  // Absolute stream positions: tail() is where the next record goes, flushed() how far writes were
  // posted, credited() the receiver's head as last read from the credit word.
  uint64_t tail() const { return tail_; }
  uint64_t flushed() const { return flushed_; }
  uint64_t credited() const { return head_; }
  // Reads the credit word now (credited() is otherwise refreshed only when the ring looks full) and
  // returns credited(): every byte before it has been consumed by the receiver.
  uint64_t ReadCredit() {
    RefreshCredit();
    return head_;
  }
  uint64_t queued_bytes() const { return tail_ - flushed_; }
  // Every byte before this position is in the receiver's memory (its writes completed).
  uint64_t completed() const;
  size_t writes_in_flight() const { return next_write_ - first_write_; }

  struct Stats {
    uint64_t messages = 0;        // queued by Send
    uint64_t bytes = 0;           // their payload bytes
    uint64_t writes = 0;          // ring writes posted (not counting retries)
    uint64_t retried_writes = 0;  // dropped writes posted again
    uint64_t full = 0;            // Sends refused for lack of room
    uint64_t quiet_flushes = 0;   // flushes that did not wake the receiver
    uint64_t owed_wakes = 0;      // quiet flushes of kSoon messages that left a doorbell owed (none was)
    uint64_t owed_wakes_rung = 0;  // of those, rung by WakeIfOwed (the rest went with a waking flush)
    uint64_t bad_credits = 0;     // credit records rejected (RejectReason::kBadCredit)
  };
  const Stats& stats() const { return stats_; }

 private:
  struct WriteSlot {
    uint64_t start = 0;  // absolute positions of the bytes written
    uint64_t end = 0;
    uint32_t retries = 0;
    bool done = false;
  };

  RingSender(fabric::Endpoint& endpoint, fabric::RemoteRegion remote, const RingLocation& ring,
             const std::byte* credit, uint32_t owner, RingSenderOptions options);

  // The first absolute position that may not be written: capacity past the oldest byte still needed.
  uint64_t Limit() const;
  // Whether `bytes` more fit now beside the room set aside (reads the credit word if needed).
  bool Fits(uint64_t bytes);
  void RefreshCredit();
  absl::Status PostSegment(uint64_t serial);
  void MarkBad(absl::Status status);
  std::byte* Staging(uint64_t position) { return staging_.get() + geometry_.OffsetOf(position); }

  fabric::Endpoint& endpoint_;
  const fabric::RemoteRegion remote_;
  const uint64_t ring_offset_;
  const RingGeometry geometry_;
  const uint64_t session_;
  const std::byte* const credit_;
  const uint32_t owner_;
  const RingSenderOptions options_;
  std::unique_ptr<std::byte[]> staging_;  // capacity bytes, laid out as the ring

  uint64_t tail_ = 0;
  uint64_t flushed_ = 0;
  uint64_t head_ = 0;
  uint64_t set_aside_ = 0;
  uint64_t next_seq_ = 1;
  // A skip to the next lap that is queued but not flushed: the bytes up to gap_write_end_ are written (the
  // padding header, if any); the rest, up to the lap boundary gap_end_, is not.
  bool has_gap_ = false;
  bool wake_due_ = false;  // a queued message, not yet flushed, wakes the receiver
  bool soon_due_ = false;  // a queued kSoon message, not yet flushed
  bool wake_owed_ = false;  // a flushed kSoon message's doorbell, not rung yet
  uint64_t gap_write_end_ = 0;
  uint64_t gap_end_ = 0;
  // Writes [first_write_, next_write_) by serial, in slots_[serial % size].
  std::vector<WriteSlot> slots_;
  uint64_t first_write_ = 0;
  uint64_t next_write_ = 0;
  absl::Status health_;
  Stats stats_;
};

}  // namespace fathom::msg

#endif  // FATHOM_PLATFORM_MSG_RING_SENDER_H_
