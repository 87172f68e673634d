// SimRegion: registered memory and the descriptor peers import it by.
#include <utility>

#include "platform/fabric/sim/sim_objects.h"

namespace fathom::fabric::sim::internal {

SimRegion::SimRegion(SimCore* core, std::byte* data, size_t size, AlignedBytes owned)
    : core_(core), data_(data), size_(size), owned_(std::move(owned)) {}

void SimRegion::Register(uint32_t node) {
  id_ = core_->RegisterRegion(node, data_, size_);
  descriptor_.base = reinterpret_cast<uint64_t>(data_);
  descriptor_.length = size_;
  descriptor_.remote_key = EncodeRemoteKey(RemoteKey{core_->network_id(), id_});
}

SimRegion::~SimRegion() {
  if (id_.generation != 0) core_->DeregisterRegion(id_);
}

}  // namespace fathom::fabric::sim::internal
