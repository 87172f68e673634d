#include "platform/node/node_options.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fathom::node {

absl::StatusOr<std::vector<PeerAddress>> ParsePeers(std::string_view list) {
  std::vector<PeerAddress> peers;
  if (list.empty()) return peers;
  for (absl::string_view entry : absl::StrSplit(absl::string_view(list.data(), list.size()), ',')) {
    std::vector<absl::string_view> parts = absl::StrSplit(entry, absl::MaxSplits('@', 1));
    PeerAddress peer;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &peer.node_id) || peer.node_id == 0 ||
        peer.node_id > kMaxNodeId || parts[1].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("peer '", entry, "' is not id@host:port with id in 1..", kMaxNodeId));
    }
    peer.control_address = std::string(parts[1]);
    for (const PeerAddress& other : peers) {
      if (other.node_id == peer.node_id) {
        return absl::InvalidArgumentError(absl::StrCat("peer id ", peer.node_id, " listed twice"));
      }
    }
    peers.push_back(std::move(peer));
  }
  return peers;
}

}  // namespace fathom::node
