// The decision of transaction recovery for one transaction whose coordinator is gone: commit or abort, from
// what every data member holds of it (docs/recovery.md §5). Pure: the manager's decider (recovery.h) runs
// it on the holds it gathered; tests run it on made-up ones.
//
// The coordinator's steps and what they leave (after every member handled what it wrote, msg drain):
// LOCK at every written primary; COMMIT-BACKUP at every backup; COMMIT-PRIMARY at every primary (success
// is reported at the first one written); truncation everywhere. An abort after COMMIT-BACKUP drops the
// backups' records before any primary unlocks. So, in order:
//   1. a holder marked aborted by an earlier recovery: abort (decide once);
//   2. a primary installed it, an earlier recovery marked it committed, or a replica applied it at
//      truncation (a truncation tombstone, or a mark of its coordinator thread that settles it while
//      something of it is still held, so it cannot be an abort whose ABORTs were all written): commit;
//   3. no backup holds its record: abort (COMMIT-PRIMARY was never sent);
//   4. a primary still holds its locks: commit only if every written region is complete — its current
//      primary holds the locks (or, if it was promoted from backup since, the record) and every backup not
//      still filling holds the record — else abort (no COMMIT-PRIMARY was sent, or the abort had begun).
//      Written regions are those every LOCK and COMMIT-BACKUP record lists, so a region whose primary died
//      and whose promoted backup never got its record counts, although no survivor holds anything of it;
//   5. no locks anywhere, some records, nothing truncated anywhere: commit only if every written region's
//      current primary holds the record (each primary that held the locks died, and its backup, promoted,
//      has what it writes; a live primary that installed it would hold it committed, step 2); else abort
//      (a promoted backup that never got its record, or a live primary the abort reached).
// What is not decidable: a record discarded unread by a replica that dropped its connection, whose
// coordinator died before it sent it again (docs/recovery.md, Not built).
#ifndef FATHOM_TXN_RECOVERY_DECISION_H_
#define FATHOM_TXN_RECOVERY_DECISION_H_

#include <cstdint>
#include <vector>

#include "platform/memory/region_map.h"
#include "txn/recovery_records.h"

namespace fathom::txn {

struct Holder {
  uint32_t node = 0;
  HoldKind kind = HoldKind::kLocked;
  std::vector<uint32_t> regions;  // what it holds the transaction's entries of
  std::vector<uint32_t> written;  // every region the transaction writes (Hold::written)
};

enum class Verdict { kCommit, kAbort };

Verdict DecideOrphan(const std::vector<Holder>& holders, const memory::RegionMap& map);

}  // namespace fathom::txn

#endif  // FATHOM_TXN_RECOVERY_DECISION_H_
