// UcxFabric internals: the classes behind ucx_fabric.h. Not for use outside platform/fabric/ucx.
#ifndef FATHOM_PLATFORM_FABRIC_UCX_UCX_INTERNAL_H_
#define FATHOM_PLATFORM_FABRIC_UCX_UCX_INTERNAL_H_

#include <ucp/api/ucp.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "platform/base/clock.h"
#include "platform/base/mutex.h"
#include "platform/fabric/fabric.h"
#include "platform/fabric/ucx/process_identity.h"
#include "platform/fabric/ucx/rma_messages.h"
#include "platform/fabric/ucx/ucx_fabric.h"

namespace fathom::fabric::ucx_internal {

class UcxEndpoint;
class UcxWorker;

// The active message a Flush sends after writes into a peer's mapped memory (a doorbell): such a write is a
// plain copy that raises no event at the peer, so a peer asleep in Wait would see it only when its sleep
// ends. The message carries nothing; its arrival wakes the peer's worker (UCX signals a sleeping
// shared-memory receiver through a socket; an awake one only finds it in its FIFO).
constexpr unsigned kDoorbellMessageId = 1;

// The regions this process has registered, so that a read or write arriving as a message (rma_messages.h)
// touches only their bytes, and never those of a region being deregistered.
class RegionTable {
 public:
  void Add(uint64_t base, uint64_t length);
  void Remove(uint64_t base);

  // Holds the table still while a message's reads and writes run: a region is not unmapped meanwhile.
  class Reader {
   public:
    explicit Reader(RegionTable& table) : table_(table), lock_(&table.mu_) {}
    // Whether a registered region holds bytes [address, address + length).
    bool Holds(uint64_t address, uint64_t length) const;

   private:
    RegionTable& table_;
    fathom::ReaderMutexLock lock_;
  };

 private:
  mutable absl::Mutex mu_;
  std::vector<std::pair<uint64_t, uint64_t>> regions_ ABSL_GUARDED_BY(mu_);  // (base, length), by base
};

// Whether reads and writes into memory this process cannot map go as messages (see UcxOptions).
bool RemoteAccessByMessages(const UcxOptions& options);

class UcxFabric final : public Fabric {
 public:
  // `shared_memory_only`: the transports cannot detect peer failure (see process_identity.h).
  UcxFabric(ucp_context_h context, const UcxOptions& options, ProcessIdentity self, bool shared_memory_only)
      : context_(context),
        options_(options),
        self_(std::move(self)),
        shared_memory_only_(shared_memory_only),
        messages_(RemoteAccessByMessages(options)) {}
  ~UcxFabric() override;

  absl::StatusOr<std::unique_ptr<Region>> AllocateRegion(size_t size) override;
  absl::StatusOr<std::unique_ptr<Region>> RegisterRegion(void* address, size_t size) override;
  absl::StatusOr<std::unique_ptr<Worker>> CreateWorker() override;
  std::string_view name() const override { return "ucx"; }

 private:
  absl::StatusOr<std::unique_ptr<Region>> Map(void* address, size_t size, bool allocate);

  ucp_context_h context_;
  UcxOptions options_;
  ProcessIdentity self_;
  bool shared_memory_only_;
  bool messages_;
  std::shared_ptr<RegionTable> regions_ = std::make_shared<RegionTable>();
};

// One posted operation that UCX has not completed yet. Slots live in the worker's pool, so their address
// is stable for UCX's callbacks.
struct PendingOp {
  UcxWorker* worker = nullptr;
  UcxEndpoint* endpoint = nullptr;  // nulled if the endpoint is destroyed first
  uint64_t context = 0;
  OpType type = OpType::kRead;
  absl::Time deadline;
  // Already reported to the caller (timed out, or its endpoint failed); UCX's callback only frees the slot.
  bool reported = false;
  bool in_use = false;
  // Sent as a message (rma_messages.h): no UCX request holds the slot, so it is released once reported,
  // and a late reply finds another sequence number.
  bool message = false;
  uint32_t sequence = 0;
  void* message_destination = nullptr;  // a message read's: its reply's bytes go straight there
  uint64_t operand = 0;            // atomics: the value UCX reads from `buffer`
  uint64_t reply = 0;              // atomics: UCX's reply buffer; copied to old_value on success
  uint32_t reply_bytes = 0;        // a call's: bytes its reply put in message_destination
  uint64_t* old_value = nullptr;   // caller's result slot for atomics
  // Reads land here, and are copied to the caller's `destination` only when they succeed. A read reported
  // failed before UCX let go of it (timed out, or its endpoint failed or was closed) may still be
  // answered, and the caller has reused its buffer by then: the late bytes must land in the slot's own.
  std::vector<std::byte> bounce;
  void* destination = nullptr;
  size_t length = 0;
};

// Writes posted since the last Flush of an endpoint, completed together when UCX's flush completes.
struct FlushBatch {
  UcxWorker* worker = nullptr;
  std::vector<PendingOp*> writes;
};

class UcxWorker final : public Worker {
 public:
  UcxWorker(ucp_context_h context, ucp_worker_h worker, int event_fd, const UcxOptions& options,
            ProcessIdentity self, bool shared_memory_only, bool messages, std::shared_ptr<RegionTable> regions);
  ~UcxWorker() override;

  std::string address() const override { return address_; }
  absl::StatusOr<std::unique_ptr<Endpoint>> Connect(std::string_view peer_address) override;
  size_t Poll(absl::Span<Completion> out) override;
  void Wait(absl::Duration timeout) override;
  void Signal() override;
  absl::Status SetCallHandler(uint32_t handler, CallHandler run) override;
  size_t outstanding() const override { return in_flight_ + ready_.size(); }
  bool ReadsMayBeServedByPeers() const override { return messages_; }

  absl::Status Init();  // fetches the worker address

  // For endpoints.
  ucp_worker_h ucp() const { return worker_; }
  const UcxOptions& options() const { return options_; }
  absl::StatusOr<PendingOp*> AcquireOp(UcxEndpoint* endpoint, OpType type, uint64_t context);
  // Reports `op` to the caller (unless already reported) and keeps the slot until UCX lets go of it.
  void Report(PendingOp* op, absl::Status status);
  void ReleaseOp(PendingOp* op);
  // `op` was posted and UCX answered at once.
  void CompleteNow(PendingOp* op, ucs_status_t status);
  // An operation done by this thread itself (mapped memory): complete without a slot.
  absl::Status CompleteMapped(uint64_t context, OpType type);
  // `op` is now owned by a UCX request whose callback will complete it.
  void TrackInFlight() { ++in_flight_; }
  void Forget(UcxEndpoint* endpoint);  // the endpoint is going away
  void FailEndpointOps(UcxEndpoint* endpoint, const absl::Status& status);
  // Reports `op` (done or failed); a message op's slot is free at once (no UCX request holds it).
  void Finish(PendingOp* op, const absl::Status& status);

  // Reads and writes as messages (ucx_messages.cc).
  bool messages() const { return messages_; }
  // The id a message op's reply names: slot index and sequence number.
  uint64_t MessageId(const PendingOp* op) const;
  // The endpoint's batch goes out at the next Poll or Wait, with whatever else is posted until then.
  void MarkDue(UcxEndpoint* endpoint);
  void SendDue();
  // The healthy endpoint of this worker that `ep` is, or null (UCX's own endpoint for a peer this worker
  // never connected to).
  UcxEndpoint* EndpointOf(ucp_ep_h ep) const;
  void MarkReplying(UcxEndpoint* endpoint) { replying_.push_back(endpoint); }
  MessageCounts message_counts() const override { return counts_; }
  void CountBatchSent(size_t records) {
    ++counts_.batches_sent;
    counts_.records_sent += records;
  }
  void CountReplySent() { ++counts_.replies_sent; }
  void CountReplyWithRequest() { ++counts_.replies_with_requests; }
  // A request or reply message given to UCX; its bytes are freed when UCX is done with them.
  ucs_status_t SendMessage(ucp_ep_h ep, unsigned id, std::vector<std::byte> bytes, bool want_reply_ep);
  // Runs a call record's handler and adds its reply (or kNotServed) to `reply`.
  void ServeCall(const RequestRecord& record, ReplyBuilder& reply);
  static ucs_status_t OnRequest(void* arg, const void* header, size_t header_length, void* data, size_t length,
                                const ucp_am_recv_param_t* param);
  static ucs_status_t OnReply(void* arg, const void* header, size_t header_length, void* data, size_t length,
                              const ucp_am_recv_param_t* param);
  static ucs_status_t OnReplyAndRequest(void* arg, const void* header, size_t header_length, void* data,
                                        size_t length, const ucp_am_recv_param_t* param);
  // Serves a peer's request batch; completes this worker's operations named in a reply.
  void Serve(const std::vector<RequestRecord>& records, ucp_ep_h reply_ep);
  void Complete(const std::vector<ReplyRecord>& records);
  static void OnMessageSent(void* request, ucs_status_t status, void* user_data);
  // Keeps an endpoint's close request until UCX finishes it (checked in Poll, awaited in the destructor).
  void AdoptCloseRequest(void* request) { closing_.push_back(request); }

  static void OnOpDone(void* request, ucs_status_t status, void* user_data);
  // A doorbell's arrival woke the worker, which was its point: the rings say what came.
  static ucs_status_t OnDoorbell(void* arg, const void* header, size_t header_length, void* data, size_t length,
                                 const ucp_am_recv_param_t* param);
  // Bounce bytes a released slot keeps (a kv bucket is at most 16 KiB).
  static constexpr size_t kKeptBounceBytes = 16384;
  static void OnFlushDone(void* request, ucs_status_t status, void* user_data);

 private:
  void ExpireOverdue();
  void ReapClosed();
  void ProbePeers();  // fails endpoints whose same-host peer process has exited

  ucp_context_h context_;
  ucp_worker_h worker_;
  int event_fd_;
  UcxOptions options_;
  ProcessIdentity self_;
  bool shared_memory_only_;
  std::string address_;
  absl::Time next_probe_ = absl::InfinitePast();
  std::vector<PendingOp> pool_;
  std::vector<PendingOp*> free_;
  std::vector<Completion> ready_;  // completions not yet returned by Poll
  size_t ready_head_ = 0;
  size_t in_flight_ = 0;           // slots held by UCX requests
  absl::Time next_expiry_scan_ = absl::InfinitePast();
  std::vector<UcxEndpoint*> endpoints_;
  std::vector<void*> closing_;  // ucp_ep_close_nbx requests still in progress
  bool messages_;
  std::shared_ptr<RegionTable> regions_;
  std::vector<UcxEndpoint*> due_;  // endpoints with a batch to send
  std::vector<UcxEndpoint*> replying_;  // endpoints with replies to send (next Poll or Wait)
  size_t sends_in_flight_ = 0;     // messages UCX still holds
  MessageCounts counts_;
  std::vector<CallHandler> call_handlers_;  // by id (SetCallHandler)
  std::string call_reply_;                  // a handler's reply, reused
};

class UcxEndpoint final : public Endpoint {
 public:
  UcxEndpoint(UcxWorker* worker) : worker_(worker) {}
  ~UcxEndpoint() override;

  // `probe_peer`: UCX cannot detect this peer's failure; the worker checks the process instead.
  absl::Status Init(const std::string& ucx_address, const ProcessIdentity& peer, bool probe_peer);
  bool probed() const { return probe_peer_; }
  const ProcessIdentity& peer() const { return peer_; }

  absl::StatusOr<RemoteRegion> ImportRegion(const RegionDescriptor& descriptor) override;
  absl::Status PostRead(RemoteRegion region, uint64_t offset, void* destination, size_t length,
                        uint64_t context) override;
  absl::Status PostWrite(RemoteRegion region, uint64_t offset, const void* source, size_t length,
                         uint64_t context) override;
  absl::Status PostCompareSwap(RemoteRegion region, uint64_t offset, uint64_t expected, uint64_t desired,
                               uint64_t* old_value, uint64_t context) override;
  absl::Status PostFetchAdd(RemoteRegion region, uint64_t offset, uint64_t add, uint64_t* old_value,
                            uint64_t context) override;
  absl::Status Flush() override { return FlushWrites(/*wake=*/true); }
  absl::Status FlushQuietly() override { return FlushWrites(/*wake=*/false); }
  void Wake() override;
  absl::Status PostCall(uint32_t handler, absl::Span<const std::byte> argument, void* destination,
                        size_t capacity, uint64_t context) override;
  bool ReadsServedByPeer(const RemoteRegion& region) const override;
  absl::Status health() const override { return health_; }
  void Shutdown() override;

  // Sends the batch of message reads and writes (ucx_messages.cc).
  void SendBatch();
  ucp_ep_h ucp_ep() const { return ep_; }
  // Where the reply to a batch from this peer goes: gathered with the replies to its other batches until
  // the worker's next Poll or Wait, which sends them in the request batch to this peer if one is due, else
  // alone. What gathered goes at once if `records` more records of up to `bytes` would make one reply
  // larger than a batch's.
  ReplyBuilder& GatherReply(size_t records, size_t bytes);
  // No batch took them: what gathered goes alone.
  void SendDueReplies();

  // Marks the endpoint failed (first failure wins), fails its outstanding operations and closes the UCX
  // endpoint so that UCX lets go of their buffers.
  void Fail(absl::Status status);
  // Its worker is being destroyed first: release the remote keys and forget the worker. REQUIRES: failed.
  void Detach();

 private:
  struct Imported {
    ucp_rkey_h rkey = nullptr;
    uint64_t base = 0;
    uint64_t length = 0;
    // The peer's region mapped into this process (shared-memory transports): reads and writes are plain
    // copies, with no UCX call at all. Null when the transport needs UCX to move the bytes.
    std::byte* mapped = nullptr;
  };
  // Checks health, region, bounds and (for atomics) alignment; returns the remote address.
  absl::StatusOr<uint64_t> Check(RemoteRegion region, uint64_t offset, uint64_t length, bool atomic) const;
  // A Read or Write through the peer's mapped region: the copy is the whole operation.
  absl::Status CopyMapped(OpType type, void* to, const void* from, size_t length, uint64_t context);
  absl::Status PostAtomic(ucp_atomic_op_t opcode, OpType type, RemoteRegion region, uint64_t offset,
                          uint64_t operand, uint64_t reply_in, uint64_t* old_value, uint64_t context);
  // A read or write as a message, added to the endpoint's batch (ucx_messages.cc).
  absl::Status PostMessage(OpType type, uint64_t remote, void* destination, const void* source, size_t length,
                           uint64_t context);
  // Sends the batch first if a record of `length` bytes (request or reply) would not fit in it.
  absl::Status MakeRoom(RmaKind kind, size_t length);
  absl::StatusOr<PendingOp*> AcquireMessageOp(OpType type, size_t length, uint64_t context);
  void CloseUcx(bool force);
  // Flush; `wake`: ring the doorbell for writes into mapped memory since the last flush (else they need none).
  absl::Status FlushWrites(bool wake);
  // Wakes the peer's worker after writes into its mapped memory (kDoorbellMessageId).
  void RingDoorbell();
  void SendGatheredReplies();

  static void OnPeerError(void* arg, ucp_ep_h ep, ucs_status_t status);

  UcxWorker* worker_;
  ProcessIdentity peer_;
  bool probe_peer_ = false;
  ucp_ep_h ep_ = nullptr;
  absl::Status health_;
  std::vector<Imported> regions_;
  std::vector<PendingOp*> unflushed_writes_;
  bool doorbell_due_ = false;  // a write into mapped memory since the last Flush
  bool doorbell_owed_ = false;  // a FlushQuietly skipped the doorbell for such writes since the last one rang
  RequestBuilder batch_;       // message reads and writes not sent yet
  bool batch_due_ = false;     // flushed: the worker sends it at its next Poll or Wait
  ReplyBuilder replies_;       // replies to the peer's batches, sent at the worker's next Poll or Wait
  bool replies_due_ = false;   // listed in the worker's replying_
};

}  // namespace fathom::fabric::ucx_internal

#endif  // FATHOM_PLATFORM_FABRIC_UCX_UCX_INTERNAL_H_
