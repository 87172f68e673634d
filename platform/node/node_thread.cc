#include "platform/node/node_thread.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "platform/base/log.h"

namespace fathom::node {

NodeThread::NodeThread(Config config) : config_(std::move(config)) {}

NodeThread::~NodeThread() { Stop(); }

absl::Status NodeThread::Start() {
  auto worker = config_.fabric->CreateWorker();
  if (!worker.ok()) return worker.status();
  worker_ = std::move(*worker);
  worker_address_ = worker_->address();
  allocator_ = std::make_unique<memory::SlabAllocator>(config_.slab_source);
  store_ = std::make_unique<object::ObjectStore>(config_.data_regions, allocator_.get());
  object::ReadPolicy policy;
  reader_ = std::make_unique<object::AsyncObjectReader>(policy, config_.clock);
  msg::MessengerOptions messenger_options;
  messenger_options.clock = config_.clock;
  messenger_options.on_peer_failed = config_.on_peer_failed;
  messenger_ = std::make_unique<msg::Messenger>(messenger_options);
  if (absl::Status s = messenger_->Register(
          kConfigAppliedMessage,
          [this](const msg::Message& message, std::string*) { return announcements_.OnMessage(message); });
      !s.ok()) {
    return s;
  }
  if (config_.register_handlers) config_.register_handlers(*messenger_, config_.index);
  if (config_.executor != nullptr) {
    config_.executor->Add(this);
    return absl::OkStatus();
  }
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

bool NodeThread::Await(absl::Mutex& mu, absl::CondVar& cv, const std::function<bool()>& done,
                       absl::Duration timeout) {
  if (config_.executor != nullptr) {
    return config_.executor->RunUntil(
        [&] {
          MutexLock lock(&mu);
          return done();
        },
        timeout);
  }
  const absl::Time deadline = absl::Now() + timeout;  // a real thread waits in real time
  MutexLock lock(&mu);
  while (!done()) {
    if (WaitWithDeadline(&cv, &mu, deadline)) return done();
  }
  return true;
}

void NodeThread::Stop() {
  {
    // Signal under the lock: the loop decides to exit (and then destroys the worker) only under it.
    MutexLock lock(&mu_);
    if (!stopping_) {
      stopping_ = true;
      stop_requested_.store(true, std::memory_order_release);
      if (worker_ != nullptr) worker_->Signal();
    }
  }
  if (thread_.joinable()) thread_.join();
  if (config_.executor != nullptr && worker_ != nullptr) {
    // No thread of its own: run what was posted, then tear down here.
    config_.executor->Remove(this);
    RunTasks();
    TearDown();
  }
}

bool NodeThread::Post(absl::AnyInvocable<void()> task) {
  MutexLock lock(&mu_);
  if (stopping_ || worker_ == nullptr) return false;
  tasks_.push_back(std::move(task));
  has_tasks_.store(true, std::memory_order_release);
  // The loop itself needs no wake-up (it runs the task on its next turn); an eventfd write is a syscall.
  if (std::this_thread::get_id() != loop_thread_id_) worker_->Signal();
  return true;
}

absl::Status NodeThread::RunAndWait(absl::AnyInvocable<absl::Status()> task, absl::Duration timeout) {
  absl::StatusOr<bool> done = RunAndWait<bool>(
      [task = std::move(task)]() mutable -> absl::StatusOr<bool> {
        absl::Status s = task();
        if (!s.ok()) return s;
        return true;
      },
      timeout);
  return done.status();
}

PeerConnection* NodeThread::peer(uint32_t node_id) {
  auto it = peers_.find(node_id);
  return it == peers_.end() ? nullptr : &it->second;
}

std::vector<uint32_t> NodeThread::peer_ids() const {
  std::vector<uint32_t> ids;
  ids.reserve(peers_.size());
  for (const auto& [id, connection] : peers_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());  // callers iterate: the same order every run
  return ids;
}

PeerConnection& NodeThread::AddPeer(uint32_t node_id, std::unique_ptr<fabric::Endpoint> endpoint) {
  PeerConnection& connection = peers_[node_id];
  connection.endpoint = std::move(endpoint);
  announcements_.OnConnected(node_id);
  return connection;
}

void NodeThread::PeerReady(uint32_t peer) {
  for (auto& listener : connection_listeners_) listener(peer);
}

void NodeThread::RemovePeer(uint32_t node_id) {
  auto it = peers_.find(node_id);
  if (it == peers_.end()) return;
  announcements_.OnRemoved(node_id);
  if (it->second.endpoint != nullptr) {
    reader_->Forget(*it->second.endpoint);
    it->second.endpoint->Shutdown();
    retired_.push_back({std::move(it->second.endpoint), config_.clock->Now() + config_.endpoint_retirement});
  }
  peers_.erase(it);
}

void NodeThread::DestroyRetiredEndpoints(absl::Time now) {
  while (!retired_.empty() && retired_.front().destroy_at <= now) retired_.pop_front();
}

size_t NodeThread::RunTasks() {
  // Most turns have no task: look without the lock first.
  if (!has_tasks_.load(std::memory_order_acquire)) return 0;
  std::vector<absl::AnyInvocable<void()>> tasks;
  {
    MutexLock lock(&mu_);
    tasks.swap(tasks_);
    has_tasks_.store(false, std::memory_order_relaxed);
  }
  for (auto& task : tasks) task();
  return tasks.size();
}

void NodeThread::Loop() {
  ScopedLogNode log_node(config_.node_id);  // an embedded cluster's nodes share the process
  if (config_.batch_scheduling) {
    // This thread only (a Linux thread is a task of its own); priority 0 is the only one SCHED_BATCH has,
    // and any process may take it. Failing leaves the thread as it was: slower, never wrong.
    sched_param param{};
    if (const int error = pthread_setschedparam(pthread_self(), SCHED_BATCH, &param); error != 0) {
      LogWarning("node", "node thread %d: SCHED_BATCH refused (error %d): it keeps its scheduling", config_.index,
                 error);
    }
  }
  absl::Time last_work = absl::InfinitePast();
  absl::Time busy_since = config_.clock->Now();
  constexpr absl::Duration kFirstSleep = absl::Microseconds(100);
  absl::Duration sleep = kFirstSleep;
  {
    MutexLock lock(&mu_);
    loop_thread_id_ = std::this_thread::get_id();
  }
  while (true) {
    if (stop_requested_.load(std::memory_order_acquire)) {
      MutexLock lock(&mu_);
      if (tasks_.empty()) break;
    }
    const size_t work = Turn();
    if (!retired_.empty()) DestroyRetiredEndpoints(config_.clock->Now());
    if (work > 0) {
      const absl::Time now = config_.clock->Now();
      // Busy for a while without a break: let the other nodes' threads on this core run, or whoever our
      // work is waiting for waits a whole scheduler slice (milliseconds).
      if (now - busy_since > config_.busy_yield_interval) {
        std::this_thread::yield();
        busy_since = config_.clock->Now();
      }
      last_work = now;
      sleep = kFirstSleep;
      continue;
    }
    const absl::Time now = config_.clock->Now();
    // Recently busy (within busy_poll_window, none by default): poll again, yielding, since nodes share
    // cores. Otherwise sleep on the worker, which messages (tcp traffic, doorbells after writes into our
    // rings) and posted tasks wake, a little longer each time up to idle_wait (for timers).
    if (now - last_work < config_.busy_poll_window) {
      std::this_thread::yield();
    } else {
      // Asleep, this thread's Polls would not ring the doorbells it owes (a COMMIT-PRIMARY's): ring them.
      messenger_->WakeOwedPeers();
      worker_->Wait(sleep);
      sleep = std::min(sleep * 2, config_.idle_wait);
    }
    // A busy stretch starts when the thread stops waiting: counting the sleep in it made the first turn
    // with work after every wake-up yield the core (a syscall and a context switch per message).
    busy_since = config_.clock->Now();
  }
  TearDown();
}

size_t NodeThread::Turn() {
  size_t work = 0;
  const size_t n = worker_->Poll(completions_);
  for (size_t i = 0; i < n; ++i) {
    if (!messenger_->OnCompletion(completions_[i]) && !reader_->OnCompletion(completions_[i])) ++unrouted_;
  }
  work += n;
  work += messenger_->Poll();
  work += reader_->Poll();
  work += RunTasks();
  for (auto& poll : pollers_) work += poll();
  // Cheap when nothing changed: one atomic load.
  if (config_.regions->generation() != region_map_generation_ || announcements_.due(region_map_->epoch())) {
    work += AnnounceConfiguration();
  }
  return work;
}

size_t NodeThread::AnnounceConfiguration() {
  // After the map is taken: whatever this thread sent under an older one is ahead in the rings.
  const uint64_t epoch = region_map().epoch();
  return announcements_.Announce(*messenger_, peer_ids(), epoch);
}

std::vector<uint32_t> NodeThread::PeersBehind(uint64_t epoch, const std::vector<uint32_t>& members) {
  region_map();
  std::vector<uint32_t> behind;
  for (uint32_t peer : peer_ids()) {
    if (announcements_.heard_from(peer) < epoch) behind.push_back(peer);
  }
  for (uint32_t member : members) {
    if (!peers_.contains(member)) behind.push_back(member);
  }
  std::sort(behind.begin(), behind.end());
  behind.erase(std::unique(behind.begin(), behind.end()), behind.end());
  return behind;
}

void NodeThread::TearDown() {
  // Tear down on the thread that owns it all: the messenger before the endpoints it sends through, the
  // endpoints before the worker. Its pending callbacks run first, while messenger() still returns it
  // (unique_ptr::reset clears the pointer before the destructor runs, and a commit's callback releases
  // ring room through messenger()).
  messenger_->CancelPending();
  // The fabric reads a ring write's bytes from the messenger's staging copy until the write completes
  // (fabric.h: buffers stay valid until the completion); completions still come for writes in flight, and
  // arrive within microseconds from a live peer. A write stuck behind a dead or cut-off peer is not waited
  // for (it would take the fabric's operation timeout): the endpoints close right after.
  const absl::Time hard_deadline = absl::Now() + config_.teardown_drain;
  absl::Time last_completion = absl::Now();
  while (messenger_->writes_in_flight() > 0 && absl::Now() < hard_deadline &&
         absl::Now() - last_completion < config_.teardown_quiet) {
    const size_t n = worker_->Poll(completions_);
    for (size_t i = 0; i < n; ++i) {
      if (!messenger_->OnCompletion(completions_[i])) reader_->OnCompletion(completions_[i]);
    }
    if (n > 0) {
      last_completion = absl::Now();
    } else {
      worker_->Wait(absl::Microseconds(200));
    }
  }
  messenger_.reset();
  pollers_.clear();
  describers_.clear();
  peers_.clear();
  retired_.clear();
  reader_.reset();
  store_.reset();
  allocator_.reset();
  worker_.reset();
}

const memory::RegionMap& NodeThread::region_map() {
  if (const uint64_t generation = config_.regions->generation(); generation != region_map_generation_) {
    region_map_ = config_.regions->Current();
    region_map_generation_ = generation;
  }
  return *region_map_;
}

absl::StatusOr<NodeThread::Route> NodeThread::RouteTo(uint32_t region) {
  absl::StatusOr<uint32_t> primary = region_map().PrimaryOf(region);
  if (!primary.ok()) return primary.status();
  const uint32_t owner = *primary;
  PeerConnection* connection = peer(owner);
  if (connection == nullptr) return absl::UnavailableError(absl::StrCat("not connected to node ", owner));
  auto it = connection->regions.find(region);
  if (it == connection->regions.end()) {
    // Its primary does not serve it (yet): a backup promoted by recovery publishes it once it is ready.
    return absl::UnavailableError(absl::StrCat("node ", owner, " does not serve region ", region));
  }
  return Route{owner, connection->endpoint.get(), &it->second};
}

std::string NodeThread::Describe() {
  std::string out = absl::StrCat("thread ", config_.index, ": object reads in flight ", reader_->in_flight(),
                                 " (backing off ", reader_->backing_off(),
                                 reader_->backing_off() == 0 ? "" : ": ", reader_->DescribeWaiting(),
                                 "), fabric operations outstanding ",
                                 worker_->outstanding(), ", tasks ", pollers_.size(),
                                 " pollers; messenger: ", messenger_->Describe());
  for (auto& describe : describers_) absl::StrAppend(&out, "; ", describe());
  return out;
}

}  // namespace fathom::node
