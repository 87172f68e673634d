// The one step from a configuration to the next. Every change either coordinator makes (ZooKeeper's
// reconcile, lease removals and updates; LocalCoordinator's) goes through NextConfiguration, so the epoch,
// canonical form, validity and size limit are settled in one place, and each coordinator only writes the
// result conditionally on the version it read. Pure functions on a configuration, like admission.h and
// remap.h.
//
//   ASSIGN_OR_RETURN(Configuration next, NextConfiguration(current, [&](Configuration& c) {
//     RemoveDeparted(&c, node_id, ExpiredMember::kFailed);
//     SetManager(&c, my_id);
//     return absl::OkStatus();
//   }));
//   if (!Changes(current, next)) return absl::OkStatus();   // nothing to write
//   ... write `next` only if the stored configuration is still `current` ...
#ifndef FATHOM_COORDINATOR_TRANSITION_H_
#define FATHOM_COORDINATOR_TRANSITION_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "coordinator/configuration.h"
#include "coordinator/coordinator.h"

namespace fathom::coordinator {

// Takes `node_id` out of the members. kFailed (it was seen alive: it failed while the cluster ran) also
// drops its replicas, promoting backups where it was primary (DropReplicasOf); kUnseen (it may have died
// before this CM's process started: a whole-cluster restart) and a Leave move nothing, so a restart finds
// the placement its logs were written in.
void RemoveDeparted(Configuration* config, uint32_t node_id, ExpiredMember how);
// `manager` as the configuration manager if it is still a member; 0 (none) otherwise.
void SetManager(Configuration* config, uint32_t manager);
// `current` changed by `change` (its error is returned as is), with epoch current + 1, canonical, valid
// (InvalidArgument otherwise) and encoded within kMaxEncodedConfigurationBytes (ResourceExhausted).
absl::StatusOr<Configuration> NextConfiguration(const Configuration& current, const Coordinator::Mutation& change);
// Whether `next` differs from `current` in anything but its epoch.
bool Changes(const Configuration& current, const Configuration& next);

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_TRANSITION_H_
