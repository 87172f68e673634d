// Coordinator: membership and the cluster configuration, seen from one node.
//
// Two implementations: ZooKeeperCoordinator (zookeeper_coordinator.h; a real cluster) and LocalCoordinator
// (local_coordinator.h; every node in one process, for the embedded cluster and unit tests). Both change
// the configuration only by a compare-and-set on its version, with epoch + 1 per change, so concurrent
// writers never lose a change. Subscribers are called on a dedicated thread, in epoch order, never under a
// coordinator lock: a callback may call the coordinator (but must not destroy it).
//
//   std::unique_ptr<Coordinator> c = ...;
//   MemberInfo me;
//   me.set_node_id(1);
//   me.set_control_address("127.0.0.1:7001");
//   RETURN_IF_ERROR(c->Join(me));                 // returns once a configuration lists this node
//   auto sub = c->Subscribe([](const Configuration& config) { ApplyNewConfiguration(config); });
//   ASSIGN_OR_RETURN(RegionAllocation region, c->AllocateRegion(64 << 20, /*replicas=*/3));
//   c->ReportSuspect(2, absl::ZeroDuration());    // node 2 stopped answering
//   c->RemoveExpiredMember(3, incarnation);       // the CM: node 3's lease ran out
//   RETURN_IF_ERROR(c->Leave());
#ifndef FATHOM_COORDINATOR_COORDINATOR_H_
#define FATHOM_COORDINATOR_COORDINATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/configuration.h"

namespace fathom::coordinator {

// A new region's id and replicas (primary first), in the configuration of `epoch`.
struct RegionAllocation {
  uint32_t region_id = 0;
  std::vector<uint32_t> replicas;
  uint64_t epoch = 0;
};

enum class CoordinatorState {
  kConnected,     // in touch with the coordination service; changes are possible
  kDisconnected,  // lost touch (ZooKeeper down or unreachable): the last configuration is kept, no changes
                  // are made, and the coordinator resumes by itself when the service returns
  kClosed,        // Close() was called
};
const char* CoordinatorStateName(CoordinatorState state);

// Unsubscribes when destroyed (waiting for a callback in progress, unless destroyed from inside it).
class Subscription {
 public:
  virtual ~Subscription() = default;
};

// Why a lease expired, as the CM removing the member knows it.
enum class ExpiredMember {
  kUnseen,  // this CM process never heard from that incarnation: it may have died long ago
  kFailed,  // it renewed with this CM, granted this node's lease, or this node connected to it: it failed
            // while the cluster ran
};

class Coordinator {
 public:
  using Callback = std::function<void(const Configuration&)>;
  // Changes a copy of the current configuration; an error aborts the update and is returned.
  using Mutation = std::function<absl::Status(Configuration&)>;

  virtual ~Coordinator() = default;

  // Registers this node (InvalidArgument: bad info; AlreadyExists: a live member has its id; FailedPrecondition:
  // already joined) and returns once a configuration lists it (DeadlineExceeded otherwise).
  virtual absl::Status Join(const MemberInfo& member) = 0;
  // Unregisters this node; the configuration manager removes it from the configuration. Does not wait.
  virtual absl::Status Leave() = 0;

  // The latest configuration this coordinator has seen. FailedPrecondition before there is one.
  virtual absl::StatusOr<Configuration> GetConfiguration() = 0;
  // `callback` gets the current configuration (if any), then every newer one, in epoch order.
  virtual std::unique_ptr<Subscription> Subscribe(Callback callback) = 0;

  // Applies `mutation` to the current configuration and writes it with epoch + 1, conditional on the
  // version read; retries on a conflict. The result must validate (InvalidArgument otherwise).
  // Unavailable while disconnected; DataLoss when the stored configuration is corrupt.
  virtual absl::StatusOr<Configuration> Update(const Mutation& mutation) = 0;

  // A new region of `size_bytes` with `replicas` (f+1) replicas on distinct members, balancing memory
  // (placement.h), by one configuration change. FailedPrecondition: fewer members than replicas.
  virtual absl::StatusOr<RegionAllocation> AllocateRegion(uint64_t size_bytes, int replicas) = 0;

  // Tells the configuration manager that `node_id` seems dead. A member whose failure is confirmed (its
  // session ended) is removed at once instead of when the watch fires; a live member stays (leases will
  // decide later). When `node_id` is the manager itself (a member that could not renew its lease there),
  // it is deposed: it loses the role, the next candidate takes it, and the new manager's leases decide
  // whether the old one is still a member (ZooKeeper: docs/formats/configuration.md). NotFound if it is not
  // a member. `unconfirmed_for`: how long this member has confirmed none of the manager's lease grants (since
  // it accepted the last one; InfiniteDuration if it never did). A vote states it, so the successor knows
  // when the old manager's own lease ends (DeposedByVotes); zero claims nothing.
  virtual absl::Status ReportSuspect(uint32_t node_id, absl::Duration unconfirmed_for) = 0;

  // For a configuration manager that just took over from `node_id` (that incarnation): whether a majority
  // of the data members voted it out (ReportSuspect) within the vote window, so each of them confirmed
  // none of its grants since (LeaseOptions::vote_silence) and its own lease is over soon. If so, how long
  // before the ask the last grant its lease may still rest on was made at latest (by the coordination
  // service's clock: each vote's time minus how long its voter had confirmed nothing, the best majority's
  // latest); nullopt where there are no votes (the default, LocalCoordinator) or it lost the role otherwise
  // (its session ended).
  virtual absl::StatusOr<std::optional<absl::Duration>> DeposedByVotes(uint32_t node_id, uint64_t incarnation) {
    (void)node_id;
    (void)incarnation;
    return std::nullopt;
  }

  // The configuration manager removes a member whose lease expired (coordinator/lease_agent.h): one
  // change, conditional on the version read and made only while this node is the manager
  // (FailedPrecondition otherwise). Unlike a plain Update it also drops the member's registration (its
  // ephemeral znode), so the removal sticks although the member's process and session may still be alive:
  // the member comes back only by joining again (Leave, then Join). NotFound if `node_id` is not a member
  // with `incarnation` (removed already, or back as another incarnation). With kFailed (the caller saw
  // that incarnation alive: lease.h) its replicas are dropped and its regions promoted
  // (DropReplicasOf); with kUnseen (a CM that never heard from it, as after a whole-cluster restart)
  // nothing moves.
  virtual absl::Status RemoveExpiredMember(uint32_t node_id, uint64_t incarnation,
                                           ExpiredMember expired = ExpiredMember::kUnseen) = 0;

  // What this process knows of a departed incarnation (LeaseAgent::Witness). ZooKeeper: a member whose
  // registration vanished without a Leave (its session expired: the process died or hung, or only its
  // ZooKeeper connection did) is kFailed if the witness saw it alive: it failed while the cluster ran, so
  // the CM drops its replicas (DropReplicasOf), as it does for a lease expiry; this is how a dead CM's
  // regions reach their backups. nullopt while it still holds a lease at this CM: it may be alive and
  // serving, so it is not removed (its lease's expiry removes it, if it lapses; issue 58, path 1). Null
  // witness, or kUnseen: removed, nothing moves. Called under the coordinator's lock; must not call it back.
  using FailureWitness =
      std::function<std::optional<ExpiredMember>(uint32_t node_id, uint64_t incarnation)>;
  virtual void SetFailureWitness(FailureWitness witness) { (void)witness; }

  virtual CoordinatorState state() const = 0;
  // Whether this node is the configuration manager right now.
  virtual bool is_manager() const = 0;
  // Asks the source of truth, now, whether this node is still the configuration manager: OK if it is;
  // FailedPrecondition if not (it was deposed meanwhile, and is_manager() turns false); Unavailable if
  // that cannot be known now. For a CM that did not run for a while (paused): what it believed before
  // may have been voted out meanwhile.
  virtual absl::Status ConfirmManager() = 0;
};

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_COORDINATOR_H_
