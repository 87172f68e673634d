// See cluster_reader.h.
#include "tools/fathomctl/cluster_reader.h"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/c_zookeeper_store.h"
#include "coordinator/zookeeper_client.h"
#include "coordinator/zookeeper_store.h"

namespace fathom::fathomctl {

absl::StatusOr<coordinator::Configuration> ReadClusterConfiguration(const ClusterReadOptions& options) {
  using coordinator::ZooKeeperStore;
  const std::string& zk = options.connect_string;
  if (zk.empty()) return absl::InvalidArgumentError("no ZooKeeper connect string (--zk=host:port)");
  if (absl::Status valid = coordinator::ValidateClusterName(options.cluster); !valid.ok()) return valid;
  // libzookeeper_mt would log every refused connection to stderr; fathomctl reports errors itself.
  zoo_set_debug_level(static_cast<ZooLogLevel>(0));
  ZooKeeperStore::SessionOptions session_options;
  session_options.connect_string = zk;
  session_options.timeout = std::max(options.connect_timeout, absl::Seconds(1));
  session_options.connect_timeout = options.connect_timeout;
  session_options.token = options.token;
  absl::StatusOr<std::unique_ptr<ZooKeeperStore::Session>> session = coordinator::CZooKeeperStore().Open(session_options);
  if (absl::IsUnavailable(session.status())) {
    return absl::UnavailableError(absl::StrCat("cannot reach ZooKeeper at ", zk, " (no session within ",
                                               absl::FormatDuration(options.connect_timeout), ")"));
  }
  if (!session.ok()) return session.status();

  const coordinator::ClusterZnodes znodes(options.cluster);
  if (absl::Status exists = (*session)->Exists(znodes.root).status(); absl::IsNotFound(exists)) {
    absl::StatusOr<std::vector<std::string>> clusters = (*session)->Children("/fathom");
    const std::string listed = clusters.ok() && !clusters->empty() ? absl::StrJoin(*clusters, ", ") : "none";
    return absl::NotFoundError(absl::StrCat("no cluster '", options.cluster, "' in ZooKeeper at ", zk, " (no ",
                                            znodes.root, "; clusters there: ", listed, ")"));
  } else if (!exists.ok()) {
    return absl::UnavailableError(absl::StrCat("ZooKeeper at ", zk, ": ", exists.message()));
  }

  absl::StatusOr<ZooKeeperStore::Data> data = (*session)->Get(znodes.config);
  if (absl::IsNotFound(data.status())) {
    return absl::NotFoundError(absl::StrCat("cluster '", options.cluster, "' in ZooKeeper at ", zk,
                                            " has no configuration yet (no ", znodes.config, ")"));
  }
  if (absl::IsPermissionDenied(data.status())) {
    return absl::PermissionDeniedError(absl::StrCat(
        "ZooKeeper at ", zk, " refused to show ", znodes.config, ": a cluster's znodes are open only to its token's ",
        "credentials", options.token.empty() ? " (give --token_file or --cluster_file)" : " (is this the cluster's token?)"));
  }
  if (!data.ok()) return absl::UnavailableError(absl::StrCat("ZooKeeper at ", zk, ": ", data.status().message()));
  auto config = coordinator::DecodeConfiguration(data->bytes);
  if (!config.ok()) {
    return absl::DataLossError(absl::StrCat("corrupt configuration at ", znodes.config, " in ZooKeeper at ", zk, " (",
                                            data->bytes.size(), " bytes): ", config.status().message()));
  }
  return *std::move(config);
}

}  // namespace fathom::fathomctl
