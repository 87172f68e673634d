// ZooKeeperStore: the one seam between Fathom's coordinator and ZooKeeper, narrow enough to simulate.
//
// A store opens Sessions. A Session makes the calls the coordinator needs (create, delete, exists, get,
// set, children, multi), each returning a Status, and reports what happens to it (connected,
// disconnected, expired) and the watches it set, through callbacks. Two implementations:
// CZooKeeperStore (the ZooKeeper C client, zookeeper_mt: what fathomd runs) and SimZooKeeperStore (an
// in-memory ensemble on an injected clock that can lose a client's connection, expire sessions, hold
// back watch events and go down: the deterministic simulation).
//
//   ZooKeeperStore::SessionOptions options;
//   options.timeout = absl::Seconds(10);
//   options.on_event = [&](const ZooKeeperStore::Event& e) { /* record it, wake a worker */ };
//   ASSIGN_OR_RETURN(std::unique_ptr<ZooKeeperStore::Session> s, store->Open(options));
//   ASSIGN_OR_RETURN(std::string path, s->Create("/fathom/x/election/n_", "1", kEphemeralSequential));
//   ASSIGN_OR_RETURN(ZooKeeperStore::Data config, s->Get("/fathom/x/config", /*watch=*/true));
//
// Contract (both implementations, checked by zookeeper_store_conformance_test):
// - Errors: NotFound (no such znode, or a parent missing), AlreadyExists, Aborted (a version check
//   failed), FailedPrecondition (deleting a znode with children; children of an ephemeral), Unavailable
//   (not connected, or the connection dropped during the call: a write may or may not have happened),
//   PermissionDenied (the session's credentials do not open the znode), InvalidArgument (a bad path).
// - Versions start at 0 and grow by one per Set; a version of -1 matches any.
// - Ephemeral znodes belong to the session that made them and go when it ends (closed or expired).
//   Sequential creates append a 10-digit counter kept per parent.
// - Children are returned sorted.
// - A watch fires once, as an Event to the session that set it: kCreated or kDataChanged or kDeleted for
//   Exists/Get, kChildrenChanged (or kDeleted) for Children. Events of one session arrive in order.
// - Session events: kConnected (also after a reconnect on the same session: watches may have been missed,
//   so read again), kDisconnected (the session may still live; the store reconnects by itself), kExpired
//   (the session is over: its ephemerals are gone; open a new one). After kExpired every call fails
//   Unavailable.
// - Multi applies every op or none; on failure it returns the first failure, and `results` holds, as
//   ZooKeeper reports them: OK for the ops before it (rolled back), its error, Aborted for those after.
// - Threading: a Session's calls may come from any thread and block until answered; callbacks run on a
//   thread of the store (C client) or within a call of the simulation's Deliver (never inside another
//   call of the same session). Destroy a Session before its store; destroying it closes it.
#ifndef FATHOM_COORDINATOR_ZOOKEEPER_STORE_H_
#define FATHOM_COORDINATOR_ZOOKEEPER_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fathom::coordinator {

class ZooKeeperStore {
 public:
  enum class CreateMode { kPersistent, kEphemeral, kPersistentSequential, kEphemeralSequential };
  // Who may use a znode created with a token: its holders only (the cluster's znodes), or anyone
  // (/fathom, which every cluster on the ensemble shares). Without a token every znode is open.
  enum class Access { kToken, kOpen };

  struct Stat {
    int32_t version = 0;          // of the data
    int64_t ephemeral_owner = 0;  // the session that owns it; 0: persistent
    int64_t mtime_ms = 0;         // when the data last changed, by the ensemble's clock (ms since the epoch)
    int32_t num_children = 0;
  };
  struct Data {
    std::string bytes;
    Stat stat;
  };

  struct Op {
    enum class Kind { kCheck, kCreate, kSet, kDelete };
    Kind kind = Kind::kCheck;
    std::string path;
    std::string data;                         // kCreate, kSet
    int32_t version = -1;                     // kCheck, kSet, kDelete
    CreateMode mode = CreateMode::kPersistent;  // kCreate
    Access access = Access::kToken;             // kCreate
    static Op Check(std::string path, int32_t version);
    static Op Create(std::string path, std::string data, CreateMode mode = CreateMode::kPersistent,
                     Access access = Access::kToken);
    static Op Set(std::string path, std::string data, int32_t version);
    static Op Delete(std::string path, int32_t version);
  };

  struct Event {
    enum class Kind { kConnected, kDisconnected, kExpired, kCreated, kDeleted, kDataChanged, kChildrenChanged };
    Kind kind;
    std::string path;  // empty for the session events
  };

  struct SessionOptions {
    std::string connect_string;  // "host:port[,...]" (the C client); the simulation ignores it
    uint32_t client = 0;         // who opens it: the simulation's faults name it; the C client ignores it
    // Asked of the ensemble, which may clamp it (Session::timeout() says what it granted).
    absl::Duration timeout = absl::Seconds(10);
    // How long Open waits for the first connection.
    absl::Duration connect_timeout = absl::Seconds(10);
    // The cluster token: its digest credentials are added (zookeeper_acl.h), and znodes created with
    // Access::kToken are open to them only. Empty: none, and every znode is open.
    std::string token;
    // Resume this session (Session::resume_token() of a live one) instead of starting a new one.
    std::string resume;
    std::function<void(const Event&)> on_event;
  };

  class Session {
   public:
    virtual ~Session() = default;  // closes the session: its ephemerals go
    virtual int64_t id() const = 0;
    // The timeout the ensemble granted.
    virtual absl::Duration timeout() const = 0;
    // What SessionOptions::resume takes to resume this session on another handle.
    virtual std::string resume_token() const = 0;

    // The path created (with its sequence number for a sequential mode).
    virtual absl::StatusOr<std::string> Create(const std::string& path, const std::string& data,
                                               CreateMode mode = CreateMode::kPersistent,
                                               Access access = Access::kToken) = 0;
    virtual absl::Status Delete(const std::string& path, int32_t version = -1) = 0;
    // NotFound if there is none (with `watch`, the watch then fires on its creation).
    virtual absl::StatusOr<Stat> Exists(const std::string& path, bool watch = false) = 0;
    virtual absl::StatusOr<Data> Get(const std::string& path, bool watch = false) = 0;
    virtual absl::StatusOr<Stat> Set(const std::string& path, const std::string& data, int32_t version = -1) = 0;
    // Sorted.
    virtual absl::StatusOr<std::vector<std::string>> Children(const std::string& path, bool watch = false) = 0;
    // All or nothing; `results` (optional) gets one status per op.
    virtual absl::Status Multi(const std::vector<Op>& ops, std::vector<absl::Status>* results = nullptr) = 0;
  };

  virtual ~ZooKeeperStore() = default;
  // A connected session, or Unavailable when none is up within options.connect_timeout, NotFound when
  // the session to resume (options.resume) has ended (open a new one), InvalidArgument for a connect
  // string the client refuses.
  virtual absl::StatusOr<std::unique_ptr<Session>> Open(const SessionOptions& options) = 0;
};

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_ZOOKEEPER_STORE_H_
