// Every rule of ValidateNodeInfo rejects what it should, with a message naming the field, and a
// well-formed NodeInfo passes.
#include "platform/node/control/node_info_validation.h"

#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "platform/fabric/fabric.h"
#include "platform/fabric/wire.h"
#include "platform/node/control/testing/control_test_env.h"

namespace fathom::control {
namespace {

using testing::kTestCluster;
using testing::SampleNodeInfo;

NodeInfoExpectations TestExpectations() {
  NodeInfoExpectations expect;
  expect.cluster_name = kTestCluster;
  expect.fabric_kind = fabric::FabricKind::kSim;
  return expect;
}

TEST(NodeInfoValidationTest, SampleIsValid) {
  EXPECT_TRUE(ValidateNodeInfo(SampleNodeInfo(3), TestExpectations(), "caller").ok());
}

TEST(NodeInfoValidationTest, NoRegionsAndNoRingsIsValid) {
  NodeInfo info = SampleNodeInfo(3);
  info.clear_regions();
  info.clear_rings();
  EXPECT_TRUE(ValidateNodeInfo(info, TestExpectations(), "caller").ok());
}

struct BadCase {
  const char* name;
  std::function<void(NodeInfo&)> spoil;
  const char* message;  // a substring the error must contain
};

TEST(NodeInfoValidationTest, EachRuleRejectsWithTheFieldNamed) {
  const std::string big(70000, 'x');
  const std::vector<BadCase> cases = {
      {"node id 0", [](NodeInfo& n) { n.set_node_id(0); }, "caller.node_id: 0 is not a node id"},
      {"empty cluster", [](NodeInfo& n) { n.clear_cluster_name(); }, "caller.cluster_name: empty"},
      {"long cluster", [](NodeInfo& n) { n.set_cluster_name(std::string(200, 'c')); }, "200 bytes, at most 128"},
      {"other cluster", [](NodeInfo& n) { n.set_cluster_name("other"); }, "'other' is not this cluster"},
      {"protocol", [](NodeInfo& n) { n.set_protocol_version(99); }, "caller.protocol_version: 99"},
      {"fabric kind", [](NodeInfo& n) { n.set_fabric_kind(FABRIC_KIND_UCX); }, "caller.fabric_kind"},
      {"no fabric kind", [](NodeInfo& n) { n.set_fabric_kind(FABRIC_KIND_UNSPECIFIED); }, "caller.fabric_kind"},
      {"incarnation 0", [](NodeInfo& n) { n.set_incarnation(0); }, "caller.incarnation"},
      {"no workers", [](NodeInfo& n) { n.clear_worker_addresses(); }, "at least one worker"},
      {"too many workers",
       [](NodeInfo& n) {
         for (int i = 0; i < 300; ++i) n.add_worker_addresses(n.worker_addresses(0));
       },
       "workers, at most 256"},
      {"empty address", [](NodeInfo& n) { n.set_worker_addresses(1, ""); }, "caller.worker_addresses[1]: empty"},
      {"oversize address", [&big](NodeInfo& n) { n.set_worker_addresses(0, big); },
       "caller.worker_addresses[0]: 70000 bytes"},
      {"corrupt address", [](NodeInfo& n) { (*n.mutable_worker_addresses(1))[14] ^= 1; },
       "caller.worker_addresses[1]: fabric address: checksum mismatch"},
      {"ucx address on sim",
       [](NodeInfo& n) { n.set_worker_addresses(0, fabric::EncodeAddress(fabric::FabricKind::kUcx, "x")); },
       "from fabric kind 1"},
      {"duplicate region", [](NodeInfo& n) { n.mutable_regions(1)->set_region_id(n.regions(0).region_id()); },
       "caller.regions[1].region_id"},
      {"owner 0", [](NodeInfo& n) { n.mutable_regions(0)->set_owner_node_id(0); },
       "caller.regions[0].owner_node_id"},
      {"size 0", [](NodeInfo& n) { n.mutable_regions(0)->set_size(0); }, "caller.regions[0].size: 0"},
      {"size over 4 GiB", [](NodeInfo& n) { n.mutable_regions(0)->set_size(uint64_t{1} << 33); },
       "caller.regions[0].size"},
      {"size not the descriptor's", [](NodeInfo& n) { n.mutable_regions(1)->set_size(4096); },
       "describes 1048576 bytes, the region has 4096"},
      {"empty descriptor", [](NodeInfo& n) { n.mutable_regions(0)->clear_region_descriptor(); },
       "caller.regions[0].region_descriptor: region descriptor: truncated"},
      {"truncated descriptor",
       [](NodeInfo& n) {
         std::string* bytes = n.mutable_regions(0)->mutable_region_descriptor();
         bytes->resize(bytes->size() - 1);
       },
       "caller.regions[0].region_descriptor"},
      {"corrupt descriptor", [](NodeInfo& n) { (*n.mutable_regions(1)->mutable_region_descriptor())[5] ^= 0x40; },
       "caller.regions[1].region_descriptor: region descriptor: checksum mismatch"},
      {"descriptor without key",
       [](NodeInfo& n) {
         fabric::RegionDescriptor d{.base = 4096, .length = n.regions(0).size(), .remote_key = ""};
         n.mutable_regions(0)->set_region_descriptor(d.Serialize());
       },
       "no remote key"},
      {"ring sender 0", [](NodeInfo& n) { n.mutable_rings(0)->set_sender_node_id(0); },
       "caller.rings[0].sender_node_id"},
      {"ring thread too high", [](NodeInfo& n) { n.mutable_rings(0)->set_sender_thread(256); },
       "caller.rings[0].sender_thread"},
      {"duplicate ring", [](NodeInfo& n) { n.mutable_rings(1)->set_sender_thread(0); }, "listed twice"},
      {"empty ring", [](NodeInfo& n) { n.mutable_rings(1)->clear_location(); }, "caller.rings[1].location: empty"},
      {"oversize ring", [](NodeInfo& n) { n.mutable_rings(1)->set_location(std::string(1025, 'r')); },
       "1025 bytes, at most 1024"},
  };
  for (const BadCase& bad : cases) {
    SCOPED_TRACE(bad.name);
    NodeInfo info = SampleNodeInfo(3);
    bad.spoil(info);
    absl::Status status = ValidateNodeInfo(info, TestExpectations(), "caller");
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_NE(status.message().find(bad.message), absl::string_view::npos) << status;
  }
}

TEST(NodeInfoValidationTest, CountLimitsComeFromTheExpectations) {
  NodeInfoExpectations expect = TestExpectations();
  expect.limits.max_regions = 1;
  EXPECT_EQ(ValidateNodeInfo(SampleNodeInfo(3), expect, "x").code(), absl::StatusCode::kInvalidArgument);
  expect = TestExpectations();
  expect.limits.max_rings = 1;
  EXPECT_EQ(ValidateNodeInfo(SampleNodeInfo(3), expect, "x").code(), absl::StatusCode::kInvalidArgument);
  expect = TestExpectations();
  expect.limits.max_workers = 1;
  EXPECT_EQ(ValidateNodeInfo(SampleNodeInfo(3), expect, "x").code(), absl::StatusCode::kInvalidArgument);
}

// Any single flipped bit anywhere in a region descriptor or a worker address is caught.
TEST(NodeInfoValidationTest, EveryFlippedBitIsRejected) {
  const NodeInfo good = SampleNodeInfo(3);
  for (size_t i = 0; i < good.regions(0).region_descriptor().size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      NodeInfo info = good;
      (*info.mutable_regions(0)->mutable_region_descriptor())[i] ^= static_cast<char>(1 << bit);
      EXPECT_EQ(ValidateNodeInfo(info, TestExpectations(), "caller").code(), absl::StatusCode::kInvalidArgument)
          << "descriptor byte " << i << " bit " << bit;
    }
  }
  for (size_t i = 0; i < good.worker_addresses(0).size(); ++i) {
    NodeInfo info = good;
    (*info.mutable_worker_addresses(0))[i] ^= 0x01;
    EXPECT_EQ(ValidateNodeInfo(info, TestExpectations(), "caller").code(), absl::StatusCode::kInvalidArgument)
        << "address byte " << i;
  }
}

TEST(NodeInfoValidationTest, ShutdownReasonIsBounded) {
  ControlLimits limits;
  ShutdownRequest request;
  request.set_reason(std::string(1024, 'r'));
  EXPECT_TRUE(ValidateShutdownRequest(request, limits).ok());
  request.set_reason(std::string(1025, 'r'));
  EXPECT_EQ(ValidateShutdownRequest(request, limits).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fathom::control
