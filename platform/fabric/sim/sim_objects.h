// The Fabric, Region, Worker and Endpoint objects a SimNetwork hands out. Each is a thin handle onto
// SimCore, which holds the state every node's events must reach.
#ifndef FATHOM_PLATFORM_FABRIC_SIM_SIM_OBJECTS_H_
#define FATHOM_PLATFORM_FABRIC_SIM_SIM_OBJECTS_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "platform/fabric/fabric.h"
#include "platform/fabric/sim/sim_core.h"
#include "platform/fabric/sim/sim_keys.h"

namespace fathom::fabric::sim::internal {

// One node's Fabric.
class SimNode final : public Fabric {
 public:
  SimNode(SimCore* core, uint32_t node) : core_(core), node_(node) {}

  absl::StatusOr<std::unique_ptr<Region>> AllocateRegion(size_t size) override;
  absl::StatusOr<std::unique_ptr<Region>> RegisterRegion(void* address, size_t size) override;
  absl::StatusOr<std::unique_ptr<Worker>> CreateWorker() override;
  std::string_view name() const override { return "sim"; }

 private:
  SimCore* const core_;
  const uint32_t node_;
};

struct FreeDeleter {
  void operator()(std::byte* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<std::byte, FreeDeleter>;

class SimRegion final : public Region {
 public:
  // `owned` is the allocation behind `data` for AllocateRegion, null for caller memory.
  SimRegion(SimCore* core, std::byte* data, size_t size, AlignedBytes owned);
  // Deregisters before freeing, so no later event can reach the memory.
  ~SimRegion() override;

  std::byte* data() const override { return data_; }
  size_t size() const override { return size_; }
  const RegionDescriptor& descriptor() const override { return descriptor_; }

  // Registers with the core; called once by SimNode right after construction.
  void Register(uint32_t node);

 private:
  SimCore* const core_;
  std::byte* const data_;
  const size_t size_;
  AlignedBytes owned_;
  RegionId id_;
  RegionDescriptor descriptor_;
};

class SimWorker final : public Worker {
 public:
  SimWorker(SimCore* core, uint32_t node);
  ~SimWorker() override;

  std::string address() const override { return address_; }
  absl::StatusOr<std::unique_ptr<Endpoint>> Connect(std::string_view peer_address) override;
  size_t Poll(absl::Span<Completion> out) override { return core_->Poll(key_, out); }
  void Wait(absl::Duration timeout) override { core_->Wait(key_, timeout); }
  void Signal() override { core_->Signal(key_); }
  size_t outstanding() const override { return core_->Outstanding(key_); }

 private:
  SimCore* const core_;
  uint64_t key_ = 0;
  std::string address_;
};

class SimEndpoint final : public Endpoint {
 public:
  SimEndpoint(SimCore* core, uint64_t id, uint32_t peer_node) : core_(core), id_(id), peer_node_(peer_node) {}
  // Completes what is still pending with Cancelled("endpoint closed").
  ~SimEndpoint() override { core_->DestroyEndpoint(id_); }

  absl::StatusOr<RemoteRegion> ImportRegion(const RegionDescriptor& descriptor) override;
  absl::Status PostRead(RemoteRegion region, uint64_t offset, void* destination, size_t length,
                        uint64_t context) override;
  absl::Status PostWrite(RemoteRegion region, uint64_t offset, const void* source, size_t length,
                         uint64_t context) override;
  absl::Status PostCompareSwap(RemoteRegion region, uint64_t offset, uint64_t expected, uint64_t desired,
                               uint64_t* old_value, uint64_t context) override;
  absl::Status PostFetchAdd(RemoteRegion region, uint64_t offset, uint64_t add, uint64_t* old_value,
                            uint64_t context) override;
  absl::Status Flush() override { return core_->Flush(id_); }
  absl::Status health() const override { return core_->Health(id_); }
  void Shutdown() override { core_->ShutdownEndpoint(id_); }

 private:
  struct Imported {
    RegionId region;
    uint64_t length = 0;  // as the descriptor claims
  };

  // Checks what the contract says Post* must reject at once; returns the operation to post.
  absl::StatusOr<Operation> Prepare(OpType type, RemoteRegion region, uint64_t offset, uint64_t length,
                                    uint64_t context) const;

  SimCore* const core_;
  const uint64_t id_;
  const uint32_t peer_node_;
  std::vector<Imported> imported_;  // RemoteRegion::index -> region; owned by the endpoint's thread
};

}  // namespace fathom::fabric::sim::internal

#endif  // FATHOM_PLATFORM_FABRIC_SIM_SIM_OBJECTS_H_
