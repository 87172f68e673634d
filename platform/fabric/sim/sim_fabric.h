// SimFabric: every node of a cluster in one process, on one seeded, deterministic, fault-injecting scheduler.
//
// Each node's Fabric behaves as fabric.h's contract says, but operations complete through a scheduler in
// virtual time: a flushed operation is delivered after a random latency, and faults (drops, partitions,
// crashes, torn copies) are injected from the same seeded generator, so one seed replays one run exactly.
//
//   SimOptions options;
//   options.seed = TestSeed();                        // platform/fabric/sim/test_seed.h
//   options.torn_copies = true;
//   SimNetwork network(options);
//   ASSIGN_OR_RETURN(std::unique_ptr<Fabric> a, network.AddNode(1));
//   ASSIGN_OR_RETURN(std::unique_ptr<Fabric> b, network.AddNode(2));
//   ASSIGN_OR_RETURN(auto region, b->AllocateRegion(4096));
//   ASSIGN_OR_RETURN(auto server, b->CreateWorker());
//   ASSIGN_OR_RETURN(auto worker, a->CreateWorker());
//   ASSIGN_OR_RETURN(auto ep, worker->Connect(server->address()));
//   ASSIGN_OR_RETURN(RemoteRegion remote, ep->ImportRegion(region->descriptor()));
//   RETURN_IF_ERROR(ep->PostRead(remote, 0, buf, 64, /*context=*/1));
//   RETURN_IF_ERROR(ep->Flush());
//   network.Partition(1, 2);                          // faults at any moment
//   worker->Poll(done);                               // polling drives the simulation
//
// What the simulation adds to the contract:
// - Time is virtual (clock()). An operation flushed at t is delivered at max(t + latency, the delivery of the
//   previous operation on its endpoint), latency uniform in [min_latency, max_latency]: each endpoint executes
//   in order; operations on different endpoints reorder through their latencies.
// - Worker::Poll runs the events that are due; when its worker has nothing to return it moves the clock to the
//   next event, so a polling loop always makes progress. Any worker's Poll runs every node's events.
// - Nothing starts before Flush. A posted but unflushed operation still expires at its deadline once virtual
//   time passes it (other activity moved the clock), failing its endpoint as any timeout does.
// - drop_probability: a delivered operation fails alone with Unavailable("dropped ...") without touching
//   memory; its endpoint stays healthy.
// - Partition: an operation delivered across a partition is lost. Its endpoint stalls (later operations on
//   it wait behind it, as on a reliable connection), and at the lost operation's deadline it completes with
//   DeadlineExceeded and fails the endpoint; the others complete with Unavailable. Heal does not revive a
//   stalled endpoint: lost operations are not retransmitted. Recovery is a new Connect.
// - Crash: every endpoint from or to the node fails at once with Unavailable, completing its pending
//   operations with Unavailable (keepalive detection takes no time here). New Connects are accepted; their
//   operations complete with Unavailable and fail the endpoint. The node's memory is left as it was.
// - An operation on a deregistered region, or on a well-formed key naming no region, completes with NotFound;
//   the endpoint stays healthy. A descriptor that lies about its length gets OutOfRange, never a wild copy.
// - torn_copies: a Read or Write moves its bytes in chunks of 1..max_torn_chunk bytes, executed in random
//   order at random moments within max_latency after delivery, as separate events; other endpoints' events
//   interleave with them, so racing readers see mixed bytes. Chunks end on 8-byte boundaries of the region
//   (or at the operation's end), so an aligned 8-byte word is never torn: real fabrics (x86 copies over
//   shared memory, RDMA NICs) copy aligned words whole, and the object layer relies on its version word
//   being read in one piece. Atomics always execute as one event.
//
// Threading: several threads may each drive their own workers at once; one mutex guards the whole network.
// Runs with several threads are correct but not deterministic. Every object made from a SimNetwork (fabrics,
// regions, workers, endpoints) must be destroyed before it.
#ifndef FATHOM_PLATFORM_FABRIC_SIM_SIM_FABRIC_H_
#define FATHOM_PLATFORM_FABRIC_SIM_SIM_FABRIC_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "platform/base/clock.h"
#include "platform/fabric/fabric.h"

namespace fathom::fabric::sim {

namespace internal {
class SimCore;
}  // namespace internal

struct SimOptions {
  uint64_t seed = 1;
  // Per-operation latency, drawn uniformly in [min_latency, max_latency].
  absl::Duration min_latency = absl::Microseconds(1);
  absl::Duration max_latency = absl::Microseconds(5);
  // A delivered operation fails with Unavailable("dropped ...") with this probability.
  double drop_probability = 0;
  // Read/Write bytes move in chunks of 1..max_torn_chunk bytes (ending on 8-byte boundaries of the region),
  // in random order, as separate events.
  bool torn_copies = false;
  size_t max_torn_chunk = 64;
  // operation_timeout (virtual time) and max_outstanding apply as in fabric.h; spin_time and
  // keepalive_interval have no meaning here.
  FabricOptions fabric;
  // Prints every completed operation (what Stats::history_digest folds in) to stderr: to find where two
  // runs that should replay diverge.
  bool trace_history = false;
  // An idle Poll or Wait moves the clock straight to the next event (a lone fabric drives time by itself).
  // False: the clock moves only by Advance and events already due, so a driver that also keeps timers of
  // its own (tests/sim's scheduler: lease ticks) never sees seconds pass in one poll.
  bool idle_polls_jump_ahead = true;
};

class SimNetwork {
 public:
  explicit SimNetwork(SimOptions options = {});
  ~SimNetwork();
  SimNetwork(const SimNetwork&) = delete;
  SimNetwork& operator=(const SimNetwork&) = delete;

  // The fabric of node `node_id`; AlreadyExists if the id is taken.
  absl::StatusOr<std::unique_ptr<Fabric>> AddNode(uint32_t node_id);

  // Operations between a and b (either direction) stop arriving; see the header comment. With
  // `heal_after`, the partition heals by itself that much virtual time later (a heal at a virtual time
  // that no polling loop jumps over: idle polls move the clock straight to the next event).
  void Partition(uint32_t a, uint32_t b, absl::Duration heal_after = absl::InfiniteDuration());
  void Heal(uint32_t a, uint32_t b);
  // The node's memory becomes unreachable and its workers' operations fail; see the header comment.
  void Crash(uint32_t node_id);
  void set_drop_probability(double p);

  uint64_t seed() const;
  // The virtual clock; it moves only as events run (or Advance). Starts at the Unix epoch.
  const Clock& clock() const;

  // Executes every scheduled event, moving the clock as far as needed; returns how many ran.
  size_t RunUntilIdle();
  // Executes the events due within `d` of now, then moves the clock to now + d.
  void Advance(absl::Duration d);

  struct Stats {
    uint64_t operations = 0;   // accepted by Post*
    uint64_t dropped = 0;      // failed by drop_probability
    uint64_t torn_chunks = 0;  // chunk events of torn copies executed
    uint64_t timed_out = 0;    // completed with DeadlineExceeded
    // Every completed operation, in completion order: its virtual time, type, endpoint, target (node,
    // region, offset, length), status code and the bytes it moved (written, read, or an atomic's old and
    // new values). Ring-buffer messages are writes, so this covers every message too. Two runs with one
    // seed and one schedule have equal digests; the replayable simulation (tests/sim/) checks that.
    uint64_t completed = 0;
    uint64_t history_digest = 0;
  };
  Stats stats() const;

 private:
  std::unique_ptr<internal::SimCore> core_;
};

}  // namespace fathom::fabric::sim

#endif  // FATHOM_PLATFORM_FABRIC_SIM_SIM_FABRIC_H_
