// RingReceiver: the reading end of one ring, in the receiving node's registered memory, polled by one thread.
//
//   ASSIGN_OR_RETURN(auto receiver, RingReceiver::Create(*ring_region, my_ring, *endpoint_to_sender,
//                                                         sender_credit, /*owner=*/1, options));
//   receiver->Poll([&](const RingRecord& r) {          // from the event loop, next to Worker::Poll
//     Handle(r.type, r.payload);                       // r.payload is valid during the call only
//     return RejectReason::kNone;                      // or why the record is rejected
//   });
//
// The receiver reads records in stream order, each copied out of the ring once and checked on the copy, so
// nothing a peer writes afterwards can change what was accepted. A record is complete when its sequence
// number and position are the expected ones, its length fits, and its checksum verifies. Bytes that do not
// check out are "not arrived yet" (stale bytes of an earlier lap, or a write in flight) and are polled
// again; they become corruption only under the rule below (docs/formats/ring.md, "Stale, in flight or
// corrupt"):
// - The expected record (right seq and position) whose length or checksum does not check out is retried
//   until ReceiverOptions::corrupt_after has passed since it was first seen so; then it is corrupt (by then
//   a write in flight has landed or failed its endpoint).
// - A different record that verifies completely (right checksum, plausible length) but carries another
//   seq or position is corrupt at once (stale, skipped or misplaced), except a record that started at this
//   very spot one or more laps ago, which is simply old bytes.
// Corruption in the framing marks the ring bad (health() = DataLoss; Poll delivers nothing more), since the
// stream cannot be resynchronised. Messages the layer above rejects are consumed and counted; too many in a
// row (max_consecutive_rejects) also mark the ring bad.
//
// Credits: after consuming CreditThreshold() bytes beyond the head it last wrote back, Poll writes its head
// into the sender's credit word (one write in flight at a time, re-sent if the fabric drops it).
//
// Threading: one thread at a time, the thread of the endpoint's Worker.
#ifndef FATHOM_PLATFORM_MSG_RING_RECEIVER_H_
#define FATHOM_PLATFORM_MSG_RING_RECEIVER_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "platform/base/clock.h"
#include "platform/fabric/fabric.h"
#include "platform/msg/counters.h"
#include "platform/msg/framing.h"
#include "platform/msg/ring_layout.h"
#include "platform/msg/ring_location.h"

namespace fathom::msg {

struct RingReceiverOptions {
  // Not owned; must outlive the receiver.
  const Clock* clock = Clock::Real();
  // How long the expected record may stay incomplete before it is declared corrupt. Keep it at least the
  // sender's fabric operation timeout (FabricOptions::operation_timeout).
  absl::Duration corrupt_after = absl::Seconds(5);
  // Message-level rejects in a row that mark the ring bad.
  uint32_t max_consecutive_rejects = 16;
  // Polls between re-checks of an unchanged foreign header at the read position (a re-check hashes it).
  uint32_t recheck_polls = 256;
};

struct RingRecord {
  uint16_t type = 0;
  uint64_t seq = 0;
  std::string_view payload;  // a copy owned by the receiver, valid until the delivering call returns
};

class RingReceiver {
 public:
  // The ring lives in `ring_region` (local, registered, outliving the receiver) as `ring` describes.
  // `to_sender` reaches the sender's node (outliving the receiver); `credit` is the sender's credit word,
  // imported on it here. `owner` goes into the completion contexts (context.h).
  static absl::StatusOr<std::unique_ptr<RingReceiver>> Create(fabric::Region& ring_region, const RingLocation& ring,
                                                              fabric::Endpoint& to_sender,
                                                              const CreditLocation& credit, uint32_t owner,
                                                              RingReceiverOptions options = {});

  // Delivers up to `max_records` complete records, in order, to `deliver`, which returns kNone if it
  // accepted the record or why it rejected it; then writes the head back if due. Returns how many records
  // were delivered. Not reentrant: `deliver` must not poll this receiver.
  size_t Poll(absl::FunctionRef<RejectReason(const RingRecord&)> deliver,
              size_t max_records = std::numeric_limits<size_t>::max());
  // A completion whose context carries this receiver's owner (a credit write).
  void OnCompletion(const fabric::Completion& completion);

  // OK while usable; DataLoss after corruption; the endpoint's error if writing credits failed.
  absl::Status health() const { return health_; }
  const MsgCounters& counters() const { return counters_; }
  const RingGeometry& geometry() const { return geometry_; }
  uint32_t owner() const { return owner_; }
  // Absolute positions: where the next record is expected, the end of the last record consumed, and the
  // head last written back (and completed).
  uint64_t position() const { return position_; }
  uint64_t expected_seq() const { return next_seq_; }
  uint64_t consumed() const { return consumed_; }
  uint64_t credited() const { return credited_; }
  uint64_t credit_writes() const { return credit_writes_; }
  // A credit write posted and not completed (its source buffer is ours until then).
  bool credit_in_flight() const { return credit_in_flight_; }

 private:
  enum class Next { kRecord, kEmpty, kBad };

  RingReceiver(const std::byte* ring, const RingLocation& location, fabric::Endpoint& to_sender,
               fabric::RemoteRegion credit_remote, uint64_t credit_offset, uint32_t owner,
               RingReceiverOptions options);

  Next ReadNext(RingRecord* record);
  // The header at the read position is not the expected one.
  Next Foreign(const RecordHeader& header, const std::byte* at, uint64_t room);
  // The expected record does not check out (yet).
  Next Suspect(RejectReason reason, const RecordHeader& header);
  RejectReason Implausible(const RecordHeader& header, uint64_t room) const;
  void Reject(RejectReason reason, std::string_view detail);
  void MaybeWriteCredit();
  void MarkBad(absl::Status status);

  const std::byte* const ring_;
  const RingGeometry geometry_;
  const uint64_t session_;
  fabric::Endpoint& to_sender_;
  const fabric::RemoteRegion credit_remote_;
  const uint64_t credit_offset_;
  const uint32_t owner_;
  const RingReceiverOptions options_;
  std::unique_ptr<std::byte[]> copy_;  // max_span bytes, 8-aligned: the record being checked

  uint64_t position_ = 0;
  uint64_t next_seq_ = 1;
  uint64_t consumed_ = 0;
  bool polling_ = false;
  uint32_t consecutive_rejects_ = 0;

  struct SuspectState {
    bool active = false;
    uint64_t position = 0;
    absl::Time since;
  } suspect_;
  // The last foreign header seen at the read position, so that an idle ring is not re-hashed every poll.
  struct ForeignState {
    uint64_t position = UINT64_MAX;
    std::byte header[kRecordHeaderSize] = {};
    uint32_t polls = 0;
  } foreign_;

  alignas(8) std::byte credit_record_[kCreditRecordSize] = {};
  bool credit_in_flight_ = false;
  uint64_t credit_posted_ = 0;
  uint64_t credited_ = 0;
  uint32_t credit_serial_ = 0;
  uint64_t credit_writes_ = 0;

  absl::Status health_;
  MsgCounters counters_;
};

}  // namespace fathom::msg

#endif  // FATHOM_PLATFORM_MSG_RING_RECEIVER_H_
