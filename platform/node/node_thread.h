// NodeThread: one worker thread of a Node, with everything that belongs to a thread: its fabric Worker,
// its Messenger, its object allocator and store, its async object reader, and its connection (endpoint and
// imported regions) to each peer. Its event loop polls completions, rings and posted tasks, and sleeps
// adaptively (Worker::Wait) when idle, because several nodes share two cores.
//
// Everything but Post/RunAndWait/Stop runs on the thread itself (from a posted task). With an Executor
// (executor.h) the loop has no thread of its own: the executor calls Turn, and waits pump it.
#ifndef FATHOM_PLATFORM_NODE_NODE_THREAD_H_
#define FATHOM_PLATFORM_NODE_NODE_THREAD_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "platform/base/mutex.h"
#include "platform/base/status_macros.h"
#include "platform/fabric/fabric.h"
#include "platform/memory/region.h"
#include "platform/memory/region_map.h"
#include "platform/memory/slab_allocator.h"
#include "platform/msg/messenger.h"
#include "platform/node/config_applied.h"
#include "platform/node/executor.h"
#include "platform/object/async_object_reader.h"
#include "platform/object/object_store.h"

namespace fathom::node {

// This thread's connection to one peer.
struct PeerConnection {
  std::unique_ptr<fabric::Endpoint> endpoint;
  absl::flat_hash_map<uint32_t, fabric::RemoteRegion> regions;  // the peer's regions, imported
};

class NodeThread {
 public:
  struct Config {
    int index = 0;
    uint32_t node_id = 0;  // for the log lines this thread writes
    fabric::Fabric* fabric = nullptr;
    memory::SlabSource* slab_source = nullptr;
    std::vector<memory::LocalRegion*> data_regions;
    const memory::RegionDirectory* regions = nullptr;  // the node's; required
    const Clock* clock = Clock::Real();
    absl::Duration idle_wait = absl::Milliseconds(5);
    absl::Duration busy_poll_window = absl::ZeroDuration();  // NodeOptions
    absl::Duration busy_yield_interval = absl::Microseconds(20);
    bool batch_scheduling = false;  // NodeOptions
    // At teardown, how long to wait for ring writes in flight to complete before the messenger (whose
    // staging buffers they read) goes: at most teardown_drain, and no longer once no completion came for
    // teardown_quiet (what is left waits on a dead or cut-off peer).
    absl::Duration teardown_drain = absl::Seconds(1);
    absl::Duration teardown_quiet = absl::Milliseconds(5);
    // How long a removed peer's endpoint is kept before it is destroyed (RemovePeer).
    absl::Duration endpoint_retirement = absl::Seconds(1);
    std::function<void(msg::Messenger&, int thread)> register_handlers;
    std::function<void(uint32_t peer)> on_peer_failed;  // MessengerOptions::on_peer_failed
    Executor* executor = nullptr;  // null: a thread of its own
  };
  explicit NodeThread(Config config);
  ~NodeThread();  // Stop()

  // Creates the worker and starts the loop. The worker address is known when this returns.
  absl::Status Start();
  // Ends the loop after the tasks already posted; tears the thread's state down on the thread.
  void Stop();

  // Runs `task` on the thread. Thread-safe. False (and `task` dropped) once Stop has begun.
  bool Post(absl::AnyInvocable<void()> task);
  // Starts an asynchronous operation on the thread (`start` gets a `done` to call once, then or later) and
  // waits for the result; Unavailable if the thread is stopped, DeadlineExceeded if `done` is not called
  // within `timeout`. Must not be called from this thread.
  template <typename T>
  absl::StatusOr<T> StartAndWait(absl::AnyInvocable<void(std::function<void(absl::StatusOr<T>)>)> start,
                                 absl::Duration timeout);
  // Runs `task` on the thread and waits for its result (StartAndWait with `done` called at once).
  template <typename T>
  absl::StatusOr<T> RunAndWait(absl::AnyInvocable<absl::StatusOr<T>()> task, absl::Duration timeout) {
    return StartAndWait<T>([task = std::move(task)](auto done) mutable { done(task()); }, timeout);
  }
  absl::Status RunAndWait(absl::AnyInvocable<absl::Status()> task, absl::Duration timeout);

  // One turn of the event loop (completions, rings, tasks, pollers); returns how much it did. Only an
  // Executor calls it, never two at once, and never from inside a turn (a task must not wait for a node
  // thread's result, nor Stop its own thread: as with a thread of its own, that cannot finish).
  size_t Turn();

  int index() const { return config_.index; }
  const std::string& worker_address() const { return worker_address_; }

  // On-thread state (call from posted tasks only).
  fabric::Worker& worker() { return *worker_; }
  msg::Messenger& messenger() { return *messenger_; }
  object::ObjectStore& store() { return *store_; }
  object::AsyncObjectReader& reader() { return *reader_; }
  memory::SlabAllocator& allocator() { return *allocator_; }
  // Adds work to every turn of the event loop (a layer's timers and queues): `poll` returns how much it did,
  // and a turn that did nothing counts as idle. Kept until the thread stops.
  void AddPoller(absl::AnyInvocable<size_t()> poll) { pollers_.push_back(std::move(poll)); }
  // Adds a layer's state to Describe (e.g. the locks its participant holds). Kept until the thread stops.
  void AddDescriber(absl::AnyInvocable<std::string()> describe) { describers_.push_back(std::move(describe)); }
  // Runs `listener` with the peer's id whenever a connection to it is ready (its messenger has the rings),
  // before this thread announces its map there (config_applied.h): what a layer sends from it, such as
  // records lost with the old connection, is ahead of the announcement in the ring. Kept until the thread
  // stops.
  void AddConnectionListener(absl::AnyInvocable<void(uint32_t peer)> listener) {
    connection_listeners_.push_back(std::move(listener));
  }
  // The connection to `peer` is ready (node.cc, at the end of the task that made it): runs the listeners.
  void PeerReady(uint32_t peer);
  PeerConnection* peer(uint32_t node_id);
  // Who holds what (memory/region_map.h), as of the node's latest configuration: taken anew only when the
  // node's RegionDirectory changed. The reference lasts until the next call (which may replace the map).
  const memory::RegionMap& region_map();
  // The peers connected to this thread whose thread of this index has not told it (on the current
  // connection) that it works from region map `epoch` or later (config_applied.h), and those of `members`
  // (other nodes) not connected to it at all, sorted. Refreshes region_map() first, so this thread itself
  // works from the latest map afterwards.
  std::vector<uint32_t> PeersBehind(uint64_t epoch, const std::vector<uint32_t>& members = {});
  // The latest configuration whose leavers the node has disconnected (memory::RegionDirectory::fenced).
  uint64_t fenced_epoch() const { return config_.regions->fenced(); }
  // Where a one-sided operation on `region` goes: the endpoint to its primary (region_map()) and the region
  // as imported from that node. NotFound: the region is in no placement; Unavailable: not connected to its
  // primary, or the primary does not serve it (yet: a promoted backup). The one route every reader takes (objects,
  // transactions, kv).
  struct Route {
    uint32_t owner = 0;
    fabric::Endpoint* endpoint = nullptr;
    const fabric::RemoteRegion* region = nullptr;
  };
  absl::StatusOr<Route> RouteTo(uint32_t region);
  // Its messenger's and reader's state (Node::Describe); on the thread.
  std::string Describe();
  std::vector<uint32_t> peer_ids() const;  // every peer this thread is connected to, in id order
  PeerConnection& AddPeer(uint32_t node_id, std::unique_ptr<fabric::Endpoint> endpoint);
  // Forgets the connection and fails what is still in flight through it (Endpoint::Shutdown). The
  // endpoint itself is destroyed endpoint_retirement later, or at teardown: destroying one over UCX
  // shared memory unmaps the peer's regions (ucp_rkey_destroy: 55-80 ms for four 64 MiB regions here),
  // which must not hold up the recovery that removed the peer.
  void RemovePeer(uint32_t node_id);
  // Completions no layer claimed (a bug elsewhere if it ever grows).
  uint64_t unrouted_completions() const { return unrouted_; }
  // Removed peers' endpoints not destroyed yet (RemovePeer); on the thread.
  size_t retired_endpoints() const { return retired_.size(); }

 private:
  void Loop();
  // Destroys the retired endpoints whose time came.
  void DestroyRetiredEndpoints(absl::Time now);
  // Tears down the thread's state, on the thread that ran it (Loop's end, or Stop with an executor).
  void TearDown();
  // Waits (bounded by `timeout`) until `done` holds under `mu`: on `cv` (signalled by whoever makes it
  // true), or by pumping the executor.
  bool Await(absl::Mutex& mu, absl::CondVar& cv, const std::function<bool()>& done, absl::Duration timeout);
  // Runs the queued tasks; returns how many.
  size_t RunTasks();
  // Tells the peers the epoch of the map this thread works from, once it changed or a peer connected.
  size_t AnnounceConfiguration();

  Config config_;
  std::unique_ptr<fabric::Worker> worker_;
  std::string worker_address_;
  std::unique_ptr<memory::SlabAllocator> allocator_;
  std::unique_ptr<object::ObjectStore> store_;
  std::unique_ptr<object::AsyncObjectReader> reader_;
  // Destroyed before the endpoints it sends through (declared after them).
  absl::flat_hash_map<uint32_t, PeerConnection> peers_;
  struct RetiredEndpoint {
    std::unique_ptr<fabric::Endpoint> endpoint;
    absl::Time destroy_at;
  };
  std::deque<RetiredEndpoint> retired_;  // removed peers' endpoints, oldest first
  std::unique_ptr<msg::Messenger> messenger_;
  std::vector<absl::AnyInvocable<size_t()>> pollers_;
  std::vector<absl::AnyInvocable<std::string()>> describers_;
  std::vector<absl::AnyInvocable<void(uint32_t)>> connection_listeners_;
  uint64_t unrouted_ = 0;
  fabric::Completion completions_[64];  // Turn's, kept between turns
  std::shared_ptr<const memory::RegionMap> region_map_;  // on-thread copy of the directory's current map
  uint64_t region_map_generation_ = ~uint64_t{0};
  ConfigAnnouncements announcements_;

  absl::Mutex mu_;
  std::vector<absl::AnyInvocable<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Mirrors of stopping_ and !tasks_.empty() that the loop reads every turn without taking the lock.
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> has_tasks_{false};
  std::thread::id loop_thread_id_ ABSL_GUARDED_BY(mu_);  // set by the loop before it runs anything
  std::thread thread_;
};

template <typename T>
absl::StatusOr<T> NodeThread::StartAndWait(absl::AnyInvocable<void(std::function<void(absl::StatusOr<T>)>)> start,
                                           absl::Duration timeout) {
  struct Shared {
    absl::Mutex mu;
    // A CondVar, not an absl::Condition: the Mutex evaluates a Condition on the unlocking thread, which
    // would read the waiter's stack behind ThreadSanitizer's back.
    absl::CondVar cv;
    std::optional<absl::StatusOr<T>> result ABSL_GUARDED_BY(mu);
  };
  auto shared = std::make_shared<Shared>();
  std::function<void(absl::StatusOr<T>)> done = [shared](absl::StatusOr<T> r) {
    if (!r.ok()) r = UnsharedCopy(r.status());  // an error goes over to the waiting thread as a fresh Status
    MutexLock lock(&shared->mu);
    if (!shared->result.has_value()) shared->result = std::move(r);
    shared->cv.Signal();
  };
  if (!Post([start = std::move(start), done]() mutable { start(done); })) {
    return absl::UnavailableError(absl::StrCat("node thread ", config_.index, " is stopped"));
  }
  const bool finished = Await(
      shared->mu, shared->cv, [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return shared->result.has_value(); },
      timeout);
  MutexLock lock(&shared->mu);
  if (!finished) {
    return absl::DeadlineExceededError(absl::StrCat("node thread ", config_.index, " gave no result within ",
                                                    absl::FormatDuration(timeout)));
  }
  return std::move(*shared->result);
}

}  // namespace fathom::node

#endif  // FATHOM_PLATFORM_NODE_NODE_THREAD_H_
