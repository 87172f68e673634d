// MembershipFollower: keeps a Node connected to exactly the members of the coordinator's configuration.
// A member that appears is joined (Join is symmetric, so both sides do it and the second finds it done);
// a member that restarts is joined again (its new incarnation replaces the old connection); a connected
// node that leaves the configuration is disconnected, so its rings are no longer polled and nothing it
// sends is heard (precise membership). A node the configuration does not list (it left, or was removed)
// drops every connection until it is listed again.
//
//   ASSIGN_OR_RETURN(auto coordinator, coordinator::ZooKeeperCoordinator::Create(zk_options));
//   RETURN_IF_ERROR(coordinator->Join(MemberInfoFor(*node, memory, coordinator::FABRIC_KIND_UCX_TCP)));
//   ASSIGN_OR_RETURN(auto follower, MembershipFollower::Start(node.get(), coordinator.get()));
//
// Configurations arrive on the coordinator's callback thread; the follower applies them on its own thread,
// because joining takes gRPC calls; on a node run by an Executor (NodeOptions::executor: the replayable
// simulation) it runs as the executor's task instead, on the node's clock. Failed joins are retried
// (backing off to `retry`) until they succeed or the member leaves.
//
// With leases (MembershipOptions::lease, lease_agent.h): a node whose own lease has lapsed keeps the
// connections it has but makes none except to the configuration manager (CM), through which it asks for a
// lease again; it joins the others once it holds one. With MembershipOptions::rejoin_as, a node the
// configuration no longer lists (the CM removed it when its lease expired, or its session ended) joins the
// coordinator again (Leave, then Join) by itself: so destroy the follower before leaving for good.
//
// A connection to a member that fails (Node::failed_peers) or goes away while both stay members is made
// again, backing off to every `retry`, until it succeeds: one flap must not cut two members apart for good.
#ifndef FATHOM_COORDINATOR_MEMBERSHIP_H_
#define FATHOM_COORDINATOR_MEMBERSHIP_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/coordinator.h"
#include "coordinator/lease_agent.h"
#include "platform/node/node.h"

namespace fathom::coordinator {

// This node as a coordinator member, with its data regions (the configuration manager places them);
// `fabric` names its transport (the node only knows "UCX").
coordinator::MemberInfo MemberInfoFor(const node::Node& node, uint64_t memory_bytes, coordinator::FabricKind fabric);

// What this node's part of recovery (serving promoted regions, filling new backups: docs/recovery.md)
// tells the follower.
struct RecoveryStep {
  bool served_new = false;  // this node serves regions it did not: members must import them
  bool waiting = false;     // something is left to do (a promotion or a fill): ask again (backing off)
  // What it waits for comes by itself within milliseconds (a promotion waits for the members' word that
  // they work from its configuration, and for pending commits): ask again after first_retry, without
  // backing off (backing off to `retry` made a promotion wait up to 200 ms past what it waited for).
  bool soon = false;
};

struct MembershipOptions {
  // A configuration not done yet (a join, a promotion waiting for pending commits) is tried again after
  // `first_retry`, then twice as long each time, up to `retry`: a promotion usually waits a few
  // milliseconds, and every retry it sleeps through is unavailability for the regions it promotes.
  absl::Duration first_retry = absl::Milliseconds(5);
  absl::Duration retry = absl::Milliseconds(200);
  LeaseAgent* lease = nullptr;  // not owned; outlives the follower
  std::optional<coordinator::MemberInfo> rejoin_as;
  // With rejoin_as: called once per removal, after every connection is gone and before this node joins
  // again (the layers above let go of what they held for the configuration that removed it).
  std::function<void()> on_removed;
  // This node's part of recovery: called once a configuration is applied (with it), and again
  // (backing off from `first_retry` to `retry`) while it says `waiting`. When it serves new regions, the follower republishes this node to
  // every member (Node::Republish) and then calls it once more at once: a step that serves new regions
  // may return before the rest of its work, so members reach them sooner.
  std::function<RecoveryStep(const Configuration& configuration)> recover;
};

class MembershipFollower {
 public:
  static absl::StatusOr<std::unique_ptr<MembershipFollower>> Start(
      node::Node* node, coordinator::Coordinator* coordinator, absl::Duration retry = absl::Milliseconds(200));
  static absl::StatusOr<std::unique_ptr<MembershipFollower>> Start(node::Node* node, coordinator::Coordinator* coordinator,
                                                                   MembershipOptions options);
  ~MembershipFollower();  // unsubscribes and stops the thread

  // The epoch of the last configuration fully applied (every member joined, every leaver disconnected).
  uint64_t applied_epoch() const;
  // Times this node joined the coordinator again after a configuration left it out.
  uint64_t rejoins() const;
  // Times a connection to a member that failed or went away (both staying members) was made again.
  uint64_t reconnects() const;
  // Times the follower applied a configuration while this node held no lease (tests: it kept its
  // connections meanwhile).
  uint64_t passes_without_lease() const;

 private:
  MembershipFollower(node::Node* node, coordinator::Coordinator* coordinator, MembershipOptions options)
      : node_(node), coordinator_(coordinator), options_(std::move(options)) {}
  void OnConfiguration(const coordinator::Configuration& configuration);
  void Poke();  // look again (the lease came or went)
  void Loop();          // its own thread: a pass when woken, or when a retry is due
  size_t Task();        // the executor's task: the same, by the node's clock
  bool WokenLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);  // a new configuration, or poked
  // Applies the latest configuration (or repairs its connections); false if there was nothing to do.
  bool Pass();
  // True when everything in `configuration` is applied.
  bool Apply(const coordinator::Configuration& configuration);
  // Whether a member this follower joined is no longer connected, or a connection failed.
  bool NeedsRepair(const coordinator::Configuration& configuration) const;
  // Runs the recovery step and republishes this node to the members that have not imported what it
  // serves. True when nothing is left to do.
  // Also sets recover_soon_ (RecoveryStep::soon).
  bool Recover(const coordinator::Configuration& configuration);
  // Republishes this node to the members in republish_to_ still listed; those that fail stay for later.
  void Republish(const coordinator::Configuration& configuration);
  // Leave, then Join; if it joined, the epoch of a configuration that lists this node again.
  std::optional<uint64_t> Rejoin();

  node::Node* const node_;
  coordinator::Coordinator* const coordinator_;
  const MembershipOptions options_;
  std::unique_ptr<coordinator::Subscription> subscription_;
  std::thread thread_;
  uint64_t task_ = 0;  // with an executor

  mutable absl::Mutex mu_;
  std::optional<coordinator::Configuration> latest_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool poked_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t applied_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t rejoins_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t reconnects_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t passes_without_lease_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t done_epoch_ ABSL_GUARDED_BY(mu_) = 0;  // the configuration the last pass worked on
  // The pass's only (the follower thread, or the executor's task).
  bool done_ = false;                             // done_epoch_ fully applied and recovered
  absl::Duration delay_;                          // until the next try of a configuration not done
  absl::Time next_pass_ = absl::InfinitePast();   // with an executor: when that try is due
  // Members to republish to (the follower's thread only): this node serves regions they have not imported.
  std::set<uint32_t> republish_to_;
  // Members joined, by id: the incarnation joined, and the configuration that admitted it. A member
  // removed and admitted again with the same incarnation (paused past its lease) is another admission:
  // what it wrote before is drained and fenced as if it were another incarnation.
  struct Admission {
    uint64_t incarnation = 0;
    uint64_t joined_epoch = 0;
    bool operator==(const Admission&) const = default;
  };
  static Admission AdmissionOf(const coordinator::MemberInfo& member) {
    return {member.incarnation(), member.joined_epoch()};
  }
  std::map<uint32_t, Admission> joined_;  // follower thread only
  uint64_t rejoined_after_epoch_ = 0;     // follower thread only: the epoch that last made it join again
  uint64_t removal_handled_epoch_ = 0;    // follower thread only: the last removal on_removed was told of
  // Follower thread only: this node's joined_epoch in the last configuration it applied as a member, and
  // whether a configuration without it was handled since (a new joined_epoch without one is a removal
  // this follower never saw).
  uint64_t admitted_epoch_ = 0;
  bool removal_handled_ = false;
  bool recover_soon_ = false;             // follower thread only: the last Recover's RecoveryStep::soon
};

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_MEMBERSHIP_H_
