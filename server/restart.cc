// See restart.h.
#include "server/restart.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "coordinator/placement.h"
#include "logging/log_reader.h"

namespace fathom::server {
namespace {

// Waits until the configuration's data members are exactly `logged`, each live and connected, with
// `follower` done applying it (its connections are that configuration's, and no older change is still to
// undo one), and returns it.
absl::StatusOr<coordinator::Configuration> WaitForLoggedMembers(node::Node& node, coordinator::Coordinator& coordinator,
                                                                const coordinator::MembershipFollower& follower,
                                                                const std::vector<uint32_t>& logged,
                                                                absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  std::vector<uint32_t> data, live;
  for (;;) {
    auto configuration = coordinator.GetConfiguration();
    if (configuration.ok() && follower.applied_epoch() == configuration->epoch()) {
      data = coordinator::DataMemberIds(*configuration);
      const std::map<uint32_t, uint64_t> connected = node.connected_incarnations();
      live.clear();
      for (const coordinator::MemberInfo& member : configuration->members()) {
        auto it = connected.find(member.node_id());
        const bool is_live = member.node_id() == node.id() ? member.incarnation() == node.incarnation()
                                                             : it != connected.end() && it->second == member.incarnation();
        if (is_live) live.push_back(member.node_id());
      }
      bool all = data == logged;
      for (uint32_t member : logged) all = all && std::find(live.begin(), live.end(), member) != live.end();
      if (all) return *std::move(configuration);
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the log's members [", absl::StrJoin(logged, ","), "] did not all come back within ",
          absl::FormatDuration(timeout), ": the configuration's data members are [", absl::StrJoin(data, ","),
          "], of which these are live and connected: [", absl::StrJoin(live, ","),
          "] (every member must restart with its data directory)"));
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
}

absl::StatusOr<std::unique_ptr<logging::NodeRestore>> RestoreConnected(node::Node& node,
                                                                       const logging::LogContents& own,
                                                                       const memory::RegionMap& replicas) {
  auto restore = logging::RestoreNode(node, own, replicas, node.options().call_timeout);
  if (!restore.ok()) return restore.status();
  return std::make_unique<logging::NodeRestore>(std::move(*restore));
}

}  // namespace

absl::StatusOr<StartingLog> ReadStartingLog(uint32_t id, const std::string& dir, rocksdb::Env* env) {
  StartingLog start;
  start.log.contents.node_id = id;
  if (!dir.empty()) {
    auto contents = logging::ReadLog(dir, id, env);
    if (contents.ok()) {
      start.log.has_log = true;
      start.log.contents = std::move(*contents);
    } else if (!absl::IsNotFound(contents.status())) {
      return contents.status();
    }
  }
  start.snapshot = std::make_shared<const std::string>(logging::EncodeLogSnapshot(start.log));
  return start;
}

absl::Status CheckPeersListMembers(uint32_t self, const std::vector<node::PeerAddress>& peers,
                                   const std::vector<uint32_t>& members) {
  for (uint32_t member : members) {
    if (member == self) continue;
    bool listed = false;
    for (const node::PeerAddress& peer : peers) listed |= peer.node_id == member;
    if (!listed) {
      return absl::InvalidArgumentError(absl::StrCat("restarting from a log needs every other member in --peers; "
                                                     "node ", member, " is not listed"));
    }
  }
  return absl::OkStatus();
}

absl::Status JoinWhenFree(node::Node& node, coordinator::Coordinator& coordinator,
                          const coordinator::MemberInfo& me, absl::Duration timeout) {
  absl::Status joined;
  node::WaitUntil(
      node.options().executor, *node.options().clock,
      [&] {
        joined = coordinator.Join(me);
        return !absl::IsAlreadyExists(joined);
      },
      timeout, absl::Milliseconds(200));
  return joined;
}

absl::StatusOr<std::unique_ptr<logging::NodeRestore>> RestoreFromPeers(node::Node& node,
                                                                       const logging::LogContents& own,
                                                                       const std::vector<uint32_t>& members,
                                                                       int backups) {
  if (absl::Status joined = node.JoinPeers(); !joined.ok()) return joined;
  return RestoreConnected(node, own, memory::RegionMap::ByOwner(1, members, backups));
}

absl::StatusOr<std::unique_ptr<logging::NodeRestore>> RestoreThroughCoordinator(
    node::Node& node, coordinator::Coordinator& coordinator, const coordinator::MembershipFollower& follower,
    const logging::LogContents& own, const std::vector<uint32_t>& members, absl::Duration timeout,
    const std::function<void(const std::string&)>& log_line,
    std::optional<coordinator::Configuration>& configuration) {
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    auto waited = WaitForLoggedMembers(node, coordinator, follower, members, deadline - absl::Now());
    if (!waited.ok()) return waited.status();
    configuration = std::move(*waited);
    // Who held what is the configuration's placement, kept in ZooKeeper across the restart.
    auto restore = RestoreConnected(node, own, coordinator::RegionMapOf(*configuration));
    const bool transient = absl::IsCancelled(restore.status()) || absl::IsUnavailable(restore.status());
    if (restore.ok() || !transient || absl::Now() >= deadline) return restore;
    log_line(absl::StrCat("gathering the logs again: ", restore.status().ToString()));
    absl::SleepFor(absl::Milliseconds(100));
  }
}

}  // namespace fathom::server
