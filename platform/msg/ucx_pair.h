// Two "nodes" in one process over UcxFabric, each a worker with its own region and Messenger, connected
// both ways, for tests and benchmarks that drive each side from its own thread.
//
//   ASSIGN_OR_RETURN(auto pair, UcxMsgPair::Create("sm", /*capacity=*/64 << 10));
//   std::thread server([&] { while (running) PollWorkerAndMessenger(pair->worker(2), pair->messenger(2)); });
//   ... pair->messenger(1).Call(2, ...) and PollWorkerAndMessenger(pair->worker(1), pair->messenger(1)) here.
//
// Everything is set up on the calling thread; afterwards each side belongs to the thread that polls it.
#ifndef FATHOM_PLATFORM_MSG_UCX_PAIR_H_
#define FATHOM_PLATFORM_MSG_UCX_PAIR_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "platform/fabric/fabric.h"
#include "platform/msg/messenger.h"

namespace fathom::msg::testing {

class UcxMsgPair {
 public:
  // `transports` in UCX_TLS syntax ("sm", "tcp"). Nodes are 1 and 2.
  static absl::StatusOr<std::unique_ptr<UcxMsgPair>> Create(const std::string& transports, uint32_t capacity,
                                                            MessengerOptions options = {});
  ~UcxMsgPair();

  fabric::Worker& worker(NodeId node) { return *side(node).worker; }
  Messenger& messenger(NodeId node) { return *side(node).messenger; }

 private:
  struct Side {
    std::unique_ptr<fabric::Region> region;  // the ring from the peer at 0, our credit word after it
    std::unique_ptr<fabric::Worker> worker;
    std::unique_ptr<fabric::Endpoint> endpoint;  // to the peer
    std::unique_ptr<Messenger> messenger;
  };
  Side& side(NodeId node) { return sides_[node == 1 ? 0 : 1]; }

  std::unique_ptr<fabric::Fabric> fabric_;
  Side sides_[2];
};

}  // namespace fathom::msg::testing

#endif  // FATHOM_PLATFORM_MSG_UCX_PAIR_H_
