#include "platform/msg/ucx_pair.h"

#include "platform/base/status_macros.h"
#include "platform/fabric/ucx/ucx_fabric.h"
#include "platform/msg/ring_location.h"

namespace fathom::msg::testing {

absl::StatusOr<std::unique_ptr<UcxMsgPair>> UcxMsgPair::Create(const std::string& transports, uint32_t capacity,
                                                               MessengerOptions options) {
  auto pair = std::unique_ptr<UcxMsgPair>(new UcxMsgPair());
  fabric::UcxOptions ucx;
  ucx.transports = transports;
  ASSIGN_OR_RETURN(pair->fabric_, fabric::CreateUcxFabric(ucx));
  for (Side& s : pair->sides_) {
    ASSIGN_OR_RETURN(s.region, pair->fabric_->AllocateRegion(uint64_t{capacity} + 64));
    ASSIGN_OR_RETURN(s.worker, pair->fabric_->CreateWorker());
    s.messenger = std::make_unique<Messenger>(options);
  }
  for (NodeId node : {1u, 2u}) {
    const NodeId peer = 3 - node;
    ASSIGN_OR_RETURN(pair->side(node).endpoint, pair->worker(node).Connect(pair->worker(peer).address()));
  }
  // Node n's ring to its peer lives at offset 0 of the peer's region; n's credit word after its own ring.
  auto ring_to = [&](NodeId peer) {
    return MakeRingLocation(*pair->side(peer).region, 0, capacity, /*session=*/0xF00D0000 + (3 - peer));
  };
  for (NodeId node : {1u, 2u}) {
    const NodeId peer = 3 - node;
    ASSIGN_OR_RETURN(RingLocation ring, ring_to(peer));
    RETURN_IF_ERROR(pair->messenger(node).AddPeer(peer, *pair->side(node).endpoint, ring,
                                                  *pair->side(node).region, capacity));
  }
  for (NodeId node : {1u, 2u}) {
    const NodeId peer = 3 - node;
    ASSIGN_OR_RETURN(RingLocation ring, ring_to(node));
    ASSIGN_OR_RETURN(CreditLocation credit, MakeCreditLocation(*pair->side(peer).region, capacity));
    RETURN_IF_ERROR(pair->messenger(node).AddReceiveRing(peer, *pair->side(node).region, ring, credit));
  }
  return pair;
}

UcxMsgPair::~UcxMsgPair() {
  for (Side& s : sides_) s.messenger.reset();
  for (Side& s : sides_) s.endpoint.reset();
  for (Side& s : sides_) {
    s.worker.reset();
    s.region.reset();
  }
  fabric_.reset();
}

}  // namespace fathom::msg::testing
