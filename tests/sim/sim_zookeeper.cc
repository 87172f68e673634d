#include "tests/sim/sim_zookeeper.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "platform/base/mutex.h"

namespace fathom::sim {
namespace {

using coordinator::ZooKeeperStore;
using Event = ZooKeeperStore::Event;

bool ValidPath(const std::string& path) {
  if (path.empty() || path[0] != '/') return false;
  if (path == "/") return true;
  return path.back() != '/' && path.find("//") == std::string::npos;
}

std::string Parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool Sequential(ZooKeeperStore::CreateMode mode) {
  return mode == ZooKeeperStore::CreateMode::kPersistentSequential ||
         mode == ZooKeeperStore::CreateMode::kEphemeralSequential;
}

bool Ephemeral(ZooKeeperStore::CreateMode mode) {
  return mode == ZooKeeperStore::CreateMode::kEphemeral || mode == ZooKeeperStore::CreateMode::kEphemeralSequential;
}

}  // namespace

// A client's handle on a session; calls go to the store under its lock.
class SimZooKeeperStore::Handle final : public ZooKeeperStore::Session {
 public:
  Handle(SimZooKeeperStore* store, int64_t id, absl::Duration timeout, std::function<void(const Event&)> on_event)
      : store_(store), id_(id), timeout_(timeout), on_event_(std::move(on_event)) {}
  ~Handle() override {
    MutexLock lock(&store_->mu_);
    auto it = store_->sessions_.find(id_);
    if (it == store_->sessions_.end() || it->second.handle != this) return;  // another handle took it over
    // Closing reaches the ensemble only over a live connection; otherwise the session stays until it expires.
    if (store_->Usable(id_).ok()) {
      store_->EndSession(id_, /*closed=*/true);
      store_->sessions_.erase(id_);
    } else if (it->second.expired) {
      store_->sessions_.erase(id_);
    } else {
      it->second.handle = nullptr;
      it->second.events.clear();
    }
  }

  int64_t id() const override { return id_; }
  absl::Duration timeout() const override { return timeout_; }
  std::string resume_token() const override { return absl::StrCat(id_); }
  const std::function<void(const Event&)>& on_event() const { return on_event_; }

  absl::StatusOr<std::string> Create(const std::string& path, const std::string& data, CreateMode mode,
                                     Access access) override {
    MutexLock lock(&store_->mu_);
    if (absl::Status s = Current(); !s.ok()) return s;
    std::vector<Change> changes;
    absl::StatusOr<std::string> created = store_->ApplyCreate(store_->tree_, Op::Create(path, data, mode, access), id_,
                                                              &changes);
    store_->Fire(changes);
    return created;
  }
  absl::Status Delete(const std::string& path, int32_t version) override {
    MutexLock lock(&store_->mu_);
    if (absl::Status s = Current(); !s.ok()) return s;
    std::vector<Change> changes;
    absl::Status deleted = store_->ApplyDelete(store_->tree_, path, version, id_, &changes);
    store_->Fire(changes);
    return deleted;
  }
  absl::StatusOr<Stat> Exists(const std::string& path, bool watch) override {
    MutexLock lock(&store_->mu_);
    if (absl::Status s = Current(); !s.ok()) return s;
    if (!ValidPath(path)) return absl::InvalidArgumentError(absl::StrCat("exists ", path, ": bad path"));
    if (watch) store_->data_watches_[path].insert(id_);  // fires on its creation if there is none
    absl::StatusOr<const Znode*> node = store_->Find(store_->tree_, path, id_);
    if (!node.ok()) return node.status();
    return store_->StatOf(store_->tree_, path);
  }
  absl::StatusOr<Data> Get(const std::string& path, bool watch) override {
    MutexLock lock(&store_->mu_);
    if (absl::Status s = Current(); !s.ok()) return s;
    absl::StatusOr<const Znode*> node = store_->Find(store_->tree_, path, id_);
    if (!node.ok()) return node.status();
    if (watch) store_->data_watches_[path].insert(id_);
    return Data{(*node)->data, store_->StatOf(store_->tree_, path)};
  }
  absl::StatusOr<Stat> Set(const std::string& path, const std::string& data, int32_t version) override {
    MutexLock lock(&store_->mu_);
    if (absl::Status s = Current(); !s.ok()) return s;
    std::vector<Change> changes;
    absl::StatusOr<Stat> set = store_->ApplySet(store_->tree_, path, data, version, id_, &changes);
    store_->Fire(changes);
    return set;
  }
  absl::StatusOr<std::vector<std::string>> Children(const std::string& path, bool watch) override {
    MutexLock lock(&store_->mu_);
    if (absl::Status s = Current(); !s.ok()) return s;
    absl::StatusOr<const Znode*> node = store_->Find(store_->tree_, path, id_);
    if (!node.ok()) return node.status();
    if (watch) store_->child_watches_[path].insert(id_);
    return store_->ChildrenOf(store_->tree_, path);
  }
  absl::Status Multi(const std::vector<Op>& ops, std::vector<absl::Status>* results) override {
    MutexLock lock(&store_->mu_);
    if (absl::Status s = Current(); !s.ok()) {
      if (results != nullptr) results->assign(ops.size(), s);
      return s;
    }
    // On a copy: all or nothing.
    Tree tree = store_->tree_;
    std::vector<Change> changes;
    std::vector<absl::Status> statuses;
    absl::Status first;
    for (const Op& op : ops) {
      absl::Status s;
      if (!first.ok()) {
        s = absl::AbortedError(absl::StrCat("multi op on ", op.path, ": not applied (an earlier op failed)"));
      } else if (op.kind == Op::Kind::kCheck) {
        s = store_->ApplyCheck(tree, op.path, op.version, id_);
      } else if (op.kind == Op::Kind::kCreate) {
        s = store_->ApplyCreate(tree, op, id_, &changes).status();
      } else if (op.kind == Op::Kind::kSet) {
        s = store_->ApplySet(tree, op.path, op.data, op.version, id_, &changes).status();
      } else {
        s = store_->ApplyDelete(tree, op.path, op.version, id_, &changes);
      }
      if (first.ok() && !s.ok()) first = s;
      statuses.push_back(s);
    }
    if (first.ok()) {
      store_->tree_ = std::move(tree);
      store_->Fire(changes);
    }
    // As ZooKeeper reports a failed multi: the ops before the failure OK (rolled back), the failing one
    // its error, the ones after Aborted (not tried).
    if (results != nullptr) *results = std::move(statuses);
    return first;
  }

 private:
  absl::Status Current() ABSL_EXCLUSIVE_LOCKS_REQUIRED(store_->mu_) {
    auto it = store_->sessions_.find(id_);
    if (it == store_->sessions_.end() || it->second.handle != this) {
      return absl::UnavailableError(absl::StrCat("session ", absl::Hex(id_), " is not this handle's any more"));
    }
    if (absl::Status s = store_->Usable(id_); !s.ok()) return s;
    store_->Touch(id_);
    return absl::OkStatus();
  }

  SimZooKeeperStore* const store_;
  const int64_t id_;
  const absl::Duration timeout_;
  const std::function<void(const Event&)> on_event_;
};

SimZooKeeperStore::SimZooKeeperStore(const Clock* clock) : SimZooKeeperStore(clock, Options()) {}

SimZooKeeperStore::SimZooKeeperStore(const Clock* clock, Options options) : clock_(clock), options_(options) {
  tree_["/"] = Znode{};
}

SimZooKeeperStore::~SimZooKeeperStore() = default;

absl::StatusOr<std::unique_ptr<ZooKeeperStore::Session>> SimZooKeeperStore::Open(const SessionOptions& options) {
  MutexLock lock(&mu_);
  if (down_ || cut_off_.contains(options.client)) {
    return absl::UnavailableError(absl::StrCat("the simulated ZooKeeper is unreachable from client ", options.client));
  }
  const absl::Time now = clock_->Now();
  int64_t id = 0;
  if (!options.resume.empty()) {
    auto it = absl::SimpleAtoi(options.resume, &id) ? sessions_.find(id) : sessions_.end();
    if (it == sessions_.end() || it->second.expired) {
      return absl::NotFoundError(absl::StrCat("session ", options.resume, " to resume has expired"));
    }
  } else {
    id = next_session_++;
    SessionState& state = sessions_[id];
    state.id = id;
    state.client = options.client;
    state.token = options.token;
    state.timeout = std::clamp(options.timeout, 2 * options_.tick, 20 * options_.tick);
  }
  SessionState& state = sessions_[id];
  auto handle = std::make_unique<Handle>(this, id, state.timeout, options.on_event);
  state.handle = handle.get();
  state.connected = true;
  state.last_contact = now;
  state.events.clear();
  Queue(id, Event{Event::Kind::kConnected, ""}, absl::InfinitePast(), /*from_ensemble=*/false);  // heard in Open
  return handle;
}

absl::Status SimZooKeeperStore::Usable(int64_t session) const {
  auto it = sessions_.find(session);
  if (it == sessions_.end() || it->second.expired) {
    return absl::UnavailableError(absl::StrCat("ZooKeeper session ", absl::Hex(session), " expired"));
  }
  if (down_ || !it->second.connected || cut_off_.contains(it->second.client)) {
    return absl::UnavailableError("connection loss: the simulated ZooKeeper is unreachable");
  }
  return absl::OkStatus();
}

void SimZooKeeperStore::Touch(int64_t session) { sessions_[session].last_contact = clock_->Now(); }

absl::StatusOr<const SimZooKeeperStore::Znode*> SimZooKeeperStore::Find(const Tree& tree, const std::string& path,
                                                                        int64_t session) const {
  if (!ValidPath(path)) return absl::InvalidArgumentError(absl::StrCat(path, ": bad path"));
  auto it = tree.find(path);
  if (it == tree.end()) return absl::NotFoundError(absl::StrCat(path, ": no node"));
  const std::string& token = sessions_.at(session).token;
  if (!it->second.token.empty() && it->second.token != token) {
    return absl::PermissionDeniedError(absl::StrCat(path, ": not authenticated (the cluster's token's credentials)"));
  }
  return &it->second;
}

absl::StatusOr<std::string> SimZooKeeperStore::ApplyCreate(Tree& tree, const Op& op, int64_t session,
                                                           std::vector<Change>* changes) {
  if (!ValidPath(op.path) || op.path == "/") return absl::InvalidArgumentError(absl::StrCat("create ", op.path, ": bad path"));
  const std::string parent_path = Parent(op.path);
  absl::StatusOr<const Znode*> parent = Find(tree, parent_path, session);
  if (!parent.ok()) return parent.status();
  if ((*parent)->ephemeral_owner != 0) {
    return absl::FailedPreconditionError(absl::StrCat("create ", op.path, ": ephemeral nodes may not have children"));
  }
  std::string path = op.path;
  if (Sequential(op.mode)) path += absl::StrFormat("%010d", (*parent)->cversion);
  if (tree.contains(path)) return absl::AlreadyExistsError(absl::StrCat("create ", path, ": node exists"));
  ++tree[parent_path].cversion;
  Znode node;
  node.data = op.data;
  node.ephemeral_owner = Ephemeral(op.mode) ? session : 0;
  node.mtime_ms = absl::ToUnixMillis(clock_->Now());
  node.token = op.access == Access::kToken ? sessions_.at(session).token : "";
  tree[path] = std::move(node);
  changes->push_back(Change{Change::Kind::kCreated, path});
  return path;
}

absl::Status SimZooKeeperStore::ApplyDelete(Tree& tree, const std::string& path, int32_t version, int64_t session,
                                            std::vector<Change>* changes) {
  if (path == "/") return absl::InvalidArgumentError("delete /: bad path");
  absl::StatusOr<const Znode*> node = Find(tree, path, session);
  if (!node.ok()) return node.status();
  if (version != -1 && (*node)->version != version) {
    return absl::AbortedError(absl::StrCat("delete ", path, ": bad version"));
  }
  if (!ChildrenOf(tree, path).empty()) return absl::FailedPreconditionError(absl::StrCat("delete ", path, ": not empty"));
  tree.erase(path);
  ++tree[Parent(path)].cversion;
  changes->push_back(Change{Change::Kind::kDeleted, path});
  return absl::OkStatus();
}

absl::StatusOr<ZooKeeperStore::Stat> SimZooKeeperStore::ApplySet(Tree& tree, const std::string& path,
                                                                  const std::string& data, int32_t version,
                                                                  int64_t session, std::vector<Change>* changes) {
  absl::StatusOr<const Znode*> found = Find(tree, path, session);
  if (!found.ok()) return found.status();
  Znode& node = tree[path];
  if (version != -1 && node.version != version) return absl::AbortedError(absl::StrCat("set ", path, ": bad version"));
  node.data = data;
  ++node.version;
  node.mtime_ms = absl::ToUnixMillis(clock_->Now());
  changes->push_back(Change{Change::Kind::kDataChanged, path});
  return StatOf(tree, path);
}

absl::Status SimZooKeeperStore::ApplyCheck(const Tree& tree, const std::string& path, int32_t version,
                                           int64_t session) {
  absl::StatusOr<const Znode*> node = Find(tree, path, session);
  if (!node.ok()) return node.status();
  if (version != -1 && (*node)->version != version) return absl::AbortedError(absl::StrCat("check ", path, ": bad version"));
  return absl::OkStatus();
}

void SimZooKeeperStore::Fire(const std::vector<Change>& changes) {
  auto fire = [this](std::map<std::string, std::set<int64_t>>& watches, const std::string& path, Event::Kind kind) {
    auto it = watches.find(path);
    if (it == watches.end()) return;
    const std::set<int64_t> watchers = std::move(it->second);
    watches.erase(it);
    for (int64_t session : watchers) Queue(session, Event{kind, path});
  };
  for (const Change& change : changes) {
    switch (change.kind) {
      case Change::Kind::kCreated:
        fire(data_watches_, change.path, Event::Kind::kCreated);
        fire(child_watches_, Parent(change.path), Event::Kind::kChildrenChanged);
        break;
      case Change::Kind::kDeleted:
        fire(data_watches_, change.path, Event::Kind::kDeleted);
        fire(child_watches_, change.path, Event::Kind::kDeleted);
        fire(child_watches_, Parent(change.path), Event::Kind::kChildrenChanged);
        break;
      case Change::Kind::kDataChanged:
        fire(data_watches_, change.path, Event::Kind::kDataChanged);
        break;
    }
  }
}

void SimZooKeeperStore::Queue(int64_t session, Event event, absl::Time not_before, bool from_ensemble) {
  auto it = sessions_.find(session);
  if (it == sessions_.end() || (it->second.expired && event.kind != Event::Kind::kExpired)) return;
  it->second.events.push_back(Pending{std::move(event), not_before, from_ensemble});
}

void SimZooKeeperStore::EndSession(int64_t session, bool closed) {
  std::vector<Change> changes;
  for (auto it = tree_.begin(); it != tree_.end();) {
    if (it->second.ephemeral_owner == session) {
      changes.push_back(Change{Change::Kind::kDeleted, it->first});
      ++tree_[Parent(it->first)].cversion;  // a parent sorts before its children: `it` stays valid
      it = tree_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto* watches : {&data_watches_, &child_watches_}) {
    for (auto& [path, sessions] : *watches) sessions.erase(session);
  }
  SessionState& state = sessions_[session];
  state.expired = true;
  state.connected = false;
  state.events.clear();
  if (!closed) Queue(session, Event{Event::Kind::kExpired, ""});
  Fire(changes);
}

ZooKeeperStore::Stat SimZooKeeperStore::StatOf(const Tree& tree, const std::string& path) const {
  const Znode& node = tree.at(path);
  return Stat{.version = node.version,
              .ephemeral_owner = node.ephemeral_owner,
              .mtime_ms = node.mtime_ms,
              .num_children = static_cast<int32_t>(ChildrenOf(tree, path).size())};
}

std::vector<std::string> SimZooKeeperStore::ChildrenOf(const Tree& tree, const std::string& path) const {
  const std::string prefix = path == "/" ? "/" : path + "/";
  std::vector<std::string> children;
  for (auto it = tree.lower_bound(prefix); it != tree.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    const std::string rest = it->first.substr(prefix.size());
    if (!rest.empty() && rest.find('/') == std::string::npos) children.push_back(rest);
  }
  return children;  // the map's order: sorted
}

void SimZooKeeperStore::CutOff(uint32_t client) {
  MutexLock lock(&mu_);
  if (!cut_off_.insert(client).second) return;
  for (auto& [id, state] : sessions_) {
    if (state.client != client || state.expired || !state.connected) continue;
    state.connected = false;
    // The connection goes silent: the client notices when 2/3 of its timeout pass without an answer.
    Queue(id, Event{Event::Kind::kDisconnected, ""}, state.last_contact + state.timeout * 2 / 3,
          /*from_ensemble=*/false);
  }
}

void SimZooKeeperStore::Reconnect(uint32_t client) {
  MutexLock lock(&mu_);
  if (cut_off_.erase(client) == 0 || down_) return;
  const absl::Time now = clock_->Now();
  for (auto& [id, state] : sessions_) {
    if (state.client != client || state.expired || state.handle == nullptr) continue;
    state.connected = true;
    state.last_contact = now;
    Queue(id, Event{Event::Kind::kConnected, ""});
  }
}

void SimZooKeeperStore::Expire(int64_t session) {
  MutexLock lock(&mu_);
  auto it = sessions_.find(session);
  if (it != sessions_.end() && !it->second.expired) EndSession(session, /*closed=*/false);
}

void SimZooKeeperStore::GoDown() {
  MutexLock lock(&mu_);
  if (down_) return;
  down_ = true;
  for (auto& [id, state] : sessions_) {
    if (state.expired || !state.connected) continue;
    state.connected = false;
    // The ensemble's sockets close: noticed at once.
    Queue(id, Event{Event::Kind::kDisconnected, ""}, absl::InfinitePast(), /*from_ensemble=*/false);
  }
}

void SimZooKeeperStore::ComeUp() {
  MutexLock lock(&mu_);
  if (!down_) return;
  down_ = false;
  const absl::Time now = clock_->Now();
  for (auto& [id, state] : sessions_) {
    if (state.expired) continue;
    state.last_contact = now;  // a restarted ensemble gives every session a full timeout
    if (cut_off_.contains(state.client) || state.handle == nullptr) continue;
    state.connected = true;
    Queue(id, Event{Event::Kind::kConnected, ""});
  }
}

void SimZooKeeperStore::HoldEvents(bool hold) {
  MutexLock lock(&mu_);
  hold_events_ = hold;
}

void SimZooKeeperStore::HoldEvents(uint32_t client, bool hold) {
  MutexLock lock(&mu_);
  if (hold) {
    held_clients_.insert(client);
  } else {
    held_clients_.erase(client);
  }
}

absl::StatusOr<std::string> SimZooKeeperStore::Peek(const std::string& path) const {
  MutexLock lock(&mu_);
  auto it = tree_.find(path);
  if (it == tree_.end()) return absl::NotFoundError(absl::StrCat(path, ": no node"));
  return it->second.data;
}

size_t SimZooKeeperStore::Deliver() {
  std::vector<std::pair<std::function<void(const Event&)>, Event>> out;
  {
    MutexLock lock(&mu_);
    const absl::Time now = clock_->Now();
    std::vector<int64_t> due;
    for (auto& [id, state] : sessions_) {
      if (state.expired) continue;
      if (!down_ && state.connected) {
        state.last_contact = now;  // a connected client pings
      } else if (!down_ && now - state.last_contact >= state.timeout) {
        due.push_back(id);
      }
    }
    for (int64_t id : due) EndSession(id, /*closed=*/false);
    if (!hold_events_) {
      for (auto& [id, state] : sessions_) {
        if (state.handle == nullptr || held_clients_.contains(state.client)) continue;
        const bool reachable = !down_ && !cut_off_.contains(state.client);
        while (!state.events.empty()) {
          const Pending& next = state.events.front();
          if (now < next.not_before || (next.from_ensemble && !reachable)) break;
          out.emplace_back(state.handle->on_event(), next.event);
          state.events.pop_front();
        }
      }
    }
  }
  for (const auto& [callback, event] : out) {
    if (callback) callback(event);
  }
  return out.size();
}

bool SimZooKeeperStore::cut_off(uint32_t client) const {
  MutexLock lock(&mu_);
  return cut_off_.contains(client);
}

bool SimZooKeeperStore::down() const {
  MutexLock lock(&mu_);
  return down_;
}

}  // namespace fathom::sim
