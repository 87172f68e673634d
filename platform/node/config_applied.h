// CONFIG-APPLIED: a node thread's word to each peer that it now works from region map `epoch` (or a
// later one). The thread sends it into its ring to every peer once it has taken a new map, and again as
// the first thing on every new connection. Rings are handled in order, so once a receiver handled it,
// every record the sender's thread wrote under an older map has been handled too, and what that thread
// sends from now on was planned under `epoch` or later.
//
// A backup promoted to primary needs exactly that before it serves its copy (txn/promotion.cc): a
// COMMIT-BACKUP planned under the old map, arriving after the copy is served, would apply a transaction
// whose locks died with the old primary over what new transactions committed since. Coordinators send
// COMMIT-BACKUP only while their map still names the replicas they planned (txn/commit_phase.cc).
//
// Payload (docs/formats/ring.md): u8 version (1), u64 epoch; little-endian, exactly 9 bytes.
#ifndef FATHOM_PLATFORM_NODE_CONFIG_APPLIED_H_
#define FATHOM_PLATFORM_NODE_CONFIG_APPLIED_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "platform/msg/messenger.h"

namespace fathom::node {

// A runtime message (node.h: 1..99 are the runtime's).
inline constexpr msg::MessageType kConfigAppliedMessage = 3;
inline constexpr uint8_t kConfigAppliedVersion = 1;
inline constexpr size_t kConfigAppliedBytes = 9;

std::string EncodeConfigApplied(uint64_t epoch);
// InvalidArgument unless exactly kConfigAppliedBytes of version 1 with a non-zero epoch.
absl::StatusOr<uint64_t> DecodeConfigApplied(std::string_view payload);

// One node thread's side of it: what it told each peer's connection, and what each peer told it. On the
// thread only.
class ConfigAnnouncements {
 public:
  // Whether Announce has something to do for map `epoch`.
  bool due(uint64_t epoch) const { return due_ || epoch != announced_; }
  // Tells every peer in `peers` not told `epoch` on its current connection (0: nothing to tell); returns
  // how many messages went out. A full ring is tried again at the next call.
  size_t Announce(msg::Messenger& messenger, const std::vector<uint32_t>& peers, uint64_t epoch);
  // A new connection to `peer` (it has been told nothing), or none any more: what it told us went with
  // the connection (what it sends on a new one was planned under the map it announces there).
  void OnConnected(uint32_t peer);
  void OnRemoved(uint32_t peer);
  // The handler of kConfigAppliedMessage.
  absl::Status OnMessage(const msg::Message& message);
  // The latest epoch `peer` announced on its current connection (0: none).
  uint64_t heard_from(uint32_t peer) const;

 private:
  absl::flat_hash_map<uint32_t, uint64_t> told_;   // peer -> epoch announced on its connection
  absl::flat_hash_map<uint32_t, uint64_t> heard_;  // peer -> latest epoch it announced to us
  uint64_t announced_ = 0;  // every peer connected then was told this epoch
  bool due_ = false;        // a peer connected, or a send waits for room
};

}  // namespace fathom::node

#endif  // FATHOM_PLATFORM_NODE_CONFIG_APPLIED_H_
