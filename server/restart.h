// A server's restart from its SSD log (docs/formats/ssd-log.md, "Whole-cluster restart"): what it finds
// in its data directory, and gathering every member's log to rebuild memory from the cut they all closed.
#ifndef FATHOM_SERVER_RESTART_H_
#define FATHOM_SERVER_RESTART_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/coordinator.h"
#include "coordinator/membership.h"
#include "logging/log_exchange.h"
#include "logging/node_restart.h"
#include "platform/node/node.h"

namespace fathom::server {

// This node's log as found at start: what it serves to restarting peers, and what it restarts from.
struct StartingLog {
  logging::PeerLog log;
  std::shared_ptr<const std::string> snapshot;  // the log as the restart exchange ships it
};

// Reads and validates the log in `dir` (empty, or no log there: a fresh node). Any damage is an error
// naming the directory and key.
// `env`: the file system it is on (null: the machine's).
absl::StatusOr<StartingLog> ReadStartingLog(uint32_t id, const std::string& dir, rocksdb::Env* env = nullptr);

// Every member but `self` must be a listed peer: a static cluster's restart gathers their logs first.
absl::Status CheckPeersListMembers(uint32_t self, const std::vector<node::PeerAddress>& peers,
                                   const std::vector<uint32_t>& members);

// Joins through the coordinator. A node restarted right after it was killed finds its old session's member
// znode still there (AlreadyExists) until that session times out: it tries again until `timeout` (by the
// node's clock, waiting through its executor if it has one).
absl::Status JoinWhenFree(node::Node& node, coordinator::Coordinator& coordinator,
                          const coordinator::MemberInfo& me, absl::Duration timeout);

// A static cluster: joins every peer, then rebuilds this node's memory from every member's log (placement:
// the static rule with `backups` per region).
absl::StatusOr<std::unique_ptr<logging::NodeRestore>> RestoreFromPeers(node::Node& node,
                                                                       const logging::LogContents& own,
                                                                       const std::vector<uint32_t>& members,
                                                                       int backups);

// With a coordinator: waits until the configuration's data members are exactly `members` (the ones the
// log recorded), each live (the incarnation this node is connected to, not a process that died and whose
// registration lingers) and applied by `follower`, then gathers their logs. A connection made again while
// the logs are fetched cancels the fetch; nothing is written to memory before every log is in, so it
// waits and tries again, until `timeout`. `configuration` is the one it restored in: its placement (kept in
// ZooKeeper across the restart) says which regions this node backs up.
absl::StatusOr<std::unique_ptr<logging::NodeRestore>> RestoreThroughCoordinator(
    node::Node& node, coordinator::Coordinator& coordinator, const coordinator::MembershipFollower& follower,
    const logging::LogContents& own, const std::vector<uint32_t>& members, absl::Duration timeout,
    const std::function<void(const std::string&)>& log_line,
    std::optional<coordinator::Configuration>& configuration);

}  // namespace fathom::server

#endif  // FATHOM_SERVER_RESTART_H_
