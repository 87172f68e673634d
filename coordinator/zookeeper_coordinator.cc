#include "coordinator/zookeeper_coordinator.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "coordinator/transition.h"
#include "coordinator/zookeeper_acl.h"
#include "coordinator/c_zookeeper_store.h"
#include "coordinator/zookeeper_client.h"
#include "coordinator/zookeeper_store.h"
#include "absl/time/clock.h"
#include "coordinator/admission.h"
#include "coordinator/allocation.h"
#include "platform/base/mutex.h"
#include "platform/base/log.h"

namespace fathom::coordinator {
namespace {

// Election znode name prefixes: candidates for configuration manager, and client-only members ("x" sorts
// after "n", so a client is never the lowest while any candidate is there).
constexpr char kCandidateElectionPrefix[] = "n_";
constexpr char kClientElectionPrefix[] = "x_";

// A write made conditional on this CM's election znode (the multi's first op) failed that check: the
// znode is gone (deposed, or the session ended), so this node is CM no more.
bool ElectionCheckFailed(const std::vector<absl::Status>& results) {
  return !results.empty() && (absl::IsNotFound(results[0]) || absl::IsAborted(results[0]));
}

}  // namespace

// Keeps the session from being closed and replaced while an API call uses it.
class ZooKeeperCoordinator::HandleLease {
 public:
  explicit HandleLease(ZooKeeperCoordinator* c) : c_(c) {
    MutexLock lock(&c_->mu_);
    if (c_->session_ != nullptr && c_->connected_ && !c_->closed_) {
      zk_ = c_->session_.get();
      ++c_->leases_;
    }
  }
  ~HandleLease() {
    if (zk_ == nullptr) return;
    MutexLock lock(&c_->mu_);
    if (--c_->leases_ == 0) c_->cv_.SignalAll();
  }
  ZooKeeperStore::Session* get() const { return zk_; }
  absl::Status status() const {
    return zk_ != nullptr ? absl::OkStatus()
                          : absl::UnavailableError(absl::StrCat("not connected to ZooKeeper at ",
                                                                c_->options_.connect_string));
  }

 private:
  ZooKeeperCoordinator* const c_;
  ZooKeeperStore::Session* zk_ = nullptr;
};

ZooKeeperCoordinator::ZooKeeperCoordinator(ZooKeeperCoordinatorOptions options)
    : options_(std::move(options)),
      znodes_(options_.cluster),
      root_(znodes_.root),
      subscribers_(options_.executor != nullptr ? SubscriberList::Mode::kByCaller : SubscriberList::Mode::kOwnThread) {
  if (options_.store == nullptr) {
    owned_store_ = std::make_unique<CZooKeeperStore>();
    store_ = owned_store_.get();
  } else {
    store_ = options_.store;
  }
}

absl::StatusOr<std::unique_ptr<ZooKeeperCoordinator>> ZooKeeperCoordinator::Create(
    ZooKeeperCoordinatorOptions options) {
  if (options.connect_string.empty()) return absl::InvalidArgumentError("empty ZooKeeper connect string");
  if (absl::Status valid = ValidateClusterName(options.cluster); !valid.ok()) return valid;
  std::unique_ptr<ZooKeeperCoordinator> c(new ZooKeeperCoordinator(std::move(options)));
  if (absl::Status s = c->Open("", c->options_.connect_timeout); !s.ok()) return s;
  ZooKeeperStore::Session* zk;
  {
    MutexLock lock(&c->mu_);
    zk = c->session_.get();
  }
  // A wrong token is refused at once, not retried until some timeout.
  const absl::Status paths = c->EnsurePaths(zk);
  if (absl::IsPermissionDenied(paths)) return paths;
  {
    MutexLock lock(&c->mu_);
    c->paths_ready_ = paths.ok();  // Step makes them only if this failed
  }
  c->Step(zk);  // the current configuration, before Create returns
  {
    MutexLock lock(&c->mu_);
    c->next_step_at_ = c->options_.clock->Now() + c->options_.retry_interval;
  }
  if (node::Executor* executor = c->options_.executor; executor != nullptr) {
    c->task_ = executor->AddTask(c->options_.client, [p = c.get()] { return p->Task(); });
  } else {
    c->worker_ = std::thread([p = c.get()] { p->Run(); });
  }
  return c;
}

ZooKeeperCoordinator::~ZooKeeperCoordinator() { Close(); }

void ZooKeeperCoordinator::Close() {
  std::unique_ptr<ZooKeeperStore::Session> closing;
  {
    MutexLock lock(&mu_);
    if (closed_ && session_ == nullptr) return;
    closed_ = true;
    connected_ = false;
    Wake();
  }
  if (worker_.joinable()) worker_.join();
  if (task_ != 0) options_.executor->RemoveTask(task_);  // no step starts after this
  task_ = 0;
  {
    MutexLock lock(&mu_);
    AwaitLocked([this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return leases_ == 0; }, absl::InfiniteDuration());
    closing = std::move(session_);
    ++generation_;  // ignore whatever the closing handle still reports
  }
  closing.reset();  // ends the session: its ephemerals go
}

absl::Status ZooKeeperCoordinator::Open(const std::string& resume, absl::Duration connect_timeout) {
  uint64_t generation;
  {
    MutexLock lock(&mu_);
    generation = ++generation_;
    connected_ = false;
    expired_ = false;
    attempt_started_ = options_.clock->Now();
  }
  ZooKeeperStore::SessionOptions options;
  options.connect_string = options_.connect_string;
  options.client = options_.client;
  options.timeout = options_.session_timeout;
  options.connect_timeout = connect_timeout;
  options.token = options_.token;
  options.resume = resume;
  options.on_event = [this, generation](const ZooKeeperStore::Event& event) { OnEvent(generation, event); };
  absl::StatusOr<std::unique_ptr<ZooKeeperStore::Session>> opened = store_->Open(options);
  if (!opened.ok()) return opened.status();
  MutexLock lock(&mu_);
  if (generation != generation_ || closed_) return absl::CancelledError("closed while opening a session");
  session_ = *std::move(opened);
  session_id_ = session_->id();
  resume_ = session_->resume_token();
  negotiated_timeout_ = session_->timeout();
  // Open returns connected; an event that said otherwise meanwhile stands.
  if (lost_generation_ != generation) connected_ = true;
  config_dirty_ = election_dirty_ = reconcile_dirty_ = true;
  Wake();
  return absl::OkStatus();
}

// On the store's thread: record and wake the worker; nothing else.
void ZooKeeperCoordinator::OnEvent(uint64_t generation, const ZooKeeperStore::Event& event) {
  using Kind = ZooKeeperStore::Event::Kind;
  MutexLock lock(&mu_);
  if (generation != generation_ || closed_) return;
  const std::string& path = event.path;
  if (event.kind == Kind::kConnected) {
    connected_ = true;
    // Watches may have been missed while away: look at everything again.
    config_dirty_ = election_dirty_ = reconcile_dirty_ = true;
  } else if (event.kind == Kind::kExpired) {
    connected_ = false;
    expired_ = true;
    backoff_until_ = absl::InfinitePast();  // a new session at once
    lost_generation_ = generation;
  } else if (event.kind == Kind::kDisconnected) {
    if (connected_) attempt_started_ = options_.clock->Now();
    connected_ = false;  // connecting again; the session may still come back
    lost_generation_ = generation;
  } else if (path == znodes_.config) {
    config_dirty_ = true;
  } else if (path == root_ + "/members") {
    reconcile_dirty_ = true;
  } else if (absl::StartsWith(path, root_ + "/election")) {
    election_dirty_ = true;
  } else {
    config_dirty_ = election_dirty_ = reconcile_dirty_ = true;
  }
  Wake();
}

void ZooKeeperCoordinator::Wake() { cv_.SignalAll(); }

ZooKeeperCoordinator::Job ZooKeeperCoordinator::NextJobLocked(absl::Time now, absl::Time* recheck) const {
  *recheck = now + options_.retry_interval;
  if (now < backoff_until_) {
    *recheck = backoff_until_;
    return Job::kNone;
  }
  if (expired_) return Job::kReopen;
  if (!connected_) {
    // The session may live: after a reattach interval on one connection attempt, a fresh handle.
    if (resume_.empty() || options_.reattach_interval <= absl::ZeroDuration()) return Job::kNone;
    const absl::Time stuck_at = attempt_started_ + options_.reattach_interval;
    if (now >= stuck_at) return Job::kReattach;
    *recheck = std::min(*recheck, stuck_at);
    return Job::kNone;
  }
  const bool dirty = !paths_ready_ || config_dirty_ || election_dirty_ || reconcile_dirty_ ||
                     (member_.has_value() && (!registered_ || election_node_.empty()));
  if (dirty || now >= next_step_at_) return Job::kStep;
  *recheck = next_step_at_;
  return Job::kNone;
}

void ZooKeeperCoordinator::RunJob(Job job, ZooKeeperStore::Session* zk) {
  switch (job) {
    case Job::kNone:
      return;
    case Job::kReopen:
      Reopen();
      return;
    case Job::kReattach:
      Reattach();
      return;
    case Job::kStep: {
      const bool done = Step(zk);
      MutexLock lock(&mu_);
      const absl::Time now = options_.clock->Now();
      next_step_at_ = now + options_.retry_interval;
      if (!done) backoff_until_ = now + options_.retry_interval;
      return;
    }
  }
}

void ZooKeeperCoordinator::Run() {
  while (true) {
    Job job = Job::kNone;
    ZooKeeperStore::Session* zk = nullptr;
    {
      MutexLock lock(&mu_);
      while (!closed_) {
        const absl::Time now = options_.clock->Now();
        absl::Time recheck;
        job = NextJobLocked(now, &recheck);
        if (job != Job::kNone) break;
        // Relative: the clock need not be absl's (a wake-up brings the next look anyway).
        WaitWithDeadline(&cv_, &mu_, absl::Now() + std::min(recheck - now, options_.retry_interval));
      }
      if (closed_) return;
      zk = session_.get();
    }
    RunJob(job, zk);
  }
}

size_t ZooKeeperCoordinator::Task() {
  Job job;
  ZooKeeperStore::Session* zk;
  {
    MutexLock lock(&mu_);
    if (closed_) return 0;
    absl::Time recheck;
    job = NextJobLocked(options_.clock->Now(), &recheck);
    zk = session_.get();
  }
  RunJob(job, zk);
  // After the job: a configuration it accepted reaches the subscribers in the same step.
  return (job == Job::kNone ? 0 : 1) + subscribers_.DeliverPending();
}

bool ZooKeeperCoordinator::AwaitLocked(const std::function<bool()>& done, absl::Duration timeout) {
  if (options_.executor == nullptr) {
    const absl::Time deadline = timeout == absl::InfiniteDuration() ? absl::InfiniteFuture() : absl::Now() + timeout;
    while (!done()) {
      if (WaitWithDeadline(&cv_, &mu_, deadline)) return done();
    }
    return true;
  }
  mu_.Unlock();
  options_.executor->RunUntil(
      [this, &done] {
        MutexLock lock(&mu_);
        return done();
      },
      timeout);
  mu_.Lock();
  return done();
}

// The session expired: close the handle, open a new one; the member and election znodes are made again.
void ZooKeeperCoordinator::Reopen() {
  std::unique_ptr<ZooKeeperStore::Session> old;
  {
    MutexLock lock(&mu_);
    LogWarning("coordinator", "%s: ZooKeeper session expired; opening a new one", root_.c_str());
    ++expirations_;
    AwaitLocked([this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return leases_ == 0; }, absl::InfiniteDuration());
    old = std::move(session_);
    resume_.clear();
    ++generation_;
    registered_ = false;
    election_node_.clear();
    is_manager_ = false;
    contact_at_ = absl::InfinitePast();
    paths_ready_ = false;
    config_dirty_ = true;
  }
  old.reset();
  if (absl::Status s = Open("", options_.connect_timeout); !s.ok()) {
    LogWarning("coordinator", "%s: %s", root_.c_str(), s.ToString().c_str());
    MutexLock lock(&mu_);
    expired_ = true;  // try again after a retry interval
    backoff_until_ = options_.clock->Now() + options_.retry_interval;
  }
}

// The session may still live: only the handle's connection attempt is replaced. The member and election
// znodes, the role and the configuration stay; everything is read again once connected.
void ZooKeeperCoordinator::Reattach() {
  std::unique_ptr<ZooKeeperStore::Session> old;
  std::string resume;
  {
    MutexLock lock(&mu_);
    AwaitLocked([this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return leases_ == 0; }, absl::InfiniteDuration());
    if (connected_ || expired_ || closed_ || resume_.empty()) return;
    resume = resume_;
    old = std::move(session_);
    ++generation_;  // whatever the old handle still reports is ignored
    ++reattaches_;
  }
  old.reset();  // not connected: the session is not closed
  // Waits at most a reattach interval: an attempt that hangs is replaced by the next one.
  if (absl::Status s = Open(resume, options_.reattach_interval); absl::IsNotFound(s)) {
    MutexLock lock(&mu_);
    expired_ = true;  // the session ended meanwhile: a new one (Reopen)
    Wake();
  } else if (!s.ok()) {
    LogWarning("coordinator", "%s: %s", root_.c_str(), s.ToString().c_str());
  }
}

bool ZooKeeperCoordinator::Step(ZooKeeperStore::Session* zk) {
  bool need_paths, need_register, need_elect, need_config, need_reconcile;
  {
    MutexLock lock(&mu_);
    need_paths = !paths_ready_;
    need_register = member_.has_value() && !registered_;
    need_elect = member_.has_value() && (election_node_.empty() || election_dirty_);
    need_config = config_dirty_;
    config_dirty_ = false;
    election_dirty_ = false;
  }
  ProbeContact(zk);
  auto failed = [&](const absl::Status& s, bool* flag) {
    if (s.ok()) return false;
    MutexLock lock(&mu_);
    *flag = true;
    return true;
  };
  if (need_paths) {
    absl::Status s = EnsurePaths(zk);
    MutexLock lock(&mu_);
    paths_ready_ = s.ok();
    if (!s.ok()) {
      config_dirty_ = config_dirty_ || need_config;
      return false;
    }
  }
  if (need_config && failed(ReadConfig(zk), &config_dirty_)) return false;
  if (need_register && !Register(zk).ok()) return false;
  if (need_elect && failed(Elect(zk), &election_dirty_)) return false;
  {
    MutexLock lock(&mu_);
    need_reconcile = is_manager_ && reconcile_dirty_;
    reconcile_dirty_ = false;
  }
  if (!need_reconcile) return true;
  absl::Status reconciled = Reconcile(zk);
  if (!reconciled.ok() && reconciled.ToString() != last_reconcile_error_) {
    // Retried with backoff; said once per distinct error, so a CM that cannot reconfigure is visible.
    LogError("coordinator", "%s: reconfiguring failed (will retry): %s", root_.c_str(),
            reconciled.ToString().c_str());
  }
  last_reconcile_error_ = reconciled.ok() ? "" : reconciled.ToString();
  return !failed(reconciled, &reconcile_dirty_);
}

void ZooKeeperCoordinator::ProbeContact(ZooKeeperStore::Session* zk) {
  std::string election;
  {
    MutexLock lock(&mu_);
    if (!is_manager_ || options_.manager_hold <= absl::ZeroDuration() || election_node_.empty() ||
        options_.clock->Now() - contact_at_ < options_.retry_interval) {
      return;
    }
    election = absl::StrCat(root_, "/election/", election_node_);
  }
  (void)CheckElection(zk, election);
}

absl::Status ZooKeeperCoordinator::CheckElection(ZooKeeperStore::Session* zk, const std::string& election) {
  const absl::Time sent = options_.clock->Now();
  const absl::Status answer = zk->Exists(election).status();
  if (answer.ok()) {
    NoteContact(sent);
    return absl::OkStatus();
  }
  if (absl::IsNotFound(answer)) {
    // Deposed (ReportSuspect) or the session ended: the role ends now, not when the watch event comes.
    MutexLock lock(&mu_);
    is_manager_ = false;
    election_dirty_ = true;
    Wake();
    return absl::FailedPreconditionError(absl::StrCat(election, " is gone: no longer the configuration manager"));
  }
  return answer;
}

void ZooKeeperCoordinator::NoteContact(absl::Time sent) {
  MutexLock lock(&mu_);
  contact_at_ = std::max(contact_at_, sent);
}

absl::Time ZooKeeperCoordinator::RoleEndsLocked() const {
  const absl::Duration cut = std::max(absl::ZeroDuration(), options_.session_timeout - negotiated_timeout_);
  return contact_at_ + options_.manager_hold - cut;
}

absl::Status ZooKeeperCoordinator::EnsurePaths(ZooKeeperStore::Session* zk) {
  // /fathom is shared by every cluster on this ZooKeeper (each under its own token): open.
  for (const std::string& path :
       {std::string("/fathom"), root_, root_ + "/members", root_ + "/election", root_ + "/left",
        root_ + "/suspicions"}) {
    const absl::Status created =
        zk->Create(path, "", ZooKeeperStore::CreateMode::kPersistent,
                   path == "/fathom" ? ZooKeeperStore::Access::kOpen : ZooKeeperStore::Access::kToken)
            .status();
    if (!created.ok() && !absl::IsAlreadyExists(created)) return created;
  }
  return absl::OkStatus();
}

absl::Status ZooKeeperCoordinator::Register(ZooKeeperStore::Session* zk) {
  MemberInfo member;
  int64_t session;
  {
    MutexLock lock(&mu_);
    if (!member_.has_value()) return absl::OkStatus();
    member = *member_;
    session = session_id_;
  }
  const std::string path = absl::StrCat(root_, "/members/", member.node_id());
  const std::string data = member.SerializeAsString();
  // A Leave of an earlier registration left a marker (left/<id>): this one may fail, not leave.
  if (absl::Status left = zk->Delete(absl::StrCat(root_, "/left/", member.node_id()));
      !left.ok() && !absl::IsNotFound(left)) {
    return left;
  }
  absl::Status status = zk->Create(path, data, ZooKeeperStore::CreateMode::kEphemeral).status();
  if (absl::IsAlreadyExists(status)) {
    absl::StatusOr<ZooKeeperStore::Stat> stat = zk->Exists(path);
    if (stat.ok() && stat->ephemeral_owner == session) {
      status = absl::OkStatus();  // ours: an earlier attempt got through before the connection dropped
    } else if (stat.ok()) {
      status = absl::AlreadyExistsError(absl::StrCat("node ", member.node_id(), " is already a live member of ", root_,
                                                     " (", path, " belongs to session ", absl::Hex(stat->ephemeral_owner), ")"));
    } else {
      status = stat.status();
    }
  }
  MutexLock lock(&mu_);
  if (status.ok()) {
    registered_ = true;
  } else if (absl::IsAlreadyExists(status) && join_pending_) {
    join_error_ = status;
    member_.reset();
  }
  Wake();
  return status;
}

absl::Status ZooKeeperCoordinator::Elect(ZooKeeperStore::Session* zk) {
  const std::string dir = root_ + "/election";
  std::string mine;
  int64_t session;
  uint32_t node_id;
  bool client_only;
  {
    MutexLock lock(&mu_);
    if (!member_.has_value()) return absl::OkStatus();
    mine = election_node_;
    session = session_id_;
    node_id = member_->node_id();
    client_only = member_->client_only();
  }
  // A client-only member holds an election znode too (every configuration write is conditional on the
  // writer's), but under a prefix that sorts after every candidate's, and it never takes the role.
  const std::string prefix = client_only ? kClientElectionPrefix : kCandidateElectionPrefix;
  absl::StatusOr<std::vector<std::string>> listed = zk->Children(dir);
  if (!listed.ok()) return listed.status();
  std::vector<std::string> children = *std::move(listed);
  if (mine.empty() || std::find(children.begin(), children.end(), mine) == children.end()) {
    mine.clear();
    // A create whose reply was lost may have gone through: adopt a node of this session first.
    for (const std::string& child : children) {
      absl::StatusOr<ZooKeeperStore::Stat> stat = zk->Exists(dir + "/" + child);
      if (stat.ok() && stat->ephemeral_owner == session) mine = child;
    }
    if (mine.empty()) {
      absl::StatusOr<std::string> created =
          zk->Create(dir + "/" + prefix, absl::StrCat(node_id), ZooKeeperStore::CreateMode::kEphemeralSequential);
      if (!created.ok()) return created.status();
      mine = created->substr(dir.size() + 1);
      // Read the candidates again: one created between the listing above and this create has a lower
      // sequence, and taking the old list would make two managers (seen when nodes restart together).
      listed = zk->Children(dir);
      if (!listed.ok()) return listed.status();
      children = *std::move(listed);
      if (std::find(children.begin(), children.end(), mine) == children.end()) {
        MutexLock lock(&mu_);
        election_dirty_ = true;  // gone already (the session ended): start over
        return absl::OkStatus();
      }
    }
  }
  // Lowest candidate sequence wins (candidates share a prefix, so their names sort by sequence, and
  // clients' sort after them).
  auto it = std::find(children.begin(), children.end(), mine);
  bool manager = !client_only && it == children.begin();
  if (manager) {
    // Watched, so a CM that members deposed (ReportSuspect) steps down as soon as its znode goes.
    const absl::Time watched = options_.clock->Now();
    const absl::Status watch = zk->Exists(dir + "/" + mine, /*watch=*/true).status();
    if (absl::IsNotFound(watch)) {
      MutexLock lock(&mu_);
      election_node_ = mine;
      election_dirty_ = true;  // deposed meanwhile: take a place at the end
      is_manager_ = false;
      return absl::OkStatus();
    }
    if (!watch.ok()) return watch;
    NoteContact(watched);
  } else if (!client_only) {
    const std::string predecessor = dir + "/" + *(it - 1);
    const absl::Status watch = zk->Exists(predecessor, /*watch=*/true).status();
    if (absl::IsNotFound(watch)) {
      MutexLock lock(&mu_);
      election_node_ = mine;
      election_dirty_ = true;  // gone already: look again
      return absl::OkStatus();
    }
    if (!watch.ok()) return watch;
  }
  MutexLock lock(&mu_);
  election_node_ = mine;
  if (manager && !is_manager_) {
    LogInfo("coordinator", "%s: node %u is the configuration manager (%s)", root_.c_str(), node_id,
            mine.c_str());
    reconcile_dirty_ = true;
  }
  is_manager_ = manager;
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Configuration>> ZooKeeperCoordinator::FetchConfig(ZooKeeperStore::Session* zk, int* version,
                                                                               bool watch) {
  const std::string path = znodes_.config;
  absl::StatusOr<ZooKeeperStore::Data> data = zk->Get(path, watch);
  if (absl::IsNotFound(data.status())) {
    if (watch) {
      // A Get of no znode sets no watch; an Exists does.
      const absl::Status exists = zk->Exists(path, /*watch=*/true).status();
      if (exists.ok()) return absl::AbortedError(absl::StrCat(path, " appeared meanwhile"));
      if (!absl::IsNotFound(exists)) return exists;
    }
    *version = -1;
    return std::optional<Configuration>();
  }
  if (!data.ok()) return data.status();
  *version = data->stat.version;
  const std::string& bytes = data->bytes;
  const ZooKeeperStore::Stat& stat = data->stat;
  absl::StatusOr<Configuration> config = DecodeConfiguration(bytes);
  if (!config.ok()) {
    return absl::DataLossError(absl::StrCat(path, " (znode version ", stat.version, "): ", config.status().message()));
  }
  return std::optional<Configuration>(std::move(*config));
}

absl::Status ZooKeeperCoordinator::ReadConfig(ZooKeeperStore::Session* zk) {
  int version = 0;
  absl::StatusOr<std::optional<Configuration>> config = FetchConfig(zk, &version, /*watch=*/true);
  if (!config.ok() && absl::IsDataLoss(config.status())) {
    MutexLock lock(&mu_);
    if (config_status_.ToString() != config.status().ToString()) {
      LogError("coordinator", "%s: %s; keeping epoch %llu", root_.c_str(), config.status().ToString().c_str(),
              static_cast<unsigned long long>(config_.has_value() ? config_->epoch() : 0));
    }
    config_status_ = config.status();
    Wake();
    return absl::OkStatus();  // reported; the watch set by the read brings the next version
  }
  if (!config.ok()) return config.status();
  {
    MutexLock lock(&mu_);
    config_status_ = absl::OkStatus();
    if (is_manager_) reconcile_dirty_ = true;  // membership may have moved meanwhile
  }
  if (config->has_value()) Accept(**config);
  return absl::OkStatus();
}

void ZooKeeperCoordinator::Accept(const Configuration& config) {
  {
    MutexLock lock(&mu_);
    if (config_.has_value() && config.epoch() <= config_->epoch()) return;
    config_ = config;
    Wake();  // Join waits for this
  }
  subscribers_.Publish(config);
}

absl::Status ZooKeeperCoordinator::Reconcile(ZooKeeperStore::Session* zk) {
  const std::string members_dir = root_ + "/members";
  uint32_t my_id;
  std::string election;
  {
    MutexLock lock(&mu_);
    if (!is_manager_ || !member_.has_value()) return absl::OkStatus();
    my_id = member_->node_id();
    election = root_ + "/election/" + election_node_;
  }
  absl::StatusOr<std::vector<std::string>> children = zk->Children(members_dir, /*watch=*/true);
  if (!children.ok()) return children.status();
  std::map<uint32_t, MemberInfo> alive;
  for (const std::string& child : *children) {
    absl::StatusOr<ZooKeeperStore::Data> data = zk->Get(members_dir + "/" + child);
    if (absl::IsNotFound(data.status())) continue;  // left meanwhile; the watch fires again
    if (!data.ok()) return data.status();
    MemberInfo info;
    uint32_t id = 0;
    if (!info.ParseFromString(data->bytes) || !ValidateMember(info).ok() || !absl::SimpleAtoi(child, &id) ||
        id != info.node_id()) {
      LogError("coordinator", "%s: ignoring malformed member znode %s", root_.c_str(), child.c_str());
      continue;
    }
    alive[id] = info;
  }
  int version = -1;
  absl::StatusOr<std::optional<Configuration>> current = FetchConfig(zk, &version, /*watch=*/false);
  if (!current.ok()) {
    if (absl::IsDataLoss(current.status())) {
      MutexLock lock(&mu_);
      config_status_ = current.status();
      return absl::OkStatus();  // never build on a corrupt configuration; the config watch brings us back
    }
    return current.status();
  }
  const Configuration base = current->has_value() ? **current : Configuration();
  std::vector<uint32_t> gone;
  for (const MemberInfo& m : base.members()) {
    auto it = alive.find(m.node_id());
    if (it == alive.end() || !ListsRegistration(m, it->second)) gone.push_back(m.node_id());
  }
  std::map<uint32_t, ExpiredMember> departures;
  for (uint32_t id : gone) {
    const uint64_t incarnation = FindMember(base, id)->incarnation();
    // Vanished without a Leave (no left/<id> naming this incarnation), and seen alive by this process:
    // it failed while the cluster ran.
    const std::string left_path = absl::StrCat(root_, "/left/", id);
    absl::StatusOr<ZooKeeperStore::Data> left = zk->Get(left_path);
    if (!left.ok() && !absl::IsNotFound(left.status())) return left.status();
    const bool left_on_purpose = left.ok() && left->bytes == absl::StrCat(incarnation);
    if (left.ok()) (void)zk->Delete(left_path);  // read once; a stale one goes too
    // Its process is gone (no registration, or a restarted one's).
    const auto registered = alive.find(id);
    const bool same_process = registered != alive.end() && registered->second.incarnation() == incarnation;
    std::optional<ExpiredMember> how = ExpiredMember::kUnseen;
    if (!left_on_purpose && !same_process) {
      MutexLock lock(&mu_);
      if (witness_) how = witness_(id, incarnation);
    }
    if (!how.has_value()) {
      // Only its ZooKeeper session may be gone: while its lease runs it may serve, so its regions stay.
      LogInfo("coordinator", "%s: node %u's registration vanished, but it holds a lease here: it stays a member "
              "unless its lease lapses", root_.c_str(), id);
      continue;
    }
    departures[id] = *how;
    if (*how == ExpiredMember::kFailed) {
      LogWarning("coordinator",
                 "%s: node %u (incarnation %llu) is gone and was seen alive: its regions go to their backups",
                 root_.c_str(), id, static_cast<unsigned long long>(incarnation));
    }
  }
  absl::StatusOr<Configuration> reconciled = NextConfiguration(base, [&](Configuration& next) {
    for (const auto& [id, how] : departures) RemoveDeparted(&next, id, how);
    for (const auto& [id, info] : alive) {
      if (FindMember(next, id) != nullptr) continue;
      Configuration admitted = next;
      if (absl::Status s = AdmitMember(&admitted, info); !s.ok()) {
        // Left out (its znode stays; the member sees it is not listed): one bad member must not stop the rest.
        LogError("coordinator", "%s: not admitting node %u: %s", root_.c_str(), id, s.ToString().c_str());
        continue;
      }
      next = std::move(admitted);
    }
    SetManager(&next, my_id);
    return absl::OkStatus();
  });
  if (!reconciled.ok()) {
    return absl::InternalError(absl::StrCat("reconciled configuration is invalid: ", reconciled.status().message()));
  }
  if (current->has_value() && !Changes(base, *reconciled)) return absl::OkStatus();
  const Configuration& next = *reconciled;
  const std::string bytes = EncodeConfiguration(next);
  const std::string config_path = znodes_.config;
  // Atomically: I still hold my election znode, and nobody wrote the configuration since I read it.
  std::vector<absl::Status> results;
  const absl::Status written = zk->Multi(
      {ZooKeeperStore::Op::Check(election, 0), version < 0 ? ZooKeeperStore::Op::Create(config_path, bytes)
                                                           : ZooKeeperStore::Op::Set(config_path, bytes, version)},
      &results);
  if (written.ok()) {
    LogInfo("coordinator", "%s: CM %u wrote %s", root_.c_str(), my_id, Summary(next).c_str());
    Accept(next);
    return absl::OkStatus();
  }
  MutexLock lock(&mu_);
  if (ElectionCheckFailed(results)) {
    election_dirty_ = true;  // no longer the CM
    is_manager_ = false;
    return absl::OkStatus();
  }
  if (absl::IsAborted(written) || absl::IsAlreadyExists(written) || absl::IsNotFound(written)) {
    config_dirty_ = true;
    return absl::AbortedError(absl::StrCat("configuration changed under the CM: ", written.message()));
  }
  return written;
}

absl::Status ZooKeeperCoordinator::Join(const MemberInfo& member) {
  if (absl::Status s = ValidateMember(member); !s.ok()) return s;
  MutexLock lock(&mu_);
  if (closed_) return absl::FailedPreconditionError("coordinator closed");
  if (member_.has_value()) return absl::FailedPreconditionError(absl::StrCat("already joined as node ", member_->node_id()));
  member_ = member;
  registered_ = false;
  election_node_.clear();
  join_pending_ = true;
  join_error_ = absl::OkStatus();
  Wake();
  auto listed = [&] {
    if (!config_.has_value()) return false;
    const MemberInfo* m = FindMember(*config_, member.node_id());
    return m != nullptr && ListsRegistration(*m, member);
  };
  AwaitLocked([&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return !join_error_.ok() || (registered_ && listed()); },
              options_.join_timeout);
  join_pending_ = false;
  if (!join_error_.ok()) return join_error_;
  if (!registered_) {
    return absl::DeadlineExceededError(absl::StrCat("could not register node ", member.node_id(), " in ", root_,
                                                    " at ", options_.connect_string, " within ",
                                                    absl::FormatDuration(options_.join_timeout)));
  }
  if (!listed()) {
    return absl::DeadlineExceededError(absl::StrCat("node ", member.node_id(),
                                                    " registered, but no configuration listed it within ",
                                                    absl::FormatDuration(options_.join_timeout), " (",
                                                    config_status_.ToString(), ")"));
  }
  // Admitted: a registration made again (a new session) keeps the memory it has, so it must not have its
  // replicas dropped as if it started empty.
  if (member_.has_value()) member_->set_starts_empty(false);
  return absl::OkStatus();
}

absl::Status ZooKeeperCoordinator::Leave() {
  HandleLease lease(this);
  if (!lease.status().ok()) return lease.status();
  std::string member_path, election_path, left_path, incarnation;
  {
    MutexLock lock(&mu_);
    if (!member_.has_value()) return absl::FailedPreconditionError("not joined");
    member_path = absl::StrCat(root_, "/members/", member_->node_id());
    left_path = absl::StrCat(root_, "/left/", member_->node_id());
    incarnation = absl::StrCat(member_->incarnation());
    if (!election_node_.empty()) election_path = root_ + "/election/" + election_node_;
    member_.reset();
    registered_ = false;
    election_node_.clear();
    is_manager_ = false;
  }
  // Says "left on purpose" before the registration goes, so the CM moves nothing (a vanished registration
  // without it may be a failure: SetFailureWitness).
  ZooKeeperStore::Session* zk = lease.get();
  absl::Status marked = zk->Create(left_path, incarnation).status();
  if (absl::IsAlreadyExists(marked)) marked = zk->Set(left_path, incarnation).status();
  if (!marked.ok()) return marked;
  if (absl::Status s = zk->Delete(member_path); !s.ok() && !absl::IsNotFound(s)) return s;
  if (!election_path.empty()) {
    if (absl::Status s = zk->Delete(election_path); !s.ok() && !absl::IsNotFound(s)) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<Configuration> ZooKeeperCoordinator::GetConfiguration() {
  MutexLock lock(&mu_);
  if (!config_.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat("no configuration in ", root_, " yet (", config_status_.ToString(), ")"));
  }
  return *config_;
}

std::unique_ptr<Subscription> ZooKeeperCoordinator::Subscribe(Callback callback) {
  return subscribers_.Subscribe(std::move(callback));
}

absl::StatusOr<Configuration> ZooKeeperCoordinator::Update(const Mutation& mutation) {
  const std::string path = znodes_.config;
  for (int attempt = 0; attempt < options_.max_update_attempts; ++attempt) {
    HandleLease lease(this);
    if (!lease.status().ok()) return lease.status();
    int version = -1;
    absl::StatusOr<std::optional<Configuration>> current = FetchConfig(lease.get(), &version, /*watch=*/false);
    if (!current.ok()) return current.status();
    absl::StatusOr<Configuration> updated =
        NextConfiguration(current->has_value() ? **current : Configuration(), mutation);
    if (!updated.ok()) return updated.status();
    const Configuration& next = *updated;
    const std::string bytes = EncodeConfiguration(next);
    const absl::Status written = version < 0 ? lease.get()->Create(path, bytes).status()
                                             : lease.get()->Set(path, bytes, version).status();
    if (written.ok()) {
      Accept(next);
      return next;
    }
    // Lost a race: read again.
    if (absl::IsAborted(written) || absl::IsAlreadyExists(written) || absl::IsNotFound(written)) continue;
    return written;
  }
  return absl::AbortedError(absl::StrCat("configuration update lost ", options_.max_update_attempts, " races in a row"));
}

absl::StatusOr<RegionAllocation> ZooKeeperCoordinator::AllocateRegion(uint64_t size_bytes, int replicas) {
  RegionAllocation out;
  absl::StatusOr<Configuration> config = Update(AllocateRegionMutation(size_bytes, replicas, &out));
  if (!config.ok()) return config.status();
  out.epoch = config->epoch();
  return out;
}

absl::Status ZooKeeperCoordinator::ReportSuspect(uint32_t node_id, absl::Duration unconfirmed_for) {
  uint64_t incarnation;
  {
    MutexLock lock(&mu_);
    const MemberInfo* suspect = config_.has_value() ? FindMember(*config_, node_id) : nullptr;
    if (suspect == nullptr) return absl::NotFoundError(absl::StrCat("node ", node_id, " is not a member"));
    if (config_->manager_id() != node_id || !member_.has_value() || member_->node_id() == node_id) {
      // The CM looks at the members again right away; a member whose session ended is removed.
      reconcile_dirty_ = true;
      Wake();
      return absl::OkStatus();
    }
    incarnation = suspect->incarnation();
  }
  return DeposeManager(node_id, incarnation, unconfirmed_for);
}

absl::Status ZooKeeperCoordinator::DeposeManager(uint32_t node_id, uint64_t incarnation,
                                                 absl::Duration unconfirmed_for) {
  HandleLease lease(this);
  if (!lease.status().ok()) return lease.status();
  ZooKeeperStore::Session* zk = lease.get();
  absl::StatusOr<bool> majority = VoteAgainstManager(zk, node_id, incarnation, unconfirmed_for);
  if (!majority.ok() || !*majority) return majority.status();
  // Only that incarnation's session: its registration names the incarnation, and its election znode
  // has the same ephemeral owner. A restarted process (another session) is left alone.
  const std::string member_path = absl::StrCat(root_, "/members/", node_id);
  absl::StatusOr<ZooKeeperStore::Data> member = zk->Get(member_path);
  if (absl::IsNotFound(member.status())) return absl::OkStatus();  // its session ended: the election moves on by itself
  if (!member.ok()) return member.status();
  MemberInfo info;
  if (!info.ParseFromString(member->bytes) || info.incarnation() != incarnation) return absl::OkStatus();
  const std::string dir = root_ + "/election";
  absl::StatusOr<std::vector<std::string>> children = zk->Children(dir);
  if (!children.ok()) return children.status();
  for (const std::string& child : *children) {
    const std::string path = dir + "/" + child;
    absl::StatusOr<ZooKeeperStore::Stat> stat = zk->Exists(path);
    if (!stat.ok() || stat->ephemeral_owner != member->stat.ephemeral_owner) continue;
    if (absl::Status s = zk->Delete(path, stat->version); !s.ok() && !absl::IsNotFound(s)) return s;
    LogWarning("coordinator", "%s: the CM (node %u) stopped answering: deposed it (deleted %s)", root_.c_str(),
            node_id, path.c_str());
  }
  return absl::OkStatus();
}

// FaRM's probe, through ZooKeeper: one member that cannot reach the CM may be the one cut off (a
// partition heals, and its late report would depose a healthy CM). So each suspicion is a vote, an
// ephemeral znode suspicions/<cm>-<incarnation>/<voter>, and the CM is deposed only once a majority of the
// data members (the CM counted, never voting) voted within suspicion_window. Only a data member of the
// configuration as ZooKeeper holds it now votes: a member removed while it was cut off has no say.
absl::StatusOr<bool> ZooKeeperCoordinator::VoteAgainstManager(ZooKeeperStore::Session* zk, uint32_t node_id, uint64_t incarnation,
                                                              absl::Duration unconfirmed_for) {
  std::optional<MemberInfo> me;
  {
    MutexLock lock(&mu_);
    me = member_;
  }
  if (!me.has_value()) return absl::FailedPreconditionError("not joined");
  int version = -1;
  absl::StatusOr<std::optional<Configuration>> current = FetchConfig(zk, &version, /*watch=*/false);
  if (!current.ok()) return current.status();
  if (!current->has_value()) return absl::FailedPreconditionError("no configuration yet");
  const Configuration& config = **current;
  const MemberInfo* listed = FindMember(config, me->node_id());
  if (listed == nullptr || listed->incarnation() != me->incarnation() || listed->client_only()) {
    return absl::FailedPreconditionError(absl::StrCat("node ", me->node_id(), " is no data member of configuration ",
                                                      config.epoch(), ": it has no vote on the CM"));
  }
  const MemberInfo* manager = FindMember(config, node_id);
  if (config.manager_id() != node_id || manager == nullptr || manager->incarnation() != incarnation) {
    return false;  // another CM already
  }
  const std::string dir = absl::StrCat(root_, "/suspicions/", node_id, "-", incarnation);
  if (absl::Status s = zk->Create(dir, "").status(); !s.ok() && !absl::IsAlreadyExists(s)) return s;
  const std::string mine = absl::StrCat(dir, "/", me->node_id());
  // The silence it states, in whole milliseconds rounded down (its mtime comes later still): the
  // successor counts the old CM's lease from the vote's time minus it (DeposedByVotes).
  const std::string silence =
      absl::StrCat(absl::ToInt64Milliseconds(std::clamp(unconfirmed_for, absl::ZeroDuration(), options_.suspicion_window)));
  absl::Status voted = zk->Create(mine, silence, ZooKeeperStore::CreateMode::kEphemeral).status();
  if (absl::IsAlreadyExists(voted)) voted = zk->Set(mine, silence).status();  // a fresh vote: a new mtime
  if (!voted.ok()) return voted;
  absl::StatusOr<ZooKeeperStore::Stat> my_stat = zk->Exists(mine);
  if (!my_stat.ok()) return my_stat.status();
  absl::StatusOr<std::vector<Vote>> cast = Votes(zk, dir, config, node_id, my_stat->mtime_ms);
  if (!cast.ok()) return cast.status();
  const int votes = static_cast<int>(cast->size());
  int data_members = 0;
  for (const MemberInfo& m : config.members()) data_members += m.client_only() ? 0 : 1;
  const int needed = data_members / 2 + 1;
  LogWarning("coordinator", "%s: node %u votes that the CM (node %u) stopped answering: %d of %d votes, %d needed",
            root_.c_str(), me->node_id(), node_id, votes, data_members, needed);
  return votes >= needed;
}

absl::StatusOr<std::vector<ZooKeeperCoordinator::Vote>> ZooKeeperCoordinator::Votes(ZooKeeperStore::Session* zk,
                                                                                     const std::string& dir,
                                                                                     const Configuration& config,
                                                                                     uint32_t node_id, int64_t now_ms) {
  std::vector<Vote> votes;
  absl::StatusOr<std::vector<std::string>> voters = zk->Children(dir);
  if (absl::IsNotFound(voters.status())) return votes;
  if (!voters.ok()) return voters.status();
  const int64_t window_ms = absl::ToInt64Milliseconds(options_.suspicion_window);
  for (const std::string& voter : *voters) {
    uint32_t id = 0;
    if (!absl::SimpleAtoi(voter, &id) || id == node_id) continue;
    const MemberInfo* m = FindMember(config, id);
    if (m == nullptr || m->client_only()) continue;
    absl::StatusOr<ZooKeeperStore::Data> vote = zk->Get(dir + "/" + voter);
    if (!vote.ok() || vote->stat.mtime_ms < now_ms - window_ms) continue;
    const std::string& data = vote->bytes;
    // The silence the voter states (configuration.md, Deposition). Anything else states none: the vote
    // then says only that it was cast, the latest its voter may have confirmed a grant.
    int64_t silence_ms = 0;
    if (!data.empty() && (!absl::SimpleAtoi(data, &silence_ms) || silence_ms < 0 || silence_ms > window_ms)) {
      LogInfo("coordinator", "%s: vote %s/%s states no silence (%zu bytes): counted as none", root_.c_str(),
                dir.c_str(), voter.c_str(), data.size());
      silence_ms = 0;
    }
    votes.push_back({vote->stat.mtime_ms, vote->stat.mtime_ms - silence_ms});
  }
  std::sort(votes.begin(), votes.end(), [](const Vote& a, const Vote& b) { return a.cast_ms < b.cast_ms; });
  return votes;
}

// The votes are compared in ZooKeeper's time (mtimes), never with this node's clock: "now" there is the
// mtime of a write to the votes' directory.
absl::StatusOr<std::optional<absl::Duration>> ZooKeeperCoordinator::DeposedByVotes(uint32_t node_id,
                                                                                    uint64_t incarnation) {
  HandleLease lease(this);
  if (!lease.status().ok()) return lease.status();
  ZooKeeperStore::Session* zk = lease.get();
  int version = -1;
  absl::StatusOr<std::optional<Configuration>> current = FetchConfig(zk, &version, /*watch=*/false);
  if (!current.ok()) return current.status();
  if (!current->has_value()) return std::nullopt;
  const Configuration& config = **current;
  const std::string dir = absl::StrCat(root_, "/suspicions/", node_id, "-", incarnation);
  // A write to the votes' directory: its mtime is "now" in ZooKeeper's time.
  absl::StatusOr<ZooKeeperStore::Stat> touched = zk->Set(dir, "");
  if (absl::IsNotFound(touched.status())) return std::nullopt;  // nobody voted against it
  if (!touched.ok()) return touched.status();
  const int64_t now_ms = touched->mtime_ms;
  absl::StatusOr<std::vector<Vote>> votes = Votes(zk, dir, config, node_id, now_ms);
  if (!votes.ok()) return votes.status();
  int data_members = 0;
  for (const MemberInfo& m : config.members()) data_members += m.client_only() ? 0 : 1;
  const size_t needed = static_cast<size_t>(data_members / 2 + 1);
  if (votes->size() < needed) return std::nullopt;
  // Any majority of voters meets the majority the old CM's lease rests on, and each voter confirmed no
  // grant made after its `confirmed_until_ms`: the majority whose latest such time is earliest counts.
  std::vector<int64_t> confirmed_until;
  for (const Vote& vote : *votes) confirmed_until.push_back(vote.confirmed_until_ms);
  std::sort(confirmed_until.begin(), confirmed_until.end());
  return absl::Milliseconds(std::max<int64_t>(0, now_ms - confirmed_until[needed - 1]));
}

void ZooKeeperCoordinator::SetFailureWitness(FailureWitness witness) {
  MutexLock lock(&mu_);
  witness_ = std::move(witness);
}

absl::Status ZooKeeperCoordinator::RemoveExpiredMember(uint32_t node_id, uint64_t incarnation,
                                                      ExpiredMember expired) {
  const std::string config_path = znodes_.config;
  const std::string member_path = absl::StrCat(root_, "/members/", node_id);
  for (int attempt = 0; attempt < options_.max_update_attempts; ++attempt) {
    HandleLease lease(this);
    if (!lease.status().ok()) return lease.status();
    std::string election;
    uint32_t my_id;
    {
      MutexLock lock(&mu_);
      if (!is_manager_ || !member_.has_value() || election_node_.empty()) {
        return absl::FailedPreconditionError("not the configuration manager");
      }
      my_id = member_->node_id();
      election = root_ + "/election/" + election_node_;
    }
    if (node_id == my_id) return absl::InvalidArgumentError("the configuration manager cannot remove itself");
    int version = -1;
    absl::StatusOr<std::optional<Configuration>> current = FetchConfig(lease.get(), &version, /*watch=*/false);
    if (!current.ok()) return current.status();
    const MemberInfo* member = current->has_value() ? FindMember(**current, node_id) : nullptr;
    if (member == nullptr || member->incarnation() != incarnation) {
      return absl::NotFoundError(absl::StrCat("node ", node_id, " incarnation ", incarnation, " is not a member"));
    }
    absl::StatusOr<Configuration> removed = NextConfiguration(**current, [&](Configuration& next) {
      RemoveDeparted(&next, node_id, expired);
      SetManager(&next, my_id);
      return absl::OkStatus();
    });
    if (!removed.ok()) return removed.status();
    const Configuration& next = *removed;
    // Its registration goes too, but only the one of this incarnation (a restarted process registered anew).
    absl::StatusOr<ZooKeeperStore::Data> znode = lease.get()->Get(member_path);
    if (!znode.ok() && !absl::IsNotFound(znode.status())) return znode.status();
    MemberInfo registered;
    const bool delete_znode =
        znode.ok() && registered.ParseFromString(znode->bytes) && registered.incarnation() == incarnation;
    std::vector<ZooKeeperStore::Op> ops = {ZooKeeperStore::Op::Check(election, 0)};
    if (delete_znode) ops.push_back(ZooKeeperStore::Op::Delete(member_path, znode->stat.version));
    const size_t set_index = ops.size();
    ops.push_back(ZooKeeperStore::Op::Set(config_path, EncodeConfiguration(next), version));
    std::vector<absl::Status> results;
    const absl::Status written = lease.get()->Multi(ops, &results);
    if (written.ok()) {
      LogWarning("coordinator", "%s: CM %u removed node %u (lease expired): %s", root_.c_str(), my_id, node_id,
              Summary(next).c_str());
      Accept(next);
      return absl::OkStatus();
    }
    if (ElectionCheckFailed(results)) {
      MutexLock lock(&mu_);
      election_dirty_ = true;
      is_manager_ = false;
      Wake();
      return absl::FailedPreconditionError("no longer the configuration manager");
    }
    // The configuration or the member znode changed meanwhile: read again.
    if (absl::IsAborted(written) || absl::IsNotFound(written) ||
        (results.size() > set_index && absl::IsAborted(results[set_index]))) {
      continue;
    }
    return written;
  }
  return absl::AbortedError(absl::StrCat("removing node ", node_id, " lost ", options_.max_update_attempts,
                                         " races in a row"));
}

CoordinatorState ZooKeeperCoordinator::state() const {
  MutexLock lock(&mu_);
  if (closed_) return CoordinatorState::kClosed;
  return connected_ ? CoordinatorState::kConnected : CoordinatorState::kDisconnected;
}

bool ZooKeeperCoordinator::is_manager() const {
  MutexLock lock(&mu_);
  if (!is_manager_ || expired_ || closed_) return false;
  if (options_.manager_hold <= absl::ZeroDuration()) return connected_;
  // Not `connected_`: the client notices a silent server only 2/3 of the session timeout late.
  return options_.clock->Now() < RoleEndsLocked();
}

absl::Status ZooKeeperCoordinator::ConfirmManager() {
  HandleLease lease(this);
  if (!lease.status().ok()) return lease.status();
  std::string election;
  {
    MutexLock lock(&mu_);
    if (!is_manager_ || election_node_.empty()) return absl::FailedPreconditionError("not the configuration manager");
    election = absl::StrCat(root_, "/election/", election_node_);
  }
  if (absl::Status s = CheckElection(lease.get(), election); !s.ok()) return s;
  MutexLock lock(&mu_);
  return is_manager_ ? absl::OkStatus() : absl::FailedPreconditionError("not the configuration manager");
}

absl::Status ZooKeeperCoordinator::config_status() const {
  MutexLock lock(&mu_);
  return config_status_;
}

int ZooKeeperCoordinator::session_expirations() const {
  MutexLock lock(&mu_);
  return expirations_;
}

int ZooKeeperCoordinator::reattaches() const {
  MutexLock lock(&mu_);
  return reattaches_;
}

absl::Status ZooKeeperCoordinator::ExpireSessionForTesting() {
  int before;
  {
    MutexLock lock(&mu_);
    before = expirations_;
  }
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::string resume;
    {
      HandleLease lease(this);
      if (!lease.status().ok()) return lease.status();
      resume = lease.get()->resume_token();
    }
    ZooKeeperStore::SessionOptions takeover;
    takeover.connect_string = options_.connect_string;
    takeover.connect_timeout = options_.connect_timeout;
    takeover.resume = resume;
    absl::StatusOr<std::unique_ptr<ZooKeeperStore::Session>> other = store_->Open(takeover);
    if (!other.ok()) {
      return absl::UnavailableError(absl::StrCat("could not take over the session: ", other.status().message()));
    }
    other->reset();  // closes the shared session: the server expires it for our handle
    // Unless our handle won the session back before the close arrived: then again.
    MutexLock lock(&mu_);
    AwaitLocked([&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return expirations_ > before || expired_; },
                options_.session_timeout);
    if (expirations_ > before || expired_) return absl::OkStatus();
  }
  return absl::UnavailableError("the session outlived 5 takeovers");
}

}  // namespace fathom::coordinator
