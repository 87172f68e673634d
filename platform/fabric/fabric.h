// Fabric: the one seam between Fathom and the network.
//
// A Fabric registers memory (control path, done once) and creates Workers, one per thread that uses it.
// A Worker connects Endpoints to peers by their address blob; an Endpoint posts asynchronous one-sided
// Read, Write, CompareSwap and FetchAdd against a peer's registered region; the Worker's Poll returns one
// Completion per posted operation, each with its own status.
//
//   std::unique_ptr<Fabric> fabric = ...;                 // UcxFabric or a SimNetwork node
//   ASSIGN_OR_RETURN(auto region, fabric->AllocateRegion(64 << 20));
//   ASSIGN_OR_RETURN(auto worker, fabric->CreateWorker());
//   ASSIGN_OR_RETURN(auto ep, worker->Connect(peer_address));
//   ASSIGN_OR_RETURN(RemoteRegion peer, ep->ImportRegion(peer_descriptor));
//   RETURN_IF_ERROR(ep->PostRead(peer, /*offset=*/0, buf, 64, /*context=*/1));
//   RETURN_IF_ERROR(ep->PostRead(peer, 4096, buf2, 64, /*context=*/2));
//   RETURN_IF_ERROR(ep->Flush());                         // batching: post several, flush once
//   Completion done[8];
//   size_t n = worker->Poll(done);                        // or worker->Wait(timeout) between polls
//
// Contract (every implementation, checked by fabric_conformance_test):
// - Post* validates its arguments (unknown region, offset/length outside the region, zero length,
//   misaligned atomic, failed endpoint, too many outstanding operations) and returns the error at once
//   (InvalidArgument, OutOfRange, ResourceExhausted, or the endpoint's failure); nothing was posted then.
//   An operation that was accepted produces exactly one Completion on the endpoint's worker.
// - An operation is guaranteed to make progress only after a Flush() of its endpoint that follows it.
// - A Write's completion means the bytes are in the target's memory (remote completion), not merely that
//   the source buffer may be reused. A Read's completion means the bytes are in the destination buffer.
// - Atomics are 8 bytes at 8-byte aligned offsets, atomic with respect to other fabric atomics on the same
//   word only. Never mix fabric atomics and CPU atomics on one word (on RDMA NICs they are not atomic with
//   respect to each other).
// - A Read concurrent with writes to the same bytes may return a torn copy (mixed old and new bytes, in
//   pieces of any size and order). Layers above must detect it (self-verifying objects).
// - No operation waits forever: each has a deadline (Options::operation_timeout). An expired operation
//   completes with DeadlineExceeded and its endpoint is declared failed; the endpoint's other operations
//   complete with Unavailable and new posts are refused. A dead peer is detected (keepalive, or a probe of
//   a same-host peer's process) and fails the endpoint likewise. Recovery is a new Connect.
// - Errors confined to one operation leave the endpoint healthy: NotFound for a region the peer has
//   deregistered (where the fabric can tell), and on SimFabric an injected drop (Unavailable). Any error
//   that means the connection is broken fails the endpoint, as above.
// - Buffers passed to Post* (source, destination, old_value) must stay valid until the completion. After
//   a Read's or an atomic's completion, successful or not, the fabric never writes its destination or
//   old_value again, even if the peer answers later (an operation can end by timeout or a closed endpoint
//   while the peer still holds the request).
// - Threading: a Worker, its Endpoints and their RemoteRegions belong to one thread at a time, except
//   Worker::Signal, which any thread may call. Fabric methods are thread-safe.
// - Lifetimes: destroy Endpoints before their Worker, and Workers and Regions before their Fabric. (An
//   Endpoint that outlives its Worker is failed with Cancelled and does nothing when destroyed.)
#ifndef FATHOM_PLATFORM_FABRIC_FABRIC_H_
#define FATHOM_PLATFORM_FABRIC_FABRIC_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace fathom::fabric {

enum class OpType : uint8_t { kRead = 1, kWrite = 2, kCompareSwap = 3, kFetchAdd = 4, kCall = 5 };
const char* OpTypeName(OpType type);

struct Completion {
  uint64_t context = 0;  // the caller's tag from Post*
  OpType type = OpType::kRead;
  absl::Status status;
  uint32_t bytes = 0;  // a call's (Endpoint::PostCall): reply bytes written to its destination
};

// What a worker runs for a peer's call (Endpoint::PostCall, Worker::SetCallHandler): reads `argument` and
// sets `reply`, at most `reply_limit` bytes (a longer reply is not sent: the caller gets Unimplemented).
// It runs on the worker's thread, inside Poll or Wait, so it may touch what that thread owns; it must not
// use the worker itself. The argument's bytes come from the wire: the handler validates them.
using CallHandler =
    absl::AnyInvocable<void(absl::Span<const std::byte> argument, size_t reply_limit, std::string& reply)>;

// A registered region as peers see it: shipped through the control plane (see docs/formats/fabric.md).
struct RegionDescriptor {
  uint64_t base = 0;        // the owner's address of byte 0; peers only add offsets to it
  uint64_t length = 0;      // bytes
  std::string remote_key;   // implementation-specific packed key
  std::string Serialize() const;
  // Rejects truncated, oversized or corrupted input with InvalidArgument / DataLoss.
  static absl::StatusOr<RegionDescriptor> Parse(std::string_view bytes);
};

// Memory registered with the fabric. Deregistered when destroyed; peers' operations on it then fail.
class Region {
 public:
  virtual ~Region() = default;
  virtual std::byte* data() const = 0;
  virtual size_t size() const = 0;
  virtual const RegionDescriptor& descriptor() const = 0;
};

// A peer's region made addressable through one endpoint (its remote key unpacked). Small handle; the
// endpoint owns the state and it stays valid while the endpoint lives.
struct RemoteRegion {
  uint32_t index = UINT32_MAX;  // into the endpoint's table of imported regions
  uint64_t length = 0;
};

class Endpoint {
 public:
  virtual ~Endpoint() = default;

  // Control path: unpacks a peer region's remote key for use on this endpoint.
  virtual absl::StatusOr<RemoteRegion> ImportRegion(const RegionDescriptor& descriptor) = 0;

  virtual absl::Status PostRead(RemoteRegion region, uint64_t offset, void* destination, size_t length,
                                uint64_t context) = 0;
  virtual absl::Status PostWrite(RemoteRegion region, uint64_t offset, const void* source, size_t length,
                                 uint64_t context) = 0;
  // Atomically: old = *remote; if (old == expected) *remote = desired; *old_value = old.
  virtual absl::Status PostCompareSwap(RemoteRegion region, uint64_t offset, uint64_t expected,
                                       uint64_t desired, uint64_t* old_value, uint64_t context) = 0;
  // Atomically: *old_value = *remote; *remote += add.
  virtual absl::Status PostFetchAdd(RemoteRegion region, uint64_t offset, uint64_t add, uint64_t* old_value,
                                    uint64_t context) = 0;
  // Sends what was posted since the last Flush and arranges remote completion of its writes.
  virtual absl::Status Flush() = 0;
  // As Flush, but the peer need not wake for these writes: where a write raises no event of its own (a
  // copy into shared memory), no doorbell is rung, and the peer finds the bytes when it next wakes for
  // something else or its sleep ends. Where writes are events anyway (tcp, verbs), the same as Flush.
  virtual absl::Status FlushQuietly() { return Flush(); }
  // Wakes the peer for writes a FlushQuietly left unannounced: rings the doorbell it skipped, if any
  // (nothing where writes are events anyway). For writes the peer's CPU is wanted for soon, not now.
  virtual void Wake() {}

  // Whether a read of `region` is served by the peer's CPU (a request its worker answers when it makes
  // progress, as over tcp) rather than by a mapping or the NIC. Then one request to the peer's node thread
  // costs what a read costs and can do more (kv's GET at the owner: docs/formats/kv.md).
  virtual bool ReadsServedByPeer(const RemoteRegion& region) const { return false; }
  // Where ReadsServedByPeer holds for some region: asks the peer's worker to run its handler `handler`
  // (SetCallHandler) on `argument` (copied before this returns), in the same batch its reads travel in.
  // The completion (OpType::kCall) says how many reply bytes landed in `destination` (at most `capacity`):
  // Unimplemented, the endpoint healthy, when the peer has no such handler or its reply would not fit.
  // Elsewhere Unimplemented at once: a read of mapped memory or through the NIC costs the peer nothing.
  virtual absl::Status PostCall(uint32_t handler, absl::Span<const std::byte> argument, void* destination,
                                size_t capacity, uint64_t context) {
    return absl::UnimplementedError("this fabric serves no calls");
  }

  // OK while usable; otherwise why it failed (peer died, timeout, closed).
  virtual absl::Status health() const = 0;

  // Stops using the connection now: what is in flight fails (Cancelled), as it would at destruction,
  // and health() says closed. Destroying it later closes it and releases what it imported.
  virtual void Shutdown() = 0;
};

// What a worker sent and served as messages where reads, writes and calls travel as messages (UCX over
// tcp: docs/formats/fabric.md), for metrics. Requester side: request batches and the records in them.
// Target side: batches served, and the messages that answered them: replies alone, and replies riding in
// a request batch to the same peer (fewer than the batches when replies to one peer's batches shared a
// message). All zero where nothing travels as messages.
struct MessageCounts {
  uint64_t batches_sent = 0;
  uint64_t records_sent = 0;
  uint64_t batches_served = 0;
  uint64_t replies_sent = 0;
  uint64_t replies_with_requests = 0;
};

class Worker {
 public:
  virtual ~Worker() = default;

  // This worker's address blob for peers to Connect to (see docs/formats/fabric.md).
  virtual std::string address() const = 0;
  // Control path. Rejects a malformed or foreign address blob with InvalidArgument.
  virtual absl::StatusOr<std::unique_ptr<Endpoint>> Connect(std::string_view peer_address) = 0;

  // Makes progress without blocking (this also serves peers' one-sided operations on transports that
  // need the target's CPU, such as tcp), expires overdue operations, and fills `out` with completions.
  // Returns how many were written. What a Poll served may be answered only at the next Poll or Wait (so
  // that the answer rides with what this thread sends then): a worker serving peers keeps being polled.
  virtual size_t Poll(absl::Span<Completion> out) = 0;
  // Adaptive wait: spins making progress for Options::spin_time, then sleeps until the fabric has an
  // event, Signal() is called, or `timeout` passes. Returns early when completions are ready to Poll, or
  // when it served peers (their answers go at the next Poll or Wait).
  // A peer's Flush of writes into this worker's memory is such an event, on every transport (where the
  // write itself raises none, as a copy into shared memory, the Flush adds a doorbell: fabric.md).
  virtual void Wait(absl::Duration timeout) = 0;
  // Wakes a Wait from any thread.
  virtual void Signal() = 0;
  // Serves peers' calls to `handler` (an id below kMaxCallHandlers) with `run` from now on, replacing any
  // earlier one. Unimplemented where the fabric serves no calls (then none reach this worker).
  virtual absl::Status SetCallHandler(uint32_t handler, CallHandler run) {
    return absl::UnimplementedError("this fabric serves no calls");
  }
  static constexpr uint32_t kMaxCallHandlers = 16;
  // False when no endpoint of this worker has reads served by the peer's CPU (Endpoint::ReadsServedByPeer
  // is false for every region: mapped memory, the NIC): callers that would ask skip finding the endpoint.
  virtual bool ReadsMayBeServedByPeers() const { return false; }
  // Operations accepted and not yet returned by Poll.
  virtual size_t outstanding() const = 0;
  // Read on the worker's thread.
  virtual MessageCounts message_counts() const { return {}; }
};

struct FabricOptions {
  // A posted operation that has not completed by then fails with DeadlineExceeded and fails its endpoint.
  absl::Duration operation_timeout = absl::Seconds(5);
  // How long Wait spins before it sleeps on the event fd. None by default: writes wake a sleeping peer
  // (doorbells), and where several nodes share few cores a spinning thread takes the core from the one
  // that has work (50 us of spinning halved deployed YCSB-B here: docs/benchmarks.md). A machine with
  // cores to spare may spin to save the wake-up.
  absl::Duration spin_time = absl::ZeroDuration();
  // How often a silent peer is probed; a dead peer is detected within a few intervals.
  absl::Duration keepalive_interval = absl::Milliseconds(500);
  // Per worker; Post* returns ResourceExhausted beyond it.
  size_t max_outstanding = 4096;
};

class Fabric {
 public:
  virtual ~Fabric() = default;

  // Control path. Allocates `size` bytes that peers can access (on UCX: shared memory, so same-host peers
  // access it with plain loads and stores). Zero-filled.
  virtual absl::StatusOr<std::unique_ptr<Region>> AllocateRegion(size_t size) = 0;
  // Control path. Registers caller-owned memory, which must outlive the returned Region.
  virtual absl::StatusOr<std::unique_ptr<Region>> RegisterRegion(void* address, size_t size) = 0;
  // One per thread that uses the fabric.
  virtual absl::StatusOr<std::unique_ptr<Worker>> CreateWorker() = 0;
  virtual std::string_view name() const = 0;
};

// Waits on `worker` until `count` completions are collected into `out` or `timeout` passes. For tests,
// tools and control-path code; the data path polls.
absl::Status WaitForCompletions(Worker& worker, size_t count, std::vector<Completion>& out,
                                absl::Duration timeout);

}  // namespace fathom::fabric

#endif  // FATHOM_PLATFORM_FABRIC_FABRIC_H_
