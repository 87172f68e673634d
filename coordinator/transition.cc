#include "coordinator/transition.h"

#include "absl/strings/str_cat.h"
#include "coordinator/remap.h"

namespace fathom::coordinator {

void RemoveDeparted(Configuration* config, uint32_t node_id, ExpiredMember how) {
  RemoveMember(config, node_id);
  if (how == ExpiredMember::kFailed) DropReplicasOf(config, node_id);
}

void SetManager(Configuration* config, uint32_t manager) {
  config->set_manager_id(FindMember(*config, manager) != nullptr ? manager : 0);
}

absl::StatusOr<Configuration> NextConfiguration(const Configuration& current, const Coordinator::Mutation& change) {
  Configuration next = current;
  if (absl::Status s = change(next); !s.ok()) return s;
  next.set_epoch(current.epoch() + 1);
  Canonicalize(&next);
  if (absl::Status s = ValidateConfiguration(next); !s.ok()) return s;
  if (const size_t bytes = EncodeConfiguration(next).size(); bytes > kMaxEncodedConfigurationBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("configuration of ", bytes, " bytes exceeds ", kMaxEncodedConfigurationBytes));
  }
  return next;
}

bool Changes(const Configuration& current, const Configuration& next) {
  Configuration same_epoch = next;
  same_epoch.set_epoch(current.epoch());
  return same_epoch.SerializeAsString() != current.SerializeAsString();
}

}  // namespace fathom::coordinator
