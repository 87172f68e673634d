// Recovery's remapping of regions after a member failed (docs/recovery.md §4): promote a backup where the
// primary was lost, give regions short of backups new ones that first receive a copy of the data (data
// recovery), and mark a copy done. Pure functions on a configuration, like admission.h.
//
//   RemoveMember(&next, failed);
//   DropReplicasOf(&next, failed);                // in the same change
//   ...
//   FinishFilling(&config, region, primary, backup);   // the primary copied the region to `backup`
#ifndef FATHOM_COORDINATOR_REMAP_H_
#define FATHOM_COORDINATOR_REMAP_H_

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "coordinator/configuration.h"

namespace fathom::coordinator {

// Drops every replica on `node_id`. A region whose primary it was gets its first backup that is still a
// data member and not filling as primary (promotion: that backup's copy holds every committed write), or,
// with none left, moves to lost_regions. A region that had all f backups is marked replicated, and
// every replicated region short of backups gets new ones (AddFillingBackups). Call after RemoveMember.
// Returns whether anything changed.
bool DropReplicasOf(Configuration* config, uint32_t node_id);
// Gives every replicated region short of f backups new ones (ChooseBackups), listed as filling: they take
// new commits at once and receive the region's data from its primary; they are promoted only once done.
void AddFillingBackups(Configuration* config);
// `backup` holds all of `region`'s data, copied by `primary`: it is no longer filling. False (nothing
// changed) if the region's primary is another node by now, or `backup` is not filling it.
bool FinishFilling(Configuration* config, uint32_t region_id, uint32_t primary, uint32_t backup);
// FinishFilling of every (region, backup) pair `primary` copied, as one Coordinator::Update mutation: one
// configuration however many copies a pass finished (each configuration makes every member apply and
// announce it, and holds up the transactions planned under the one before). AlreadyExists (nothing
// written) if it changes nothing.
std::function<absl::Status(Configuration&)> FinishFillingUpdate(
    uint32_t primary, std::vector<std::pair<uint32_t, uint32_t>> filled);

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_REMAP_H_
