#include "coordinator/zookeeper_client.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "platform/base/log.h"

namespace fathom::coordinator {

ClusterZnodes::ClusterZnodes(const std::string& cluster)
    : root(absl::StrCat("/fathom/", cluster)), config(absl::StrCat(root, "/config")) {}

absl::Status ValidateClusterName(const std::string& cluster) {
  if (cluster.empty() || cluster.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("bad cluster name '", cluster, "'"));
  }
  return absl::OkStatus();
}

std::string ZooError(int rc) { return absl::StrCat(zerror(rc), " (", rc, ")"); }

absl::Status ZooStatus(int rc, const std::string& what) {
  if (rc == ZOK) return absl::OkStatus();
  const std::string message = absl::StrCat(what, ": ", ZooError(rc));
  switch (rc) {
    case ZCONNECTIONLOSS:
    case ZOPERATIONTIMEOUT:
    case ZSESSIONEXPIRED:
    case ZINVALIDSTATE:
    case ZCLOSING:
      return absl::UnavailableError(message);
    case ZNONODE:
      return absl::NotFoundError(message);
    case ZNODEEXISTS:
      return absl::AlreadyExistsError(message);
    case ZBADVERSION:
    case ZRUNTIMEINCONSISTENCY:  // in a failed multi: an op after the failing one, not applied
      return absl::AbortedError(message);
    case ZNOTEMPTY:
    case ZNOCHILDRENFOREPHEMERALS:
      return absl::FailedPreconditionError(message);
    case ZBADARGUMENTS:
      return absl::InvalidArgumentError(message);
    case ZNOAUTH:
    case ZAUTHFAILED:
      return absl::PermissionDeniedError(absl::StrCat(
          message, " (the cluster's znodes are open only to the credentials derived from its token: is the token "
          "this cluster's?)"));
    default:
      return absl::InternalError(message);
  }
}

// The client's lines start with a time stamp of their own ("2026-11-28 03:37:01,929:1003(0x7f2c821e36c0):
// ZOO_ERROR@..."): the log keeps them from the level on.
void ZooClientLog(const char* message) {
  const char* error = strstr(message, "ZOO_ERROR");
  const char* warning = strstr(message, "ZOO_WARN");
  if (error != nullptr) LogError("zookeeper", "%s", error);
  if (error == nullptr && warning != nullptr) LogWarning("zookeeper", "%s", warning);
}

int ZooChildren(zhandle_t* zh, const std::string& path, watcher_fn watcher, void* ctx,
                std::vector<std::string>* out) {
  String_vector children{};
  int rc = watcher != nullptr ? zoo_wget_children(zh, path.c_str(), watcher, ctx, &children)
                              : zoo_get_children(zh, path.c_str(), 0, &children);
  if (rc != ZOK) return rc;
  out->clear();
  for (int i = 0; i < children.count; ++i) out->push_back(children.data[i]);
  deallocate_String_vector(&children);
  std::sort(out->begin(), out->end());
  return ZOK;
}

int ZooGetData(zhandle_t* zh, const std::string& path, watcher_fn watcher, void* ctx, std::string* out, Stat* stat,
               size_t max_bytes) {
  out->resize(max_bytes);
  int len = static_cast<int>(out->size());
  int rc = watcher != nullptr ? zoo_wget(zh, path.c_str(), watcher, ctx, out->data(), &len, stat)
                              : zoo_get(zh, path.c_str(), 0, out->data(), &len, stat);
  out->resize(rc == ZOK && len > 0 ? len : 0);
  return rc;
}

}  // namespace fathom::coordinator
