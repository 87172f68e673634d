// LocalCoordinator: the Coordinator interface with every node in one process (the embedded cluster, unit
// tests). A LocalCoordinationService plays ZooKeeper and the configuration manager; each node gets its own
// LocalCoordinator handle from it, and destroying a joined handle is that node's "session" ending (it
// leaves).
//
// Changes are compare-and-set on the epoch: Update reads the configuration, runs the mutation without any
// lock held, and commits only if nobody committed meanwhile (else it retries), so concurrent writers never
// lose a change. The configuration manager is the earliest-joined live member; membership changes are
// committed by the service on its behalf. Each handle delivers its subscribers' callbacks on its own thread
// (SubscriberList), never under a lock, so a callback may call any coordinator method. Destroy
// Subscriptions before their LocalCoordinator, and every LocalCoordinator before the service.
//
//   LocalCoordinationService service("test");
//   std::unique_ptr<LocalCoordinator> a = service.NewCoordinator();
//   RETURN_IF_ERROR(a->Join(member_a));
//   auto sub = a->Subscribe([](const Configuration& c) { ... });
//   ASSIGN_OR_RETURN(RegionAllocation r, a->AllocateRegion(1 << 20, 2));
#ifndef FATHOM_COORDINATOR_LOCAL_COORDINATOR_H_
#define FATHOM_COORDINATOR_LOCAL_COORDINATOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/coordinator.h"
#include "coordinator/subscribers.h"

namespace fathom::coordinator {

class LocalCoordinator;

class LocalCoordinationService {
 public:
  explicit LocalCoordinationService(std::string cluster = "fathom");
  ~LocalCoordinationService();

  std::unique_ptr<LocalCoordinator> NewCoordinator();

  // The committed configuration (epoch 0 and no members before the first change).
  Configuration configuration() const;
  // Committed changes and lost races, for tests.
  uint64_t commits() const;
  uint64_t conflicts() const;

 private:
  friend class LocalCoordinator;
  // Commits `next` (NextConfiguration of the configuration of `expected_epoch`) if the committed epoch is
  // still `expected_epoch`; Aborted if not.
  absl::Status CompareAndSet(uint64_t expected_epoch, Configuration next);
  absl::StatusOr<Configuration> Update(const Coordinator::Mutation& mutation);
  absl::Status AddMember(LocalCoordinator* handle, const MemberInfo& member);
  void RemoveMember(uint32_t node_id);
  // RemoveExpiredMember on behalf of `manager`: the member's handle counts as not joined afterwards.
  absl::Status RemoveExpired(uint32_t manager, uint32_t node_id, uint64_t incarnation, ExpiredMember expired);
  void Detach(LocalCoordinator* handle);
  bool IsLive(uint32_t node_id) const;
  uint32_t Manager() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string cluster_;
  mutable absl::Mutex mu_;
  Configuration config_ ABSL_GUARDED_BY(mu_);
  std::vector<LocalCoordinator*> handles_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<uint32_t, LocalCoordinator*>> joined_ ABSL_GUARDED_BY(mu_);  // in join order
  absl::flat_hash_set<uint32_t> clients_ ABSL_GUARDED_BY(mu_);  // client-only: never the manager
  uint64_t commits_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t conflicts_ ABSL_GUARDED_BY(mu_) = 0;
};

class LocalCoordinator final : public Coordinator {
 public:
  ~LocalCoordinator() override;  // leaves if joined

  absl::Status Join(const MemberInfo& member) override;
  absl::Status Leave() override;
  absl::StatusOr<Configuration> GetConfiguration() override;
  std::unique_ptr<Subscription> Subscribe(Callback callback) override;
  absl::StatusOr<Configuration> Update(const Mutation& mutation) override;
  absl::StatusOr<RegionAllocation> AllocateRegion(uint64_t size_bytes, int replicas) override;
  absl::Status ReportSuspect(uint32_t node_id, absl::Duration unconfirmed_for) override;
  absl::Status RemoveExpiredMember(uint32_t node_id, uint64_t incarnation,
                                   ExpiredMember expired = ExpiredMember::kUnseen) override;
  CoordinatorState state() const override;
  bool is_manager() const override;
  absl::Status ConfirmManager() override;

 private:
  friend class LocalCoordinationService;
  explicit LocalCoordinator(LocalCoordinationService* service) : service_(service) {}

  LocalCoordinationService* const service_;
  SubscriberList subscribers_;
  mutable absl::Mutex mu_;
  uint32_t node_id_ ABSL_GUARDED_BY(mu_) = 0;  // 0: not joined
};

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_LOCAL_COORDINATOR_H_
