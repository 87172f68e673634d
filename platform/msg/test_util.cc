#include "platform/msg/test_util.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "platform/base/status_macros.h"

namespace fathom::msg::testing {

SimRingPair::~SimRingPair() {
  sender.reset();
  receiver.reset();
  a_to_b_owned.reset();
  b_to_a_owned.reset();
  worker_a.reset();
  worker_b.reset();
  region_a.reset();
  region_b.reset();
  fabric_a.reset();
  fabric_b.reset();
}

absl::Status SimRingPair::Start(uint32_t capacity, uint32_t max_payload, RingReceiverOptions receiver_options,
                                RingSenderOptions sender_options) {
  ASSIGN_OR_RETURN(fabric_a, network.AddNode(1));
  ASSIGN_OR_RETURN(fabric_b, network.AddNode(2));
  ASSIGN_OR_RETURN(region_a, fabric_a->AllocateRegion(4096));
  // The ring ends exactly at the region's end, so a read past the ring is a read past the allocation.
  ASSIGN_OR_RETURN(region_b, fabric_b->AllocateRegion(kRingOffset + capacity));
  ASSIGN_OR_RETURN(worker_a, fabric_a->CreateWorker());
  ASSIGN_OR_RETURN(worker_b, fabric_b->CreateWorker());
  ASSIGN_OR_RETURN(std::unique_ptr<fabric::Endpoint> ab, worker_a->Connect(worker_b->address()));
  ASSIGN_OR_RETURN(std::unique_ptr<fabric::Endpoint> ba, worker_b->Connect(worker_a->address()));
  a_to_b_owned = std::make_unique<CountingEndpoint>(std::move(ab));
  b_to_a_owned = std::make_unique<CountingEndpoint>(std::move(ba));
  a_to_b = static_cast<CountingEndpoint*>(a_to_b_owned.get());
  b_to_a = static_cast<CountingEndpoint*>(b_to_a_owned.get());
  const uint64_t session = network.seed() * 0x9E3779B97F4A7C15ull + 1;
  ASSIGN_OR_RETURN(ring, MakeRingLocation(*region_b, kRingOffset, capacity, session, max_payload));
  ASSIGN_OR_RETURN(credit, MakeCreditLocation(*region_a, kCreditOffset));
  // What a join would do: ship both locations as bytes.
  ASSIGN_OR_RETURN(RingLocation shipped_ring, RingLocation::Parse(ring.Serialize()));
  ASSIGN_OR_RETURN(CreditLocation shipped_credit, CreditLocation::Parse(credit.Serialize()));
  ASSIGN_OR_RETURN(sender, RingSender::Create(*a_to_b, shipped_ring, *region_a, kCreditOffset, /*owner=*/0,
                                              sender_options));
  receiver_options.clock = &network.clock();
  ASSIGN_OR_RETURN(receiver, RingReceiver::Create(*region_b, ring, *b_to_a, shipped_credit, /*owner=*/1,
                                                  receiver_options));
  return absl::OkStatus();
}

size_t SimRingPair::PollWorkers() {
  fabric::Completion done[32];
  size_t total = 0;
  size_t n = worker_a->Poll(done);
  for (size_t i = 0; i < n; ++i) sender->OnCompletion(done[i]);
  total += n;
  n = worker_b->Poll(done);
  for (size_t i = 0; i < n; ++i) receiver->OnCompletion(done[i]);
  return total + n;
}

size_t SimRingPair::PollReceiver(absl::FunctionRef<RejectReason(const RingRecord&)> deliver) {
  PollWorkers();
  return receiver->Poll(deliver);
}

SimMsgCluster::~SimMsgCluster() {
  for (auto& [id, node] : nodes_) node.messenger.reset();
  for (auto& [id, node] : nodes_) node.endpoints.clear();
  for (auto& [id, node] : nodes_) {
    node.worker.reset();
    node.region.reset();
  }
  nodes_.clear();
}

absl::Status SimMsgCluster::Start(uint32_t count) {
  const uint32_t capacity = options_.capacity;
  const uint64_t credits_at = uint64_t{count} * capacity;
  for (NodeId id = 1; id <= count; ++id) {
    Node node;
    ASSIGN_OR_RETURN(node.fabric, network.AddNode(id));
    ASSIGN_OR_RETURN(node.region, node.fabric->AllocateRegion(credits_at + 16 * count));
    ASSIGN_OR_RETURN(node.worker, node.fabric->CreateWorker());
    MessengerOptions messenger_options = options_.messenger;
    messenger_options.clock = options_.clock != nullptr ? options_.clock : &network.clock();
    node.messenger = std::make_unique<Messenger>(messenger_options);
    nodes_.emplace(id, std::move(node));
  }
  auto session = [&](NodeId receiver, NodeId sender) {
    return (network.seed() + receiver * 1000003ull + sender) * 0x9E3779B97F4A7C15ull;
  };
  for (NodeId from = 1; from <= count; ++from) {
    for (NodeId to = 1; to <= count; ++to) {
      if (from == to) continue;
      ASSIGN_OR_RETURN(std::unique_ptr<fabric::Endpoint> ep, nodes_.at(from).worker->Connect(worker(to).address()));
      nodes_.at(from).endpoints.emplace(to, std::make_unique<CountingEndpoint>(std::move(ep)));
    }
  }
  for (NodeId from = 1; from <= count; ++from) {
    for (NodeId to = 1; to <= count; ++to) {
      if (from == to) continue;
      ASSIGN_OR_RETURN(RingLocation ring, MakeRingLocation(region(to), ring_offset(to, from), capacity,
                                                           session(to, from), options_.max_payload));
      RETURN_IF_ERROR(messenger(from).AddPeer(to, endpoint(from, to), ring, region(from), credits_at + 16 * (to - 1)));
    }
  }
  for (NodeId to = 1; to <= count; ++to) {
    for (NodeId from = 1; from <= count; ++from) {
      if (from == to) continue;
      ASSIGN_OR_RETURN(RingLocation ring, MakeRingLocation(region(to), ring_offset(to, from), capacity,
                                                           session(to, from), options_.max_payload));
      ASSIGN_OR_RETURN(CreditLocation credit, MakeCreditLocation(region(from), credits_at + 16 * (to - 1)));
      RETURN_IF_ERROR(messenger(to).AddReceiveRing(from, region(to), ring, credit));
    }
  }
  return absl::OkStatus();
}

size_t SimMsgCluster::PumpOnce(const std::vector<NodeId>& skip) {
  size_t work = 0;
  fabric::Completion done[32];
  for (auto& [id, node] : nodes_) {
    if (std::find(skip.begin(), skip.end(), id) != skip.end()) continue;
    const size_t n = node.worker->Poll(done);
    for (size_t i = 0; i < n; ++i) node.messenger->OnCompletion(done[i]);
    work += n + node.messenger->Poll();
  }
  return work;
}

bool SimMsgCluster::PumpUntil(const std::function<bool()>& done, size_t max_rounds, absl::Duration idle_step,
                              const std::vector<NodeId>& skip) {
  for (size_t round = 0; round < max_rounds && !done(); ++round) {
    if (PumpOnce(skip) == 0) network.Advance(idle_step);
  }
  return done();
}

std::string Pattern(uint64_t key, size_t length) {
  std::string out(length, '\0');
  uint64_t x = key * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  for (size_t i = 0; i < length; ++i) {
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    out[i] = static_cast<char>(x >> 56);
  }
  return out;
}

}  // namespace fathom::msg::testing
