#include "coordinator/lease_agent.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>

#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"
#include "platform/base/log.h"

namespace fathom::coordinator {
namespace {

bool Listed(const std::optional<coordinator::Configuration>& config, const node::Node& node) {
  if (!config.has_value()) return false;
  const coordinator::MemberInfo* me = coordinator::FindMember(*config, node.id());
  return me != nullptr && me->incarnation() == node.incarnation();
}

uint64_t Millis(absl::Duration d) { return d <= absl::ZeroDuration() ? 0 : absl::ToInt64Milliseconds(d); }

}  // namespace

LeaseAgent::LeaseAgent(LeaseOptions options) : options_(options), table_(options.period, options.join_grace) {}

LeaseAgent::~LeaseAgent() {
  Stop();
  channel_.reset();  // before the members its thread's handler uses
}

void LeaseAgent::InstallHandler(node::NodeOptions* options) {
  options->register_handlers = [this, user = std::move(options->register_handlers)](msg::Messenger& messenger,
                                                                                      int thread) {
    messenger
        .Register(kLeaseRequestMessage,
                  [this](const msg::Message& message, std::string* reply) { return OnRequest(message, reply); })
        .IgnoreError();
    if (user) user(messenger, thread);
  };
}

absl::StatusOr<std::string> LeaseAgent::OpenChannel(const std::string& host, uint32_t node_id) {
  if (!options_.background) return absl::FailedPreconditionError("a lease channel needs background ticks");
  if (channel_ != nullptr) return absl::FailedPreconditionError("lease channel already open");
  auto channel = LeaseChannel::Open(host, node_id, [this](const LeaseChannel::Inbound& in) { return OnChannelRequest(in); });
  if (!channel.ok()) return channel.status();
  channel_ = std::move(*channel);
  return channel_->address();
}

absl::Status LeaseAgent::Start(node::Node* node, coordinator::Coordinator* coordinator) {
  if (options_.period <= absl::ZeroDuration() || options_.renewals_per_period < 2) {
    return absl::InvalidArgumentError("a lease needs a positive period and at least 2 renewals per period");
  }
  {
    MutexLock lock(&mu_);
    if (started_) return absl::FailedPreconditionError("lease agent already started");
  }
  node_ = node;
  coordinator_ = coordinator;
  subscription_ = coordinator->Subscribe([this](const coordinator::Configuration& c) { OnConfiguration(c); });
  node->AddCounterSource([this](std::map<std::string, uint64_t>& out) { AddCounters(out); });
  {
    MutexLock lock(&mu_);
    started_ = true;
  }
  if (options_.background) thread_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

void LeaseAgent::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    cv_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
  subscription_.reset();  // the channel stays until destruction (counters read it) but grants nothing now
}

void LeaseAgent::Run() {
  while (true) {
    Tick();
    MutexLock lock(&mu_);
    // Twice per renewal interval: the CM notices an expiry at most interval / 2 late (a deposed CM's
    // shortened lease on time: tick_by_ stays until a tick ran at or after it).
    if (last_tick_.has_value() && *last_tick_ >= tick_by_) tick_by_ = absl::InfiniteFuture();
    const absl::Duration to_deadline = tick_by_ - options_.clock->Now();
    const absl::Time until = absl::Now() + std::clamp(to_deadline, absl::ZeroDuration(), interval() / 2);
    while (!stopping_ && !tick_now_) {
      if (WaitWithDeadline(&cv_, &mu_, until)) break;
    }
    tick_now_ = false;
    if (stopping_) return;
  }
}

void LeaseAgent::SetListener(std::function<void()> listener) {
  MutexLock lock(&listener_mu_);
  listener_ = std::move(listener);
}

void LeaseAgent::OnConfiguration(const coordinator::Configuration& config) {
  MutexLock lock(&mu_);
  if (config_.has_value() && config.epoch() <= config_->epoch()) return;
  const uint32_t previous_manager = config_.has_value() ? config_->manager_id() : 0;
  config_ = config;
  if (config.manager_id() != 0 && config.manager_id() != node_->id()) {
    if (const MemberInfo* m = FindMember(config, config.manager_id()); m != nullptr) {
      other_manager_ = {m->node_id(), m->incarnation()};
    }
    // A new CM: ask it at once rather than at the next interval, so its grant comes before the lease
    // the old one gave runs out (a CM failure then stalls no transaction here).
    if (config.manager_id() != previous_manager && previous_manager != 0) {
      next_request_ = absl::InfinitePast();
      tick_now_ = true;
      cv_.SignalAll();
    }
  }
  if (is_manager_) table_.SetMembers(config, node_->id(), options_.clock->Now());
  // A configuration naming this node CM while it does not act as one yet: it just took over, and the
  // sooner it ticks, the sooner a CM voted out is removed (ShortenDeposedManager).
  if (config.manager_id() == node_->id() && !is_manager_) {
    tick_now_ = true;
    cv_.SignalAll();
  }
}

bool LeaseAgent::ConfirmAfterGap(absl::Time now) {
  {
    MutexLock lock(&mu_);
    if (!is_manager_) return true;  // taking over: the election just confirmed it
    if (TickGapLocked(now)) {
      if (!confirming_) {
        LogWarning("lease", "node %u (CM) did not tick for %s: it grants no lease until ZooKeeper confirms its role",
                   node_->id(), absl::FormatDuration(now - *last_tick_).c_str());
      }
      confirming_ = true;
    }
    if (!confirming_) return true;
  }
  const absl::Status confirmed = coordinator_->ConfirmManager();
  MutexLock lock(&mu_);
  if (confirmed.ok()) {
    confirming_ = false;
    LogInfo("lease", "node %u is still the CM: it grants leases again", node_->id());
    return true;
  }
  if (absl::IsFailedPrecondition(confirmed)) {
    confirming_ = false;
    LogWarning("lease", "node %u is no longer the CM: %s", node_->id(), std::string(confirmed.message()).c_str());
    return false;
  }
  return true;  // not known yet (ZooKeeper unreachable): still no grant; asked again next tick
}

void LeaseAgent::Tick() {
  const absl::Time now = options_.clock->Now();
  bool manager = coordinator_ != nullptr && coordinator_->is_manager();
  if (manager) manager = ConfirmAfterGap(now);
  std::optional<std::pair<uint32_t, uint64_t>> predecessor;  // the CM this node just took over from
  {
    MutexLock lock(&mu_);
    if (!started_ || stopping_) return;
    // A tick this late means this node itself did not run (stopped, starved): as CM it could not hear
    // renewals meanwhile, so it blames no member for the gap.
    const bool stalled = last_tick_.has_value() && now - *last_tick_ > options_.period / 2;
    last_tick_ = now;
    if (manager && !is_manager_) {
      if (config_.has_value()) table_.SetMembers(*config_, node_->id(), now);
      table_.RenewAll(now);  // a new CM gives everyone a full period: their grants came from the old one
      // The new CM may have named itself in a configuration already: its predecessor is the last other
      // CM a configuration named.
      if (other_manager_.first != 0) predecessor = other_manager_;
    } else if (manager && stalled) {
      table_.RenewAll(now);
      ++counters_.manager_stalls;
    }
    if (!manager) table_.Clear();
    is_manager_ = manager;
  }
  if (predecessor.has_value()) ShortenDeposedManager(predecessor->first, predecessor->second, now);
  if (manager) {
    ManagerTick(now);
  } else {
    MemberTick(now);
  }
  bool changed;
  {
    MutexLock lock(&mu_);
    const bool holds = options_.clock->Now() < expiry_;
    if (held_ && !holds) {
      ++counters_.lapses;
      // An operator's (and fault_run's) record of a stall: this node serves no GET or commit until it holds
      // a lease again.
      LogWarning("lease", "node %u's lease lapsed (granted by node %u)", node_->id(), granted_by_.first);
    } else if (!held_ && holds && counters_.lapses > 0) {
      LogInfo("lease", "node %u holds a lease again (granted by node %u)", node_->id(), granted_by_.first);
    }
    changed = holds != held_;
    held_ = holds;
  }
  if (changed) {
    MutexLock lock(&listener_mu_);
    if (listener_) listener_();
  }
}

void LeaseAgent::ManagerTick(absl::Time now) {
  std::vector<std::pair<uint32_t, uint64_t>> expired;
  std::map<uint32_t, absl::Duration> ages;
  std::map<uint32_t, ExpiredMember> seen;
  {
    MutexLock lock(&mu_);
    expired = table_.Expired(now);
    // FaRM's rule for a partition: the CM acts only while it hears a majority of the data members (itself
    // counted, HeardDataMembers). Its own lease needs it, so a CM cut off in a minority lapses like any member there (its
    // commits and reads then fail instead of being stale), and it removes no one: the majority deposes
    // it instead (ZooKeeperCoordinator::ReportSuspect), and a minority never reconfigures.
    const std::optional<std::pair<int, int>> heard = HeardDataMembers(now);
    const bool majority = heard.has_value() && 2 * heard->first > heard->second;
    // Its own lease runs a period from the grants a majority confirmed they received, not from when it
    // heard them: a member's lease ends at most a renewal interval after the grant it confirmed, so once
    // a majority voted it out and went silent (vote_silence), this lease ends at most that long after the
    // last vote, and its successor need not wait a full period (ShortenDeposedManager).
    ExtendOwnLease(now);
    if (!majority && !expired.empty()) {
      if (heard.has_value() && now - minority_logged_ >= options_.period) {
        minority_logged_ = now;
        LogWarning("lease", "CM %u hears %d of %d data members, no majority: it removes no one", node_->id(),
                  heard->first, heard->second);
      }
      ++counters_.minority_ticks;
      expired.clear();
    }
    for (const auto& [id, incarnation] : expired) {
      ages[id] = now - table_.entries().at(id).last_renewal;
      // Seen alive by this process (a lease, or a connection: a member that died with the old CM never
      // renewed here): a failure recovery handles. Otherwise it may have died before this process started
      // (a whole-cluster restart), and its replicas stay where the logs put them.
      seen[id] = DepartureLocked(id, incarnation);
    }
  }
  for (const auto& [id, incarnation] : expired) {
    absl::Status removed = coordinator_->RemoveExpiredMember(id, incarnation, seen[id]);
    MutexLock lock(&mu_);
    if (removed.ok()) {
      ++counters_.expiries;
      LogWarning("lease", "node %u removed node %u: no renewal for %s (lease %s)%s", node_->id(), id,
              absl::FormatDuration(ages[id]).c_str(), absl::FormatDuration(options_.period).c_str(),
              seen[id] == ExpiredMember::kFailed ? "; its regions go to their backups" : "");
    } else {
      LogWarning("lease", "node %u could not remove node %u: %s", node_->id(), id, removed.ToString().c_str());
    }
    // Gone either way (removed, or not a member any more); a failed removal is retried once the
    // configuration lists it again (SetMembers).
    if (removed.ok() || absl::IsNotFound(removed)) table_.Forget(id);
  }
}

// Heard: renewed within half a period (members renew 4 times a period), or still in its join grace. A
// lease not expired yet is no sign of contact: one side of a partition lapses a little before the other,
// and a CM that counted those would remove the first member to lapse while it hears nobody.
std::optional<std::pair<int, int>> LeaseAgent::HeardDataMembers(absl::Time now) const {
  if (!config_.has_value()) return std::nullopt;
  int data = 0, heard = 0;
  for (const coordinator::MemberInfo& m : config_->members()) {
    if (m.client_only()) continue;
    ++data;
    auto entry = table_.entries().find(m.node_id());
    const bool recent = entry != table_.entries().end() &&
                        (entry->second.joining || now - entry->second.last_renewal < options_.period / 2);
    if (m.node_id() == node_->id() || recent) ++heard;
  }
  return std::make_pair(heard, data);
}

void LeaseAgent::ExtendOwnLease(absl::Time now) {
  if (!Listed(config_, *node_)) return;
  if (const std::optional<absl::Time> confirmed = MajorityConfirmed(now); confirmed.has_value()) {
    SetExpiry(std::max(expiry_, *confirmed + options_.period));
  }
}

std::optional<absl::Time> LeaseAgent::MajorityConfirmed(absl::Time now) const {
  if (!config_.has_value()) return std::nullopt;
  std::vector<absl::Time> others;  // each other data member's newest confirmed grant
  int data = 0;
  for (const coordinator::MemberInfo& m : config_->members()) {
    if (m.client_only()) continue;
    ++data;
    if (m.node_id() == node_->id()) continue;
    auto entry = table_.entries().find(m.node_id());
    if (entry == table_.entries().end()) continue;
    others.push_back(entry->second.joining ? now : std::min(entry->second.confirmed, now));
  }
  const size_t needed = static_cast<size_t>(data / 2);  // others, with itself a majority
  if (needed == 0) return now;
  if (others.size() < needed) return std::nullopt;
  std::nth_element(others.begin(), others.begin() + (needed - 1), others.end(), std::greater<absl::Time>());
  const absl::Time confirmed = others[needed - 1];
  if (confirmed == absl::InfinitePast()) return std::nullopt;
  return confirmed;
}

void LeaseAgent::ShortenDeposedManager(uint32_t node, uint64_t incarnation, absl::Time now) {
  absl::StatusOr<std::optional<absl::Duration>> grants_ago = coordinator_->DeposedByVotes(node, incarnation);
  const absl::Time answered = options_.clock->Now();
  if (!grants_ago.ok() || !grants_ago->has_value()) return;  // its session ended, or unknown: the full period
  // Each voter states how long it had confirmed none of the old CM's grants when it voted (it confirms
  // none after its vote either: vote_silence). The old CM's own lease runs a period past grants a
  // majority confirmed, and that majority meets the voters; so it ends at most a period after the latest
  // grant the best majority of voters may have confirmed, which ZooKeeper puts `grants_ago` before it
  // answered. The margin covers clock rates and ZooKeeper's milliseconds (a sixteenth: 125 ms at 2 s).
  const absl::Duration left = std::max(absl::ZeroDuration(), options_.period - **grants_ago);
  const absl::Time expires = answered + left + options_.period / 16;
  MutexLock lock(&mu_);
  table_.ExpireBy(node, incarnation, expires);
  tick_by_ = std::min(tick_by_, expires + absl::Milliseconds(1));
  LogWarning("lease", "node %u took over from node %u, which a majority voted out; the last grant its lease may "
            "rest on was made %s before ZooKeeper answered (in %s): it is removed in %s unless it renews",
            node_->id(), node, absl::FormatDuration(**grants_ago).c_str(), absl::FormatDuration(answered - now).c_str(),
            absl::FormatDuration(expires - answered).c_str());
}

absl::StatusOr<LeaseReply> LeaseAgent::Request(uint32_t manager, const std::string& channel_address,
                                                const std::string& request, absl::Duration timeout) {
  if (channel_ != nullptr && !channel_address.empty()) {
    absl::StatusOr<std::string> reply = channel_->Call(channel_address, manager, request, timeout);
    if (!reply.ok()) return reply.status();
    return DecodeLeaseReply(*reply);
  }
  // Like Node::Call, but no absl::Status made on the node thread reaches this one: only strings do.
  // (A Status's shared message is reference-counted partly inside Debian's Abseil, which TSan cannot see,
  // so handing one between threads reads as a race.)
  struct Outcome {
    bool ok = false;
    std::string bytes;  // the reply, or why there is none
  };
  auto thread = node_->Thread(options_.thread);
  if (!thread.ok()) return thread.status();
  node::NodeThread* t = *thread;
  absl::StatusOr<Outcome> outcome = t->StartAndWait<Outcome>(
      [t, manager, request, timeout](std::function<void(absl::StatusOr<Outcome>)> done) {
        absl::Status posted = t->messenger().Call(manager, kLeaseRequestMessage, request, timeout,
                                                  [done](absl::StatusOr<std::string_view> r) {
                                                    done(Outcome{r.ok(), r.ok() ? std::string(*r) : r.status().ToString()});
                                                  });
        if (!posted.ok()) done(Outcome{false, posted.ToString()});
      },
      timeout + absl::Seconds(1));
  if (!outcome.ok()) return outcome.status();
  if (!outcome->ok) return absl::UnavailableError(outcome->bytes);
  return DecodeLeaseReply(outcome->bytes);
}

bool LeaseAgent::SawAlive(uint32_t node, uint64_t incarnation) const {
  MutexLock lock(&mu_);
  return SawAliveLocked(node, incarnation);
}

std::optional<ExpiredMember> LeaseAgent::Witness(uint32_t node, uint64_t incarnation) const {
  MutexLock lock(&mu_);
  // Not ticked as CM yet (just elected): the lease table is not this CM's, and a member seen alive may
  // still hold its predecessor's grant (a CM voted out goes before its grants end). Only a lapse here
  // removes it, a period after this agent takes over (RenewAll).
  if (!is_manager_) return SawAliveLocked(node, incarnation) ? std::nullopt : std::optional(ExpiredMember::kUnseen);
  if (table_.Holds(node, incarnation, options_.clock->Now())) return std::nullopt;
  return DepartureLocked(node, incarnation);
}

void LeaseAgent::NoteAlive(uint32_t node, uint64_t incarnation) {
  MutexLock lock(&mu_);
  connected_to_.insert({node, incarnation});
}

bool LeaseAgent::SawAliveLocked(uint32_t node, uint64_t incarnation) const {
  if (granted_by_ == std::make_pair(node, incarnation)) return true;
  if (connected_to_.contains({node, incarnation})) return true;
  auto it = table_.entries().find(node);
  return it != table_.entries().end() && it->second.incarnation == incarnation && it->second.renewals > 0;
}

void LeaseAgent::MemberTick(absl::Time now) {
  uint32_t manager;
  uint64_t manager_incarnation = 0;
  std::string manager_channel;
  LeaseRequest request;
  absl::Duration timeout = interval();
  {
    MutexLock lock(&mu_);
    if (!Listed(config_, *node_)) return;  // nothing to renew: MembershipFollower joins again
    manager = config_->manager_id();
    if (manager == 0 || manager == node_->id() || now < next_request_) return;
    if (const MemberInfo* m = FindMember(*config_, manager); m != nullptr) {
      manager_incarnation = m->incarnation();
      manager_channel = m->lease_address();
    }
    next_request_ = now + interval();
    request.node_id = node_->id();
    request.incarnation = node_->incarnation();
    request.epoch = config_->epoch();
    const std::pair<uint32_t, uint64_t> asked = {manager, manager_incarnation};
    if (granted_by_ == asked && !(voted_against_ == asked && now < silent_until_)) request.confirms = grant_token_;
    ++counters_.requests;
    // A request that would outlive the lease gives up when the lease ends.
    if (expiry_ > now) timeout = std::clamp(expiry_ - now, absl::Milliseconds(1), interval());
    // Once this member voted the CM out, a request to it waits little: the thread must be free to ask the
    // successor as soon as a configuration names one (OnConfiguration), before this lease runs out.
    if (voted_against_ == asked && now < silent_until_) timeout = std::min(timeout, interval() / 4);
  }
  // `now` is when the request left: the lease runs from here, before the CM's view of it begins.
  absl::StatusOr<LeaseReply> reply = Request(manager, manager_channel, EncodeLeaseRequest(request), timeout);
  if (!reply.ok()) {
    absl::Duration silent;
    absl::Duration unconfirmed_for;
    {
      MutexLock lock(&mu_);
      ++counters_.request_failures;
      // Logged once per run of failures to one CM, so a dead CM does not flood the log.
      if (failing_ != manager) {
        LogWarning("lease", "node %u asking node %u for a lease: %s", node_->id(), manager,
                reply.status().ToString().c_str());
        failures_in_row_ = 0;
        failing_since_ = now;
      }
      failing_ = manager;
      ++failures_in_row_;
      // Silent since the first unanswered request left, counted until this one failed.
      silent = options_.clock->Now() - failing_since_;
      if (failures_in_row_ < 2 || silent < SuspicionSilence(period()) || now - last_suspicion_ < period()) return;
      // Only a member that held a lease: a node still joining may not be connected to the CM yet. It
      // votes while its lease still runs, so that a successor can grant the next one before it lapses
      // (the old CM's grants it confirmed all came before failing_since_: ShortenDeposedManager).
      if (expiry_ == absl::InfinitePast() || stopping_) return;
      last_suspicion_ = now;
      ++counters_.suspicions;
      // From the vote on, none of this CM's grants is confirmed (vote_silence): see ShortenDeposedManager.
      voted_against_ = {manager, manager_incarnation};
      silent_until_ = now + options_.vote_silence;
      // Every grant of this CM it confirmed (echoed) was made before the last one arrived.
      unconfirmed_for = granted_by_ == voted_against_ ? options_.clock->Now() - granted_at_ : absl::InfiniteDuration();
    }
    LogWarning("lease", "node %u suspects the CM (node %u): no answer for %s", node_->id(), manager,
            absl::FormatDuration(silent).c_str());
    if (absl::Status s = coordinator_->ReportSuspect(manager, unconfirmed_for); !s.ok()) {
      LogWarning("lease", "node %u reporting the CM (node %u): %s", node_->id(), manager, s.ToString().c_str());
    }
    return;
  }
  MutexLock lock(&mu_);
  failing_ = 0;
  if (reply->verdict == LeaseVerdict::kGranted) {
    ++counters_.grants_received;
    const std::pair<uint32_t, uint64_t> from = {manager, manager_incarnation};
    const bool first_from_this_cm = granted_by_ != from;
    granted_by_ = from;
    grant_token_ = reply->grant;
    granted_at_ = options_.clock->Now();
    // Renewals follow the CM's pace (period()); at most every 250 us, whatever a CM says.
    granted_period_nanos_.store(absl::ToInt64Nanoseconds(std::max(reply->period, absl::Milliseconds(1))),
                                std::memory_order_relaxed);
    next_request_ = std::min(next_request_, now + interval());  // the first grant may have shortened it
    // A CM's first grant is confirmed at once: one that just took over holds its own lease only once a
    // majority confirmed a grant of its (ExtendOwnLease), and serves nothing until then.
    if (first_from_this_cm) {
      next_request_ = absl::InfinitePast();
      tick_now_ = true;
    }
    SetExpiry(std::max(expiry_, now + period()));
  } else {
    ++counters_.refusals_received;
    if (counters_.refusals_received % 16 == 1) {  // a CM that keeps refusing (not the manager yet, not a member)
      LogWarning("lease", "node %u asking node %u for a lease: refused (%s)", node_->id(), manager,
              reply->verdict == LeaseVerdict::kNotManager ? "not the manager" : "not a member");
    }
  }
}

absl::Status LeaseAgent::OnRequest(const msg::Message& message, std::string* reply) {
  if (reply == nullptr) return absl::InvalidArgumentError("lease request sent one-way");
  absl::StatusOr<LeaseRequest> request = DecodeLeaseRequest(message.payload);
  if (!request.ok()) return request.status();
  if (request->node_id != message.peer) {
    return absl::InvalidArgumentError(
        absl::StrCat("lease request for node ", request->node_id, " sent by node ", message.peer));
  }
  *reply = EncodeLeaseReply(Answer(*request));
  return absl::OkStatus();
}

std::optional<std::string> LeaseAgent::OnChannelRequest(const LeaseChannel::Inbound& in) {
  absl::StatusOr<LeaseRequest> request = DecodeLeaseRequest(in.payload);
  if (!request.ok() || request->node_id != in.sender) return std::nullopt;
  {
    MutexLock lock(&mu_);
    if (config_.has_value() && !LeaseSourceMatches(*config_, request->node_id, in.source)) return std::nullopt;
  }
  return EncodeLeaseReply(Answer(*request));
}

LeaseReply LeaseAgent::Answer(const LeaseRequest& request) {
  LeaseReply answer;
  answer.period = options_.period;
  const absl::Time now = options_.clock->Now();
  const bool manager_now = ManagerNow();
  MutexLock lock(&mu_);
  answer.epoch = config_.has_value() ? config_->epoch() : 0;
  if (!started_ || stopping_ || !is_manager_ || !manager_now || confirming_ || TickGapLocked(now)) {
    answer.verdict = LeaseVerdict::kNotManager;
  } else {
    answer.verdict = table_.Renew(request.node_id, request.incarnation, now);
    // The token is this CM's clock at the grant; one echoed back says when a grant the member received
    // was made (never later than now, whatever the member sends).
    if (request.confirms != 0) {
      const absl::Time granted = absl::FromUnixNanos(static_cast<int64_t>(std::min<uint64_t>(request.confirms, INT64_MAX)));
      table_.Confirm(request.node_id, request.incarnation, std::min(granted, now));
      ExtendOwnLease(now);  // at once: a CM that just took over holds none until a majority confirms
    }
  }
  if (answer.verdict == LeaseVerdict::kGranted) {
    answer.grant = static_cast<uint64_t>(std::max<int64_t>(1, absl::ToUnixNanos(now)));
    ++counters_.grants;
  } else {
    ++counters_.refusals;
  }
  return answer;
}

uint64_t LeaseAgent::configuration_epoch() const {
  MutexLock lock(&mu_);
  return config_.has_value() ? config_->epoch() : 0;
}

bool LeaseAgent::ManagerNow() const {
  Coordinator* coordinator;
  {
    MutexLock lock(&mu_);
    coordinator = started_ ? coordinator_ : nullptr;
  }
  // Outside mu_: the coordinator calls Witness under its own lock.
  return coordinator != nullptr && coordinator->is_manager();
}

bool LeaseAgent::GrantsLeases() const {
  const bool manager_now = ManagerNow();
  MutexLock lock(&mu_);
  return started_ && !stopping_ && is_manager_ && manager_now && !confirming_ && !TickGapLocked(options_.clock->Now());
}

bool LeaseAgent::HoldsLease() const {
  MutexLock lock(&mu_);
  return options_.clock->Now() < expiry_;
}

void LeaseAgent::SetExpiry(absl::Time expiry) {
  if (options_.clock->Now() >= expiry_ && expiry > options_.clock->Now()) term_.fetch_add(1, std::memory_order_acq_rel);
  expiry_ = expiry;
  expiry_nanos_.store(absl::ToUnixNanos(expiry), std::memory_order_release);
}

bool LeaseAgent::LeaseLapsed() const {
  const int64_t expiry = expiry_nanos_.load(std::memory_order_acquire);
  return expiry != kNeverHeld && absl::ToUnixNanos(options_.clock->Now()) >= expiry;
}

absl::Time LeaseAgent::lease_expiry() const {
  MutexLock lock(&mu_);
  return expiry_;
}

LeaseCounters LeaseAgent::counters() const {
  MutexLock lock(&mu_);
  return counters_;
}

void LeaseAgent::AddCounters(std::map<std::string, uint64_t>& out) const {
  const absl::Time now = options_.clock->Now();
  MutexLock lock(&mu_);
  out["lease.period_ms"] = Millis(period());
  out["lease.held"] = now < expiry_;
  out["lease.expires_in_ms"] = Millis(expiry_ - now);
  out["lease.manager"] = is_manager_;
  out["lease.requests"] = counters_.requests;
  out["lease.grants_received"] = counters_.grants_received;
  out["lease.refusals_received"] = counters_.refusals_received;
  out["lease.request_failures"] = counters_.request_failures;
  out["lease.lapses"] = counters_.lapses;
  out["lease.grants"] = counters_.grants;
  out["lease.refusals"] = counters_.refusals;
  out["lease.expiries"] = counters_.expiries;
  out["lease.manager_stalls"] = counters_.manager_stalls;
  out["lease.minority_ticks"] = counters_.minority_ticks;
  out["lease.suspicions"] = counters_.suspicions;
  if (channel_ != nullptr) {
    const LeaseChannel::Counters channel = channel_->counters();
    out["lease.channel.requests_answered"] = channel.requests_answered;
    out["lease.channel.dropped"] = channel.dropped;
    out["lease.channel.calls"] = channel.calls;
    out["lease.channel.calls_timed_out"] = channel.calls_timed_out;
  }
  if (!is_manager_) return;
  for (const auto& [id, entry] : table_.entries()) {
    const std::string prefix = absl::StrCat("lease.member.", id, ".");
    out[prefix + "age_ms"] = Millis(now - entry.last_renewal);
    out[prefix + "expires_in_ms"] = Millis(entry.last_renewal + options_.period - now);
    out[prefix + "renewals"] = entry.renewals;
  }
}

}  // namespace fathom::coordinator
