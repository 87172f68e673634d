#include "coordinator/membership.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"
#include "platform/base/log.h"

namespace fathom::coordinator {

coordinator::MemberInfo MemberInfoFor(const node::Node& node, uint64_t memory_bytes, coordinator::FabricKind fabric) {
  coordinator::MemberInfo member;
  member.set_node_id(node.id());
  member.set_control_address(node.control_address());
  member.set_fabric(fabric);
  member.set_memory_bytes(memory_bytes);
  member.set_incarnation(node.incarnation());
  for (const memory::LocalRegion* region : node.data_regions()) {
    MemberRegion* r = member.add_regions();
    r->set_region_id(region->id());
    r->set_size_bytes(region->size());
  }
  return member;
}

absl::StatusOr<std::unique_ptr<MembershipFollower>> MembershipFollower::Start(node::Node* node,
                                                                             coordinator::Coordinator* coordinator,
                                                                             absl::Duration retry) {
  MembershipOptions options;
  options.retry = retry;
  return Start(node, coordinator, std::move(options));
}

absl::StatusOr<std::unique_ptr<MembershipFollower>> MembershipFollower::Start(node::Node* node,
                                                                             coordinator::Coordinator* coordinator,
                                                                             MembershipOptions options) {
  std::unique_ptr<MembershipFollower> follower(new MembershipFollower(node, coordinator, std::move(options)));
  follower->delay_ = follower->options_.retry;
  if (node::Executor* executor = node->options().executor; executor != nullptr) {
    follower->task_ = executor->AddTask(node->id(), [f = follower.get()] { return f->Task(); });
  } else {
    follower->thread_ = std::thread([f = follower.get()] { f->Loop(); });
  }
  if (follower->options_.lease != nullptr) follower->options_.lease->SetListener([f = follower.get()] { f->Poke(); });
  follower->subscription_ =
      coordinator->Subscribe([f = follower.get()](const coordinator::Configuration& c) { f->OnConfiguration(c); });
  return follower;
}

MembershipFollower::~MembershipFollower() {
  if (options_.lease != nullptr) options_.lease->SetListener(nullptr);
  subscription_.reset();  // no callback after this
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  if (task_ != 0) node_->options().executor->RemoveTask(task_);  // no pass starts after this
}

uint64_t MembershipFollower::applied_epoch() const {
  MutexLock lock(&mu_);
  return applied_epoch_;
}

uint64_t MembershipFollower::rejoins() const {
  MutexLock lock(&mu_);
  return rejoins_;
}

void MembershipFollower::OnConfiguration(const coordinator::Configuration& configuration) {
  MutexLock lock(&mu_);
  if (!latest_.has_value() || configuration.epoch() > latest_->epoch()) latest_ = configuration;
}

void MembershipFollower::Poke() {
  MutexLock lock(&mu_);
  poked_ = true;
}

void MembershipFollower::Loop() {
  while (true) {
    {
      MutexLock lock(&mu_);
      TsanRelease(&mu_);
      // A configuration not done yet (a join or a recovery step that must wait) is tried again after
      // `delay_`, not at once: waking on `!done_` made this thread spin through every recovery, on cores
      // the recovery itself needs.
      auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || WokenLocked(); };
      mu_.AwaitWithTimeout(absl::Condition(&wake), delay_);
      TsanAcquire(&mu_);
      if (stopping_) return;
    }
    Pass();
  }
}

size_t MembershipFollower::Task() {
  const absl::Time now = node_->options().clock->Now();
  {
    MutexLock lock(&mu_);
    if (stopping_ || (!WokenLocked() && now < next_pass_)) return 0;
  }
  const bool worked = Pass();
  next_pass_ = node_->options().clock->Now() + delay_;
  return worked ? 1 : 0;
}

bool MembershipFollower::WokenLocked() const {
  return poked_ || (latest_.has_value() && latest_->epoch() != done_epoch_);
}

bool MembershipFollower::Pass() {
  std::optional<coordinator::Configuration> configuration;
  uint64_t done_epoch = 0;
  {
    MutexLock lock(&mu_);
    done_epoch = done_epoch_;
    if (poked_) {
      poked_ = false;
      done_ = false;  // the lease changed: the same configuration means other connections now
    }
    if (!latest_.has_value()) return false;
    configuration = latest_;
  }
  // An applied configuration needs work again only if a connection to a member failed or went away.
  if (done_ && configuration->epoch() == done_epoch && !NeedsRepair(*configuration)) return false;
  // Back off while the same configuration stays undone; anything new starts again from first_retry.
  const bool again = !done_ && configuration->epoch() == done_epoch;
  delay_ = again ? std::min(options_.retry, delay_ * 2) : std::min(options_.retry, options_.first_retry);
  bool done = Apply(*configuration);
  {
    MutexLock lock(&mu_);
    done_epoch_ = configuration->epoch();
    if (done) {
      applied_epoch_ = done_epoch_;
      SetLogConfiguration(node_->id(), done_epoch_);
    }
  }
  // The epoch counts as applied (a restart waits for that) while recovery may still wait: it is tried
  // again (backing off).
  if (done && !Recover(*configuration)) {
    done = false;
    if (recover_soon_) delay_ = options_.first_retry;
  }
  if (done) delay_ = options_.retry;  // only to look for broken connections (NeedsRepair)
  done_ = done;
  return true;
}

bool MembershipFollower::Apply(const coordinator::Configuration& configuration) {
  bool complete = true;
  std::map<uint32_t, const coordinator::MemberInfo*> members;
  for (const coordinator::MemberInfo& m : configuration.members()) members[m.node_id()] = &m;
  // Not a member (left, or removed): talk to no one until a configuration lists this node again.
  const bool member = members.contains(node_->id());
  // Without a lease this node makes no connection but the one to the CM (to be granted a lease again), and
  // keeps those it has: its GETs and commits fail meanwhile (no lease, no service), and it is fenced by
  // its peers, who drop it once a configuration removes it. When the CM dies every member's lease lapses
  // at once; members that dropped their connections then took ~0.5 s to make them again after the
  // successor's first grant, and every transaction waited for that.
  // The CM grants leases rather than holds one from anybody: it never cuts itself off from the members.
  const uint32_t manager = configuration.manager_id();
  const bool holds = options_.lease == nullptr || options_.lease->HoldsLease() || manager == node_->id();
  if (!holds) {
    MutexLock lock(&mu_);
    ++passes_without_lease_;
  }
  // Admitted again without this follower seeing a configuration that left it out (paused past its ZooKeeper
  // session, its coordinator registered it again meanwhile): a removal all the same (random_faults seed
  // 543: a lock it kept held log epochs open for good). Every connection goes, and on_removed runs, as if
  // it had seen itself removed.
  const auto self = members.find(node_->id());
  const bool readmitted = member && admitted_epoch_ != 0 && !removal_handled_ &&
                          self->second->joined_epoch() != admitted_epoch_;
  if (member) {
    admitted_epoch_ = self->second->joined_epoch();
    removal_handled_ = false;
  }
  // Leavers first: their slots and rings are freed before newcomers need them.
  const std::vector<uint32_t> failed_peers = node_->failed_peers();  // both sorted
  const std::vector<uint32_t> connected_before = node_->connected_peers();
  for (uint32_t peer : connected_before) {
    auto listed = members.find(peer);
    auto joined = joined_.find(peer);
    // A restarted (or re-admitted) member's old connection goes here too, so what it wrote before is handled
    // before this epoch counts as fenced (the join below makes the new one).
    const bool same_admission = joined == joined_.end() || listed == members.end() ||
                                joined->second == AdmissionOf(*listed->second);
    if (member && !readmitted && listed != members.end() && same_admission) continue;
    LogInfo("membership", "node %u disconnects node %u (%s, epoch %llu)", node_->id(), peer,
              !member                   ? "this node is no member"
              : readmitted              ? "this node was admitted again"
              : listed == members.end() ? "no member any more"
                                        : "admitted again",
              static_cast<unsigned long long>(configuration.epoch()));
    const absl::Time disconnecting = node_->options().clock->Now();
    node_->Disconnect(peer).IgnoreError();
    // Slow only when something waits for the peer (a removal's drain, a dead peer's endpoint): worth seeing.
    if (const absl::Duration took = node_->options().clock->Now() - disconnecting; took > absl::Milliseconds(20)) {
      LogInfo("membership", "node %u disconnected node %u in %s", node_->id(), peer,
              absl::FormatDuration(took).c_str());
    }
    joined_.erase(peer);
  }
  // Everything a node outside this configuration (or an earlier incarnation) wrote here is handled:
  // transaction recovery may now ask this node what it holds of their transactions.
  node_->region_directory().MarkFenced(configuration.epoch());
  if (readmitted && options_.on_removed) {
    LogInfo("membership", "node %u was admitted again (configuration %llu) without seeing its removal",
            node_->id(), static_cast<unsigned long long>(admitted_epoch_));
    options_.on_removed();
  }
  if (!member) {
    if (!options_.rejoin_as.has_value()) return true;
    // A configuration no newer than the one that made us join again is old news (the one listing us may
    // not have reached this follower yet): joining again once more would only remove us once more.
    // Our own Leave makes a configuration without us too, older than the one Join waited for: skip up to
    // that one, or each rejoin would cause the next.
    if (configuration.epoch() > rejoined_after_epoch_) {
      if (options_.on_removed && configuration.epoch() > removal_handled_epoch_) {
        removal_handled_epoch_ = configuration.epoch();
        options_.on_removed();
      }
      removal_handled_ = true;
      if (std::optional<uint64_t> listed = Rejoin(); listed.has_value()) {
        rejoined_after_epoch_ = std::max(configuration.epoch(), *listed);
      }
    }
    return false;  // apply the configuration that lists this node again (or retry the join)
  }
  for (const auto& [id, info] : members) {
    if (id == node_->id()) continue;
    auto it = joined_.find(id);
    const bool failed = std::binary_search(failed_peers.begin(), failed_peers.end(), id);
    const bool connected = std::binary_search(connected_before.begin(), connected_before.end(), id);
    if (it != joined_.end() && it->second == AdmissionOf(*info) && connected && !failed) continue;
    if (!holds && id != manager) {
      complete = false;  // joined once the lease is back (Poke)
      continue;
    }
    // A connection that failed or went away while both stay members is made afresh (new ring sessions on
    // both sides: the join replaces the peer's side too). Nothing is given up on one flap.
    const bool repair = failed || (it != joined_.end() && !connected);
    if (failed) node_->Disconnect(id).IgnoreError();
    absl::Status joined = node_->JoinPeer({id, info->control_address()});
    if (joined.ok()) {
      joined_[id] = AdmissionOf(*info);
      // Alive while the cluster ran: should it fail, recovery moves its regions (LeaseAgent::SawAlive).
      if (options_.lease != nullptr) options_.lease->NoteAlive(id, info->incarnation());
      MutexLock lock(&mu_);
      if (repair) ++reconnects_;
    } else {
      complete = false;  // retried (backing off)
    }
  }
  // Done (and recovery steps run) only with a lease: the configuration may already be out of date.
  return complete && holds;
}

bool MembershipFollower::Recover(const coordinator::Configuration& configuration) {
  recover_soon_ = false;
  if (!options_.recover) return true;
  auto republish_to_all = [&] {
    for (const coordinator::MemberInfo& m : configuration.members()) {
      if (m.node_id() != node_->id()) republish_to_.insert(m.node_id());
    }
  };
  RecoveryStep step = options_.recover(configuration);
  if (step.served_new) {
    // Regions served anew reach every member first; the rest of the step (copies to new backups,
    // transaction recovery) runs right after instead of before (readers need none of it).
    republish_to_all();
    Republish(configuration);
    step = options_.recover(configuration);
    if (step.served_new) republish_to_all();
  }
  Republish(configuration);
  recover_soon_ = step.soon;
  return !step.waiting && republish_to_.empty();
}

void MembershipFollower::Republish(const coordinator::Configuration& configuration) {
  for (auto it = republish_to_.begin(); it != republish_to_.end();) {
    const coordinator::MemberInfo* member = coordinator::FindMember(configuration, *it);
    if (member == nullptr) {
      it = republish_to_.erase(it);  // it left; one that joins later imports them at its join
      continue;
    }
    absl::Status republished = node_->Republish({member->node_id(), member->control_address()});
    if (!republished.ok()) {
      LogInfo("membership", "node %u cannot republish its regions to node %u yet: %s", node_->id(), *it,
              republished.ToString().c_str());
      ++it;
      continue;
    }
    it = republish_to_.erase(it);
  }
}

bool MembershipFollower::NeedsRepair(const coordinator::Configuration& configuration) const {
  if (!node_->failed_peers().empty()) return true;
  const std::vector<uint32_t> connected = node_->connected_peers();
  for (const auto& [id, admission] : joined_) {
    if (!std::binary_search(connected.begin(), connected.end(), id)) {
      // Disconnected on purpose only if it left the configuration (Apply forgets those).
      for (const coordinator::MemberInfo& m : configuration.members()) {
        if (m.node_id() == id) return true;
      }
    }
  }
  return false;
}

uint64_t MembershipFollower::passes_without_lease() const {
  MutexLock lock(&mu_);
  return passes_without_lease_;
}

uint64_t MembershipFollower::reconnects() const {
  MutexLock lock(&mu_);
  return reconnects_;
}

std::optional<uint64_t> MembershipFollower::Rejoin() {
  // The registration that the configuration no longer honours goes first (the CM may have deleted it
  // already); Join registers afresh and returns once a configuration lists this node.
  coordinator_->Leave().IgnoreError();
  absl::Status joined = coordinator_->Join(*options_.rejoin_as);
  LogInfo("membership", "node %u was not in the configuration; joined again: %s", node_->id(),
          joined.ToString().c_str());
  if (!joined.ok()) return std::nullopt;  // tried again (backing off)
  {
    MutexLock lock(&mu_);
    ++rejoins_;
  }
  // Join returned once a configuration listed this node. If a newer one removed it again already, that
  // removal is news: only the epochs before it are skipped.
  auto listing = coordinator_->GetConfiguration();
  if (!listing.ok()) return 0;
  for (const coordinator::MemberInfo& m : listing->members()) {
    if (m.node_id() == node_->id()) return listing->epoch();
  }
  return listing->epoch() - 1;
}

}  // namespace fathom::coordinator
