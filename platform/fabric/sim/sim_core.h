// SimCore: the state of one SimNetwork (nodes, regions, workers, endpoints, operations) and the scheduler
// that moves it through virtual time. Internal to the sim fabric; the public face is sim_fabric.h.
//
// Everything lives behind one mutex: events of any node may touch any node's memory and any worker's
// completion queue, and a single lock keeps single-threaded runs trivially deterministic.
//
// Invariants:
// - An operation is in ops_ from its accepted Post until its Completion is queued, and is listed in exactly
//   one of its endpoint's `unflushed` (not yet flushed) or `in_flight` (flushed) sets meanwhile.
// - Events name operations by id; an event whose operation already completed does nothing.
// - Completion order for one endpoint follows post order unless a fault ends operations early.
// - Every map that is iterated is ordered (std::map/std::set): absl's hash tables iterate in an order that
//   changes between processes, which would break replay by seed.
#ifndef FATHOM_PLATFORM_FABRIC_SIM_SIM_CORE_H_
#define FATHOM_PLATFORM_FABRIC_SIM_SIM_CORE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <queue>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "platform/base/clock.h"
#include "platform/fabric/fabric.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/fabric/sim/sim_keys.h"
#include "platform/fabric/sim/sim_lock.h"

namespace fathom::fabric::sim::internal {

// One accepted Post*, until its completion.
struct Operation {
  uint64_t endpoint = 0;
  OpType type = OpType::kRead;
  uint64_t context = 0;
  RegionId region;
  uint64_t offset = 0;
  uint64_t length = 0;
  void* destination = nullptr;    // Read
  const void* source = nullptr;   // Write
  uint64_t expected = 0;          // CompareSwap
  uint64_t operand = 0;           // CompareSwap: desired; FetchAdd: addend
  uint64_t* old_value = nullptr;  // atomics
  absl::Time deadline;
  bool flushed = false;
  uint64_t chunks_left = 0;  // torn copy pieces not yet executed
};

enum class EventKind : uint8_t {
  kDeliver,    // the operation reaches its target and executes (or starts its torn copy)
  kCopyChunk,  // one piece of a torn Read/Write
  kDeadline,   // the operation's deadline; scheduled only for operations that will not complete by then
};

struct Event {
  absl::Time time;
  uint64_t sequence = 0;  // ties at one time run in scheduling order
  EventKind kind = EventKind::kDeliver;
  uint64_t op = 0;
  uint64_t chunk_offset = 0;
  uint64_t chunk_length = 0;
};

struct EventRunsLater {
  bool operator()(const Event& a, const Event& b) const {
    if (a.time != b.time) return a.time > b.time;
    return a.sequence > b.sequence;
  }
};

struct NodeState {
  bool crashed = false;
  uint32_t workers_created = 0;
  uint32_t regions_created = 0;
};

struct RegionEntry {
  std::byte* data = nullptr;
  size_t size = 0;
  uint64_t generation = 0;
};

struct WorkerState {
  uint32_t node = 0;
  std::deque<Completion> ready;
  size_t outstanding = 0;  // accepted and not yet returned by Poll
  size_t unflushed = 0;    // of those, posted and not yet flushed
  bool signaled = false;
  std::set<uint64_t> endpoints;
};

struct EndpointState {
  uint64_t worker = 0;
  uint32_t node = 0;  // the initiator
  uint32_t peer = 0;  // the target
  absl::Status health;
  // An operation was lost in a partition; later ones wait behind it until its deadline fails the endpoint.
  bool stalled = false;
  absl::Time busy_until = absl::InfinitePast();  // when the last flushed operation finishes executing
  std::deque<uint64_t> unflushed;                // in post order
  std::set<uint64_t> in_flight;                  // ids grow with post order
};

class SimCore {
 public:
  explicit SimCore(const SimOptions& options);
  SimCore(const SimCore&) = delete;
  SimCore& operator=(const SimCore&) = delete;

  uint64_t network_id() const { return network_id_; }
  uint64_t seed() const { return options_.seed; }
  const Clock& clock() const { return virtual_clock_; }

  // Topology and faults (sim_network.cc).
  absl::Status AddNode(uint32_t node);
  void Partition(uint32_t a, uint32_t b, absl::Duration heal_after);
  void Heal(uint32_t a, uint32_t b);
  void Crash(uint32_t node);
  void SetDropProbability(double p);
  SimNetwork::Stats stats() const;

  // Registries (sim_network.cc).
  RegionId RegisterRegion(uint32_t node, std::byte* data, size_t size);
  void DeregisterRegion(const RegionId& id);
  // Returns the worker's key; *index is its number within the node (what its address carries).
  uint64_t CreateWorker(uint32_t node, uint32_t* index);
  void DestroyWorker(uint64_t worker);
  absl::StatusOr<uint64_t> Connect(uint64_t worker, uint32_t peer_node, uint32_t peer_worker);
  void DestroyEndpoint(uint64_t endpoint);
  // Fails what is pending with Cancelled("endpoint closed"); the endpoint stays until destroyed.
  void ShutdownEndpoint(uint64_t endpoint);
  absl::Status Health(uint64_t endpoint) const;

  // Operations (sim_operations.cc). `op` is validated by the endpoint against its imported regions.
  absl::Status Post(const Operation& op);
  absl::Status Flush(uint64_t endpoint);

  // Driving (sim_scheduler.cc).
  size_t Poll(uint64_t worker, absl::Span<Completion> out);
  void Wait(uint64_t worker, absl::Duration timeout);
  void Signal(uint64_t worker);
  size_t Outstanding(uint64_t worker) const;
  size_t RunUntilIdle();
  void Advance(absl::Duration d);

 private:
  // Scheduler (sim_scheduler.cc).
  void Schedule(absl::Time time, EventKind kind, uint64_t op, uint64_t chunk_offset = 0,
                uint64_t chunk_length = 0) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RunNextEvent() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs the events that are due; while `waiter` has no completions ready, also later ones (moving the
  // clock). At most `budget` events. Returns how many ran.
  size_t RunEvents(const WorkerState& waiter, size_t budget) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  uint64_t UniformInt(uint64_t low, uint64_t high) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Chance(double p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Duration RandomDurationBelow(absl::Duration limit) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Operation lifecycle (sim_operations.cc).
  bool IsTorn(const Operation& op) const;
  void Deliver(uint64_t id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartTornCopy(uint64_t id, Operation& op) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CopyChunk(const Event& event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TimeOut(uint64_t id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Expires the worker's unflushed operations whose deadline virtual time has passed.
  void ExpireUnflushed(const WorkerState& worker) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queues the operation's completion on its worker and forgets the operation.
  void Complete(uint64_t id, absl::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Folds a completing operation into stats_.history_digest.
  void RecordHistory(const Operation& op, const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sets the endpoint's health to `reason` (if still healthy) and completes its remaining operations with
  // `pending_status`.
  void FailEndpoint(uint64_t endpoint, const absl::Status& reason, const absl::Status& pending_status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Non-OK when either end of the endpoint has crashed.
  absl::Status NodesUp(const EndpointState& endpoint) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Partitioned(uint32_t a, uint32_t b) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  RegionEntry* FindRegion(const RegionId& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  WorkerState* FindWorker(uint64_t worker) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const SimOptions options_;
  const uint64_t network_id_;
  const absl::Duration torn_window_;  // torn chunks run within this long after delivery

  mutable absl::Mutex mu_;
  SimulatedClock clock_;  // moved only under mu_, to now_; read through virtual_clock_
  const VirtualClock virtual_clock_{&mu_, &clock_};

  absl::CondVar work_cv_;  // signaled on new events, new completions and Signal()
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  std::mt19937_64 rng_ ABSL_GUARDED_BY(mu_);
  double drop_probability_ ABSL_GUARDED_BY(mu_);
  std::priority_queue<Event, std::vector<Event>, EventRunsLater> events_ ABSL_GUARDED_BY(mu_);
  uint64_t next_sequence_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_op_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t next_endpoint_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t next_generation_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint32_t, NodeState> nodes_ ABSL_GUARDED_BY(mu_);
  // (low, high) node ids -> when the partition heals by itself (InfiniteFuture: at Heal).
  std::map<std::pair<uint32_t, uint32_t>, absl::Time> partitions_ ABSL_GUARDED_BY(mu_);
  std::map<std::pair<uint32_t, uint32_t>, RegionEntry> regions_ ABSL_GUARDED_BY(mu_);  // (node, region)
  std::map<uint64_t, WorkerState> workers_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, EndpointState> endpoints_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Operation> ops_ ABSL_GUARDED_BY(mu_);
  SimNetwork::Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fathom::fabric::sim::internal

#endif  // FATHOM_PLATFORM_FABRIC_SIM_SIM_CORE_H_
