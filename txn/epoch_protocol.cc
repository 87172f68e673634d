#include "txn/epoch_protocol.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "platform/fabric/wire.h"
#include "txn/records.h"
#include "txn/txn_thread.h"

namespace fathom::txn {
namespace {

constexpr uint8_t kEpochMessageFormat = 1;
constexpr size_t kEpochMessageBytes = 16;
// A member that has not answered CLOSE (it may not have attached its transaction layer yet, and the
// message was refused) is asked again this often.
constexpr absl::Duration kResendClose = absl::Milliseconds(100);
// The shortest epoch a sync commit's HURRY makes: a close refuses locks for a moment, so not back to back.
constexpr absl::Duration kMinEpoch = absl::Milliseconds(1);
// How often a node looks whether its log has persisted a newer marker.
constexpr absl::Duration kPersistCheck = absl::Microseconds(200);

const char* KindName(EpochMessageKind kind) {
  switch (kind) {
    case EpochMessageKind::kClose: return "CLOSE";
    case EpochMessageKind::kDrained: return "DRAINED";
    case EpochMessageKind::kOpen: return "OPEN";
    case EpochMessageKind::kPersisted: return "PERSISTED";
    case EpochMessageKind::kDurable: return "DURABLE";
    case EpochMessageKind::kHurry: return "HURRY";
  }
  return "?";
}

}  // namespace

std::string EncodeEpochMessage(const EpochMessage& message) {
  std::string out;
  out.push_back(static_cast<char>(kEpochMessageFormat));
  out.push_back(static_cast<char>(message.kind));
  out.append(6, '\0');
  AppendU64(out, message.epoch);
  return out;
}

absl::StatusOr<EpochMessage> DecodeEpochMessage(std::string_view bytes) {
  auto malformed = [](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("malformed log epoch message: ", what));
  };
  if (bytes.size() != kEpochMessageBytes) return malformed(absl::StrCat(bytes.size(), " bytes, not 16"));
  if (static_cast<uint8_t>(bytes[0]) != kEpochMessageFormat) {
    return malformed(absl::StrCat("format ", static_cast<int>(static_cast<uint8_t>(bytes[0]))));
  }
  const uint8_t kind = static_cast<uint8_t>(bytes[1]);
  if (kind < 1 || kind > 6) return malformed(absl::StrCat("unknown kind ", kind));
  for (size_t i = 2; i < 8; ++i) {
    if (bytes[i] != 0) return malformed("reserved bytes set");
  }
  EpochMessage message{static_cast<EpochMessageKind>(kind), LoadU64(bytes.data() + 8)};
  if (message.epoch == 0 && message.kind != EpochMessageKind::kPersisted &&
      message.kind != EpochMessageKind::kDurable) {  // HURRY names an epoch >= 1 too
    return malformed(absl::StrCat(KindName(message.kind), " of epoch 0"));
  }
  return message;
}

EpochProtocol::EpochProtocol(TxnThread& thread, LogEpochs& epochs, EpochLog log, absl::Duration interval)
    : thread_(thread), epochs_(epochs), log_(std::move(log)), interval_(interval), self_(thread.node_id()) {}

absl::Status EpochProtocol::Install() {
  if (absl::Status s = thread_.messenger().Register(kLogEpochMessage,
                                                    [this](const msg::Message& message, std::string* reply) {
                                                      if (reply != nullptr) {
                                                        return absl::InvalidArgumentError(
                                                            "log epoch messages are one-way");
                                                      }
                                                      auto decoded = DecodeEpochMessage(message.payload);
                                                      if (!decoded.ok()) return decoded.status();
                                                      return OnMessage(message.peer, *decoded);
                                                    });
      !s.ok()) {
    return s;
  }
  const absl::Time now = thread_.clock().Now();
  next_close_ = now + interval_;
  opened_ = now;
  next_persist_check_ = now;
  thread_.thread().AddPoller([this] { return Poll(); });
  return absl::OkStatus();
}

bool EpochProtocol::is_member() {
  const std::vector<uint32_t>& members = thread_.replicas().members();
  return std::binary_search(members.begin(), members.end(), self_);
}

uint32_t EpochProtocol::driver() {
  const std::vector<uint32_t>& members = thread_.replicas().members();
  if (members.empty()) return self_;
  const uint32_t hint = epochs_.driver_hint();
  if (hint != 0 && std::binary_search(members.begin(), members.end(), hint)) return hint;
  return members.front();
}

absl::Status EpochProtocol::OnMessage(uint32_t from, const EpochMessage& message) {
  const bool from_driver = from == driver();
  auto refuse = [&](const std::string& why) {
    return absl::InvalidArgumentError(
        absl::StrCat("log epoch ", KindName(message.kind), " ", message.epoch, " from node ", from, ": ", why));
  };
  switch (message.kind) {
    case EpochMessageKind::kClose: {
      if (!from_driver) return refuse(absl::StrCat("not the driver (node ", driver(), ")"));
      // The OPEN before it may have come in the same turn, before this node's poller acted on it.
      if (opening_ != 0) FinishOpening();
      const uint64_t current = epochs_.current();
      drained_sent_ = false;  // a repeated CLOSE is answered again
      if (message.epoch < current) {
        // The driver is behind (it took over from one that had opened `current`, so every member
        // drained current - 1): say so, and it catches up.
        Send(from, EpochMessageKind::kDrained, current - 1);
        return absl::OkStatus();
      }
      epochs_.Close();
      // Behind the driver (this node joined, or an OPEN was lost with a driver that died): no lock is
      // granted from now on, and once none is held this node moves to the driver's epoch (PollNode).
      jump_to_ = message.epoch > current ? message.epoch : 0;
      return absl::OkStatus();
    }
    case EpochMessageKind::kOpen:
      if (!from_driver) return refuse(absl::StrCat("not the driver (node ", driver(), ")"));
      if (message.epoch <= epochs_.current()) return absl::OkStatus();  // this node was ahead; it is there
      if (!epochs_.closing() || opening_ != 0 || jump_to_ != 0 || message.epoch != epochs_.current() + 1) {
        return refuse(absl::StrCat("this node is in epoch ", epochs_.current(),
                                   epochs_.closing() ? " (closing)" : " (open)"));
      }
      opening_ = message.epoch;
      return absl::OkStatus();
    case EpochMessageKind::kDurable:
      if (!from_driver) return refuse(absl::StrCat("not the driver (node ", driver(), ")"));
      // A client (not a member) never takes part in an epoch, so its own is no bound.
      // A member behind the cluster (catching up) takes it once it is there.
      if (is_member() && message.epoch > epochs_.current()) return absl::OkStatus();
      epochs_.SetDurable(message.epoch);
      if (log_.durable) log_.durable(message.epoch);
      return absl::OkStatus();
    case EpochMessageKind::kDrained: {
      if (!is_driver()) return refuse("this node is not the driver");
      const uint64_t current = epochs_.current();
      // A second answer to a repeated CLOSE may come after the epoch ended.
      if (message.epoch < current || (closing_ == 0 && message.epoch == current)) return absl::OkStatus();
      if (message.epoch > std::max(current, closing_)) {
        // A member is ahead: this driver took over behind the cluster. Close the member's epoch instead;
        // this node (a member too) catches up like any node behind.
        closing_ = message.epoch;
        drained_.clear();
        for (uint32_t m : thread_.replicas().members()) Send(m, EpochMessageKind::kClose, closing_);
        resend_close_ = thread_.clock().Now() + kResendClose;
      }
      if (message.epoch != closing_) return refuse(absl::StrCat("the driver is closing epoch ", closing_));
      drained_.insert(from);
      return absl::OkStatus();
    }
    case EpochMessageKind::kHurry:
      if (!is_driver()) return refuse("this node is not the driver");
      // Only the current epoch can end sooner (an older one has ended; a later one is not known yet).
      if (message.epoch == epochs_.current() && closing_ == 0) next_close_ = std::min(next_close_, opened_ + kMinEpoch);
      return absl::OkStatus();
    case EpochMessageKind::kPersisted:
      if (!is_driver()) return refuse("this node is not the driver");
      persisted_[from] = std::max(persisted_[from], message.epoch);
      return absl::OkStatus();
  }
  return refuse("unknown kind");
}

void EpochProtocol::Send(uint32_t to, EpochMessageKind kind, uint64_t epoch) {
  if (to == self_) {
    // The driver is a node too; a refusal here is a bug, which the counters of the peers' would show.
    OnMessage(self_, {kind, epoch}).IgnoreError();
    return;
  }
  outbox_.emplace_back(to, EncodeEpochMessage({kind, epoch}));
}

size_t EpochProtocol::FlushOutbox() {
  if (outbox_.empty()) return 0;
  size_t sent = 0;
  std::vector<std::pair<uint32_t, std::string>> unsent;
  const std::vector<uint32_t>& members = thread_.replicas().members();
  const std::vector<uint32_t> peers = thread_.thread().peer_ids();
  for (auto& [to, bytes] : outbox_) {
    // A full ring or a member not connected yet: try again on a later turn. A node that left the
    // members and is gone gets nothing more.
    if (thread_.messenger().Send(to, kLogEpochMessage, bytes).ok()) {
      ++sent;
    } else if (std::binary_search(members.begin(), members.end(), to) ||
               std::find(peers.begin(), peers.end(), to) != peers.end()) {
      unsent.emplace_back(to, std::move(bytes));
    }
  }
  outbox_ = std::move(unsent);
  if (sent > 0) thread_.messenger().Flush().IgnoreError();
  return sent;
}

size_t EpochProtocol::Poll() {
  const absl::Time now = thread_.clock().Now();
  size_t work = PollNode(now);
  const bool driving = epochs_.driving() && is_driver();
  if (driving && !was_driving_) {
    // Taking over (or starting): whatever this node knew as a driver before is stale.
    closing_ = 0;
    drained_.clear();
    persisted_.clear();
  }
  was_driving_ = driving;
  if (driving) work += PollDriver(now);
  return work + FlushOutbox();
}

void EpochProtocol::FinishOpening() {
  // Drained: every state of the closing epoch this node is primary of has been handed to its log.
  log_.close(opening_ - 1);
  epochs_.Open(opening_);
  opening_ = 0;
}

size_t EpochProtocol::PollNode(absl::Time now) {
  size_t work = 0;
  if (opening_ != 0) {
    FinishOpening();
    ++work;
  } else if (jump_to_ != 0) {
    if (epochs_.HoldsNoLock()) {
      // Every state this node installed as a primary has been handed to its log.
      log_.close(jump_to_ - 1);
      epochs_.JumpTo(jump_to_);
      jump_to_ = 0;
      ++work;
    }
  } else if (!drained_sent_ && epochs_.closing() && epochs_.Drained()) {
    Send(driver(), EpochMessageKind::kDrained, epochs_.current());
    drained_sent_ = true;
    ++work;
  }
  if (const uint64_t hurry = epochs_.TakeCloseRequest(); hurry != 0) Send(driver(), EpochMessageKind::kHurry, hurry);
  if (now >= next_persist_check_) {
    next_persist_check_ = now + kPersistCheck;
    auto persisted = log_.persisted();
    if (persisted.ok() && *persisted > reported_persisted_) {
      reported_persisted_ = *persisted;
      Send(driver(), EpochMessageKind::kPersisted, *persisted);
      ++work;
    }
  }
  return work;
}

size_t EpochProtocol::PollDriver(absl::Time now) {
  const std::vector<uint32_t>& members = thread_.replicas().members();
  size_t work = 0;
  if (closing_ == 0) {
    // A node that starts closed (joining), or a driver that took over mid-close, closes its epoch now.
    if (opening_ == 0 && jump_to_ == 0 && (now >= next_close_ || epochs_.closing())) {
      closing_ = epochs_.current();
      drained_.clear();
      resend_close_ = now + kResendClose;
      for (uint32_t m : members) Send(m, EpochMessageKind::kClose, closing_);
      ++work;
    }
  } else if (std::all_of(members.begin(), members.end(), [&](uint32_t m) { return drained_.contains(m); })) {
    for (uint32_t m : members) Send(m, EpochMessageKind::kOpen, closing_ + 1);
    closing_ = 0;
    opened_ = now;
    next_close_ = now + interval_;
    ++work;
  } else if (now >= resend_close_) {
    resend_close_ = now + kResendClose;
    for (uint32_t m : members) {
      if (!drained_.contains(m)) Send(m, EpochMessageKind::kClose, closing_);
    }
  }
  uint64_t durable = UINT64_MAX;
  for (uint32_t m : members) {
    auto it = persisted_.find(m);
    durable = std::min(durable, it == persisted_.end() ? 0 : it->second);
  }
  if (!members.empty() && durable > durable_sent_) {
    durable_sent_ = durable;
    for (uint32_t m : members) Send(m, EpochMessageKind::kDurable, durable);
    // Client nodes coordinate transactions too, and their sync commits wait for this.
    for (uint32_t peer : thread_.thread().peer_ids()) {
      if (!std::binary_search(members.begin(), members.end(), peer)) Send(peer, EpochMessageKind::kDurable, durable);
    }
    ++work;
  }
  return work;
}

}  // namespace fathom::txn
