// Lease false positives: three fathomd with the default lease (2 s, or FATHOM_LEASE_PERIOD) run for
// FATHOM_SOAK_SECONDS (default 300) while every node pings every other without pause (one gRPC PingPeer
// driver thread per ordered pair), and nobody is stopped: every lease expiry (CM) or lapse (member) is a
// false positive. Tagged manual (minutes long):
//
//   bazel test //tests/node:fathomd_lease_soak_test --test_env=FATHOM_SOAK_SECONDS=300 --test_output=streamed
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "tests/node/lease_fixture.h"

namespace fathom {
namespace {

absl::Duration EnvDuration(const char* name, absl::Duration fallback) {
  const char* value = std::getenv(name);
  absl::Duration d;
  if (value == nullptr) return fallback;
  if (absl::ParseDuration(value, &d)) return d;
  return absl::Seconds(std::atoi(value));
}

class FathomdLeaseSoakTest : public FathomdLeaseFixture {
 protected:
  FathomdLeaseSoakTest() : FathomdLeaseFixture(EnvDuration("FATHOM_LEASE_PERIOD", absl::Seconds(2))) {}
};

TEST_F(FathomdLeaseSoakTest, NoLeaseExpiresUnderPingLoad) {
  WaitForFullCluster("3 members with leases");
  const absl::Duration soak = EnvDuration("FATHOM_SOAK_SECONDS", absl::Seconds(300));
  const absl::Time end = absl::Now() + soak;
  std::atomic<uint64_t> pings{0}, failed{0};
  std::vector<std::thread> drivers;
  for (int from = 1; from <= kNodes; ++from) {
    for (int to = 1; to <= kNodes; ++to) {
      if (from == to) continue;
      drivers.emplace_back([&, from, to] {
        while (absl::Now() < end) {
          control::PingPeerRequest request;
          request.set_peer_node_id(to);
          request.set_thread((from + to) % 2);
          request.set_count(200);
          request.set_payload_bytes(64);
          auto r = clients_[from - 1]->PingPeer(request);
          if (r.ok()) {
            pings += r->ok();
            failed += r->failed();
          } else {
            ++failed;
          }
        }
      });
    }
  }
  for (auto& d : drivers) d.join();
  uint64_t expiries = 0, lapses = 0, grants = 0, failures = 0, stalls = 0, epoch = 0;
  for (int id = 1; id <= kNodes; ++id) {
    auto c = Counters(id);
    expiries += c["lease.expiries"];
    lapses += c["lease.lapses"];
    grants += c["lease.grants"];
    failures += c["lease.request_failures"];
    stalls += c["lease.manager_stalls"];
    epoch = std::max<uint64_t>(epoch, c["coordinator.epoch"]);
  }
  std::cerr << "[ info ] lease " << lease_ << ", " << soak << " under ping load: " << pings.load() << " pings ("
            << failed.load() << " failed); lease grants " << grants << ", request failures " << failures
            << ", expiries " << expiries << ", lapses " << lapses << ", CM stalls " << stalls
            << ", configuration epoch " << epoch << "\n";
  EXPECT_EQ(expiries, 0u);
  EXPECT_EQ(lapses, 0u);
  EXPECT_EQ(failed.load(), 0u);
}

}  // namespace
}  // namespace fathom
