#include "platform/msg/ring_sender.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "platform/base/status_macros.h"
#include "platform/msg/context.h"
#include "platform/msg/framing.h"
#include "platform/msg/shared_load.h"

namespace fathom::msg {

absl::StatusOr<std::unique_ptr<RingSender>> RingSender::Create(fabric::Endpoint& endpoint, const RingLocation& ring,
                                                               fabric::Region& credit_region,
                                                               uint64_t credit_offset, uint32_t owner,
                                                               RingSenderOptions options) {
  RETURN_IF_ERROR(ring.Validate());
  if (credit_offset % kRecordAlignment != 0 || credit_offset > credit_region.size() ||
      credit_region.size() - credit_offset < kCreditRecordSize) {
    return absl::InvalidArgumentError(absl::StrCat("credit word at ", credit_offset, " is misaligned or outside ",
                                                   "its region of ", credit_region.size(), " bytes"));
  }
  const uint32_t writes = options.max_writes_in_flight;
  if (writes == 0 || (writes & (writes - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("max_writes_in_flight ", writes, " is not a power of two"));
  }
  if (owner >= kMaxContextOwners) return absl::InvalidArgumentError("context owner out of range");
  ASSIGN_OR_RETURN(fabric::RemoteRegion remote, endpoint.ImportRegion(ring.region));
  std::byte* credit = credit_region.data() + credit_offset;
  std::memset(credit, 0, kCreditRecordSize);  // no credit until the receiver writes one
  return std::unique_ptr<RingSender>(new RingSender(endpoint, remote, ring, credit, owner, options));
}

RingSender::RingSender(fabric::Endpoint& endpoint, fabric::RemoteRegion remote, const RingLocation& ring,
                       const std::byte* credit, uint32_t owner, RingSenderOptions options)
    : endpoint_(endpoint),
      remote_(remote),
      ring_offset_(ring.offset),
      geometry_(ring.geometry()),
      session_(ring.session),
      credit_(credit),
      owner_(owner),
      options_(options),
      staging_(new std::byte[ring.capacity]()),
      slots_(options.max_writes_in_flight) {}

uint64_t RingSender::Limit() const {
  // Staging bytes from the oldest write still in flight on must stay as they are until it completes.
  const uint64_t reusable = first_write_ < next_write_ ? slots_[first_write_ % slots_.size()].start : flushed_;
  return std::min(head_, reusable) + geometry_.capacity();
}

void RingSender::RefreshCredit() {
  alignas(8) std::byte word[kCreditRecordSize];
  LoadShared(word, credit_, kCreditRecordSize);
  const std::optional<uint64_t> head = DecodeCredit(word, session_);
  if (!head.has_value() || *head == head_) return;  // nothing new, or being written right now
  if (*head < head_ || *head > flushed_) {
    ++stats_.bad_credits;
    MarkBad(absl::DataLossError(absl::StrCat("ring credit names head ", *head, " but the sender's head was ",
                                             head_, " and it has written up to ", flushed_)));
    return;
  }
  head_ = *head;
}

bool RingSender::Fits(uint64_t bytes) {
  if (tail_ + set_aside_ + bytes <= Limit()) return true;
  RefreshCredit();
  return health_.ok() && tail_ + set_aside_ + bytes <= Limit();
}

uint64_t RingSender::ReservationFor(size_t payload_length) {
  // A skip before a record is shorter than the record (it fills the rest of a lap the record does not fit).
  return 2 * RecordSpan(payload_length);
}

absl::Status RingSender::SetAside(uint64_t bytes) {
  if (!health_.ok()) return health_;
  if (!Fits(bytes)) {
    if (!health_.ok()) return health_;
    ++stats_.full;
    return absl::ResourceExhaustedError("ring full");
  }
  set_aside_ += bytes;
  return absl::OkStatus();
}

void RingSender::ReleaseSetAside(uint64_t bytes) { set_aside_ -= std::min(bytes, set_aside_); }

uint64_t RingSender::completed() const {
  return first_write_ < next_write_ ? slots_[first_write_ % slots_.size()].start : flushed_;
}

bool RingSender::HasRoom(size_t payload_length) {
  if (!health_.ok() || payload_length > geometry_.max_payload()) return false;
  const size_t span = RecordSpan(payload_length);
  return Fits(geometry_.SkipBefore(tail_, span) + span);
}

absl::Status RingSender::Send(uint16_t type, std::string_view head, std::string_view body, uint64_t* set_aside,
                              Wake wake) {
  if (!health_.ok()) return health_;
  if (type == kPaddingType) return absl::InvalidArgumentError("message type 0 is reserved for ring padding");
  const size_t length = head.size() + body.size();
  if (length > geometry_.max_payload()) {
    return absl::InvalidArgumentError(
        absl::StrCat("message of ", length, " bytes exceeds the ring's maximum of ", geometry_.max_payload()));
  }
  if (set_aside != nullptr) {
    const uint64_t needed = ReservationFor(length);
    if (*set_aside < needed || set_aside_ < needed) {
      return absl::FailedPreconditionError(
          absl::StrCat("message of ", length, " bytes needs ", needed, " bytes set aside; ", *set_aside, " left"));
    }
    // The room becomes the message's: tail + skip + span stays within what was set aside.
    *set_aside -= needed;
    set_aside_ -= needed;
  }
  const size_t span = RecordSpan(length);
  const uint64_t skip = geometry_.SkipBefore(tail_, span);
  if (!Fits(skip + span)) {
    if (!health_.ok()) return health_;
    ++stats_.full;
    // A fixed message: a full ring is routine (callers flush, poll and retry), and formatting allocates;
    // the numbers are in stats(), tail() and credited().
    return absl::ResourceExhaustedError("ring full");
  }
  if (skip != 0) {
    // At most one skip is ever queued: two would need more than a ring of queued bytes.
    has_gap_ = true;
    gap_write_end_ = tail_;
    if (RingGeometry::SkipHasMarker(skip)) {
      EncodePadding(Staging(tail_), session_, next_seq_++, tail_, skip);
      gap_write_end_ += kRecordHeaderSize;
    }
    tail_ += skip;
    gap_end_ = tail_;
  }
  EncodeMessage(Staging(tail_), session_, next_seq_++, tail_, type, head, body);
  tail_ += span;
  wake_due_ = wake_due_ || wake == Wake::kNow;
  soon_due_ = soon_due_ || wake == Wake::kSoon;
  ++stats_.messages;
  stats_.bytes += length;
  return absl::OkStatus();
}

absl::Status RingSender::PostSegment(uint64_t serial) {
  const WriteSlot& slot = slots_[serial % slots_.size()];
  return endpoint_.PostWrite(remote_, ring_offset_ + geometry_.OffsetOf(slot.start), Staging(slot.start),
                             slot.end - slot.start, MsgContext(owner_, static_cast<uint32_t>(serial)));
}

absl::Status RingSender::Flush() {
  if (!health_.ok()) return health_;
  bool posted = false;
  absl::Status left;
  while (flushed_ < tail_) {
    const uint64_t boundary = (flushed_ | (uint64_t{geometry_.capacity()} - 1)) + 1;  // the next lap's start
    const uint64_t segment_end = std::min(tail_, boundary);
    const bool gap = has_gap_ && gap_end_ == segment_end;
    const uint64_t write_end = gap ? gap_write_end_ : segment_end;
    if (write_end > flushed_) {
      if (writes_in_flight() == slots_.size()) {
        left = absl::ResourceExhaustedError("ring writes in flight at their limit; bytes stay queued");
        break;
      }
      const uint64_t serial = next_write_;
      slots_[serial % slots_.size()] = WriteSlot{flushed_, write_end, 0, false};
      if (absl::Status s = PostSegment(serial); !s.ok()) {
        if (absl::IsResourceExhausted(s)) {  // the worker is busy: try again later
          left = s;
          break;
        }
        MarkBad(s);
        return s;
      }
      ++next_write_;
      ++stats_.writes;
      posted = true;
    }
    flushed_ = segment_end;
    if (gap) has_gap_ = false;
  }
  if (posted) {
    // Over half the ring unconsumed (as last credited: an overestimate): the receiver must drain it.
    const bool wake = wake_due_ || tail_ - head_ > geometry_.capacity() / 2;
    if (absl::Status s = wake ? endpoint_.Flush() : endpoint_.FlushQuietly(); !s.ok()) {
      MarkBad(s);
      return s;
    }
    if (wake) {
      wake_owed_ = false;  // rung with these writes
    } else {
      ++stats_.quiet_flushes;
      if (soon_due_ && !wake_owed_) ++stats_.owed_wakes;
      wake_owed_ = wake_owed_ || soon_due_;
    }
    if (left.ok()) {  // bytes left queued keep theirs for the flush that posts them
      wake_due_ = false;
      soon_due_ = false;
    }
  }
  return left;
}

bool RingSender::WakeIfOwed() {
  if (!wake_owed_ || !health_.ok()) return false;
  wake_owed_ = false;
  ++stats_.owed_wakes_rung;
  endpoint_.Wake();
  return true;
}

void RingSender::OnCompletion(const fabric::Completion& completion) {
  // The full serial: the one in [first_write_, next_write_) whose low 32 bits match.
  const uint64_t serial =
      first_write_ + static_cast<uint32_t>(ContextSerial(completion.context) - static_cast<uint32_t>(first_write_));
  if (serial >= next_write_) return;  // not ours (cannot happen with a well-behaved fabric)
  WriteSlot& slot = slots_[serial % slots_.size()];
  if (completion.status.ok()) {
    slot.done = true;
    while (first_write_ < next_write_ && slots_[first_write_ % slots_.size()].done) ++first_write_;
    return;
  }
  if (!health_.ok()) return;
  // A drop loses one write and leaves the connection up: write the same bytes again (they are still staged).
  if (absl::IsUnavailable(completion.status) && endpoint_.health().ok() && slot.retries < options_.max_write_retries) {
    ++slot.retries;
    ++stats_.retried_writes;
    absl::Status s = PostSegment(serial);
    if (s.ok()) s = endpoint_.Flush();
    if (!s.ok()) MarkBad(s);
    return;
  }
  MarkBad(completion.status);
}

void RingSender::MarkBad(absl::Status status) {
  if (health_.ok()) health_ = std::move(status);
}

}  // namespace fathom::msg
