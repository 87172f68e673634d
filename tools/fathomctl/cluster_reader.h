// Reads a cluster's configuration from ZooKeeper: /fathom/<cluster>/config, decoded with the coordinator's
// DecodeConfiguration (docs/formats/configuration.md). Read-only: it creates nothing and joins nothing.
//
//   ClusterReadOptions options;
//   options.connect_string = "127.0.0.1:2181";
//   options.cluster = "prod";
//   ASSIGN_OR_RETURN(coordinator::Configuration config, ReadClusterConfiguration(options));
//
// Errors, each naming the connect string and the cluster:
//   Unavailable       no ZooKeeper session within connect_timeout (server down, wrong address)
//   InvalidArgument   a malformed connect string or cluster name
//   NotFound          no /fathom/<cluster> (the message lists the clusters that exist), or no config yet
//   DataLoss          /config is corrupt (bad frame, checksum, protobuf or validation)
#ifndef FATHOM_TOOLS_FATHOMCTL_CLUSTER_READER_H_
#define FATHOM_TOOLS_FATHOMCTL_CLUSTER_READER_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/configuration.h"

namespace fathom::fathomctl {

struct ClusterReadOptions {
  std::string connect_string;  // "host:port[,host:port...]"
  std::string cluster = "fathom";
  // The cluster token: the session adds the ZooKeeper credentials derived from it
  // (coordinator/zookeeper_acl.h), without which a cluster's znodes cannot be read. Empty: none.
  std::string token;
  // How long to wait for a ZooKeeper session; also bounds each read.
  absl::Duration connect_timeout = absl::Seconds(5);
};

absl::StatusOr<coordinator::Configuration> ReadClusterConfiguration(const ClusterReadOptions& options);

}  // namespace fathom::fathomctl

#endif  // FATHOM_TOOLS_FATHOMCTL_CLUSTER_READER_H_
