// The log epoch protocol (log_epochs.h explains why; docs/formats/log-epochs.md has the messages): one
// per node, on node thread 0. Every member answers the driver's CLOSE and OPEN and reports how far its
// log is; the driver (the member with the smallest id) also ends an epoch every log_epoch_interval and
// tells every member, and every other node connected to it (clients), which epoch is durable.
#ifndef FATHOM_TXN_EPOCH_PROTOCOL_H_
#define FATHOM_TXN_EPOCH_PROTOCOL_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "platform/msg/messenger.h"
#include "txn/log_epochs.h"
#include "txn/txn_options.h"

namespace fathom::txn {

class TxnThread;

enum class EpochMessageKind : uint8_t {
  kClose = 1,
  kDrained = 2,
  kOpen = 3,
  kPersisted = 4,
  kDurable = 5,
  kHurry = 6,  // to the driver: a sync commit of this epoch waits, end it soon
};

struct EpochMessage {
  EpochMessageKind kind = EpochMessageKind::kClose;
  uint64_t epoch = 0;
};
std::string EncodeEpochMessage(const EpochMessage& message);
// InvalidArgument, naming what is wrong, for anything but 16 well-formed bytes.
absl::StatusOr<EpochMessage> DecodeEpochMessage(std::string_view bytes);

class EpochProtocol {
 public:
  EpochProtocol(TxnThread& thread, LogEpochs& epochs, EpochLog log, absl::Duration interval);
  // Registers the message handler and the poller on thread 0. Call once, on it.
  absl::Status Install();

 private:
  absl::Status OnMessage(uint32_t from, const EpochMessage& message);
  size_t Poll();
  size_t PollNode(absl::Time now);
  size_t PollDriver(absl::Time now);
  void FinishOpening();  // after OPEN: marker, then locks in the new epoch
  void Send(uint32_t to, EpochMessageKind kind, uint64_t epoch);
  size_t FlushOutbox();
  uint32_t driver();
  bool is_driver() { return driver() == self_; }
  bool is_member();

  TxnThread& thread_;
  LogEpochs& epochs_;
  const EpochLog log_;
  const absl::Duration interval_;
  const uint32_t self_;
  std::vector<std::pair<uint32_t, std::string>> outbox_;  // messages a full ring refused, sent again

  // Every node.
  bool drained_sent_ = false;
  uint64_t opening_ = 0;              // OPEN arrived for this epoch; waiting for this node's installs
  uint64_t jump_to_ = 0;              // behind the driver: move to this epoch once no lock is held
  uint64_t reported_persisted_ = 0;
  absl::Time next_persist_check_;

  // The driver.
  bool was_driving_ = false;
  uint64_t closing_ = 0;               // the epoch being closed (0: none)
  std::set<uint32_t> drained_;         // members that answered DRAINED for it
  absl::Time next_close_;              // when the current epoch is closed
  absl::Time opened_;                  // when the driver last sent OPEN
  absl::Time resend_close_;            // CLOSE again to members that have not answered (a late starter)
  std::map<uint32_t, uint64_t> persisted_;  // member -> newest epoch on its disk
  uint64_t durable_sent_ = 0;
};

}  // namespace fathom::txn

#endif  // FATHOM_TXN_EPOCH_PROTOCOL_H_
