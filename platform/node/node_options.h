// NodeOptions: everything a Node is started with (fathomd's flags map onto it).
#ifndef FATHOM_PLATFORM_NODE_NODE_OPTIONS_H_
#define FATHOM_PLATFORM_NODE_NODE_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "platform/base/clock.h"
#include "platform/node/executor.h"
#include "platform/node/in_process_peers.h"
#include "platform/msg/messenger.h"
#include "platform/node/control/tls_credentials.h"

namespace fathom::node {

// A peer's node id and control address, written "id@host:port".
struct PeerAddress {
  uint32_t node_id = 0;
  std::string control_address;
};

// Parses "2@127.0.0.1:7001,3@10.0.0.3:7000" (empty: no peers). InvalidArgument names the bad entry.
absl::StatusOr<std::vector<PeerAddress>> ParsePeers(std::string_view list);

// Parses a byte count: "1048576", "64K", "64M", "2G" (powers of 1024). InvalidArgument otherwise.
absl::StatusOr<uint64_t> ParseBytes(std::string_view text);

// Node ids are below this (region ids are node id << 16 | index).
inline constexpr uint32_t kMaxNodeId = 0xffff;

struct NodeOptions {
  uint32_t node_id = 0;  // 1..kMaxNodeId
  std::string cluster_name = "fathom";
  std::string cluster_token;  // 16..1024 visible ASCII characters (control/cluster_token.h)
  std::string listen_address = "127.0.0.1:0";
  control::ServerTlsFiles tls;   // both empty: plaintext
  std::string tls_ca_path;       // to verify peers' certificates when they use TLS

  uint64_t memory_bytes = 64 << 20;  // data memory this node contributes
  uint64_t region_bytes = 64 << 20;  // split into regions of this size (at most 4 GiB)
  int worker_threads = 2;            // every node of a cluster must run the same number
  uint32_t ring_bytes = 64 << 10;    // each receive ring
  int max_peers = 15;

  std::vector<PeerAddress> peers;  // static until the coordinator replaces it
  absl::Duration join_timeout = absl::Seconds(30);
  absl::Duration call_timeout = absl::Seconds(5);  // default for blocking helpers
  // The longest an idle node thread sleeps between looks at its receive rings and timers. A message
  // wakes it sooner (a write into its rings is followed by a doorbell: Worker::Wait); sleeps grow from
  // 100 us to this while idle, so a quiet node uses little CPU.
  absl::Duration idle_wait = absl::Milliseconds(5);
  // After traffic, a node thread keeps polling (yielding the core between polls) this long before it
  // sleeps. None by default: messages wake a sleeping thread, and on these 2-core machines the polling
  // threads of 3 nodes took the cores from the ones with work (500 us of it halved deployed YCSB-B:
  // docs/benchmarks.md). A machine with a core per node thread may poll to save the wake-up.
  absl::Duration busy_poll_window = absl::ZeroDuration();
  // A node thread with work on every turn still yields the core this often, so the other nodes' threads
  // sharing it get their turn within microseconds rather than a scheduler slice.
  absl::Duration busy_yield_interval = absl::Microseconds(20);
  // Node threads run under SCHED_BATCH: a thread woken by a doorbell does not preempt the thread that
  // rang it on that core, but runs at its next yield (busy_yield_interval) or tick, with whatever else
  // arrived meanwhile. Where this node's CPU serves only writes and commits (shared memory: readers copy
  // the objects themselves), the client that woke it reads on and the node's work gathers (deployed
  // YCSB-B +12% here: docs/benchmarks.md). Over tcp, where it serves every read, it loses: off there.
  bool batch_scheduling = false;
  const Clock* clock = Clock::Real();
  // Runs on every node thread at start, to register RPC handlers on that thread's messenger.
  std::function<void(msg::Messenger&, int thread)> register_handlers;
  // Runs the node threads' loops instead of a thread each (executor.h; the replayable simulation). Not
  // owned; outlives the node.
  Executor* executor = nullptr;
  // Joins reach peers of this process directly, and the node runs no control server (in_process_peers.h;
  // the replayable simulation). Not owned; outlives the node.
  InProcessPeers* in_process_peers = nullptr;
  // This process's incarnation (nonzero); 0: a fresh random one. Set only where runs must replay.
  uint64_t incarnation = 0;
};

}  // namespace fathom::node

#endif  // FATHOM_PLATFORM_NODE_NODE_OPTIONS_H_
