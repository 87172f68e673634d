// Restarting one node of a whole-cluster restart from the SSD logs (fathomd --data_dir), when each node
// sees only its own directory: it gathers every other member's log over the fabric (log_exchange.h),
// merges them all with its own (restore.h MergeLogs: per object the newest state any replica persisted),
// and rebuilds its primaries and its backup copies from that one image. Every member computes the same
// image, so a region's primary and backups come back identical, and all agree on the new epoch.
//
//   auto own = logging::ReadLog(dir, id);                       // before Node::Start (serve it, see above)
//   ... Node::Start, JoinPeers (every other member) ...
//   memory::RegionMap map = memory::RegionMap::ByOwner(epoch, members, f);  // or the configuration's
//   ASSIGN_OR_RETURN(logging::NodeRestore restore, logging::RestoreNode(*node, *own, map, timeout));
//   txn_options.restore_backups = restore.BackupRestorer();    // TransactionService::Attach calls it
//   ... Attach, ObjectLog::Open ...
//   for (auto& state : restore.adopted) log->Append(state);     // this node's log covers its memory again
//   node->region_directory().Set(...);  // the same placement, with the restored epoch
#ifndef FATHOM_LOGGING_NODE_RESTART_H_
#define FATHOM_LOGGING_NODE_RESTART_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "logging/log_reader.h"
#include "logging/restore.h"
#include "platform/memory/region_map.h"
#include "platform/node/node.h"
#include "txn/backup_store.h"

namespace fathom::logging {

struct NodeRestore {
  ClusterImage image;
  uint64_t epoch = 0;                     // the configuration the restarted cluster runs in: newest logged + 1
  std::set<uint32_t> backup_regions;      // regions this node backs up (by the replica map) with logged states
  std::map<uint32_t, uint64_t> region_bytes;  // their sizes, as their primaries published them
  size_t primaries = 0;                   // objects written into this node's regions
  size_t backups = 0;                     // objects written into its backup copies (once Attach ran)
  // States of objects this node holds (as primary or backup) that are newer in the image than in its
  // own log: only a peer had persisted them. Appending them makes this node's log cover its memory.
  std::vector<ObjectState> adopted;

  // For TxnOptions::restore_backups; counts into `backups`. The NodeRestore must outlive Attach.
  std::function<absl::Status(txn::BackupStore&)> BackupRestorer();
};

// `replicas` says who held what before the restart (the configuration's placement, or a static
// cluster's rule); its members are the members whose logs are gathered.
// REQUIRES: `node` has joined every member of `replicas` but itself, and no transaction layer is attached
// yet. FailedPrecondition (naming the member) if a member answers that it has no log: a whole-cluster
// restart needs every member's log. InvalidArgument for a logged state of a region in no placement or whose
// primary is not a member (its data would have nowhere to go).
absl::StatusOr<NodeRestore> RestoreNode(node::Node& node, const LogContents& own, const memory::RegionMap& replicas,
                                        absl::Duration call_timeout);

}  // namespace fathom::logging

#endif  // FATHOM_LOGGING_NODE_RESTART_H_
