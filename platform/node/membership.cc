#include "platform/node/membership.h"

#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"

namespace fathom::node {

coordinator::MemberInfo MemberInfoFor(const Node& node, uint64_t memory_bytes, coordinator::FabricKind fabric) {
  coordinator::MemberInfo member;
  member.set_node_id(node.id());
  member.set_control_address(node.control_address());
  member.set_fabric(fabric);
  member.set_memory_bytes(memory_bytes);
  member.set_incarnation(node.incarnation());
  return member;
}

absl::StatusOr<std::unique_ptr<MembershipFollower>> MembershipFollower::Start(Node* node,
                                                                             coordinator::Coordinator* coordinator,
                                                                             absl::Duration retry) {
  std::unique_ptr<MembershipFollower> follower(new MembershipFollower(node, coordinator, retry));
  follower->thread_ = std::thread([f = follower.get()] { f->Loop(); });
  follower->subscription_ =
      coordinator->Subscribe([f = follower.get()](const coordinator::Configuration& c) { f->OnConfiguration(c); });
  return follower;
}

MembershipFollower::~MembershipFollower() {
  subscription_.reset();  // no callback after this
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

uint64_t MembershipFollower::applied_epoch() const {
  MutexLock lock(&mu_);
  return applied_epoch_;
}

void MembershipFollower::OnConfiguration(const coordinator::Configuration& configuration) {
  MutexLock lock(&mu_);
  if (!latest_.has_value() || configuration.epoch() > latest_->epoch()) latest_ = configuration;
}

void MembershipFollower::Loop() {
  uint64_t done_epoch = 0;
  bool done = false;
  while (true) {
    std::optional<coordinator::Configuration> configuration;
    {
      MutexLock lock(&mu_);
      TsanRelease(&mu_);
      auto wake = [this, done_epoch, done]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || (latest_.has_value() && (!done || latest_->epoch() != done_epoch));
      };
      mu_.AwaitWithTimeout(absl::Condition(&wake), retry_);
      TsanAcquire(&mu_);
      if (stopping_) return;
      if (!latest_.has_value()) continue;
      configuration = latest_;
    }
    if (done && configuration->epoch() == done_epoch) continue;
    done = Apply(*configuration);
    done_epoch = configuration->epoch();
    if (done) {
      MutexLock lock(&mu_);
      applied_epoch_ = done_epoch;
    }
  }
}

bool MembershipFollower::Apply(const coordinator::Configuration& configuration) {
  bool complete = true;
  std::map<uint32_t, const coordinator::MemberInfo*> members;
  for (const coordinator::MemberInfo& m : configuration.members()) members[m.node_id()] = &m;
  // Not a member (left, or removed): talk to no one until a configuration lists this node again.
  const bool member = members.contains(node_->id());
  // Leavers first: their slots and rings are freed before newcomers need them.
  for (uint32_t peer : node_->connected_peers()) {
    if (member && members.contains(peer)) continue;
    node_->Disconnect(peer).IgnoreError();
    joined_.erase(peer);
  }
  if (!member) return true;
  for (const auto& [id, info] : members) {
    if (id == node_->id()) continue;
    auto it = joined_.find(id);
    if (it != joined_.end() && it->second == info->incarnation()) continue;
    absl::Status joined = node_->JoinPeer({id, info->control_address()});
    if (joined.ok()) {
      joined_[id] = info->incarnation();
    } else {
      complete = false;  // retried after `retry_`
    }
  }
  return complete;
}

}  // namespace fathom::node
