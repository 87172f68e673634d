// What the simulation tests look at in a SimCluster after a run: who backs up a node's region, what a
// backup's copy holds, and sums over a node's transaction threads.
//
//   ASSIGN_OR_RETURN(uint32_t backup, BackupOfOwnRegion(cluster.configuration(), 1));
//   std::string slot = BackupCopyOf(cluster, backup, ref);          // "" if the copy does not cover it
//   ASSIGN_OR_RETURN(object::ObjectRef ref, CommitNewObject(cluster, /*coordinator=*/3, /*on_node=*/1, "v"));
//   size_t kept = SumOverThreads(cluster, backup, [](txn::TxnThread& t) { return t.participant().log_entries(); });
#ifndef FATHOM_TESTS_SIM_SIM_PROBES_H_
#define FATHOM_TESTS_SIM_SIM_PROBES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/configuration.h"
#include "txn/txn.h"  // object::ObjectRef
#include "tests/sim/sim_cluster.h"
#include "txn/txn_thread.h"

namespace fathom::sim {

// The one backup of `owner`'s own region (owner is its primary, f = 1); FailedPrecondition otherwise.
absl::StatusOr<uint32_t> BackupOfOwnRegion(const coordinator::Configuration& configuration, uint32_t owner);

// The bytes of `ref`'s slot in node `node`'s backup copy of its region; empty if it has no copy covering it.
std::string BackupCopyOf(SimCluster& cluster, uint32_t node, const object::ObjectRef& ref);

// A new 16-byte object on node `on_node` holding `value`, committed by node `coordinator` (thread 0).
absl::StatusOr<object::ObjectRef> CommitNewObject(SimCluster& cluster, uint32_t coordinator, uint32_t on_node,
                                                  std::string_view value);

// How each region's replicas differ: its primary's memory against every backup's copy (backups still
// filling excepted), object by object (capacity, incarnation, liveness, version, payload; lock bits and
// checksums aside). Empty when every region has f+1 identical replicas. Call once the cluster has
// quiesced (truncations applied).
std::vector<std::string> ReplicaDifferences(SimCluster& cluster);

// Every running member applied the committed configuration and holds a lease, every region's primary
// serves it (a promotion is over), and no region is filling a new backup.
bool Settled(SimCluster& cluster);
// Why the cluster has not settled ("" once it has).
std::string Unsettled(SimCluster& cluster);

// The running nodes (neither stopped nor paused: taking steps) that act as the configuration manager (CM)
// now: their lease agent grants leases (LeaseAgent::GrantsLeases).
std::vector<uint32_t> Managers(SimCluster& cluster);

// Runs the cluster until `done`: OK; DeadlineExceeded after `timeout` (virtual); Internal at the first
// round two running nodes held the CM's role at once. Each configuration committed meanwhile goes into
// the history.
absl::Status RunUntilWithOneManager(SimCluster& cluster, const std::function<bool()>& done, absl::Duration timeout);

// Runs until the cluster has stayed settled (and `also` held, if given) for two lease periods in a row,
// with one CM (RunUntilWithOneManager): a removal the CM has yet to make (a lease that lapsed in its
// table, while the member still counts itself leased) comes within that.
absl::Status RunUntilSettled(SimCluster& cluster, absl::Duration timeout, const std::function<bool()>& also = nullptr);

// Once the cluster settled (RunUntilSettled, within 10 s) and its truncations reached the backups: OK if
// every region's replicas are identical (ReplicaDifferences), else the differences.
absl::Status IdenticalReplicasOnceSettled(SimCluster& cluster);

// `of` summed over node `node`'s transaction threads (0 for a thread that cannot be reached).
uint64_t SumOverThreads(SimCluster& cluster, uint32_t node, const std::function<uint64_t(txn::TxnThread&)>& of);

}  // namespace fathom::sim

#endif  // FATHOM_TESTS_SIM_SIM_PROBES_H_
