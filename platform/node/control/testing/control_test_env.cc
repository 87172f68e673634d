#include "platform/node/control/testing/control_test_env.h"

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "platform/fabric/fabric.h"
#include "platform/fabric/wire.h"

namespace fathom::control::testing {

NodeInfo SampleNodeInfo(uint32_t node_id, uint32_t peer_node_id) {
  NodeInfo info;
  info.set_node_id(node_id);
  info.set_cluster_name(kTestCluster);
  info.set_protocol_version(kControlProtocolVersion);
  info.set_fabric_kind(FABRIC_KIND_SIM);
  info.set_incarnation(0x1000 + node_id);
  info.set_start_time_unix_micros(1700000000000000);
  for (uint32_t worker = 0; worker < 2; ++worker) {
    info.add_worker_addresses(fabric::EncodeAddress(
        fabric::FabricKind::kSim, absl::StrCat("node ", node_id, " worker ", worker)));
    RingLocation* ring = info.add_rings();
    ring->set_sender_node_id(peer_node_id);
    ring->set_sender_thread(worker);
    ring->set_location(absl::StrCat("ring for node ", peer_node_id, " thread ", worker));
  }
  for (uint32_t region = 0; region < 2; ++region) {
    fabric::RegionDescriptor descriptor;
    descriptor.base = 0x7f0000000000 + (uint64_t{region} << 30);
    descriptor.length = 1 << 20;
    descriptor.remote_key = absl::StrCat("key of region ", region, " on node ", node_id);
    RegionInfo* info_region = info.add_regions();
    info_region->set_region_id(node_id * 100 + region);
    info_region->set_owner_node_id(node_id);
    info_region->set_size(descriptor.length);
    info_region->set_region_descriptor(descriptor.Serialize());
  }
  return info;
}

ControlServerOptions TestServerOptions() {
  ControlServerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.cluster_name = kTestCluster;
  options.cluster_token = kTestToken;
  options.fabric_kind = fabric::FabricKind::kSim;
  options.stop_grace = absl::Milliseconds(200);
  return options;
}

ControlClientOptions TestClientOptions(int port) {
  ControlClientOptions options;
  options.target = absl::StrCat("127.0.0.1:", port);
  options.cluster_token = kTestToken;
  options.call_timeout = absl::Seconds(10);
  return options;
}

absl::StatusOr<std::string> WriteTestFile(std::string_view name, std::string_view contents) {
  const char* directory = std::getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(directory != nullptr ? directory : "/tmp", "/", std::string(name));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return path;
}

}  // namespace fathom::control::testing
