// Test helpers for platform/msg: an endpoint that counts writes, and small simulated set-ups.
#ifndef FATHOM_PLATFORM_MSG_TEST_UTIL_H_
#define FATHOM_PLATFORM_MSG_TEST_UTIL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "platform/fabric/fabric.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/base/status_test_macros.h"
#include "platform/msg/messenger.h"
#include "platform/msg/ring_location.h"
#include "platform/msg/ring_receiver.h"
#include "platform/msg/ring_sender.h"

namespace fathom::msg::testing {

// Forwards to another endpoint, counting writes per imported region and flushes (waking or quiet).
class CountingEndpoint final : public fabric::Endpoint {
 public:
  explicit CountingEndpoint(std::unique_ptr<fabric::Endpoint> inner) : inner_(std::move(inner)) {}

  absl::StatusOr<fabric::RemoteRegion> ImportRegion(const fabric::RegionDescriptor& descriptor) override {
    return inner_->ImportRegion(descriptor);
  }
  absl::Status PostRead(fabric::RemoteRegion region, uint64_t offset, void* destination, size_t length,
                        uint64_t context) override {
    return inner_->PostRead(region, offset, destination, length, context);
  }
  absl::Status PostWrite(fabric::RemoteRegion region, uint64_t offset, const void* source, size_t length,
                         uint64_t context) override {
    absl::Status s = inner_->PostWrite(region, offset, source, length, context);
    if (s.ok()) {
      ++writes_[region.index];
      if (on_write) on_write(region, offset, length);
    }
    return s;
  }
  absl::Status PostCompareSwap(fabric::RemoteRegion region, uint64_t offset, uint64_t expected, uint64_t desired,
                               uint64_t* old_value, uint64_t context) override {
    return inner_->PostCompareSwap(region, offset, expected, desired, old_value, context);
  }
  absl::Status PostFetchAdd(fabric::RemoteRegion region, uint64_t offset, uint64_t add, uint64_t* old_value,
                            uint64_t context) override {
    return inner_->PostFetchAdd(region, offset, add, old_value, context);
  }
  absl::Status Flush() override {
    ++flushes_;
    return inner_->Flush();
  }
  absl::Status FlushQuietly() override {
    ++quiet_flushes_;
    return inner_->FlushQuietly();
  }
  void Wake() override {
    ++wakes_;
    inner_->Wake();
  }
  absl::Status health() const override { return inner_->health(); }
  void Shutdown() override { inner_->Shutdown(); }

  uint64_t writes() const {
    uint64_t n = 0;
    for (const auto& [index, count] : writes_) n += count;
    return n;
  }
  uint64_t writes_to(uint32_t region_index) const {
    auto it = writes_.find(region_index);
    return it == writes_.end() ? 0 : it->second;
  }
  uint64_t flushes() const { return flushes_; }
  uint64_t quiet_flushes() const { return quiet_flushes_; }
  uint64_t wakes() const { return wakes_; }
  // Called after each accepted PostWrite.
  std::function<void(fabric::RemoteRegion, uint64_t offset, size_t length)> on_write;

 private:
  std::unique_ptr<fabric::Endpoint> inner_;
  std::map<uint32_t, uint64_t> writes_;
  uint64_t flushes_ = 0, quiet_flushes_ = 0, wakes_ = 0;
};

// Node 1 sends through one ring in node 2's memory; node 2 writes its head back into node 1's memory.
class SimRingPair {
 public:
  static constexpr uint64_t kRingOffset = 64;     // not at 0, so offsets are exercised
  static constexpr uint64_t kCreditOffset = 192;  // in node 1's region

  explicit SimRingPair(const fabric::sim::SimOptions& options) : network(options) {}
  ~SimRingPair();

  // max_payload 0: the default. The receiver's clock is the network's virtual clock.
  absl::Status Start(uint32_t capacity, uint32_t max_payload = 0, RingReceiverOptions receiver_options = {},
                     RingSenderOptions sender_options = {});

  // Polls both workers once and routes completions; returns the completions seen.
  size_t PollWorkers();
  // Delivers ready records to `deliver` (after polling the workers once).
  size_t PollReceiver(absl::FunctionRef<RejectReason(const RingRecord&)> deliver);
  std::byte* ring_memory() { return region_b->data() + kRingOffset; }
  std::byte* credit_memory() { return region_a->data() + kCreditOffset; }

  fabric::sim::SimNetwork network;  // first: destroyed last
  std::unique_ptr<fabric::Fabric> fabric_a, fabric_b;
  std::unique_ptr<fabric::Region> region_a, region_b;
  std::unique_ptr<fabric::Worker> worker_a, worker_b;
  CountingEndpoint* a_to_b = nullptr;  // owned below
  CountingEndpoint* b_to_a = nullptr;
  std::unique_ptr<fabric::Endpoint> a_to_b_owned, b_to_a_owned;
  RingLocation ring;
  CreditLocation credit;
  std::unique_ptr<RingSender> sender;
  std::unique_ptr<RingReceiver> receiver;
};

// Nodes 1..N of a SimNetwork, each with one Messenger (one thread per node), fully connected: node i's
// region holds a ring from every peer and a credit word for every peer it sends to.
class SimMsgCluster {
 public:
  struct Options {
    fabric::sim::SimOptions sim;
    uint32_t capacity = 4096;
    uint32_t max_payload = 0;
    MessengerOptions messenger;  // its clock is replaced by `clock`
    const Clock* clock = nullptr;  // null: the network's virtual clock
  };

  explicit SimMsgCluster(Options options) : network(options.sim), options_(std::move(options)) {}
  ~SimMsgCluster();

  absl::Status Start(uint32_t nodes);
  Messenger& messenger(NodeId node) { return *nodes_.at(node).messenger; }
  CountingEndpoint& endpoint(NodeId from, NodeId to) { return *nodes_.at(from).endpoints.at(to); }
  fabric::Region& region(NodeId node) { return *nodes_.at(node).region; }
  fabric::Worker& worker(NodeId node) { return *nodes_.at(node).worker; }
  uint64_t ring_offset(NodeId receiver, NodeId sender) const { return uint64_t{sender - 1} * options_.capacity; }
  const Clock& clock() const { return network.clock(); }

  // Polls every node's worker and messenger once; returns messages plus completions handled.
  size_t PumpOnce(const std::vector<NodeId>& skip = {});
  // Pumps until `done()` or `max_rounds`; when a round does nothing, moves virtual time on by `idle_step`.
  // Returns done().
  bool PumpUntil(const std::function<bool()>& done, size_t max_rounds = 1000000,
                 absl::Duration idle_step = absl::Microseconds(100), const std::vector<NodeId>& skip = {});

  fabric::sim::SimNetwork network;

 private:
  struct Node {
    std::unique_ptr<fabric::Fabric> fabric;
    std::unique_ptr<fabric::Region> region;
    std::unique_ptr<fabric::Worker> worker;
    std::map<NodeId, std::unique_ptr<CountingEndpoint>> endpoints;
    std::unique_ptr<Messenger> messenger;
  };
  Options options_;
  std::map<NodeId, Node> nodes_;
};

// A payload of `length` bytes derived from `key`, so the receiver can check it without a copy.
std::string Pattern(uint64_t key, size_t length);

}  // namespace fathom::msg::testing

#endif  // FATHOM_PLATFORM_MSG_TEST_UTIL_H_
