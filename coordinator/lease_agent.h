// LeaseAgent: a node's side of the leases (lease.h), over the node runtime rather than ZooKeeper
// sessions (which are too coarse to notice a stalled member quickly).
//
// Every member asks the configuration manager (CM) the configuration names for a lease every
// period / renewals_per_period, on the lease channel (lease_channel.h: UDP and a thread of its own) when
// both opened one, else as a kLeaseRequestMessage RPC on node thread `thread`; its lease runs from the
// moment it sent a granted request. The CM grants to members of its configuration (with their
// incarnation), holds a lease itself while it holds the election, and removes a member whose last grant is
// a period old with Coordinator::RemoveExpiredMember (conditional, only while it is the manager; the
// member's registration goes too, so it must join again). An incarnation this process saw alive (it renewed
// with this CM, it is the CM that granted this node's lease, or this node connected to it: NoteAlive)
// failed while the cluster ran: its regions go to their backups (ExpiredMember::kFailed). One it never heard from (a new CM after a whole-cluster
// restart) is removed without moving anything, so the restart finds the placement its logs were written in. A node whose own lease has lapsed must not act
// as a member: MembershipFollower (membership.h) then talks only to the CM, to get a lease again.
// A member that held a lease and whose requests the CM stopped answering (no reply for a quarter period,
// SuspicionSilence, at least twice in a row) suspects the CM (Coordinator::ReportSuspect, at most once a
// period) while its lease still runs: the CM is deposed by a majority's votes and the next candidate takes
// over without waiting for the dead CM's ZooKeeper session to expire, and grants the next lease before
// the old one lapses, so transactions that need no reconfiguration do not stall; the new CM's leases
// then decide the old one's fate.
//
//   LeaseAgent lease({.period = absl::Seconds(2)});
//   lease.InstallHandler(&node_options);                // before Node::Start: every thread answers requests
//   ASSIGN_OR_RETURN(auto node, Node::Start(node_options, std::move(fabric)));
//   ASSIGN_OR_RETURN(std::string channel, lease.OpenChannel("127.0.0.1", node->id()));  // optional
//   me.set_lease_address(channel);
//   RETURN_IF_ERROR(coordinator->Join(me));
//   RETURN_IF_ERROR(lease.Start(node.get(), coordinator.get()));
//   ...
//   lease.Stop();                                        // before the node stops; destroy after it
//
// Time comes from LeaseOptions::clock. With background = false no thread runs and the owner calls Tick()
// (tests on SimFabric with a SimulatedClock: each decision is then a function of the seed and the ticks).
#ifndef FATHOM_COORDINATOR_LEASE_AGENT_H_
#define FATHOM_COORDINATOR_LEASE_AGENT_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/coordinator.h"
#include "platform/base/clock.h"
#include "coordinator/lease.h"
#include "coordinator/lease_channel.h"
#include "platform/node/node.h"

namespace fathom::coordinator {

struct LeaseOptions {
  // How long a grant lasts. 2 s by default: on these shared 2-core machines a node thread can be held off
  // the CPU for hundreds of milliseconds under test load, and a lease must survive a few late renewals
  // (docs/formats/lease.md has the measurements). FaRM used 10 ms on dedicated cores.
  absl::Duration period = absl::Seconds(2);
  // Requests per period (so a member survives renewals_per_period - 1 lost or late ones); also how often
  // the CM looks for expired leases, twice as often. Eight, so that after a CM dies its members' votes
  // (after two unanswered requests and SuspicionSilence) depose it with time to spare before their leases
  // lapse, whatever point of their renewal cycles the death caught (docs/formats/lease.md).
  int renewals_per_period = 8;
  // A member the CM admits has this long (or the period, if longer) to renew for the first time: it joins
  // every member before it asks, which takes longer than a short lease (200 ms leases removed every
  // joining YCSB driver here).
  absl::Duration join_grace = absl::Seconds(2);
  // After this member voted a CM out (Coordinator::ReportSuspect), it confirms none of that CM's grants for
  // this long: the vote's window in ZooKeeper (ZooKeeperCoordinatorOptions::suspicion_window) and a
  // period. So a majority's votes bound the deposed CM's own lease (see Tick), whatever it still hears.
  absl::Duration vote_silence = absl::Seconds(6);
  const Clock* clock = Clock::Real();
  bool background = true;  // false: no thread; the owner calls Tick()
  int thread = 0;          // node thread that sends the requests (without a lease channel)
};

struct LeaseCounters {
  uint64_t requests = 0;          // sent by this member
  uint64_t grants_received = 0;
  uint64_t refusals_received = 0;
  uint64_t request_failures = 0;  // no answer (timeout, not connected, peer failed)
  uint64_t lapses = 0;            // this node's own lease ran out (held, then not)
  uint64_t grants = 0;            // as CM
  uint64_t refusals = 0;          // as CM: not the manager, or not a member
  uint64_t expiries = 0;          // as CM: members removed because their lease expired
  uint64_t manager_stalls = 0;    // as CM: ticks so late that every lease was renewed rather than blamed
  uint64_t suspicions = 0;        // the CM stopped answering: reported (ReportSuspect)
  uint64_t minority_ticks = 0;    // as CM: ticks with expired members but no majority heard (none removed)
};

class LeaseAgent {
 public:
  explicit LeaseAgent(LeaseOptions options);
  ~LeaseAgent();  // Stop()
  LeaseAgent(const LeaseAgent&) = delete;
  LeaseAgent& operator=(const LeaseAgent&) = delete;

  // Adds the kLeaseRequestMessage handler to options->register_handlers (keeping any handler already
  // there). Until Start, and after Stop, requests are refused (kNotManager). The agent must outlive the node.
  void InstallHandler(node::NodeOptions* options);
  // Opens the lease channel (lease_channel.h) on `host` (an IP address) and returns its address, which the
  // member publishes (MemberInfo.lease_address) before it joins. From then on this node answers lease
  // requests there, and asks a CM that published one there too; otherwise both go over the node runtime.
  // Call before Start, with background ticks (the channel waits in real time).
  absl::StatusOr<std::string> OpenChannel(const std::string& host, uint32_t node_id);
  // Subscribes to `coordinator`, reports counters through `node`, and starts the thread (if background).
  absl::Status Start(node::Node* node, coordinator::Coordinator* coordinator);
  // Stops the thread and unsubscribes; no Tick runs after it returns. Idempotent.
  void Stop();

  // One round: as CM, grants itself a lease and removes members whose lease expired; as a member, asks
  // the CM for a lease when one is due (waiting for the answer).
  void Tick();

  // Whether this node holds a lease now (by the clock).
  bool HoldsLease() const;
  // As CM: whether it grants leases now (not while it confirms its role after a gap in its ticks:
  // ManagerGapToConfirm).
  bool GrantsLeases() const;
  // Whether this node held a lease that has lapsed by now (and is not renewed). Lock-free: the commit path
  // asks it before reporting success (TxnOptions::lease_lapsed).
  bool LeaseLapsed() const;
  // How many times a lease was granted to this node while it held none (the first grant, and each after a
  // lapse). Lock-free: a commit that goes on in a later term may have been removed and admitted again
  // meanwhile (TxnOptions::lease_term).
  uint64_t term() const { return term_.load(std::memory_order_acquire); }
  // Whether this process saw `node`'s `incarnation` alive: it renewed a lease with this node as CM, granted
  // this node's last lease, or was noted alive (NoteAlive). The one witness of both removal paths: a lease
  // that expires here (ManagerTick) and a registration that vanished (Coordinator::SetFailureWitness).
  bool SawAlive(uint32_t node, uint64_t incarnation) const;
  // As CM, for a member whose ZooKeeper registration vanished (Coordinator::SetFailureWitness): nullopt
  // while that incarnation's lease here runs (LeaseTable::Holds: a grant of this CM, or the period a CM
  // that takes over gives everyone; it may still serve, and only its lapse removes it); else kFailed if
  // this process saw it alive (SawAlive), kUnseen if not. Before this node's agent ticked as CM (just
  // elected), its predecessor's grants are unknown: nullopt if this process saw it alive (its lapse here
  // removes it, a period after the takeover), kUnseen if not (a whole-cluster restart's absentee).
  std::optional<ExpiredMember> Witness(uint32_t node, uint64_t incarnation) const;
  // This process connected to `node`'s `incarnation` (MembershipFollower, at each join): it was alive while
  // the cluster ran. A member that dies together with the CM never renewed with the successor, yet its
  // regions must go to their backups (issue 58, path 3).
  void NoteAlive(uint32_t node, uint64_t incarnation);
  // The epoch of the newest configuration the agent has received (0: none yet); a member asks for a lease
  // only once one lists it.
  uint64_t configuration_epoch() const;
  absl::Time lease_expiry() const;
  // Called after a Tick in which HoldsLease changed. Set it to null before destroying what it calls.
  void SetListener(std::function<void()> listener);

  LeaseCounters counters() const;
  // lease.* counters, and lease.member.<id>.age_ms / .expires_in_ms for each member while this node is CM.
  void AddCounters(std::map<std::string, uint64_t>& out) const;
  const LeaseOptions& options() const { return options_; }

 private:
  absl::Status OnRequest(const msg::Message& message, std::string* reply);
  // A request on the lease channel: answered like OnRequest, if it comes from the address the configuration
  // lists for the node it names (nullopt: dropped).
  std::optional<std::string> OnChannelRequest(const LeaseChannel::Inbound& in);
  // The grant for a well-formed request from `node`.
  LeaseReply Answer(const LeaseRequest& request);
  void OnConfiguration(const coordinator::Configuration& config);
  void Run();
  void ManagerTick(absl::Time now);
  void MemberTick(absl::Time now);
  // One request to `manager`, waiting for the reply: on the lease channel to `channel_address` if there is
  // one, else on node thread options_.thread.
  // Waits at most `timeout` for the reply.
  absl::StatusOr<LeaseReply> Request(uint32_t manager, const std::string& channel_address, const std::string& request,
                                     absl::Duration timeout);
  // The period this node's lease runs for: its own, or the CM's if that grants a shorter one (a client
  // started with the default 2 s in a cluster of 200 ms leases renews at the cluster's pace).
  absl::Duration period() const {
    return std::min(options_.period, absl::Nanoseconds(granted_period_nanos_.load(std::memory_order_relaxed)));
  }
  absl::Duration interval() const { return period() / options_.renewals_per_period; }

  const LeaseOptions options_;
  node::Node* node_ = nullptr;
  coordinator::Coordinator* coordinator_ = nullptr;
  std::unique_ptr<coordinator::Subscription> subscription_;
  std::thread thread_;
  std::unique_ptr<LeaseChannel> channel_;  // set before Start, closed at Stop

  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool tick_now_ ABSL_GUARDED_BY(mu_) = false;  // Run ticks at once (a takeover), not at the next interval
  // Run ticks no later than this (options_.clock's time): when a deposed CM's shortened lease ends.
  absl::Time tick_by_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  std::optional<coordinator::Configuration> config_ ABSL_GUARDED_BY(mu_);
  bool is_manager_ ABSL_GUARDED_BY(mu_) = false;
  // As CM after a gap in its ticks: no grant until the coordinator confirms the role.
  bool confirming_ ABSL_GUARDED_BY(mu_) = false;
  // As CM: whether its ticks stopped for longer than ManagerGapToConfirm before `now`.
  bool TickGapLocked(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return last_tick_.has_value() && now - *last_tick_ > ManagerGapToConfirm(options_.period);
  }
  // Whether the coordinator says this node is the CM now (the ticks' is_manager_ lags by up to a tick: a
  // grant must not).
  bool ManagerNow() const ABSL_LOCKS_EXCLUDED(mu_);
  // As CM: confirms the role after a gap in the ticks (Coordinator::ConfirmManager); false if it is not
  // the CM any more.
  bool ConfirmAfterGap(absl::Time now);
  LeaseTable table_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Time> last_tick_ ABSL_GUARDED_BY(mu_);
  void SetExpiry(absl::Time expiry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Time expiry_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  static constexpr int64_t kNeverHeld = std::numeric_limits<int64_t>::min();
  std::atomic<int64_t> expiry_nanos_{kNeverHeld};  // expiry_ for LeaseLapsed, without the lock
  std::atomic<uint64_t> term_{0};
  std::atomic<int64_t> granted_period_nanos_{std::numeric_limits<int64_t>::max()};  // the last grant's period
  absl::Time next_request_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool held_ ABSL_GUARDED_BY(mu_) = false;  // HoldsLease at the end of the last Tick
  LeaseCounters counters_ ABSL_GUARDED_BY(mu_);
  uint32_t failing_ ABSL_GUARDED_BY(mu_) = 0;  // the CM the last request got no answer from (0: it got one)
  int failures_in_row_ ABSL_GUARDED_BY(mu_) = 0;  // requests to failing_ that got no answer, in a row
  absl::Time failing_since_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();  // when the first of them left
  absl::Time last_suspicion_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool SawAliveLocked(uint32_t node, uint64_t incarnation) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // kFailed if this process saw the incarnation alive, kUnseen if not.
  ExpiredMember DepartureLocked(uint32_t node, uint64_t incarnation) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return SawAliveLocked(node, incarnation) ? ExpiredMember::kFailed : ExpiredMember::kUnseen;
  }
  // As CM: (data members heard from lately, data members) of the configuration, itself counted.
  std::optional<std::pair<int, int>> HeardDataMembers(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // As CM: the newest time by which a majority of the data members, itself counted, confirmed grants it
  // made (a member still in its join grace counts as `now`); nullopt if no majority ever did.
  std::optional<absl::Time> MajorityConfirmed(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // As CM: extends its own lease to a period past MajorityConfirmed.
  void ExtendOwnLease(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // As a CM that just took over: if a majority voted its predecessor out, that one's lease is over soon
  // (LeaseTable::ExpireBy). Called without the lock (it asks ZooKeeper).
  void ShortenDeposedManager(uint32_t node, uint64_t incarnation, absl::Time now);
  absl::Time minority_logged_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // The CM (node, incarnation) that last granted this node a lease, and that grant's token (echoed as
  // LeaseRequest::confirms).
  std::pair<uint32_t, uint64_t> granted_by_ ABSL_GUARDED_BY(mu_) = {0, 0};
  std::set<std::pair<uint32_t, uint64_t>> connected_to_ ABSL_GUARDED_BY(mu_);  // NoteAlive
  uint64_t grant_token_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time granted_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();  // when that grant arrived
  // The CM this member voted out last, and until when it confirms none of its grants (vote_silence).
  std::pair<uint32_t, uint64_t> voted_against_ ABSL_GUARDED_BY(mu_) = {0, 0};
  absl::Time silent_until_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // The last CM other than this node that a configuration named (node, incarnation).
  std::pair<uint32_t, uint64_t> other_manager_ ABSL_GUARDED_BY(mu_) = {0, 0};

  absl::Mutex listener_mu_;
  std::function<void()> listener_ ABSL_GUARDED_BY(listener_mu_);
};

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_LEASE_AGENT_H_
