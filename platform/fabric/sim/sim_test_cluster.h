// A small SimNetwork cluster for tests: nodes numbered from 1, each with one worker and one region.
//
//   SimCluster cluster(options);
//   ASSERT_OK(cluster.Start(/*nodes=*/2, /*region_bytes=*/4096));
//   ASSERT_OK_AND_ASSIGN(Link link, cluster.Connect(1, 2));     // node 1's worker -> node 2's region
//   ASSERT_OK(link.endpoint->PostRead(link.remote, 0, buf, 8, 1));
//   ASSERT_OK(link.endpoint->Flush());
//   std::vector<Completion> done = Collect(cluster.worker(1), 1);
#ifndef FATHOM_PLATFORM_FABRIC_SIM_SIM_TEST_CLUSTER_H_
#define FATHOM_PLATFORM_FABRIC_SIM_SIM_TEST_CLUSTER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "platform/fabric/fabric.h"
#include "platform/fabric/sim/sim_fabric.h"

namespace fathom::fabric::sim {

// An endpoint with one imported region.
struct Link {
  std::unique_ptr<Endpoint> endpoint;
  RemoteRegion remote;
};

class SimCluster {
 public:
  explicit SimCluster(const SimOptions& options) : network(options) {}

  // Adds nodes 1..count, each with an allocated region of `region_bytes` and a worker.
  absl::Status Start(uint32_t count, size_t region_bytes);
  // An endpoint from `from`'s worker to `to`'s, with `to`'s region imported.
  absl::StatusOr<Link> Connect(uint32_t from, uint32_t to);

  Fabric& fabric(uint32_t node) { return *nodes_.at(node).fabric; }
  Region& region(uint32_t node) { return *nodes_.at(node).region; }
  Worker& worker(uint32_t node) { return *nodes_.at(node).worker; }
  void DestroyRegion(uint32_t node) { nodes_.at(node).region.reset(); }

  SimNetwork network;  // declared first: destroyed after every node

 private:
  struct Node {
    std::unique_ptr<Fabric> fabric;
    std::unique_ptr<Region> region;
    std::unique_ptr<Worker> worker;
    RegionDescriptor descriptor;  // kept after the region is destroyed, to import a dead key
  };
  std::map<uint32_t, Node> nodes_;
};

// Collects `count` completions from `worker`, failing the test if they do not come within 10 s of real time.
std::vector<Completion> Collect(Worker& worker, size_t count);

// Flushes `endpoint` and collects one completion from `worker`.
Completion FlushAndCollectOne(Worker& worker, Endpoint& endpoint);

// Options with the given seed and a short timeout, so timeouts cost little virtual time.
SimOptions TestOptions(uint64_t seed);

}  // namespace fathom::fabric::sim

#endif  // FATHOM_PLATFORM_FABRIC_SIM_SIM_TEST_CLUSTER_H_
