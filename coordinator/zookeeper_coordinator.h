// ZooKeeperCoordinator: the Coordinator on a ZooKeeper ensemble.
//
// Everything lives under /fathom/<cluster>/ (created when missing; docs/formats/configuration.md):
//   members/<node id>   ephemeral, one per joined node, holding its MemberInfo
//   election/n_<seq>    ephemeral sequential, one per joined node: the lowest is the configuration manager
//   election/x_<seq>    the same for a client-only member (MemberInfo.client_only): never the manager
//                       (CM); every other node watches its predecessor only
//   config              the framed Configuration, changed only by a write conditional on its znode version
// A member whose lease expired is removed by the CM together with its members/ znode (RemoveExpiredMember),
// so Reconcile does not add it back while its session lives: it must join again.
// The CM watches members/ and writes a new configuration (epoch + 1) when members join or leave; its
// writes are one multi-op {check that its election znode still exists, set config at the version read},
// so a CM that lost the election can never write. Every coordinator watches config and notifies its
// subscribers (on a dedicated thread, in epoch order). Update/AllocateRegion by any node are plain
// version-conditional writes, so nothing is lost between concurrent writers.
//
// ZooKeeper is reached through a ZooKeeperStore (zookeeper_store.h): the C client by default, the
// simulated ensemble in tests/sim. Threads: the store calls our event callback on its own thread; it only
// records what changed and wakes our worker thread, which makes every blocking call of the background work.
// With an executor (ZooKeeperCoordinatorOptions::executor: the replayable simulation) there is no thread of
// ours at all: the background work and the subscribers' callbacks run as the executor's task, every wait
// (Join) is the executor's RunUntil, and all time is ZooKeeperCoordinatorOptions::clock.
// Session loss: state() turns kDisconnected, the last configuration is kept, no change is made; when the
// session comes back everything is re-read; when it expired, a new session is opened and the member and
// election znodes are registered again. A corrupt config is reported by config_status() (DataLoss) and
// never applied.
//
//   ZooKeeperCoordinatorOptions options;
//   options.connect_string = "127.0.0.1:2181";
//   options.cluster = "prod";
//   ASSIGN_OR_RETURN(std::unique_ptr<ZooKeeperCoordinator> c, ZooKeeperCoordinator::Create(options));
//   RETURN_IF_ERROR(c->Join(me));  // returns once the configuration lists this node
//   auto sub = c->Subscribe([&](const Configuration& config) { node.Apply(config); });
#ifndef FATHOM_COORDINATOR_ZOOKEEPER_COORDINATOR_H_
#define FATHOM_COORDINATOR_ZOOKEEPER_COORDINATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/coordinator.h"
#include "coordinator/subscribers.h"
#include "coordinator/zookeeper_client.h"
#include "coordinator/zookeeper_store.h"
#include "platform/base/clock.h"
#include "platform/node/executor.h"

namespace fathom::coordinator {

struct ZooKeeperCoordinatorOptions {
  std::string connect_string;  // "host:port[,host:port...]"
  std::string cluster = "fathom";
  // The cluster token: the session adds the digest credentials derived from it, and the cluster's znodes
  // (/fathom/<cluster> and below) are created readable and writable by those only (zookeeper_acl.h).
  // Empty: open ACLs (tests that read the znodes with a plain client).
  std::string token;
  // Asked of the server, which clamps it to 2..20 of its ticks.
  absl::Duration session_timeout = absl::Seconds(10);
  // Create fails (Unavailable, naming connect_string) when no session is up within this.
  absl::Duration connect_timeout = absl::Seconds(10);
  absl::Duration join_timeout = absl::Seconds(30);
  // How often the worker retries background work that failed (ZooKeeper briefly unavailable).
  absl::Duration retry_interval = absl::Milliseconds(200);
  // How long the CM keeps its role after it last heard from ZooKeeper, so leases (and with them the
  // cluster) outlive a ZooKeeper outage. It must end before the server can expire the session and
  // elect another CM, with the CM's own lease on top: the server sets session_timeout - 2 lease periods.
  // Counted from when the newest request ZooKeeper answered was sent (the CM asks every retry_interval),
  // not from when the client noticed the silence (up to 2/3 of the timeout later), and shortened by as
  // much as the server cut the session timeout it was asked for.
  // Zero: the role ends with the connection.
  absl::Duration manager_hold = absl::ZeroDuration();
  // While disconnected, the handle is replaced by a fresh one on the same session this often: the C
  // client waits 2/3 of the session timeout on one connection attempt, and an attempt that reached a
  // server while it was starting waited that long here (13 s of a 20 s session) after it was up.
  absl::Duration reattach_interval = absl::Seconds(2);
  // A member's vote that the CM stopped answering counts this long (ReportSuspect): votes of a blip
  // long over do not add up with a new one. The server sets 2 lease periods (members vote once a period).
  absl::Duration suspicion_window = absl::Seconds(4);
  int max_update_attempts = 1000;
  // Where the sessions come from (not owned; must outlive the coordinator). Null: the ZooKeeper C client
  // at connect_string (CZooKeeperStore). The simulation passes its SimZooKeeperStore.
  ZooKeeperStore* store = nullptr;
  // Who this coordinator is to the store: the simulation's faults (SimZooKeeperStore::CutOff) name it. Also
  // the owner of the executor's task.
  uint32_t client = 0;
  // Every time the coordinator reads (its hold, suspicion windows, deadlines, retries).
  const Clock* clock = Clock::Real();
  // Null: a worker thread and a subscriber thread of its own. Otherwise both run as this executor's task
  // (not owned; must outlive the coordinator), on `clock`, which must be the executor's.
  node::Executor* executor = nullptr;
};

class ZooKeeperCoordinator final : public Coordinator {
 public:
  static absl::StatusOr<std::unique_ptr<ZooKeeperCoordinator>> Create(ZooKeeperCoordinatorOptions options);
  ~ZooKeeperCoordinator() override;  // Close()

  absl::Status Join(const MemberInfo& member) override;
  absl::Status Leave() override;
  absl::StatusOr<Configuration> GetConfiguration() override;
  std::unique_ptr<Subscription> Subscribe(Callback callback) override;
  // Unavailable when disconnected, or when the connection dropped during the write (the change may or
  // may not have been committed: read the configuration to know).
  absl::StatusOr<Configuration> Update(const Mutation& mutation) override;
  absl::StatusOr<RegionAllocation> AllocateRegion(uint64_t size_bytes, int replicas) override;
  // For the manager: votes against it, and once a majority of the data members voted (FaRM's probe: a
  // member cut off alone cannot), deletes its election znode (if it still belongs to the suspected
  // incarnation's session), so the next candidate takes the role; the deposed CM, if alive, sees it and
  // steps down. FailedPrecondition if this node is no data member of the configuration in ZooKeeper.
  absl::Status ReportSuspect(uint32_t node_id, absl::Duration unconfirmed_for) override;
  absl::StatusOr<std::optional<absl::Duration>> DeposedByVotes(uint32_t node_id, uint64_t incarnation) override;
  // One multi-op: {my election znode still exists, delete members/<id> if it holds `incarnation`, set
  // config at the version read}; retried when the configuration changed meanwhile.
  absl::Status RemoveExpiredMember(uint32_t node_id, uint64_t incarnation,
                                   ExpiredMember expired = ExpiredMember::kUnseen) override;
  void SetFailureWitness(FailureWitness witness) override;
  CoordinatorState state() const override;
  // Also while disconnected, for options.manager_hold after the connection went (the session may live).
  bool is_manager() const override;
  // Exists on this node's election znode: OK (and contact noted) if it is there and this node leads.
  absl::Status ConfirmManager() override;

  // Ends the session at once (this node's ephemeral znodes go away, as when the process dies) and stops
  // the worker. Idempotent. Subscriptions must still be destroyed before the coordinator.
  void Close();
  // OK, or why the last read of /config failed (DataLoss for a corrupt one).
  absl::Status config_status() const;
  // ZooKeeper sessions that expired under this coordinator (each one was replaced).
  int session_expirations() const;
  // Handles replaced while disconnected, on the same session (reattach_interval).
  int reattaches() const;
  // "/fathom/<cluster>".
  const std::string& root() const { return root_; }
  // Makes the server expire this coordinator's session (another client takes it over and closes it),
  // and returns once this coordinator saw it expire.
  absl::Status ExpireSessionForTesting();

 private:
  class HandleLease;

  explicit ZooKeeperCoordinator(ZooKeeperCoordinatorOptions options);
  // An event of the session opened as `generation` (older ones are ignored).
  void OnEvent(uint64_t generation, const ZooKeeperStore::Event& event) ABSL_LOCKS_EXCLUDED(mu_);
  // A new session, connected within `connect_timeout`; `resume`: an existing session's resume token (it
  // keeps its ephemeral znodes) if not empty.
  absl::Status Open(const std::string& resume, absl::Duration connect_timeout) ABSL_LOCKS_EXCLUDED(mu_);
  // As CM: asks ZooKeeper whether its election znode still exists, so contact_at_ stays recent.
  void ProbeContact(ZooKeeperStore::Session* zk);
  // Whether this node's election znode `election` is still there: OK (contact noted), or
  // FailedPrecondition once it is gone (the role ends at once, not when the watch event comes).
  absl::Status CheckElection(ZooKeeperStore::Session* zk, const std::string& election) ABSL_LOCKS_EXCLUDED(mu_);
  // A request sent at `sent` was answered on the current session.
  void NoteContact(absl::Time sent) ABSL_LOCKS_EXCLUDED(mu_);
  // Until when the CM keeps its role (options_.manager_hold > 0).
  absl::Time RoleEndsLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What the background work does next.
  enum class Job { kNone, kReopen, kReattach, kStep };
  // The job due now, or kNone and when to look again (`recheck`).
  Job NextJobLocked(absl::Time now, absl::Time* recheck) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Does `job` on `zk` (the session when it was chosen).
  void RunJob(Job job, ZooKeeperStore::Session* zk) ABSL_LOCKS_EXCLUDED(mu_);
  // The worker thread: jobs as they come due, waiting on cv_ meanwhile.
  void Run();
  // The executor's task: the job due now, if any, and the subscribers' callbacks.
  size_t Task();
  // Waits until `done` (called under mu_) holds, or `timeout` passed on the clock: on cv_, or with an
  // executor in its RunUntil (mu_ released meanwhile, so the task can run). Returns done().
  bool AwaitLocked(const std::function<bool()>& done, absl::Duration timeout) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One round of background work; false if something failed (retried after retry_interval).
  bool Step(ZooKeeperStore::Session* zk);
  void Reopen();
  // Disconnected for reattach_interval: a new handle on the same session (Open(session)).
  void Reattach();
  absl::Status EnsurePaths(ZooKeeperStore::Session* zk);
  absl::Status Register(ZooKeeperStore::Session* zk);
  absl::Status Elect(ZooKeeperStore::Session* zk);
  absl::Status ReadConfig(ZooKeeperStore::Session* zk);
  absl::Status Reconcile(ZooKeeperStore::Session* zk);
  absl::Status DeposeManager(uint32_t node_id, uint64_t incarnation, absl::Duration unconfirmed_for);
  // Records this member's vote against the CM; true once a majority of the data members voted.
  absl::StatusOr<bool> VoteAgainstManager(ZooKeeperStore::Session* zk, uint32_t node_id, uint64_t incarnation,
                                          absl::Duration unconfirmed_for);
  // One vote in suspicions/<cm>-<incarnation> (ZooKeeper's clock, ms): when it was cast (its mtime), and
  // by when, at latest, its voter accepted the last grant it confirmed (mtime minus the silence it states).
  struct Vote {
    int64_t cast_ms = 0;
    int64_t confirmed_until_ms = 0;
  };
  // The votes in `dir` by data members of `config` but `node_id`, at most the suspicion window older than
  // `now_ms`; earliest cast first.
  absl::StatusOr<std::vector<Vote>> Votes(ZooKeeperStore::Session* zk, const std::string& dir, const Configuration& config,
                                          uint32_t node_id, int64_t now_ms);
  // Reads and decodes /config: nullopt when it does not exist yet; `version` gets the znode version.
  absl::StatusOr<std::optional<Configuration>> FetchConfig(ZooKeeperStore::Session* zk, int* version, bool watch);
  void Accept(const Configuration& config) ABSL_LOCKS_EXCLUDED(mu_);
  void Wake() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ZooKeeperCoordinatorOptions options_;
  const ClusterZnodes znodes_;
  const std::string root_;  // znodes_.root
  std::unique_ptr<ZooKeeperStore> owned_store_;  // when options_.store is null
  ZooKeeperStore* store_ = nullptr;
  SubscriberList subscribers_;

  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  std::unique_ptr<ZooKeeperStore::Session> session_ ABSL_GUARDED_BY(mu_);
  int leases_ ABSL_GUARDED_BY(mu_) = 0;  // API calls using session_ right now
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;  // of the session opened last
  uint64_t lost_generation_ ABSL_GUARDED_BY(mu_) = 0;  // the last generation that lost its connection
  int64_t session_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::string resume_ ABSL_GUARDED_BY(mu_);  // the live session's resume token (kept while reattaching)
  bool connected_ ABSL_GUARDED_BY(mu_) = false;
  // When the newest request the server answered on this session was sent: the server heard from the
  // session no earlier, so it cannot expire it before contact_at_ + the negotiated timeout.
  absl::Time contact_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // The session timeout the server granted (it clamps what options_.session_timeout asks).
  absl::Duration negotiated_timeout_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  absl::Time attempt_started_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();  // the current handle's connecting
  bool expired_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  int expirations_ ABSL_GUARDED_BY(mu_) = 0;
  int reattaches_ ABSL_GUARDED_BY(mu_) = 0;
  // Background work still to do (set by watches and reconnection, cleared when done).
  bool paths_ready_ ABSL_GUARDED_BY(mu_) = false;
  bool config_dirty_ ABSL_GUARDED_BY(mu_) = true;
  bool election_dirty_ ABSL_GUARDED_BY(mu_) = false;
  bool reconcile_dirty_ ABSL_GUARDED_BY(mu_) = false;
  // No step before this (the last one failed), and one at least by next_step_at_ (the CM's ProbeContact).
  absl::Time backoff_until_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Time next_step_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::string last_reconcile_error_;  // the background thread's only: the last failure it printed
  FailureWitness witness_ ABSL_GUARDED_BY(mu_);
  // Membership.
  std::optional<MemberInfo> member_ ABSL_GUARDED_BY(mu_);  // set between Join and Leave
  bool registered_ ABSL_GUARDED_BY(mu_) = false;
  bool join_pending_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status join_error_ ABSL_GUARDED_BY(mu_);
  std::string election_node_ ABSL_GUARDED_BY(mu_);  // "n_0000000007", or empty
  bool is_manager_ ABSL_GUARDED_BY(mu_) = false;
  // The newest configuration seen and the status of the last read.
  std::optional<Configuration> config_ ABSL_GUARDED_BY(mu_);
  absl::Status config_status_ ABSL_GUARDED_BY(mu_);

  std::thread worker_;
  uint64_t task_ = 0;  // with an executor
};

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_ZOOKEEPER_COORDINATOR_H_
