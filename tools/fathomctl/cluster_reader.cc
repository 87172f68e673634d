// See cluster_reader.h.
#include "tools/fathomctl/cluster_reader.h"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "coordinator/zookeeper_acl.h"

namespace fathom::fathomctl {
namespace {

// libzookeeper_mt would log every refused connection to stderr; fathomctl reports errors itself.
void QuietLog(const char*) {}

std::string ZooError(int rc) { return absl::StrCat(zerror(rc), " (", rc, ")"); }

// Closes the handle on every path out.
class Session {
 public:
  explicit Session(zhandle_t* zh) : zh_(zh) {}
  ~Session() {
    if (zh_ != nullptr) zookeeper_close(zh_);
  }
  zhandle_t* get() const { return zh_; }

 private:
  zhandle_t* zh_;
};

}  // namespace

absl::StatusOr<coordinator::Configuration> ReadClusterConfiguration(const ClusterReadOptions& options) {
  const std::string& zk = options.connect_string;
  if (zk.empty()) return absl::InvalidArgumentError("no ZooKeeper connect string (--zk=host:port)");
  if (options.cluster.empty() || options.cluster.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("bad cluster name '", options.cluster, "'"));
  }
  zoo_set_debug_level(static_cast<ZooLogLevel>(0));
  const int timeout_ms = static_cast<int>(std::max<int64_t>(absl::ToInt64Milliseconds(options.connect_timeout), 1000));
  Session session(zookeeper_init2(zk.c_str(), nullptr, timeout_ms, nullptr, nullptr, 0, QuietLog));
  if (session.get() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot use ZooKeeper connect string '", zk, "' (malformed, or a host that does not resolve)"));
  }
  const absl::Time deadline = absl::Now() + options.connect_timeout;
  while (zoo_state(session.get()) != ZOO_CONNECTED_STATE) {
    if (absl::Now() >= deadline) {
      return absl::UnavailableError(absl::StrCat("cannot reach ZooKeeper at ", zk, " (no session within ",
                                                 absl::FormatDuration(options.connect_timeout), ")"));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  if (!options.token.empty()) {
    // Only once connected (the client refuses credentials before that); sent ahead of the reads below.
    const std::string auth = coordinator::ZooKeeperCredentialsFor(options.token).auth;
    if (int rc = zoo_add_auth(session.get(), "digest", auth.data(), static_cast<int>(auth.size()), nullptr, nullptr);
        rc != ZOK) {
      return absl::UnavailableError(absl::StrCat("adding the cluster's ZooKeeper credentials: ", ZooError(rc)));
    }
  }

  const std::string root = absl::StrCat("/fathom/", options.cluster);
  Stat stat;
  int rc = zoo_exists(session.get(), root.c_str(), 0, &stat);
  if (rc == ZNONODE) {
    String_vector children{0, nullptr};
    std::vector<std::string> clusters;
    if (zoo_get_children(session.get(), "/fathom", 0, &children) == ZOK) {
      for (int i = 0; i < children.count; ++i) clusters.push_back(children.data[i]);
      deallocate_String_vector(&children);
    }
    std::sort(clusters.begin(), clusters.end());
    return absl::NotFoundError(absl::StrCat("no cluster '", options.cluster, "' in ZooKeeper at ", zk, " (no ", root,
                                            "; clusters there: ",
                                            clusters.empty() ? "none" : absl::StrJoin(clusters, ", "), ")"));
  }
  if (rc != ZOK) return absl::UnavailableError(absl::StrCat("ZooKeeper at ", zk, ": exists ", root, ": ", ZooError(rc)));

  const std::string path = root + "/config";
  std::string data(coordinator::kMaxEncodedConfigurationBytes + 1, '\0');
  int len = static_cast<int>(data.size());
  rc = zoo_get(session.get(), path.c_str(), 0, data.data(), &len, &stat);
  if (rc == ZNONODE) {
    return absl::NotFoundError(absl::StrCat("cluster '", options.cluster, "' in ZooKeeper at ", zk,
                                            " has no configuration yet (no ", path, ")"));
  }
  if (rc == ZNOAUTH) {
    return absl::PermissionDeniedError(absl::StrCat(
        "ZooKeeper at ", zk, " refused to show ", path, ": a cluster's znodes are open only to its token's ",
        "credentials", options.token.empty() ? " (give --token_file or --cluster_file)" : " (is this the cluster's token?)"));
  }
  if (rc != ZOK) return absl::UnavailableError(absl::StrCat("ZooKeeper at ", zk, ": get ", path, ": ", ZooError(rc)));
  data.resize(len > 0 ? len : 0);
  auto config = coordinator::DecodeConfiguration(data);
  if (!config.ok()) {
    return absl::DataLossError(absl::StrCat("corrupt configuration at ", path, " in ZooKeeper at ", zk, " (",
                                            data.size(), " bytes): ", config.status().message()));
  }
  return *std::move(config);
}

}  // namespace fathom::fathomctl
