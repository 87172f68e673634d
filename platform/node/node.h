// Node: the symmetric runtime. Every node contributes memory, serves one-sided access to it, talks to
// every other node through ring buffers, and answers the gRPC control service (Join, Stats, Shutdown).
//
//   NodeOptions options;
//   options.node_id = 1;
//   options.cluster_token = token;
//   options.peers = *ParsePeers("2@127.0.0.1:7002");
//   ASSIGN_OR_RETURN(auto fabric, fabric::CreateUcxFabric({.transports = "sm"}));
//   ASSIGN_OR_RETURN(std::unique_ptr<Node> node, Node::Start(options, std::move(fabric)));
//   RETURN_IF_ERROR(node->JoinPeers());                       // until every listed peer has joined
//   ASSIGN_OR_RETURN(object::ObjectRef ref, node->AllocateObject("hello"));
//   ASSIGN_OR_RETURN(std::string bytes, node->ReadObject(ref_from_another_node));
//   ASSIGN_OR_RETURN(std::string reply, node->Call(/*peer=*/2, kPingMessage, "ping"));
//   node->Stop();
//
// Joining is symmetric and idempotent: either side may call Join (both do, with a static peer list); the
// first one connects every thread of both nodes (thread i to the peer's thread i: every node of a cluster
// runs the same number of threads), the second finds the connection made (same incarnation, same rings).
// A peer that restarts (new incarnation), or that dropped its side and joins again (same incarnation, new
// ring sessions), replaces the old connection: so one side's Disconnect and Join reconnects both.
//
// The blocking helpers (AllocateObject, ReadObject, Call, PingPeer, Counters) are for tests, tools and
// the control service; the layers above work on the node threads directly (RunOnThread).
#ifndef FATHOM_PLATFORM_NODE_NODE_H_
#define FATHOM_PLATFORM_NODE_NODE_H_

#include <cstdint>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "platform/base/mutex.h"
#include "platform/fabric/fabric.h"
#include "platform/memory/region.h"
#include "platform/memory/region_map.h"
#include "platform/memory/region_table.h"
#include "platform/memory/slab_allocator.h"
#include "platform/node/control/control_handler.h"
#include "platform/node/control/control_server.h"
#include "platform/node/control/table_calls.h"
#include "platform/node/node_options.h"
#include "platform/node/node_thread.h"
#include "platform/node/ring_plan.h"
#include "platform/object/object_layout.h"

namespace fathom::node {

// Message types the runtime itself handles on every node (1..99 are the runtime's).
inline constexpr msg::MessageType kPingMessage = 1;  // replies with the request's bytes

struct PingStats {
  uint32_t ok = 0;
  uint32_t failed = 0;
  absl::Duration p50;
  absl::Duration max;
  absl::Status first_error;
};

class Node final : public control::ControlHandler {
 public:
  // Allocates and registers memory, starts the threads and the control server. `fabric` is the node's
  // (UcxFabric, or a SimNetwork node in embedded tests).
  static absl::StatusOr<std::unique_ptr<Node>> Start(NodeOptions options, std::unique_ptr<fabric::Fabric> fabric);
  ~Node() override;  // Stop()
  // Stops the control server and the threads. Peers see this node as failed.
  void Stop();

  uint32_t id() const { return options_.node_id; }
  fabric::FabricKind fabric_kind() const;
  uint64_t incarnation() const { return incarnation_; }
  // Bytes of this node's own regions (rings and data) on huge pages: UCX gets them when the host reserved
  // some (vm.nr_hugepages), else every region is on 4 KiB pages. Counted once, at start.
  uint64_t huge_page_bytes() const { return huge_page_bytes_; }
  int threads() const { return static_cast<int>(threads_.size()); }
  // "host:port" the control server listens on (the port resolved when 0 was asked for); with
  // NodeOptions::in_process_peers, which runs no control server, "in-process:<id>".
  std::string control_address() const;

  // Joins `peer` through its control server (idempotent). Errors name the peer.
  absl::Status JoinPeer(const PeerAddress& peer);
  // Joins a connected `peer` again so that it learns the regions this node serves now (ServeRegion); the
  // connection itself is kept. Joins it if it was not connected.
  absl::Status Republish(const PeerAddress& peer);
  absl::Status RepublishInProcess(Node& peer);
  // The same with a node of this process, without the control server (the replayable simulation, whose
  // one thread must not wait on gRPC's).
  absl::Status JoinInProcess(Node& peer);
  // Drops the connection to `peer` on every thread: its calls end with Cancelled, reads through it fail,
  // its rings are retired. Used when a peer leaves the cluster; JoinPeer (or its Join) connects again, with
  // fresh ring sessions. NotFound if not connected.
  absl::Status Disconnect(uint32_t peer);
  // Joins every peer of NodeOptions::peers, retrying each until NodeOptions::join_timeout; Unavailable
  // names the ones that never answered.
  absl::Status JoinPeers();
  std::vector<uint32_t> connected_peers() const;
  // From now on a join is refused (both ways) with a peer whose region map is older than `epoch`
  // (NodeInfo.epoch_floor): a backup promoted in configuration `epoch` serves the region once every
  // connected peer announced that map (config_applied.h), and one that connects later must work from it
  // already. Returns false while a join this node started is under way: it may connect a peer that is
  // behind, so the caller asks again.
  bool RaiseEpochFloor(uint64_t epoch);
  // Connected peers whose connection failed on some thread (a failed write or endpoint, a bad ring): it
  // stays failed until Disconnect; whoever keeps this node connected (the membership follower) then joins
  // again. Sorted.
  std::vector<uint32_t> failed_peers() const;
  // Each connected peer's incarnation (the process it joined).
  std::map<uint32_t, uint64_t> connected_incarnations() const;

  // A new object holding `payload`, in this node's memory, allocated by `thread`.
  absl::StatusOr<object::ObjectRef> AllocateObject(std::string_view payload, int thread = 0);
  // Replaces the payload of a local object.
  absl::Status WriteObject(const object::ObjectRef& ref, std::string_view payload, int thread = 0);
  // Reads any object: local ones from memory, remote ones with one-sided reads, both checked.
  absl::StatusOr<std::string> ReadObject(const object::ObjectRef& ref, int thread = 0);
  // An RPC from `thread` to `peer`'s thread of the same index.
  absl::StatusOr<std::string> Call(uint32_t peer, msg::MessageType type, std::string_view request, int thread = 0,
                                   absl::Duration timeout = absl::ZeroDuration());
  // `count` ping round trips from `thread` to `peer`, one after another, each with `payload_bytes` bytes.
  absl::StatusOr<PingStats> PingPeer(uint32_t peer, int thread, int count, size_t payload_bytes,
                                     absl::Duration timeout_each = absl::Seconds(2));
  // Messages, bytes, retries, rejected inputs, per layer, summed over threads.
  std::map<std::string, uint64_t> Counters();
  // Every thread's NodeThread::Describe, for diagnosing operations that stopped completing.
  std::string Describe();

  // Adds counters to Stats (the membership follower reports the coordinator's state this way).
  void AddCounterSource(std::function<void(std::map<std::string, uint64_t>&)> source);
  // Who digests the replicas this node holds for Stats (the transaction layer knows its backup copies);
  // null: none. Set it to null before destroying what it calls.
  using ReplicaDigestSource = std::function<absl::StatusOr<std::vector<control::ReplicaDigest>>()>;
  void SetReplicaDigestSource(ReplicaDigestSource source);

  // Serves the control service's table calls (CreateTable, DropTable, ListTables) through `tables`;
  // without one (null, the default) they fail with FailedPrecondition.
  void SetTableCalls(std::shared_ptr<control::TableCalls> tables);

  // Node thread `index` (0..threads()-1), for layers that run on it (Post, StartAndWait).
  absl::StatusOr<NodeThread*> Thread(int index);
  // This node's data regions (objects live there), in id order.
  std::vector<memory::LocalRegion*> data_regions() const;
  // Registered, zeroed memory to hold a copy of region `id` (a backup's: txn/backup_store.h). The node
  // owns it (it goes before the fabric it is registered with). Thread-safe.
  absl::StatusOr<memory::LocalRegion*> AllocateRegionCopy(uint32_t id, uint64_t bytes);
  // Serves `region`, a copy of another node's region this node was promoted to serve as primary
  // (docs/recovery.md): every thread resolves objects in it, and peers import it when they join or this
  // node republishes (Republish). The allocators carve its slabs, except those of the `used` slots (which
  // hold objects: memory::SlabSource::AddRegion). `region` must outlive the node. Idempotent.
  absl::Status ServeRegion(memory::LocalRegion* region, const std::vector<memory::Slot>& used = {});
  // Whether this node serves `region` as a promoted copy (ServeRegion).
  bool Serves(uint32_t region) const;
  // The memory of `region` as this node serves it (its own data region or a promoted copy); null if it
  // serves no such region.
  memory::LocalRegion* ServedRegion(uint32_t region) const;
  // Who holds each region (memory/region_map.h): the layers above set it from the configuration (or a
  // static cluster's rule); until then every region is served by the node that owns it.
  memory::RegionDirectory& region_directory() { return region_directory_; }
  const NodeOptions& options() const { return options_; }

  // Runs `task` on node thread `thread` and waits (bounded by call_timeout).
  absl::Status RunOnThread(int thread, absl::AnyInvocable<absl::Status(NodeThread&)> task);

  // Set by the control service's Shutdown; fathomd waits on it.
  bool shutdown_requested() const;
  bool WaitForShutdownRequest(absl::Duration timeout);

  // control::ControlHandler (called on gRPC threads).
  absl::StatusOr<control::NodeInfo> OnJoin(const control::JoinRequest& request) override;
  control::StatsResponse OnStats() override;
  absl::StatusOr<std::vector<control::ReplicaDigest>> OnReplicaDigests() override;
  void OnShutdown(std::string_view reason) override;
  absl::StatusOr<control::AllocateObjectResponse> OnAllocateObject(
      const control::AllocateObjectRequest& request) override;
  absl::StatusOr<control::ReadObjectResponse> OnReadObject(const control::ReadObjectRequest& request) override;
  absl::StatusOr<control::PingPeerResponse> OnPingPeer(const control::PingPeerRequest& request) override;
  absl::StatusOr<control::CreateTableResponse> OnCreateTable(const control::CreateTableRequest& request) override;
  absl::StatusOr<control::DropTableResponse> OnDropTable(const control::DropTableRequest& request) override;
  absl::StatusOr<control::ListTablesResponse> OnListTables(const control::ListTablesRequest& request) override;
  absl::StatusOr<control::ResizeTableResponse> OnResizeTable(const control::ResizeTableRequest& request) override;

 private:
  Node(NodeOptions options, std::unique_ptr<fabric::Fabric> fabric, uint64_t incarnation);
  absl::Status Init();
  // join_mu_. On a node run by an executor, whose one thread runs every node's tasks, a task that waits
  // holding it has switched away (tests/sim/sim_fiber.h), and blocking on it would block them all: the
  // lock is polled instead, letting the executor run meanwhile.
  class ABSL_SCOPED_LOCKABLE JoinLock {
   public:
    explicit JoinLock(const Node* node) ABSL_EXCLUSIVE_LOCK_FUNCTION(node->join_mu_);
    ~JoinLock() ABSL_UNLOCK_FUNCTION();
    JoinLock(const JoinLock&) = delete;
    JoinLock& operator=(const JoinLock&) = delete;

   private:
    absl::Mutex* const mu_;
  };
  absl::Status JoinThroughControl(const PeerAddress& peer, bool again);
  absl::Status JoinDirectly(Node& peer, bool again);
  // `again`: join even if connected (Republish).
  absl::Status JoinWith(uint32_t peer_id, const std::string& where,
                        const std::function<absl::StatusOr<control::NodeInfo>(const control::NodeInfo&)>& join,
                        bool again = false);
  // A connected peer published `regions` (the same incarnation and rings): imports the new ones on every
  // thread and forgets the ones it no longer publishes.
  absl::Status UpdatePeerRegions(uint32_t peer, const std::vector<memory::RegionInfo>& regions)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(join_mu_);
  // This node's NodeInfo as `peer` must see it (rings for its threads, credits of ours).
  absl::StatusOr<control::NodeInfo> InfoFor(uint32_t peer) ABSL_EXCLUSIVE_LOCKS_REQUIRED(join_mu_);
  absl::StatusOr<int> SlotFor(uint32_t peer) ABSL_EXCLUSIVE_LOCKS_REQUIRED(join_mu_);
  // Connects every thread to `peer` (idempotent for the same incarnation).
  absl::Status Connect(const control::NodeInfo& peer) ABSL_EXCLUSIVE_LOCKS_REQUIRED(join_mu_);
  absl::Status DisconnectLocked(uint32_t peer) ABSL_EXCLUSIVE_LOCKS_REQUIRED(join_mu_);
  uint64_t Generation(uint32_t peer) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(join_mu_);
  // Sets huge_page_bytes_ from the kernel's page sizes of the regions Init allocated.
  void CountHugePages();
  bool IsLocal(const object::ObjectRef& ref) const { return memory::OwnerOfRegion(ref.address.region) == options_.node_id; }

  NodeOptions options_;
  std::unique_ptr<fabric::Fabric> fabric_;
  const uint64_t incarnation_;
  const absl::Time start_time_;
  RingPlan ring_plan_;
  std::unique_ptr<memory::LocalRegion> ring_region_;
  uint64_t huge_page_bytes_ = 0;  // CountHugePages
  std::vector<std::unique_ptr<memory::LocalRegion>> data_regions_;
  absl::Mutex copies_mu_;  // a leaf lock
  std::vector<std::unique_ptr<memory::LocalRegion>> region_copies_ ABSL_GUARDED_BY(copies_mu_);
  memory::RegionTable region_table_;
  memory::RegionDirectory region_directory_;
  std::unique_ptr<memory::SlabSource> slab_source_;
  std::vector<std::unique_ptr<NodeThread>> threads_;
  std::unique_ptr<control::ControlServer> control_;  // none with NodeOptions::in_process_peers
  std::string in_process_address_;                   // with NodeOptions::in_process_peers

  mutable absl::Mutex join_mu_;
  absl::flat_hash_map<uint32_t, int> peer_slots_ ABSL_GUARDED_BY(join_mu_);
  absl::flat_hash_map<uint32_t, uint64_t> connected_ ABSL_GUARDED_BY(join_mu_);  // peer -> incarnation
  uint64_t epoch_floor_ ABSL_GUARDED_BY(join_mu_) = 0;  // RaiseEpochFloor
  int joins_under_way_ ABSL_GUARDED_BY(join_mu_) = 0;   // JoinWith between its two locked parts
  // Bumped each time a peer is disconnected; part of the sessions of the rings it writes into.
  absl::flat_hash_map<uint32_t, uint64_t> generations_ ABSL_GUARDED_BY(join_mu_);
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> peer_regions_ ABSL_GUARDED_BY(join_mu_);
  absl::flat_hash_set<uint32_t> allocating_in_ ABSL_GUARDED_BY(join_mu_);  // served copies in slab_source_
  // Copies of other nodes' regions this node serves as their promoted primary (ServeRegion), by id.
  std::map<uint32_t, memory::LocalRegion*> served_regions_ ABSL_GUARDED_BY(join_mu_);
  // The ring locations each peer published for us when connected: a Join with the same incarnation but
  // other rings means the peer reset its side, so we reset ours.
  absl::flat_hash_map<uint32_t, std::string> peer_rings_ ABSL_GUARDED_BY(join_mu_);

  absl::Mutex sources_mu_;
  std::vector<std::function<void(std::map<std::string, uint64_t>&)>> counter_sources_ ABSL_GUARDED_BY(sources_mu_);
  ReplicaDigestSource replica_digests_ ABSL_GUARDED_BY(sources_mu_);

  // Copied under the lock and called outside it: a table call may run for seconds.
  absl::StatusOr<std::shared_ptr<control::TableCalls>> TableCallsOrError();
  absl::Mutex tables_mu_;
  std::shared_ptr<control::TableCalls> table_calls_ ABSL_GUARDED_BY(tables_mu_);

  // Written by the node threads (NodeThread::Config::on_peer_failed); a leaf lock.
  mutable absl::Mutex failed_mu_;
  std::set<uint32_t> failed_peers_ ABSL_GUARDED_BY(failed_mu_);

  mutable absl::Mutex shutdown_mu_;
  bool shutdown_requested_ ABSL_GUARDED_BY(shutdown_mu_) = false;
  bool stopped_ = false;
};

}  // namespace fathom::node

#endif  // FATHOM_PLATFORM_NODE_NODE_H_
