#include "coordinator/local_coordinator.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "coordinator/admission.h"
#include "coordinator/allocation.h"
#include "coordinator/transition.h"
#include "platform/base/mutex.h"

namespace fathom::coordinator {

LocalCoordinationService::LocalCoordinationService(std::string cluster) : cluster_(std::move(cluster)) {}

LocalCoordinationService::~LocalCoordinationService() = default;

std::unique_ptr<LocalCoordinator> LocalCoordinationService::NewCoordinator() {
  std::unique_ptr<LocalCoordinator> handle(new LocalCoordinator(this));
  MutexLock lock(&mu_);
  handles_.push_back(handle.get());
  if (config_.epoch() > 0) handle->subscribers_.Publish(config_);
  return handle;
}

Configuration LocalCoordinationService::configuration() const {
  MutexLock lock(&mu_);
  return config_;
}

uint64_t LocalCoordinationService::commits() const {
  MutexLock lock(&mu_);
  return commits_;
}

uint64_t LocalCoordinationService::conflicts() const {
  MutexLock lock(&mu_);
  return conflicts_;
}

uint32_t LocalCoordinationService::Manager() const {
  for (const auto& [id, handle] : joined_) {
    if (!clients_.contains(id)) return id;
  }
  return 0;
}

absl::Status LocalCoordinationService::CompareAndSet(uint64_t expected_epoch, Configuration next) {
  MutexLock lock(&mu_);
  if (config_.epoch() != expected_epoch) {
    ++conflicts_;
    return absl::AbortedError(
        absl::StrCat("configuration changed: epoch ", config_.epoch(), ", expected ", expected_epoch));
  }
  config_ = std::move(next);
  ++commits_;
  // Publish only queues (SubscriberList never calls back under its lock), so holding mu_ here keeps every
  // handle's deliveries in commit order without risking a deadlock.
  for (LocalCoordinator* h : handles_) h->subscribers_.Publish(config_);
  return absl::OkStatus();
}

absl::StatusOr<Configuration> LocalCoordinationService::Update(const Coordinator::Mutation& mutation) {
  while (true) {
    const Configuration current = configuration();
    absl::StatusOr<Configuration> next = NextConfiguration(current, mutation);
    if (!next.ok()) return next.status();
    absl::Status s = CompareAndSet(current.epoch(), *next);
    if (s.ok()) return next;
    if (!absl::IsAborted(s)) return s;
  }
}

absl::Status LocalCoordinationService::AddMember(LocalCoordinator* handle, const MemberInfo& member) {
  {
    MutexLock lock(&mu_);
    for (const auto& [id, h] : joined_) {
      if (id == member.node_id()) {
        return absl::AlreadyExistsError(absl::StrCat("node ", id, " is already a live member of ", cluster_));
      }
    }
    joined_.push_back({member.node_id(), handle});
    if (member.client_only()) clients_.insert(member.node_id());
  }
  absl::StatusOr<Configuration> result = Update([&](Configuration& config) -> absl::Status {
    // A stale entry of an earlier incarnation: it left (its handle went), so nothing moves.
    RemoveDeparted(&config, member.node_id(), ExpiredMember::kUnseen);
    if (absl::Status s = AdmitMember(&config, member); !s.ok()) return s;
    MutexLock lock(&mu_);
    SetManager(&config, Manager());
    return absl::OkStatus();
  });
  if (!result.ok()) {
    MutexLock lock(&mu_);
    joined_.erase(std::remove_if(joined_.begin(), joined_.end(),
                                 [&](const auto& e) { return e.first == member.node_id(); }),
                  joined_.end());
    clients_.erase(member.node_id());
  }
  return result.status();
}

void LocalCoordinationService::RemoveMember(uint32_t node_id) {
  {
    MutexLock lock(&mu_);
    joined_.erase(
        std::remove_if(joined_.begin(), joined_.end(), [&](const auto& e) { return e.first == node_id; }),
        joined_.end());
    clients_.erase(node_id);
  }
  (void)Update([&](Configuration& config) -> absl::Status {
    RemoveDeparted(&config, node_id, ExpiredMember::kUnseen);  // it left: nothing moves
    MutexLock lock(&mu_);
    SetManager(&config, Manager());
    return absl::OkStatus();
  });
}

absl::Status LocalCoordinationService::RemoveExpired(uint32_t manager, uint32_t node_id, uint64_t incarnation,
                                                     ExpiredMember expired) {
  // All under mu_ (the check, the registration, the commit): a removed member that sees the new
  // configuration and joins again at once cannot have its new registration undone by this one.
  MutexLock lock(&mu_);
  if (config_.manager_id() != manager || Manager() != manager) {
    return absl::FailedPreconditionError(absl::StrCat("node ", manager, " is not the configuration manager"));
  }
  const MemberInfo* member = FindMember(config_, node_id);
  if (member == nullptr || member->incarnation() != incarnation) {
    return absl::NotFoundError(absl::StrCat("node ", node_id, " incarnation ", incarnation, " is not a member"));
  }
  absl::StatusOr<Configuration> next = NextConfiguration(config_, [&](Configuration& c) {
    RemoveDeparted(&c, node_id, expired);
    return absl::OkStatus();
  });
  if (!next.ok()) return next.status();
  for (auto it = joined_.begin(); it != joined_.end(); ++it) {
    if (it->first != node_id) continue;
    LocalCoordinator* handle = it->second;
    joined_.erase(it);
    MutexLock handle_lock(&handle->mu_);  // order: service, then handle (no path takes them the other way)
    handle->node_id_ = 0;                 // its Leave finds nothing to do; its Join registers afresh
    break;
  }
  config_ = *std::move(next);
  ++commits_;
  for (LocalCoordinator* h : handles_) h->subscribers_.Publish(config_);
  return absl::OkStatus();
}

void LocalCoordinationService::Detach(LocalCoordinator* handle) {
  MutexLock lock(&mu_);
  handles_.erase(std::remove(handles_.begin(), handles_.end(), handle), handles_.end());
}

bool LocalCoordinationService::IsLive(uint32_t node_id) const {
  MutexLock lock(&mu_);
  for (const auto& [id, h] : joined_) {
    if (id == node_id) return true;
  }
  return false;
}

LocalCoordinator::~LocalCoordinator() {
  (void)Leave();
  service_->Detach(this);
}

absl::Status LocalCoordinator::Join(const MemberInfo& member) {
  if (absl::Status s = ValidateMember(member); !s.ok()) return s;
  {
    MutexLock lock(&mu_);
    if (node_id_ != 0) return absl::FailedPreconditionError(absl::StrCat("already joined as node ", node_id_));
  }
  if (absl::Status s = service_->AddMember(this, member); !s.ok()) return s;
  MutexLock lock(&mu_);
  node_id_ = member.node_id();
  return absl::OkStatus();
}

absl::Status LocalCoordinator::Leave() {
  uint32_t id;
  {
    MutexLock lock(&mu_);
    id = node_id_;
    node_id_ = 0;
  }
  if (id == 0) return absl::FailedPreconditionError("not joined");
  service_->RemoveMember(id);
  return absl::OkStatus();
}

absl::StatusOr<Configuration> LocalCoordinator::GetConfiguration() {
  Configuration config = service_->configuration();
  if (config.epoch() == 0) return absl::FailedPreconditionError("no configuration yet");
  return config;
}

std::unique_ptr<Subscription> LocalCoordinator::Subscribe(Callback callback) {
  return subscribers_.Subscribe(std::move(callback));
}

absl::StatusOr<Configuration> LocalCoordinator::Update(const Mutation& mutation) {
  return service_->Update(mutation);
}

absl::StatusOr<RegionAllocation> LocalCoordinator::AllocateRegion(uint64_t size_bytes, int replicas) {
  RegionAllocation out;
  absl::StatusOr<Configuration> config = Update(AllocateRegionMutation(size_bytes, replicas, &out));
  if (!config.ok()) return config.status();
  out.epoch = config->epoch();
  return out;
}

absl::Status LocalCoordinator::ReportSuspect(uint32_t node_id, absl::Duration unconfirmed_for) {
  (void)unconfirmed_for;  // no votes here: a live handle is never deposed
  if (FindMember(service_->configuration(), node_id) == nullptr) {
    return absl::NotFoundError(absl::StrCat("node ", node_id, " is not a member"));
  }
  // A handle's session ends when it is destroyed, which removes its member at once; a member whose handle
  // is alive is not dead as far as the service can tell.
  if (!service_->IsLive(node_id)) service_->RemoveMember(node_id);
  return absl::OkStatus();
}

absl::Status LocalCoordinator::RemoveExpiredMember(uint32_t node_id, uint64_t incarnation, ExpiredMember expired) {
  uint32_t id;
  {
    MutexLock lock(&mu_);
    id = node_id_;
  }
  if (id == 0) return absl::FailedPreconditionError("not joined");
  if (id == node_id) return absl::InvalidArgumentError("the configuration manager cannot remove itself");
  return service_->RemoveExpired(id, node_id, incarnation, expired);
}

CoordinatorState LocalCoordinator::state() const { return CoordinatorState::kConnected; }

absl::Status LocalCoordinator::ConfirmManager() {
  // The service is the truth, and is_manager() reads it.
  return is_manager() ? absl::OkStatus() : absl::FailedPreconditionError("not the configuration manager");
}

bool LocalCoordinator::is_manager() const {
  uint32_t id;
  {
    MutexLock lock(&mu_);
    id = node_id_;
  }
  return id != 0 && service_->configuration().manager_id() == id;
}

}  // namespace fathom::coordinator
