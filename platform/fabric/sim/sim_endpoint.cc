// SimEndpoint: imports regions and checks every Post* argument before the operation enters the network.
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "platform/fabric/sim/sim_objects.h"

namespace fathom::fabric::sim::internal {

absl::StatusOr<RemoteRegion> SimEndpoint::ImportRegion(const RegionDescriptor& descriptor) {
  if (absl::Status health = core_->Health(id_); !health.ok()) return health;
  absl::StatusOr<RemoteKey> key = DecodeRemoteKey(descriptor.remote_key);
  if (!key.ok()) return key.status();
  if (key->network != core_->network_id()) {
    return absl::InvalidArgumentError("remote key belongs to another SimNetwork");
  }
  // A key is only meaningful on a connection to its owner, as an rkey is.
  if (key->region.node != peer_node_) {
    return absl::InvalidArgumentError(absl::StrCat("remote key names a region of node ", key->region.node,
                                                   ", but this endpoint connects to node ", peer_node_));
  }
  if (imported_.size() >= UINT32_MAX - 1) return absl::ResourceExhaustedError("too many imported regions");
  imported_.push_back(Imported{key->region, descriptor.length});
  return RemoteRegion{static_cast<uint32_t>(imported_.size() - 1), descriptor.length};
}

absl::StatusOr<Operation> SimEndpoint::Prepare(OpType type, RemoteRegion region, uint64_t offset,
                                               uint64_t length, uint64_t context) const {
  if (region.index >= imported_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown remote region ", region.index));
  }
  const Imported& imported = imported_[region.index];
  if (length == 0) return absl::InvalidArgumentError("zero-length operation");
  // Written so that offset + length cannot overflow.
  if (offset > imported.length || length > imported.length - offset) {
    return absl::OutOfRangeError(absl::StrCat("bytes [", offset, ", +", length, ") outside remote region of ",
                                              imported.length, " bytes"));
  }
  const bool atomic = type == OpType::kCompareSwap || type == OpType::kFetchAdd;
  if (atomic && offset % 8 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("atomic at offset ", offset, " is not 8-byte aligned"));
  }
  Operation op;
  op.endpoint = id_;
  op.type = type;
  op.context = context;
  op.region = imported.region;
  op.offset = offset;
  op.length = length;
  return op;
}

absl::Status SimEndpoint::PostRead(RemoteRegion region, uint64_t offset, void* destination, size_t length,
                                   uint64_t context) {
  absl::StatusOr<Operation> op = Prepare(OpType::kRead, region, offset, length, context);
  if (!op.ok()) return op.status();
  if (destination == nullptr) return absl::InvalidArgumentError("Read: null destination");
  op->destination = destination;
  return core_->Post(*op);
}

absl::Status SimEndpoint::PostWrite(RemoteRegion region, uint64_t offset, const void* source, size_t length,
                                    uint64_t context) {
  absl::StatusOr<Operation> op = Prepare(OpType::kWrite, region, offset, length, context);
  if (!op.ok()) return op.status();
  if (source == nullptr) return absl::InvalidArgumentError("Write: null source");
  op->source = source;
  return core_->Post(*op);
}

absl::Status SimEndpoint::PostCompareSwap(RemoteRegion region, uint64_t offset, uint64_t expected,
                                          uint64_t desired, uint64_t* old_value, uint64_t context) {
  if (old_value == nullptr) return absl::InvalidArgumentError("atomic: null old_value");
  absl::StatusOr<Operation> op = Prepare(OpType::kCompareSwap, region, offset, 8, context);
  if (!op.ok()) return op.status();
  op->expected = expected;
  op->operand = desired;
  op->old_value = old_value;
  return core_->Post(*op);
}

absl::Status SimEndpoint::PostFetchAdd(RemoteRegion region, uint64_t offset, uint64_t add, uint64_t* old_value,
                                       uint64_t context) {
  if (old_value == nullptr) return absl::InvalidArgumentError("atomic: null old_value");
  absl::StatusOr<Operation> op = Prepare(OpType::kFetchAdd, region, offset, 8, context);
  if (!op.ok()) return op.status();
  op->operand = add;
  op->old_value = old_value;
  return core_->Post(*op);
}

}  // namespace fathom::fabric::sim::internal
