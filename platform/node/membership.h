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
// because joining takes gRPC calls. Failed joins are retried every `retry` until they succeed or the member
// leaves.
#ifndef FATHOM_PLATFORM_NODE_MEMBERSHIP_H_
#define FATHOM_PLATFORM_NODE_MEMBERSHIP_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/coordinator.h"
#include "platform/node/node.h"

namespace fathom::node {

// This node as a coordinator member; `fabric` names its transport (the node only knows "UCX").
coordinator::MemberInfo MemberInfoFor(const Node& node, uint64_t memory_bytes, coordinator::FabricKind fabric);

class MembershipFollower {
 public:
  static absl::StatusOr<std::unique_ptr<MembershipFollower>> Start(
      Node* node, coordinator::Coordinator* coordinator, absl::Duration retry = absl::Milliseconds(200));
  ~MembershipFollower();  // unsubscribes and stops the thread

  // The epoch of the last configuration fully applied (every member joined, every leaver disconnected).
  uint64_t applied_epoch() const;

 private:
  MembershipFollower(Node* node, coordinator::Coordinator* coordinator, absl::Duration retry)
      : node_(node), coordinator_(coordinator), retry_(retry) {}
  void OnConfiguration(const coordinator::Configuration& configuration);
  void Loop();
  // True when everything in `configuration` is applied.
  bool Apply(const coordinator::Configuration& configuration);

  Node* const node_;
  coordinator::Coordinator* const coordinator_;
  const absl::Duration retry_;
  std::unique_ptr<coordinator::Subscription> subscription_;
  std::thread thread_;

  mutable absl::Mutex mu_;
  std::optional<coordinator::Configuration> latest_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t applied_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  // Members joined, by id, with the incarnation joined.
  std::map<uint32_t, uint64_t> joined_;  // follower thread only
};

}  // namespace fathom::node

#endif  // FATHOM_PLATFORM_NODE_MEMBERSHIP_H_
