#include "platform/fabric/sim/sim_test_cluster.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace fathom::fabric::sim {

absl::Status SimCluster::Start(uint32_t count, size_t region_bytes) {
  for (uint32_t id = 1; id <= count; ++id) {
    Node node;
    absl::StatusOr<std::unique_ptr<Fabric>> fabric = network.AddNode(id);
    if (!fabric.ok()) return fabric.status();
    node.fabric = std::move(*fabric);
    absl::StatusOr<std::unique_ptr<Region>> region = node.fabric->AllocateRegion(region_bytes);
    if (!region.ok()) return region.status();
    node.region = std::move(*region);
    node.descriptor = node.region->descriptor();
    absl::StatusOr<std::unique_ptr<Worker>> worker = node.fabric->CreateWorker();
    if (!worker.ok()) return worker.status();
    node.worker = std::move(*worker);
    nodes_.emplace(id, std::move(node));
  }
  return absl::OkStatus();
}

absl::StatusOr<Link> SimCluster::Connect(uint32_t from, uint32_t to) {
  Link link;
  absl::StatusOr<std::unique_ptr<Endpoint>> endpoint = worker(from).Connect(worker(to).address());
  if (!endpoint.ok()) return endpoint.status();
  link.endpoint = std::move(*endpoint);
  absl::StatusOr<RemoteRegion> remote = link.endpoint->ImportRegion(nodes_.at(to).descriptor);
  if (!remote.ok()) return remote.status();
  link.remote = *remote;
  return link;
}

std::vector<Completion> Collect(Worker& worker, size_t count) {
  std::vector<Completion> out;
  absl::Status status = WaitForCompletions(worker, count, out, absl::Seconds(10));
  EXPECT_TRUE(status.ok()) << status;
  return out;
}

Completion FlushAndCollectOne(Worker& worker, Endpoint& endpoint) {
  absl::Status flushed = endpoint.Flush();
  EXPECT_TRUE(flushed.ok()) << flushed;
  std::vector<Completion> done = Collect(worker, 1);
  if (done.size() != 1) {
    ADD_FAILURE() << "expected one completion, got " << done.size();
    return Completion{0, OpType::kRead, absl::InternalError("no completion")};
  }
  return done[0];
}

SimOptions TestOptions(uint64_t seed) {
  SimOptions options;
  options.seed = seed;
  options.fabric.operation_timeout = absl::Milliseconds(100);
  return options;
}

}  // namespace fathom::fabric::sim
