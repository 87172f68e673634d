// Reads and writes as messages: building and parsing request and reply batches.
#include "platform/fabric/ucx/rma_messages.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "platform/base/byte_order.h"

namespace fathom::fabric::ucx_internal {
namespace {

constexpr size_t kBatchHeaderBytes = 8;    // magic, record count
constexpr size_t kRequestHeaderBytes = 24;  // kind, 3 reserved, length, address, id
constexpr size_t kReplyHeaderBytes = 16;    // id, result, 3 reserved, length

size_t Padded(size_t n) { return (n + 7) & ~size_t{7}; }

// Appends `n` zero bytes and returns where they start.
std::byte* Grow(std::vector<std::byte>& bytes, size_t n) {
  const size_t at = bytes.size();
  bytes.resize(at + n);
  return bytes.data() + at;
}

void StartBatch(std::vector<std::byte>& bytes, uint32_t magic) {
  bytes.clear();
  StoreLe<uint32_t>(Grow(bytes, kBatchHeaderBytes), magic);
}

// Checks the batch header; returns the record count.
absl::StatusOr<uint32_t> CheckHeader(absl::Span<const std::byte> bytes, uint32_t magic, const char* what) {
  if (bytes.size() < kBatchHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", bytes.size(), " bytes, shorter than its header"));
  }
  if (LoadLe<uint32_t>(bytes.data()) != magic) return absl::InvalidArgumentError(absl::StrCat(what, ": bad magic"));
  const uint32_t count = LoadLe<uint32_t>(bytes.data() + 4);
  if (count > kMaxBatchRecords) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", count, " records, over ", kMaxBatchRecords));
  }
  return count;
}

}  // namespace

size_t RequestRecordBytes(RmaKind kind, uint32_t length) {
  return kRequestHeaderBytes + (kind == RmaKind::kRead ? 0 : Padded(length));
}

size_t ReplyRecordBytes(RmaKind kind, uint32_t length) {
  return kReplyHeaderBytes + (kind == RmaKind::kWrite ? 0 : Padded(length));
}

size_t RequestRecord::reply_bytes() const {
  return ReplyRecordBytes(kind, kind == RmaKind::kCall ? reply_limit() : length);
}

void RequestBuilder::Begin() {
  if (bytes_.empty()) StartBatch(bytes_, kRmaRequestMagic);
}

void RequestBuilder::AddRead(uint64_t id, uint64_t address, uint32_t length) {
  Begin();
  std::byte* p = Grow(bytes_, kRequestHeaderBytes);
  StoreLe<uint8_t>(p, static_cast<uint8_t>(RmaKind::kRead));
  StoreLe<uint32_t>(p + 4, length);
  StoreLe<uint64_t>(p + 8, address);
  StoreLe<uint64_t>(p + 16, id);
  ++count_;
  reply_bytes_ += ReplyRecordBytes(RmaKind::kRead, length);
}

void RequestBuilder::AddWrite(uint64_t id, uint64_t address, const void* data, uint32_t length) {
  Begin();
  std::byte* p = Grow(bytes_, RequestRecordBytes(RmaKind::kWrite, length));
  StoreLe<uint8_t>(p, static_cast<uint8_t>(RmaKind::kWrite));
  StoreLe<uint32_t>(p + 4, length);
  StoreLe<uint64_t>(p + 8, address);
  StoreLe<uint64_t>(p + 16, id);
  std::memcpy(p + kRequestHeaderBytes, data, length);
  ++count_;
  reply_bytes_ += ReplyRecordBytes(RmaKind::kWrite, length);
}

void RequestBuilder::AddCall(uint64_t id, uint32_t handler, uint32_t reply_limit, const void* argument,
                             uint32_t length) {
  Begin();
  std::byte* p = Grow(bytes_, RequestRecordBytes(RmaKind::kCall, length));
  StoreLe<uint8_t>(p, static_cast<uint8_t>(RmaKind::kCall));
  StoreLe<uint32_t>(p + 4, length);
  StoreLe<uint64_t>(p + 8, uint64_t{reply_limit} << 32 | handler);
  StoreLe<uint64_t>(p + 16, id);
  std::memcpy(p + kRequestHeaderBytes, argument, length);
  ++count_;
  reply_bytes_ += ReplyRecordBytes(RmaKind::kCall, reply_limit);
}

void RequestBuilder::Clear() {
  bytes_.clear();
  count_ = 0;
  reply_bytes_ = kBatchHeaderBytes;
}

std::vector<std::byte> RequestBuilder::Take() {
  Begin();
  StoreLe<uint32_t>(bytes_.data() + 4, count_);
  std::vector<std::byte> out = std::move(bytes_);
  Clear();
  return out;
}

void ReplyBuilder::Begin() {
  if (bytes_.empty()) StartBatch(bytes_, kRmaReplyMagic);
}

std::byte* ReplyBuilder::AddRead(uint64_t id, uint32_t length) {
  Begin();
  std::byte* p = Grow(bytes_, ReplyRecordBytes(RmaKind::kRead, length));
  StoreLe<uint64_t>(p, id);
  StoreLe<uint8_t>(p + 8, static_cast<uint8_t>(RmaResult::kOk));
  StoreLe<uint32_t>(p + 12, length);
  ++count_;
  return p + kReplyHeaderBytes;
}

void ReplyBuilder::AddResult(uint64_t id, RmaResult result) {
  Begin();
  std::byte* p = Grow(bytes_, kReplyHeaderBytes);
  StoreLe<uint64_t>(p, id);
  StoreLe<uint8_t>(p + 8, static_cast<uint8_t>(result));
  ++count_;
}

std::vector<std::byte> ReplyBuilder::Take() {
  Begin();
  StoreLe<uint32_t>(bytes_.data() + 4, count_);
  std::vector<std::byte> out = std::move(bytes_);
  bytes_.clear();
  count_ = 0;
  return out;
}

absl::StatusOr<std::vector<RequestRecord>> ParseRequest(absl::Span<const std::byte> bytes) {
  auto count = CheckHeader(bytes, kRmaRequestMagic, "read/write request");
  if (!count.ok()) return count.status();
  std::vector<RequestRecord> records;
  records.reserve(*count);
  size_t at = kBatchHeaderBytes;
  for (uint32_t i = 0; i < *count; ++i) {
    if (bytes.size() - at < kRequestHeaderBytes) {
      return absl::InvalidArgumentError(absl::StrCat("read/write request: record ", i, " of ", *count, " truncated"));
    }
    const std::byte* p = bytes.data() + at;
    RequestRecord r;
    const uint8_t kind = LoadLe<uint8_t>(p);
    if (kind < static_cast<uint8_t>(RmaKind::kRead) || kind > static_cast<uint8_t>(RmaKind::kCall)) {
      return absl::InvalidArgumentError(absl::StrCat("read/write request: record ", i, " has unknown kind ", kind));
    }
    r.kind = static_cast<RmaKind>(kind);
    r.length = LoadLe<uint32_t>(p + 4);
    r.address = LoadLe<uint64_t>(p + 8);
    r.id = LoadLe<uint64_t>(p + 16);
    if (r.length == 0 || r.length > kMaxMessageOpBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("read/write request: record ", i, " length ", r.length, " outside [1, ", kMaxMessageOpBytes, "]"));
    }
    if (r.kind == RmaKind::kCall && (r.handler() >= Worker::kMaxCallHandlers || r.reply_limit() == 0 ||
                                     r.reply_limit() > kMaxMessageOpBytes)) {
      return absl::InvalidArgumentError(absl::StrCat("read/write request: record ", i, " calls handler ", r.handler(),
                                                     " with reply limit ", r.reply_limit()));
    }
    const size_t record_bytes = RequestRecordBytes(r.kind, r.length);
    if (bytes.size() - at < record_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("read/write request: record ", i, "'s ", r.length, " data bytes run past the batch"));
    }
    if (r.kind != RmaKind::kRead) r.data = p + kRequestHeaderBytes;
    records.push_back(r);
    at += record_bytes;
  }
  if (at != bytes.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("read/write request: ", bytes.size() - at, " bytes after its ", *count, " records"));
  }
  return records;
}

absl::StatusOr<std::vector<ReplyRecord>> ParseReply(absl::Span<const std::byte> bytes) {
  auto count = CheckHeader(bytes, kRmaReplyMagic, "read/write reply");
  if (!count.ok()) return count.status();
  std::vector<ReplyRecord> records;
  records.reserve(*count);
  size_t at = kBatchHeaderBytes;
  for (uint32_t i = 0; i < *count; ++i) {
    if (bytes.size() - at < kReplyHeaderBytes) {
      return absl::InvalidArgumentError(absl::StrCat("read/write reply: record ", i, " of ", *count, " truncated"));
    }
    const std::byte* p = bytes.data() + at;
    ReplyRecord r;
    r.id = LoadLe<uint64_t>(p);
    const uint8_t result = LoadLe<uint8_t>(p + 8);
    if (result > static_cast<uint8_t>(RmaResult::kNotServed)) {
      return absl::InvalidArgumentError(absl::StrCat("read/write reply: record ", i, " has unknown result ", result));
    }
    r.result = static_cast<RmaResult>(result);
    r.length = LoadLe<uint32_t>(p + 12);
    if (r.length > kMaxMessageOpBytes || (r.length > 0 && r.result != RmaResult::kOk)) {
      return absl::InvalidArgumentError(absl::StrCat("read/write reply: record ", i, " has bad length ", r.length));
    }
    // A reply with data is a read's or a call's; one without is a write's, a failure's or an empty reply's.
    const size_t record_bytes = ReplyRecordBytes(r.length > 0 ? RmaKind::kRead : RmaKind::kWrite, r.length);
    if (bytes.size() - at < record_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("read/write reply: record ", i, "'s ", r.length, " data bytes run past the batch"));
    }
    if (r.length > 0) r.data = p + kReplyHeaderBytes;
    records.push_back(r);
    at += record_bytes;
  }
  if (at != bytes.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("read/write reply: ", bytes.size() - at, " bytes after its ", *count, " records"));
  }
  return records;
}

std::vector<std::byte> JoinReplyAndRequest(const std::vector<std::byte>& reply,
                                           const std::vector<std::byte>& request) {
  std::vector<std::byte> bytes(8 + reply.size() + request.size());
  StoreLe<uint32_t>(bytes.data(), static_cast<uint32_t>(reply.size()));
  std::memcpy(bytes.data() + 8, reply.data(), reply.size());
  std::memcpy(bytes.data() + 8 + reply.size(), request.data(), request.size());
  return bytes;
}

absl::StatusOr<ReplyAndRequest> SplitReplyAndRequest(absl::Span<const std::byte> bytes) {
  if (bytes.size() < 8) {
    return absl::InvalidArgumentError(absl::StrCat("reply and request: ", bytes.size(), " bytes, shorter than its header"));
  }
  const uint32_t reply_bytes = LoadLe<uint32_t>(bytes.data());
  if (LoadLe<uint32_t>(bytes.data() + 4) != 0) return absl::InvalidArgumentError("reply and request: reserved bytes set");
  if (reply_bytes % 8 != 0 || reply_bytes > bytes.size() - 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("reply and request: a reply of ", reply_bytes, " bytes in ", bytes.size() - 8));
  }
  return ReplyAndRequest{bytes.subspan(8, reply_bytes), bytes.subspan(8 + reply_bytes)};
}

}  // namespace fathom::fabric::ucx_internal
