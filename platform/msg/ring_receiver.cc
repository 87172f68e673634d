#include "platform/msg/ring_receiver.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "platform/base/status_macros.h"
#include "platform/msg/context.h"
#include "platform/msg/shared_load.h"

namespace fathom::msg {

absl::StatusOr<std::unique_ptr<RingReceiver>> RingReceiver::Create(fabric::Region& ring_region,
                                                                   const RingLocation& ring,
                                                                   fabric::Endpoint& to_sender,
                                                                   const CreditLocation& credit, uint32_t owner,
                                                                   RingReceiverOptions options) {
  RETURN_IF_ERROR(ring.Validate());
  RETURN_IF_ERROR(credit.Validate());
  if (!SameRegion(ring.region, ring_region) || ring.offset + ring.capacity > ring_region.size()) {
    return absl::InvalidArgumentError("ring location does not describe the given local region");
  }
  if (options.clock == nullptr) return absl::InvalidArgumentError("no clock");
  if (owner >= kMaxContextOwners) return absl::InvalidArgumentError("context owner out of range");
  ASSIGN_OR_RETURN(fabric::RemoteRegion credit_remote, to_sender.ImportRegion(credit.region));
  return std::unique_ptr<RingReceiver>(new RingReceiver(ring_region.data() + ring.offset, ring, to_sender,
                                                        credit_remote, credit.offset, owner, options));
}

RingReceiver::RingReceiver(const std::byte* ring, const RingLocation& location, fabric::Endpoint& to_sender,
                           fabric::RemoteRegion credit_remote, uint64_t credit_offset, uint32_t owner,
                           RingReceiverOptions options)
    : ring_(ring),
      geometry_(location.geometry()),
      session_(location.session),
      to_sender_(to_sender),
      credit_remote_(credit_remote),
      credit_offset_(credit_offset),
      owner_(owner),
      options_(options),
      copy_(new std::byte[geometry_.max_span()]) {}

size_t RingReceiver::Poll(absl::FunctionRef<RejectReason(const RingRecord&)> deliver, size_t max_records) {
  if (polling_ || !health_.ok()) return 0;
  polling_ = true;
  size_t delivered = 0;
  while (delivered < max_records) {
    RingRecord record;
    if (ReadNext(&record) != Next::kRecord) break;
    ++delivered;
    const RejectReason reason = deliver(record);
    if (reason == RejectReason::kNone) {
      ++counters_.messages;
      counters_.bytes += record.payload.size();
      consecutive_rejects_ = 0;
      continue;
    }
    Reject(reason, absl::StrCat("message seq ", record.seq, " type ", record.type));
    if (!health_.ok()) break;
  }
  MaybeWriteCredit();
  polling_ = false;
  return delivered;
}

RejectReason RingReceiver::Implausible(const RecordHeader& header, uint64_t room) const {
  if (header.reserved != 0) return RejectReason::kBadHeader;
  if (header.is_padding()) {
    // The sender pads only when the next record does not fit in the room before the end; the padding
    // then covers exactly that room.
    const bool fits = header.length == room - kRecordHeaderSize && room < geometry_.max_span();
    return fits ? RejectReason::kNone : RejectReason::kBadLength;
  }
  if (header.length > geometry_.max_payload() || RecordSpan(header.length) > room) return RejectReason::kBadLength;
  return RejectReason::kNone;
}

RingReceiver::Next RingReceiver::ReadNext(RingRecord* record) {
  while (true) {
    const uint64_t room = geometry_.RoomBeforeEnd(position_);
    if (room < kRecordHeaderSize) {  // too little room for a header: the sender skipped it without a marker
      position_ += room;
      continue;
    }
    const std::byte* at = ring_ + geometry_.OffsetOf(position_);
    std::byte* copy = copy_.get();
    LoadShared(copy, at, kRecordHeaderSize);
    const RecordHeader header = LoadHeader(copy);
    if (header.seq != next_seq_ || header.position != position_) return Foreign(header, at, room);
    if (const RejectReason reason = Implausible(header, room); reason != RejectReason::kNone) {
      return Suspect(reason, header);
    }
    // Plausible, so the copy stays inside both the ring (span <= room) and copy_ (span <= max_span).
    const size_t covered = header.covered();
    if (covered != 0) LoadShared(copy + kRecordHeaderSize, at + kRecordHeaderSize, AlignRecord(covered));
    if (RecordChecksum(copy, covered, session_) != header.checksum) return Suspect(RejectReason::kBadChecksum, header);
    suspect_.active = false;
    ++next_seq_;
    if (header.is_padding()) {
      position_ += room;
      consumed_ = position_;
      continue;
    }
    position_ += RecordSpan(header.length);
    consumed_ = position_;
    record->type = header.type;
    record->seq = header.seq;
    record->payload = AsView(copy + kRecordHeaderSize, header.length);
    return Next::kRecord;
  }
}

RingReceiver::Next RingReceiver::Foreign(const RecordHeader& header, const std::byte* at, uint64_t room) {
  const uint64_t lap_mask = uint64_t{geometry_.capacity()} - 1;
  // A record that started right here one or more laps ago: old bytes, the new record has not arrived.
  if (header.position < position_ && ((position_ - header.position) & lap_mask) == 0 && header.seq < next_seq_) {
    return Next::kEmpty;
  }
  // Anything else is payload bytes of an earlier lap, or a header being written, unless it verifies as a
  // whole record. Hashing the same unchanged bytes on every poll of an idle ring would be waste.
  std::byte* copy = copy_.get();
  if (foreign_.position == position_ && std::memcmp(foreign_.header, copy, kRecordHeaderSize) == 0 &&
      ++foreign_.polls < options_.recheck_polls) {
    return Next::kEmpty;
  }
  foreign_.position = position_;
  std::memcpy(foreign_.header, copy, kRecordHeaderSize);
  foreign_.polls = 0;
  if (Implausible(header, room) != RejectReason::kNone) return Next::kEmpty;
  const size_t covered = header.covered();
  if (covered != 0) LoadShared(copy + kRecordHeaderSize, at + kRecordHeaderSize, AlignRecord(covered));
  if (RecordChecksum(copy, covered, session_) != header.checksum) return Next::kEmpty;
  Reject(RejectReason::kBadSequence,
         absl::StrCat("a complete record with seq ", header.seq, " and position ", header.position, " where seq ",
                      next_seq_, " at position ", position_, " was expected"));
  return Next::kBad;
}

RingReceiver::Next RingReceiver::Suspect(RejectReason reason, const RecordHeader& header) {
  const absl::Time now = options_.clock->Now();
  if (!suspect_.active || suspect_.position != position_) {
    suspect_ = SuspectState{true, position_, now};
    return Next::kEmpty;
  }
  if (now - suspect_.since < options_.corrupt_after) return Next::kEmpty;
  Reject(reason, absl::StrCat("record seq ", header.seq, " at position ", position_, " (length ", header.length,
                              ", type ", header.type, ") still does not check out after ",
                              absl::FormatDuration(now - suspect_.since)));
  return Next::kBad;
}

void RingReceiver::Reject(RejectReason reason, std::string_view detail) {
  ++counters_.rejected[static_cast<size_t>(reason)];
  if (IsFramingError(reason)) {
    MarkBad(absl::DataLossError(absl::StrCat("ring corrupt (", RejectReasonName(reason), "): ", std::string(detail))));
    return;
  }
  if (++consecutive_rejects_ >= options_.max_consecutive_rejects) {
    MarkBad(absl::DataLossError(absl::StrCat(consecutive_rejects_, " consecutive messages rejected, the last (",
                                             std::string(detail), ") for ", RejectReasonName(reason))));
  }
}

void RingReceiver::MaybeWriteCredit() {
  if (credit_in_flight_ || !health_.ok() || consumed_ - credited_ < geometry_.CreditThreshold()) return;
  EncodeCredit(credit_record_, session_, consumed_);
  absl::Status s = to_sender_.PostWrite(credit_remote_, credit_offset_, credit_record_, kCreditRecordSize,
                                        MsgContext(owner_, ++credit_serial_));
  if (absl::IsResourceExhausted(s)) return;  // the worker is busy: next poll
  if (s.ok()) s = to_sender_.Flush();
  if (!s.ok()) {
    MarkBad(s);
    return;
  }
  credit_in_flight_ = true;
  credit_posted_ = consumed_;
  ++credit_writes_;
}

void RingReceiver::OnCompletion(const fabric::Completion& completion) {
  if (!credit_in_flight_ || ContextSerial(completion.context) != credit_serial_) return;
  credit_in_flight_ = false;
  if (completion.status.ok()) {
    credited_ = credit_posted_;
  } else if (!absl::IsUnavailable(completion.status) || !to_sender_.health().ok()) {
    MarkBad(completion.status);
  }
  // A dropped credit write is simply written again (with the newest head) by the next Poll.
}

void RingReceiver::MarkBad(absl::Status status) {
  if (health_.ok()) health_ = std::move(status);
}

}  // namespace fathom::msg
