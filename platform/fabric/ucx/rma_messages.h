// Reads and writes as messages: the byte format of the batches UcxFabric sends where a transport only
// emulates one-sided operations (tcp), and of their replies. See docs/formats/fabric.md, "Reads and writes
// as messages".
//
// Why: over tcp, UCX serves a one-sided get or put with the target's CPU anyway, one message and one
// send() per operation, and a put needs a further flush round trip for remote completion. Batching every
// read and write an endpoint was asked for between two polls into one active message, answered by one
// reply, costs one send per batch on each side and gives writes their remote completion in the reply.
//
//   RequestBuilder batch;
//   batch.AddRead(/*id=*/7, remote_address, 2048);
//   batch.AddWrite(/*id=*/8, remote_address2, bytes, 64);
//   std::vector<std::byte> wire = batch.Take();           // send as message kRmaRequestMessageId
//   auto records = ParseRequest(wire);                      // at the target; InvalidArgument if malformed
#ifndef FATHOM_PLATFORM_FABRIC_UCX_RMA_MESSAGES_H_
#define FATHOM_PLATFORM_FABRIC_UCX_RMA_MESSAGES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "platform/fabric/fabric.h"

namespace fathom::fabric::ucx_internal {

constexpr unsigned kRmaRequestMessageId = 2;
constexpr unsigned kRmaReplyMessageId = 3;
// A reply and a request batch for the same peer in one message (JoinReplyAndRequest).
constexpr unsigned kRmaReplyAndRequestMessageId = 4;
constexpr uint32_t kRmaRequestMagic = 0x31515246;  // "FRQ1"
constexpr uint32_t kRmaReplyMagic = 0x31505246;    // "FRP1"
// Longer reads and writes go through UCX's own operations (which fragment and use rendezvous); a kv
// bucket is at most 16 KiB.
constexpr uint32_t kMaxMessageOpBytes = 32768;
// A batch is sent once its request or its expected reply would grow past this.
constexpr size_t kMaxBatchBytes = 65536;
constexpr uint32_t kMaxBatchRecords = 4096;

// kCall: a handler the target's worker runs on the record's argument (Endpoint::PostCall), its reply
// travelling back in the batch reply as a read's bytes do.
enum class RmaKind : uint8_t { kRead = 1, kWrite = 2, kCall = 3 };
// What the target did with one record.
enum class RmaResult : uint8_t {
  kOk = 0,
  kNoRegion = 1,   // no region registered at the target holds the bytes (deregistered, or a lie)
  kNotServed = 2,  // a call: no handler of that id, or its reply would exceed the record's reply limit
};

struct RequestRecord {
  RmaKind kind = RmaKind::kRead;
  uint32_t length = 0;   // a call's: its argument's bytes
  uint64_t address = 0;  // in the target's address space; a call's: handler | reply limit << 32
  uint64_t id = 0;       // the requester's, echoed in the reply
  const std::byte* data = nullptr;  // writes and calls: `length` bytes inside the parsed batch

  uint32_t handler() const { return static_cast<uint32_t>(address); }
  uint32_t reply_limit() const { return static_cast<uint32_t>(address >> 32); }
  // What its reply record may take: a read's bytes, a call's reply limit.
  size_t reply_bytes() const;
};

struct ReplyRecord {
  uint64_t id = 0;
  RmaResult result = RmaResult::kOk;
  uint32_t length = 0;              // read bytes that follow (0 for writes and failures)
  const std::byte* data = nullptr;  // inside the parsed reply
};

// Bytes a record occupies: the 24-byte request or 16-byte reply header, then its data padded to 8 (a
// call's reply: `length` is its reply limit, the most it can take).
size_t RequestRecordBytes(RmaKind kind, uint32_t length);
size_t ReplyRecordBytes(RmaKind kind, uint32_t length);

class RequestBuilder {
 public:
  void AddRead(uint64_t id, uint64_t address, uint32_t length);
  void AddWrite(uint64_t id, uint64_t address, const void* data, uint32_t length);
  void AddCall(uint64_t id, uint32_t handler, uint32_t reply_limit, const void* argument, uint32_t length);
  uint32_t count() const { return count_; }
  size_t bytes() const { return bytes_.size(); }
  // What the reply to the batch so far will take.
  size_t reply_bytes() const { return reply_bytes_; }
  // The batch, header filled in; the builder is empty again.
  std::vector<std::byte> Take();
  // Drops what was added (its operations were failed).
  void Clear();

 private:
  void Begin();
  std::vector<std::byte> bytes_;
  uint32_t count_ = 0;
  size_t reply_bytes_ = 8;
};

// Replies to several batches from one peer may share a builder, and so one reply message: each record
// names its operation, whichever batch asked.
class ReplyBuilder {
 public:
  // A read that succeeded: returns where its `length` bytes go (the caller copies them: memory that may
  // change meanwhile, a torn copy being the reader's to detect, as with a one-sided read). A call's reply
  // takes the same form.
  std::byte* AddRead(uint64_t id, uint32_t length);
  // A write done, or any record that failed.
  void AddResult(uint64_t id, RmaResult result);
  uint32_t count() const { return count_; }
  size_t bytes() const { return bytes_.size(); }
  // The reply, header filled in; the builder is empty again.
  std::vector<std::byte> Take();

 private:
  void Begin();
  std::vector<std::byte> bytes_;
  uint32_t count_ = 0;
};

// Both reject, with InvalidArgument naming what is wrong, a batch with a wrong magic, a record count over
// kMaxBatchRecords or not matching the records, an unknown kind or result, a length (or a call's reply
// limit) outside [1, kMaxMessageOpBytes], a call to a handler id not below kMaxCallHandlers, data running
// past the end, or bytes left over. Records point into `bytes`.
absl::StatusOr<std::vector<RequestRecord>> ParseRequest(absl::Span<const std::byte> bytes);
absl::StatusOr<std::vector<ReplyRecord>> ParseReply(absl::Span<const std::byte> bytes);

// One message carrying a reply (ReplyBuilder::Take) and a request batch (RequestBuilder::Take) to the same
// peer: the reply's length (u32), 4 zero bytes, the reply, the request.
std::vector<std::byte> JoinReplyAndRequest(const std::vector<std::byte>& reply,
                                           const std::vector<std::byte>& request);
struct ReplyAndRequest {
  absl::Span<const std::byte> reply;
  absl::Span<const std::byte> request;
};
// InvalidArgument for a message shorter than its 8-byte header, nonzero reserved bytes, or a reply length
// that is not a multiple of 8 or runs past the message. The parts are checked by ParseReply and
// ParseRequest.
absl::StatusOr<ReplyAndRequest> SplitReplyAndRequest(absl::Span<const std::byte> bytes);

}  // namespace fathom::fabric::ucx_internal

#endif  // FATHOM_PLATFORM_FABRIC_UCX_RMA_MESSAGES_H_
