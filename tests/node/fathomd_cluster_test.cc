// Three fathomd processes on one machine, over UCX shared memory and over tcp: they join; each allocates
// objects; every node reads every other node's objects; every thread of every node pings every other
// node at once; one node is killed with SIGKILL, and the others' operations to it fail with a status
// within a bounded time while they keep serving each other; the node restarts and rejoins them.
#include <signal.h>

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/node/control/control_client.h"
#include "tests/util/fathomd_process.h"
#include "tests/util/subprocess.h"

namespace fathom {
namespace {

constexpr char kToken[] = "fathomd-cluster-test-token-0123";
constexpr int kNodes = 3, kThreads = 2;

class FathomdClusterTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    for (int id = 1; id <= kNodes; ++id) StartNode(id, /*peers_below=*/id);
  }

  // Starts fathomd `id`, listing nodes 1..peers_below-1 as peers, and connects a control client to it.
  void StartNode(int id, int peers_below) {
    {
      std::vector<std::string> argv = {absl::StrCat("--token=", kToken),
                                       "--listen=127.0.0.1:0",
                                       "--memory=32M",
                                       "--region_size=16M",
                                       absl::StrCat("--threads=", kThreads),
                                       absl::StrCat("--transports=", GetParam())};
      std::string peers;
      for (int other = 1; other < peers_below; ++other) {
        peers += absl::StrCat(peers.empty() ? "" : ",", other, "@", addresses_[other - 1]);
      }
      if (!peers.empty()) argv.push_back("--peers=" + peers);
      auto node = testing::StartFathomd(id, argv);
      ASSERT_TRUE(node.ok()) << node.status();
      addresses_.resize(std::max<size_t>(addresses_.size(), id));
      processes_.resize(std::max<size_t>(processes_.size(), id));
      clients_.resize(std::max<size_t>(clients_.size(), id));
      addresses_[id - 1] = node->control_address;
      processes_[id - 1] = std::move(node->process);
      auto client = testing::ConnectControl(addresses_[id - 1], kToken, absl::Seconds(30));
      ASSERT_TRUE(client.ok()) << client.status();
      clients_[id - 1] = std::move(*client);
    }
  }

  control::ControlClient& client(int id) { return *clients_[id - 1]; }

  absl::StatusOr<control::ObjectRefMessage> Allocate(int id, const std::string& payload, int thread) {
    control::AllocateObjectRequest request;
    request.set_payload(payload);
    request.set_thread(thread);
    auto response = client(id).AllocateObject(request);
    if (!response.ok()) return response.status();
    return response->ref();
  }
  absl::StatusOr<std::string> Read(int id, const control::ObjectRefMessage& ref, int thread) {
    control::ReadObjectRequest request;
    *request.mutable_ref() = ref;
    request.set_thread(thread);
    auto response = client(id).ReadObject(request);
    if (!response.ok()) return response.status();
    return response->payload();
  }
  absl::StatusOr<control::PingPeerResponse> Ping(int from, int to, int thread, int count) {
    control::PingPeerRequest request;
    request.set_peer_node_id(to);
    request.set_thread(thread);
    request.set_count(count);
    request.set_payload_bytes(64);
    return client(from).PingPeer(request);
  }

  std::vector<std::unique_ptr<testing::Subprocess>> processes_;
  std::vector<std::string> addresses_;
  std::vector<std::unique_ptr<control::ControlClient>> clients_;
};

TEST_P(FathomdClusterTest, JoinReadPingSurviveAKilledNodeAndRejoin) {
  ASSERT_EQ(clients_.size(), size_t{kNodes});
  // Everyone sees everyone (the first node learns of the others from their Joins).
  for (int id = 1; id <= kNodes; ++id) {
    auto stats = client(id).Stats();
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->counters().at("node.peers"), uint64_t{kNodes - 1}) << "node " << id;
  }
  // Objects on every node, read by every node from every thread.
  std::vector<std::vector<control::ObjectRefMessage>> refs(kNodes + 1);
  for (int id = 1; id <= kNodes; ++id) {
    for (int i = 0; i < 3; ++i) {
      auto ref = Allocate(id, absl::StrCat("node ", id, " object ", i, std::string(i * 500, '.')), i % kThreads);
      ASSERT_TRUE(ref.ok()) << ref.status();
      refs[id].push_back(*ref);
    }
  }
  for (int reader = 1; reader <= kNodes; ++reader) {
    for (int owner = 1; owner <= kNodes; ++owner) {
      for (int i = 0; i < 3; ++i) {
        for (int thread = 0; thread < kThreads; ++thread) {
          auto bytes = Read(reader, refs[owner][i], thread);
          ASSERT_TRUE(bytes.ok()) << reader << " reads " << owner << ": " << bytes.status();
          EXPECT_EQ(*bytes, absl::StrCat("node ", owner, " object ", i, std::string(i * 500, '.')));
        }
      }
    }
  }
  // RPC ping-pong from every thread of every node to every other node, all at once.
  std::atomic<int> failures{0};
  std::vector<std::thread> load;
  for (int from = 1; from <= kNodes; ++from) {
    for (int to = 1; to <= kNodes; ++to) {
      for (int thread = 0; thread < kThreads && from != to; ++thread) {
        load.emplace_back([&, from, to, thread] {
          auto pings = Ping(from, to, thread, 500);
          if (!pings.ok() || pings->ok() != 500) {
            ++failures;
            ADD_FAILURE() << from << "->" << to << "/" << thread << ": "
                          << (pings.ok() ? pings->first_error() : pings.status().ToString());
          } else if (from == 1 && to == 2 && thread == 0) {
            std::cerr << "[ info ] " << GetParam() << ": ping p50 " << absl::Nanoseconds(pings->p50_nanos())
                      << ", max " << absl::Nanoseconds(pings->max_nanos()) << " under load\n";
          }
        });
      }
    }
  }
  for (auto& t : load) t.join();
  EXPECT_EQ(failures.load(), 0);

  // Kill node 3. Operations to it must fail with a status, within a bound; 1 and 2 keep going.
  processes_[2]->Signal(SIGKILL);
  ASSERT_TRUE(processes_[2]->Wait(absl::Seconds(10)).ok());
  const absl::Time killed = absl::Now();
  for (int from = 1; from <= 2; ++from) {
    bool ping_failed = false, read_failed = false;
    while ((!ping_failed || !read_failed) && absl::Now() - killed < absl::Seconds(30)) {
      if (!ping_failed) {
        auto pings = Ping(from, 3, 0, 1);
        ping_failed = !pings.ok() || pings->failed() > 0;
      }
      if (!read_failed) read_failed = !Read(from, refs[3][0], 1).ok();
      if (!ping_failed || !read_failed) absl::SleepFor(absl::Milliseconds(50));
    }
    EXPECT_TRUE(ping_failed && read_failed) << "node " << from << " still reaches the killed node";
    std::cerr << "[ info ] " << GetParam() << ": node " << from << " saw node 3 fail within "
              << absl::Now() - killed << " of the SIGKILL\n";
  }
  EXPECT_LT(absl::Now() - killed, absl::Seconds(20));
  for (int thread = 0; thread < kThreads; ++thread) {
    auto pings = Ping(1, 2, thread, 100);
    ASSERT_TRUE(pings.ok()) << pings.status();
    EXPECT_EQ(pings->ok(), 100u) << pings->first_error();
    auto bytes = Read(2, refs[1][1], thread);
    EXPECT_TRUE(bytes.ok()) << bytes.status();
  }
  // Node 3 restarts (same id, new incarnation) and joins both survivors, which replace its old connection.
  StartNode(3, /*peers_below=*/3);
  auto fresh = Allocate(3, "node 3 again", 0);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  for (int from = 1; from <= 2; ++from) {
    for (int thread = 0; thread < kThreads; ++thread) {
      auto there = Ping(from, 3, thread, 50);
      ASSERT_TRUE(there.ok()) << there.status();
      EXPECT_EQ(there->ok(), 50u) << from << "->3 after restart: " << there->first_error();
      auto back = Ping(3, from, thread, 50);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(back->ok(), 50u) << "3->" << from << " after restart: " << back->first_error();
    }
    auto bytes = Read(from, *fresh, 1);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_EQ(*bytes, "node 3 again");
  }
  // A clean stop on SIGTERM.
  for (int i = 0; i < kNodes; ++i) {
    processes_[i]->Signal(SIGTERM);
    auto status = processes_[i]->Wait(absl::Seconds(30));
    ASSERT_TRUE(status.ok());
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << "node " << i + 1 << " status " << *status;
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, FathomdClusterTest, ::testing::Values("sm", "tcp"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace fathom
