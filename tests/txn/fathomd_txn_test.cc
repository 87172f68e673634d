// Transactions across processes: three fathomd processes (UCX shared memory, and tcp) hold the data and
// its replicas (f = 1); this test process joins them as a fourth node that coordinates transactions from
// both its threads but holds no data (every node lists --txn_members=1,2,3). The bank's total is conserved
// at every snapshot and at the end, the Cycle stays one cycle, and the list-append history is strictly
// serializable.
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "server/server.h"
#include "tests/util/fathomd_process.h"
#include "tests/util/subprocess.h"
#include "txn/txn.h"
#include "tests/workloads/bank.h"
#include "tests/workloads/cycle.h"
#include "tests/workloads/list_append.h"

namespace fathom {
namespace {

constexpr char kToken[] = "fathomd-txn-test-token-0123456789";
constexpr int kNodes = 3, kThreads = 2;

class FathomdTxnTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::vector<node::PeerAddress> peers;
    for (int id = 1; id <= kNodes; ++id) {
      std::vector<std::string> argv = {absl::StrCat("--token=", kToken),
                                       "--listen=127.0.0.1:0",
                                       "--memory=16M",
                                       "--region_size=16M",
                                       absl::StrCat("--threads=", kThreads),
                                       absl::StrCat("--transports=", GetParam()),
                                       "--backups=1",
                                       "--txn_members=1,2,3"};
      std::string listed;
      for (const node::PeerAddress& peer : peers) {
        listed += absl::StrCat(listed.empty() ? "" : ",", peer.node_id, "@", peer.control_address);
      }
      if (!listed.empty()) argv.push_back("--peers=" + listed);
      auto node = testing::StartFathomd(id, argv);
      ASSERT_TRUE(node.ok()) << node.status();
      peers.push_back({static_cast<uint32_t>(id), node->control_address});
      processes_.push_back(std::move(node->process));
    }
    // This process: node 4, a client-only member that coordinates transactions.
    server::ServerOptions options;
    options.node.node_id = kNodes + 1;
    options.node.cluster_token = kToken;
    options.node.memory_bytes = 4 << 20;
    options.node.region_bytes = 4 << 20;
    options.node.worker_threads = kThreads;
    options.node.peers = peers;
    options.transports = GetParam();
    options.client_only = true;
    options.txn_members = {1, 2, 3};
    ASSERT_OK_AND_ASSIGN(client_, server::Server::Start(std::move(options)));
    txns_ = &client_->transactions();
  }
  void TearDown() override {
    client_.reset();
    processes_.clear();  // SIGKILLs what is left
  }

  std::vector<std::unique_ptr<testing::Subprocess>> processes_;
  std::unique_ptr<server::Server> client_;
  txn::TransactionService* txns_ = nullptr;  // the client's
};

TEST_P(FathomdTxnTest, BankCycleAndListAppendAcrossProcesses) {
  const std::vector<uint32_t> data_nodes = {1, 2, 3};
  {
    txn::workloads::BankOptions options;
    options.data_nodes = data_nodes;
    options.clients_per_node = 4;
    options.transfers_per_client = 150;
    options.retry.max_attempts = 1000;
    ASSERT_OK_AND_ASSIGN(auto result, txn::workloads::RunBank({txns_}, options));
    EXPECT_TRUE(result.violations.empty()) << result.violations.front();
    EXPECT_EQ(result.final_total, options.accounts * options.initial_balance);
    EXPECT_GT(result.transfers, 0u);
    EXPECT_GT(result.audits, 0u);
    std::cerr << "[ info ] bank over " << GetParam() << ": " << result.transfers << " transfers, "
              << result.audits << " snapshots\n";
  }
  {
    txn::workloads::CycleOptions options;
    options.data_nodes = data_nodes;
    options.clients_per_node = 4;
    options.retry.max_attempts = 1000;
    ASSERT_OK_AND_ASSIGN(auto result, txn::workloads::RunCycle({txns_}, options));
    EXPECT_EQ(result.violation, "");
    EXPECT_GT(result.committed, 0u);
  }
  {
    txn::workloads::ListAppendOptions options;
    options.data_nodes = data_nodes;
    options.clients_per_node = 4;
    ASSERT_OK_AND_ASSIGN(auto result, txn::workloads::RunListAppend({txns_}, options));
    EXPECT_TRUE(result.check.valid()) << result.check.ToString();
    EXPECT_GT(result.ok, 0u);
  }
  ASSERT_OK_AND_ASSIGN(txn::TxnStats stats, txns_->Stats());
  EXPECT_GT(stats.coordinator.commit_backup_messages, 0u) << "records went to the fathomd backups";
  EXPECT_EQ(stats.participant.rejected, 0u);
}

INSTANTIATE_TEST_SUITE_P(Transports, FathomdTxnTest, ::testing::Values("sm", "tcp"),
                         [](const auto& info) { return info.param == "sm" ? std::string("shm") : info.param; });

}  // namespace
}  // namespace fathom
