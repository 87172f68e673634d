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

absl::StatusOr<uint64_t> ParseBytes(std::string_view text) {
  absl::string_view digits(text.data(), text.size());
  uint64_t unit = 1;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K': case 'k': unit = uint64_t{1} << 10; break;
      case 'M': case 'm': unit = uint64_t{1} << 20; break;
      case 'G': case 'g': unit = uint64_t{1} << 30; break;
      case 'T': case 't': unit = uint64_t{1} << 40; break;
      default: break;
    }
    if (unit != 1) digits.remove_suffix(1);
  }
  uint64_t value = 0;
  if (!absl::SimpleAtoi(digits, &value) || value > UINT64_MAX / unit) {
    return absl::InvalidArgumentError(absl::StrCat("'", std::string(text), "' is not a byte count like 64M"));
  }
  return value * unit;
}

}  // namespace fathom::node
