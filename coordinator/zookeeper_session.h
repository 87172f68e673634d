// What every ZooKeeper client of Fathom shares (the coordinator, fathomctl's cluster reader): where a
// cluster's znodes live, return codes as Status values, and ZooKeeperSession, a short-lived session
// that is always closed.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<ZooKeeperSession> zk,
//                    ZooKeeperSession::Open("127.0.0.1:2181", absl::Seconds(5), token));
//   ASSIGN_OR_RETURN(std::string bytes, zk->Get(ClusterZnodes("prod").config, kMaxBytes));
#ifndef FATHOM_COORDINATOR_ZOOKEEPER_SESSION_H_
#define FATHOM_COORDINATOR_ZOOKEEPER_SESSION_H_

#include <zookeeper/zookeeper.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

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

class ZooKeeperSession {
 public:
  // Connects within `timeout` and adds the credentials of `token` (none if empty; a read they do not
  // open then fails PermissionDenied). `session`: take over that session (its clientid_t) instead of
  // opening a new one. `log`: the client's log callback. InvalidArgument for a connect string the client
  // refuses, Unavailable when no session is up in time.
  static absl::StatusOr<std::unique_ptr<ZooKeeperSession>> Open(const std::string& connect_string,
                                                                 absl::Duration timeout, const std::string& token,
                                                                 const clientid_t* session = nullptr,
                                                                 log_callback_fn log = ZooClientLog);
  ~ZooKeeperSession();  // closes the session
  ZooKeeperSession(const ZooKeeperSession&) = delete;
  ZooKeeperSession& operator=(const ZooKeeperSession&) = delete;

  // The data of `path` (up to `max_bytes`); errors as ZooStatus.
  absl::StatusOr<std::string> Get(const std::string& path, size_t max_bytes);
  // The children of `path`, sorted; errors as ZooStatus.
  absl::StatusOr<std::vector<std::string>> Children(const std::string& path);
  // OK if `path` exists; errors as ZooStatus (NotFound when it does not).
  absl::Status Exists(const std::string& path);

 private:
  explicit ZooKeeperSession(zhandle_t* zh) : zh_(zh) {}
  zhandle_t* const zh_;
};

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_ZOOKEEPER_SESSION_H_
