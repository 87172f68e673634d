// See member_stats.h.
#include "tools/fathomctl/member_stats.h"

#include <thread>

#include "absl/strings/str_cat.h"

#include "platform/node/control/control_client.h"

namespace fathom::fathomctl {
namespace {

MemberStats StatsOf(const coordinator::MemberInfo& member, const std::string& token, const std::string& tls_ca_path,
                    absl::Duration timeout, bool replica_digests) {
  MemberStats result;
  result.node_id = member.node_id();
  control::ControlClientOptions options;
  options.target = member.control_address();
  options.cluster_token = token;
  options.tls_ca_path = tls_ca_path;
  options.call_timeout = timeout;
  auto client = control::ControlClient::Create(options);
  if (!client.ok()) {
    result.status = client.status();
    return result;
  }
  auto stats = (*client)->Stats(replica_digests);
  if (!stats.ok()) {
    result.status = stats.status();
  } else if (stats->node_id() != member.node_id()) {
    result.status = absl::FailedPreconditionError(
        absl::StrCat(member.control_address(), " answers as node ", stats->node_id(), ", not ", member.node_id()));
  } else {
    result.stats = *std::move(stats);
  }
  return result;
}

}  // namespace

std::vector<MemberStats> CollectMemberStats(const coordinator::Configuration& config, const std::string& token,
                                            const std::string& tls_ca_path,
                                            absl::Duration timeout, bool replica_digests) {
  std::vector<MemberStats> results(config.members_size());
  std::vector<std::thread> threads;
  for (int i = 0; i < config.members_size(); ++i) {
    threads.emplace_back([&, i] { results[i] = StatsOf(config.members(i), token, tls_ca_path, timeout, replica_digests); });
  }
  for (std::thread& t : threads) t.join();
  return results;
}

}  // namespace fathom::fathomctl
