// Admitting a member to the configuration, with its regions placed in the same change (FaRM: the
// configuration maps every region to its replicas, chosen when the region is allocated; here a region is
// allocated when its member joins with it). Both coordinators admit through this one function.
//
//   Configuration next = current;
//   RemoveMember(&next, member.node_id());        // an earlier incarnation's entry, if any
//   RETURN_IF_ERROR(AdmitMember(&next, member));
#ifndef FATHOM_COORDINATOR_ADMISSION_H_
#define FATHOM_COORDINATOR_ADMISSION_H_

#include "absl/status/status.h"
#include "coordinator/configuration.h"

namespace fathom::coordinator {

// Adds `member` (not yet in `config`) and places what it brings:
// - each of its regions not yet in the region map: this member is its primary, ChooseBackups picks its
//   backups among the data members;
// - every region that never had all f backups (so nothing was ever committed to it: a commit needs all
//   f+1 replicas) gets the backups it lacks, now that there may be enough members.
// A region that once had its f backups is never touched again, whoever leaves or joins: a replica whose
// node left stays listed until recovery replaces it, or until that node comes back empty
// (MemberInfo.starts_empty): then its replicas are dropped first, as for a failure (DropReplicasOf), and a
// region of its own that was lost stays lost (never placed again on empty memory; a member with its
// memory, restarting from its log, may have it placed again). The first data member sets backups_per_region.
// FailedPrecondition: the member runs with another f than the cluster, or comes back client-only while
// regions list replicas on it. InvalidArgument: the member's info is invalid.
absl::Status AdmitMember(Configuration* config, const MemberInfo& member);

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_ADMISSION_H_
