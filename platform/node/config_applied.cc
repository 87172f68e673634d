#include "platform/node/config_applied.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "platform/base/byte_order.h"

namespace fathom::node {

std::string EncodeConfigApplied(uint64_t epoch) {
  std::string out;
  out.push_back(static_cast<char>(kConfigAppliedVersion));
  AppendU64(out, epoch);
  return out;
}

absl::StatusOr<uint64_t> DecodeConfigApplied(std::string_view payload) {
  if (payload.size() != kConfigAppliedBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("CONFIG-APPLIED of ", payload.size(), " bytes (", kConfigAppliedBytes, " expected)"));
  }
  if (const uint8_t version = static_cast<uint8_t>(payload[0]); version != kConfigAppliedVersion) {
    return absl::InvalidArgumentError(absl::StrCat("CONFIG-APPLIED version ", version, " (", kConfigAppliedVersion,
                                                   " expected)"));
  }
  const uint64_t epoch = LoadU64(payload.data() + 1);
  if (epoch == 0) return absl::InvalidArgumentError("CONFIG-APPLIED of epoch 0 (no configuration)");
  return epoch;
}

size_t ConfigAnnouncements::Announce(msg::Messenger& messenger, const std::vector<uint32_t>& peers, uint64_t epoch) {
  due_ = false;
  announced_ = epoch;
  if (epoch == 0) return 0;
  const std::string payload = EncodeConfigApplied(epoch);
  size_t sent = 0;
  for (uint32_t peer : peers) {
    uint64_t& told = told_[peer];
    if (told == epoch) continue;
    const absl::Status s = messenger.Send(peer, kConfigAppliedMessage, payload);
    if (absl::IsResourceExhausted(s)) {
      due_ = true;  // the ring is full: at the next turn
      continue;
    }
    // Sent, or the connection failed (a new one is announced to when it is made: OnConnected).
    told = epoch;
    sent += s.ok();
  }
  if (sent > 0) messenger.Flush().IgnoreError();  // a failure fails the peer (and so a new connection)
  return sent;
}

void ConfigAnnouncements::OnConnected(uint32_t peer) {
  told_.erase(peer);
  heard_.erase(peer);
  due_ = true;
}

void ConfigAnnouncements::OnRemoved(uint32_t peer) {
  told_.erase(peer);
  heard_.erase(peer);
}

absl::Status ConfigAnnouncements::OnMessage(const msg::Message& message) {
  absl::StatusOr<uint64_t> epoch = DecodeConfigApplied(message.payload);
  if (!epoch.ok()) return epoch.status();
  uint64_t& heard = heard_[message.peer];
  heard = std::max(heard, *epoch);
  return absl::OkStatus();
}

uint64_t ConfigAnnouncements::heard_from(uint32_t peer) const {
  auto it = heard_.find(peer);
  return it == heard_.end() ? 0 : it->second;
}

}  // namespace fathom::node
