// SimZooKeeperStore: an in-memory ZooKeeper ensemble for the deterministic simulation, behind the same
// ZooKeeperStore contract as the C client (coordinator/zookeeper_store.h; both pass
// zookeeper_store_conformance_test). Time is an injected clock; nothing happens by itself: Deliver runs the
// session expiries that are due and hands out queued events, and the simulation calls it from a task.
//
// Faults, at any moment:
//   CutOff(client)      the client loses the ensemble: its sessions see kDisconnected, their calls and new
//                       Opens fail Unavailable, and each expires once its timeout passed since its last
//                       contact (its ephemerals go, watches fire for the others); the ensemble and everyone
//                       else go on.
//   Reconnect(client)   sessions still alive see kConnected (and the watch events they missed), expired
//                       ones kExpired.
//   Expire(session)     the ensemble ends a session at once (as after a long silence).
//   GoDown() / ComeUp() the whole ensemble stops: every session sees kDisconnected and every call fails; no
//                       session expires while it is down, and each gets a full timeout when it comes back.
//   HoldEvents(true)    events queue until HoldEvents(false): watches and session news arrive late;
//   HoldEvents(c, true) the same for client c's sessions only (one member's slow watches).
// Peek(path) reads a znode as the ensemble holds it (no session, no access check): what tests assert on.
//
//   SimulatedClock clock;
//   SimZooKeeperStore zk(&clock);
//   options.client = 3;
//   ASSIGN_OR_RETURN(auto session, zk.Open(options));
//   zk.CutOff(3); clock.Advance(options.timeout); zk.Deliver();  // expired
#ifndef FATHOM_TESTS_SIM_SIM_ZOOKEEPER_H_
#define FATHOM_TESTS_SIM_SIM_ZOOKEEPER_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/zookeeper_store.h"
#include "platform/base/clock.h"

namespace fathom::sim {

class SimZooKeeperStore final : public coordinator::ZooKeeperStore {
 public:
  struct Options {
    // Session timeouts are clamped to 2..20 ticks, as ZooKeeper does.
    absl::Duration tick = absl::Milliseconds(500);
  };
  explicit SimZooKeeperStore(const Clock* clock);
  SimZooKeeperStore(const Clock* clock, Options options);
  ~SimZooKeeperStore() override;

  absl::StatusOr<std::unique_ptr<Session>> Open(const SessionOptions& options) override;

  void CutOff(uint32_t client);
  void Reconnect(uint32_t client);
  void Expire(int64_t session);
  void GoDown();
  void ComeUp();
  void HoldEvents(bool hold);
  void HoldEvents(uint32_t client, bool hold);
  // NotFound when there is no such znode.
  absl::StatusOr<std::string> Peek(const std::string& path) const;
  // Expires the sessions that are due and hands out the queued events (outside the store's lock: a
  // callback may call the store). Returns how many events it handed out.
  size_t Deliver();

  bool cut_off(uint32_t client) const;
  bool down() const;

 private:
  class Handle;
  struct Znode {
    std::string data;
    int32_t version = 0;
    int64_t ephemeral_owner = 0;
    int64_t mtime_ms = 0;
    std::string token;       // empty: open to all
    int64_t cversion = 0;  // creates and deletes of its children: a sequential child's number
  };
  using Tree = std::map<std::string, Znode>;
  struct Pending {
    Event event;
    absl::Time not_before;  // a client notices a silent ensemble late
    bool from_ensemble;     // reaches the client only over a connection (not its own notice of a silence)
  };
  struct SessionState {
    int64_t id = 0;
    uint32_t client = 0;
    std::string token;
    absl::Duration timeout;
    absl::Time last_contact;
    bool connected = true;
    bool expired = false;
    Handle* handle = nullptr;  // the one that gets its events (the latest Open of it)
    std::deque<Pending> events;  // not handed out yet
  };
  // One change to the tree, for the watches it fires.
  struct Change {
    enum class Kind { kCreated, kDeleted, kDataChanged } kind;
    std::string path;
  };

  absl::Status Usable(int64_t session) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Touch(int64_t session) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads and checks a path's access for `session`.
  absl::StatusOr<const Znode*> Find(const Tree& tree, const std::string& path, int64_t session) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The ops of a Create/Set/Delete/Check on `tree` (a copy, for Multi); changes appended.
  absl::StatusOr<std::string> ApplyCreate(Tree& tree, const Op& op, int64_t session, std::vector<Change>* changes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ApplyDelete(Tree& tree, const std::string& path, int32_t version, int64_t session,
                           std::vector<Change>* changes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<Stat> ApplySet(Tree& tree, const std::string& path, const std::string& data, int32_t version,
                                int64_t session, std::vector<Change>* changes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ApplyCheck(const Tree& tree, const std::string& path, int32_t version, int64_t session)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Fires the watches `changes` trigger.
  void Fire(const std::vector<Change>& changes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Queue(int64_t session, Event event, absl::Time not_before = absl::InfinitePast(), bool from_ensemble = true)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The session is over: its ephemerals go (firing watches), it hears kExpired once it can.
  void EndSession(int64_t session, bool closed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Stat StatOf(const Tree& tree, const std::string& path) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<std::string> ChildrenOf(const Tree& tree, const std::string& path) const;

  const Clock* const clock_;
  const Options options_;
  mutable absl::Mutex mu_;
  Tree tree_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, SessionState> sessions_ ABSL_GUARDED_BY(mu_);
  std::set<uint32_t> cut_off_ ABSL_GUARDED_BY(mu_);
  bool down_ ABSL_GUARDED_BY(mu_) = false;
  bool hold_events_ ABSL_GUARDED_BY(mu_) = false;
  std::set<uint32_t> held_clients_ ABSL_GUARDED_BY(mu_);
  int64_t next_session_ ABSL_GUARDED_BY(mu_) = 0x5100;
  // Watches: path -> sessions.
  std::map<std::string, std::set<int64_t>> data_watches_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<int64_t>> child_watches_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fathom::sim

#endif  // FATHOM_TESTS_SIM_SIM_ZOOKEEPER_H_
