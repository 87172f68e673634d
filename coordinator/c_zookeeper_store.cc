#include "coordinator/c_zookeeper_store.h"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "coordinator/zookeeper_acl.h"
#include "coordinator/zookeeper_client.h"
#include "platform/base/mutex.h"

namespace fathom::coordinator {
namespace {

using Event = ZooKeeperStore::Event;

// What one znode holds at most (the server's jute.maxbuffer default).
constexpr size_t kMaxZnodeBytes = 1 << 20;

ZooKeeperStore::Stat FromC(const ::Stat& c) {
  return ZooKeeperStore::Stat{.version = c.version,
                              .ephemeral_owner = c.ephemeralOwner,
                              .mtime_ms = c.mtime,
                              .num_children = c.numChildren};
}

int CFlags(ZooKeeperStore::CreateMode mode) {
  switch (mode) {
    case ZooKeeperStore::CreateMode::kPersistent: return 0;
    case ZooKeeperStore::CreateMode::kEphemeral: return ZOO_EPHEMERAL;
    case ZooKeeperStore::CreateMode::kPersistentSequential: return ZOO_SEQUENCE;
    case ZooKeeperStore::CreateMode::kEphemeralSequential: return ZOO_EPHEMERAL | ZOO_SEQUENCE;
  }
  return 0;
}

class CSession final : public ZooKeeperStore::Session {
 public:
  explicit CSession(const ZooKeeperStore::SessionOptions& options) : options_(options) {
    if (!options_.token.empty()) {
      credentials_ = ZooKeeperCredentialsFor(options_.token);
      entry_.perms = ZOO_PERM_ALL;
      entry_.id.scheme = scheme_.data();
      entry_.id.id = credentials_.acl_id.data();
      acl_.count = 1;
      acl_.data = &entry_;
    }
  }
  ~CSession() override {
    if (zh_ != nullptr) zookeeper_close(zh_);  // waits for the completion thread: no callback after this
  }

  absl::Status Connect() {
    clientid_t id{};
    const bool resume = options_.resume.size() == sizeof id;
    if (resume) std::memcpy(&id, options_.resume.data(), sizeof id);
    zhandle_t* zh = zookeeper_init2(options_.connect_string.c_str(), &CSession::Watcher,
                                    static_cast<int>(absl::ToInt64Milliseconds(options_.timeout)),
                                    resume ? &id : nullptr, this, 0, ZooClientLog);
    if (zh == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("cannot use ZooKeeper connect string '",
                                                     options_.connect_string, "' (malformed, or a host that does not resolve)"));
    }
    MutexLock lock(&mu_);
    zh_ = zh;
    if (connected_) AuthenticateLocked();  // it connected before zh_ was set
    const absl::Time deadline = absl::Now() + options_.connect_timeout;
    while (!connected_ && !expired_) {
      if (WaitWithDeadline(&cv_, &mu_, deadline)) break;
    }
    if (expired_) {
      return absl::NotFoundError(absl::StrCat("ZooKeeper at ", options_.connect_string,
                                              ": the session to resume has expired"));
    }
    if (!connected_) {
      return absl::UnavailableError(absl::StrCat("ZooKeeper at ", options_.connect_string,
                                                 " unreachable: no session within ",
                                                 absl::FormatDuration(options_.connect_timeout)));
    }
    return absl::OkStatus();
  }

  int64_t id() const override { return zoo_client_id(zh_)->client_id; }
  absl::Duration timeout() const override { return absl::Milliseconds(zoo_recv_timeout(zh_)); }
  std::string resume_token() const override {
    const clientid_t* id = zoo_client_id(zh_);
    return std::string(reinterpret_cast<const char*>(id), sizeof *id);
  }

  absl::StatusOr<std::string> Create(const std::string& path, const std::string& data, ZooKeeperStore::CreateMode mode,
                                     ZooKeeperStore::Access access) override {
    char created[1024];
    const int rc = zoo_create(zh_, path.c_str(), data.data(), static_cast<int>(data.size()), Acl(access), CFlags(mode),
                              created, sizeof created);
    if (rc != ZOK) return ZooStatus(rc, absl::StrCat("create ", path));
    return std::string(created);
  }
  absl::Status Delete(const std::string& path, int32_t version) override {
    return ZooStatus(zoo_delete(zh_, path.c_str(), version), absl::StrCat("delete ", path));
  }
  absl::StatusOr<ZooKeeperStore::Stat> Exists(const std::string& path, bool watch) override {
    ::Stat stat{};
    const int rc = watch ? zoo_wexists(zh_, path.c_str(), &CSession::WatchFired, this, &stat)
                         : zoo_exists(zh_, path.c_str(), 0, &stat);
    if (rc != ZOK) return ZooStatus(rc, absl::StrCat("exists ", path));
    return FromC(stat);
  }
  absl::StatusOr<ZooKeeperStore::Data> Get(const std::string& path, bool watch) override {
    ZooKeeperStore::Data out;
    ::Stat stat{};
    const int rc = ZooGetData(zh_, path, watch ? &CSession::WatchFired : nullptr, this, &out.bytes, &stat, kMaxZnodeBytes);
    if (rc != ZOK) return ZooStatus(rc, absl::StrCat("get ", path));
    out.stat = FromC(stat);
    return out;
  }
  absl::StatusOr<ZooKeeperStore::Stat> Set(const std::string& path, const std::string& data, int32_t version) override {
    ::Stat stat{};
    const int rc = zoo_set2(zh_, path.c_str(), data.data(), static_cast<int>(data.size()), version, &stat);
    if (rc != ZOK) return ZooStatus(rc, absl::StrCat("set ", path));
    return FromC(stat);
  }
  absl::StatusOr<std::vector<std::string>> Children(const std::string& path, bool watch) override {
    std::vector<std::string> out;
    const int rc = ZooChildren(zh_, path, watch ? &CSession::WatchFired : nullptr, this, &out);
    if (rc != ZOK) return ZooStatus(rc, absl::StrCat("children of ", path));
    return out;
  }
  absl::Status Multi(const std::vector<ZooKeeperStore::Op>& ops, std::vector<absl::Status>* results) override {
    std::vector<zoo_op_t> c_ops(ops.size());
    std::vector<zoo_op_result_t> c_results(ops.size());
    std::vector<std::string> created(ops.size(), std::string(1024, '\0'));
    for (size_t i = 0; i < ops.size(); ++i) {
      const ZooKeeperStore::Op& op = ops[i];
      switch (op.kind) {
        case ZooKeeperStore::Op::Kind::kCheck:
          zoo_check_op_init(&c_ops[i], op.path.c_str(), op.version);
          break;
        case ZooKeeperStore::Op::Kind::kCreate:
          zoo_create_op_init(&c_ops[i], op.path.c_str(), op.data.data(), static_cast<int>(op.data.size()),
                             Acl(op.access), CFlags(op.mode), created[i].data(), static_cast<int>(created[i].size()));
          break;
        case ZooKeeperStore::Op::Kind::kSet:
          zoo_set_op_init(&c_ops[i], op.path.c_str(), op.data.data(), static_cast<int>(op.data.size()), op.version,
                          nullptr);
          break;
        case ZooKeeperStore::Op::Kind::kDelete:
          zoo_delete_op_init(&c_ops[i], op.path.c_str(), op.version);
          break;
      }
    }
    const int rc = zoo_multi(zh_, static_cast<int>(ops.size()), c_ops.data(), c_results.data());
    if (results != nullptr) {
      results->clear();
      // The per-op results are filled in only when the ensemble answered; a dropped connection leaves
      // every op's outcome unknown.
      const bool answered = rc == ZOK || !absl::IsUnavailable(ZooStatus(rc, ""));
      for (size_t i = 0; i < ops.size(); ++i) {
        results->push_back(ZooStatus(answered ? c_results[i].err : rc, absl::StrCat("multi op ", i, " on ", ops[i].path)));
      }
    }
    return ZooStatus(rc, absl::StrCat("multi of ", ops.size(), " ops"));
  }

 private:
  // The handle's watcher: session events (and watches set without a watcher of their own).
  static void Watcher(zhandle_t*, int type, int state, const char* path, void* context) {
    static_cast<CSession*>(context)->OnEvent(type, state, path != nullptr ? path : "");
  }
  // A watch's own watcher: the client also gives it the session's events, which the handle's watcher
  // reports already (once).
  static void WatchFired(zhandle_t*, int type, int state, const char* path, void* context) {
    if (type == ZOO_SESSION_EVENT) return;
    static_cast<CSession*>(context)->OnEvent(type, state, path != nullptr ? path : "");
  }
  void OnEvent(int type, int state, const std::string& path) {
    Event event;
    if (type == ZOO_SESSION_EVENT) {
      {
        MutexLock lock(&mu_);
        if (state == ZOO_CONNECTED_STATE) {
          connected_ = true;
          if (zh_ != nullptr) AuthenticateLocked();
        } else if (state == ZOO_EXPIRED_SESSION_STATE) {
          connected_ = false;
          expired_ = true;
        } else {
          connected_ = false;
        }
        cv_.SignalAll();
      }
      event.kind = state == ZOO_CONNECTED_STATE        ? Event::Kind::kConnected
                   : state == ZOO_EXPIRED_SESSION_STATE ? Event::Kind::kExpired
                                                        : Event::Kind::kDisconnected;
    } else if (type == ZOO_CREATED_EVENT) {
      event.kind = Event::Kind::kCreated;
    } else if (type == ZOO_DELETED_EVENT) {
      event.kind = Event::Kind::kDeleted;
    } else if (type == ZOO_CHANGED_EVENT) {
      event.kind = Event::Kind::kDataChanged;
    } else if (type == ZOO_CHILD_EVENT) {
      event.kind = Event::Kind::kChildrenChanged;
    } else {
      return;  // ZOO_NOTWATCHING_EVENT: nothing the contract has
    }
    if (type != ZOO_SESSION_EVENT) event.path = path;
    if (options_.on_event) options_.on_event(event);
  }
  // Once per handle, when it first connects (the client refuses credentials before that and sends them
  // again on each reconnect), ahead of every request: none is made before Connect returns.
  void AuthenticateLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (options_.token.empty() || authenticated_) return;
    const std::string& auth = credentials_.auth;
    authenticated_ = zoo_add_auth(zh_, "digest", auth.data(), static_cast<int>(auth.size()), nullptr, nullptr) == ZOK;
  }
  ACL_vector* Acl(ZooKeeperStore::Access access) {
    return options_.token.empty() || access == ZooKeeperStore::Access::kOpen ? &ZOO_OPEN_ACL_UNSAFE : &acl_;
  }

  const ZooKeeperStore::SessionOptions options_;
  ZooKeeperCredentials credentials_;
  std::string scheme_ = "digest";
  ACL entry_{};
  ACL_vector acl_{};
  absl::Mutex mu_;
  zhandle_t* zh_ = nullptr;  // set once, under mu_, before Connect returns
  absl::CondVar cv_;
  bool connected_ ABSL_GUARDED_BY(mu_) = false;
  bool expired_ ABSL_GUARDED_BY(mu_) = false;
  bool authenticated_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ZooKeeperStore::Session>> CZooKeeperStore::Open(const SessionOptions& options) {
  auto session = std::make_unique<CSession>(options);
  if (absl::Status s = session->Connect(); !s.ok()) return s;
  return session;
}

}  // namespace fathom::coordinator
