// What Fathom's users of the ZooKeeper C client share (the coordinator, CZooKeeperStore, fathomctl's
// cluster reader): where a cluster's znodes live, and the client's return codes as Status values.
//
//   const ClusterZnodes znodes("prod");            // znodes.root, znodes.config
//   RETURN_IF_ERROR(ZooStatus(rc, "get " + znodes.config));
#ifndef FATHOM_COORDINATOR_ZOOKEEPER_CLIENT_H_
#define FATHOM_COORDINATOR_ZOOKEEPER_CLIENT_H_

#include <zookeeper/zookeeper.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fathom::coordinator {

// A cluster's znodes (docs/formats/configuration.md).
struct ClusterZnodes {
  explicit ClusterZnodes(const std::string& cluster);
  std::string root;    // /fathom/<cluster>
  std::string config;  // <root>/config: the framed Configuration
};

// InvalidArgument unless `cluster` can name a znode under /fathom (non-empty, no '/').
absl::Status ValidateClusterName(const std::string& cluster);

// "no node (-101)".
std::string ZooError(int rc);
// OK for ZOK; else `what: error`, as the code that fits: Unavailable (connection, session), NotFound,
// AlreadyExists, Aborted (a version check; a multi's op that was not applied), FailedPrecondition (a
// znode with children; a child of an ephemeral), InvalidArgument, PermissionDenied (the token's
// credentials), Internal.
absl::Status ZooStatus(int rc, const std::string& what);
// The C client's log callback: its warnings and errors go to Fathom's log, its chatter nowhere.
void ZooClientLog(const char* message);

// Children of `path`, sorted, optionally watched. A ZooKeeper return code.
int ZooChildren(zhandle_t* zh, const std::string& path, watcher_fn watcher, void* ctx,
                std::vector<std::string>* out);
// The data of `path` (up to `max_bytes`), optionally watched. A ZooKeeper return code.
int ZooGetData(zhandle_t* zh, const std::string& path, watcher_fn watcher, void* ctx, std::string* out, Stat* stat,
               size_t max_bytes);

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_ZOOKEEPER_CLIENT_H_
