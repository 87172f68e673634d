// SimWorker: addresses and Connect. Polling and waiting are the scheduler's (sim_scheduler.cc).
#include "absl/strings/str_cat.h"
#include "platform/fabric/sim/sim_objects.h"

namespace fathom::fabric::sim::internal {

SimWorker::SimWorker(SimCore* core, uint32_t node) : core_(core) {
  uint32_t index = 0;
  key_ = core_->CreateWorker(node, &index);
  address_ = EncodeWorkerAddress(WorkerAddress{core_->network_id(), node, index});
}

SimWorker::~SimWorker() { core_->DestroyWorker(key_); }

absl::StatusOr<std::unique_ptr<Endpoint>> SimWorker::Connect(std::string_view peer_address) {
  absl::StatusOr<WorkerAddress> peer = DecodeWorkerAddress(peer_address);
  if (!peer.ok()) return peer.status();
  if (peer->network != core_->network_id()) {
    return absl::InvalidArgumentError(
        absl::StrCat("address of node ", peer->node, " belongs to another SimNetwork"));
  }
  // A crashed peer is accepted, as a real fabric cannot tell yet; its operations fail.
  absl::StatusOr<uint64_t> id = core_->Connect(key_, peer->node, peer->worker);
  if (!id.ok()) return id.status();
  return std::unique_ptr<Endpoint>(std::make_unique<SimEndpoint>(core_, *id, peer->node));
}

}  // namespace fathom::fabric::sim::internal
