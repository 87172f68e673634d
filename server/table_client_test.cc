// Table calls are safe to repeat: when a member ran a create, drop or resize but its answer was lost (the
// caller sees Unavailable and asks the next member), the call still does what was asked once, on three
// in-process servers following a LocalCoordinator, through their real control services.
#include "server/table_client.h"

#include <memory>
#include <vector>

#include "absl/time/clock.h"
#include "coordinator/local_coordinator.h"
#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "server/server.h"

namespace fathom::server {
namespace {

constexpr char kToken[] = "table-client-test-token-0123456789";

class TableClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (uint32_t id = 1; id <= 3; ++id) {
      coordinators_.push_back(service_.NewCoordinator());
      ServerOptions options;
      options.node.node_id = id;
      options.node.cluster_token = kToken;
      options.node.listen_address = "127.0.0.1:0";
      options.node.memory_bytes = 8 << 20;
      options.node.region_bytes = 8 << 20;
      options.node.worker_threads = 1;
      options.transports = "sm";
      options.coordinator = coordinators_.back().get();
      options.lease_period = absl::ZeroDuration();
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<Server> server, Server::Start(std::move(options)));
      servers_.push_back(std::move(server));
    }
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    for (auto& server : servers_) {
      while (server->data_members().size() < 3 || server->node().connected_peers().size() < 2) {
        ASSERT_LT(absl::Now(), deadline) << "node " << server->id() << " never saw the others";
        absl::SleepFor(absl::Milliseconds(5));
      }
    }
  }

  coordinator::Configuration Config() {
    auto config = coordinators_[0]->GetConfiguration();
    EXPECT_TRUE(config.ok()) << config.status();
    return config.ok() ? *config : coordinator::Configuration();
  }

  // The first attempt's answer is lost after the member ran the call.
  static TableCallOptions LosingTheFirstAnswer() {
    TableCallOptions options{.token = kToken};
    options.lose_answer = [](int attempt) { return attempt == 0; };
    return options;
  }

  coordinator::LocalCoordinationService service_{"table_client_test"};
  std::vector<std::unique_ptr<coordinator::LocalCoordinator>> coordinators_;
  std::vector<std::unique_ptr<Server>> servers_;
};

TEST_F(TableClientTest, ACallWhoseAnswerWasLostDoesWhatWasAskedOnce) {
  control::CreateTableRequest create;
  create.set_name("users");
  create.set_buckets(64);
  ASSERT_OK_AND_ASSIGN(control::TableSummary created, CreateTable(Config(), create, LosingTheFirstAnswer()));
  EXPECT_EQ(created.name(), "users");
  EXPECT_EQ(created.buckets(), 64u);
  // A real second create still fails, and one asking for other options after a lost answer too.
  EXPECT_TRUE(absl::IsAlreadyExists(CreateTable(Config(), create, {.token = kToken}).status()));
  create.set_buckets(128);
  EXPECT_TRUE(absl::IsAlreadyExists(CreateTable(Config(), create, LosingTheFirstAnswer()).status()));

  // Twice the buckets, once: the repeat finds the table past the epoch it started from.
  control::ResizeTableRequest resize;
  resize.set_name("users");
  ASSERT_OK_AND_ASSIGN(control::TableSummary resized, ResizeTable(Config(), resize, LosingTheFirstAnswer()));
  EXPECT_EQ(resized.buckets(), 128u);
  EXPECT_EQ(resized.epoch(), 2u);
  ASSERT_OK_AND_ASSIGN(std::vector<control::TableSummary> tables, ListTables(Config(), {.token = kToken}));
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].buckets(), 128u);
  // A resize from an epoch the table has left is refused, not run.
  resize.set_from_epoch(1);
  EXPECT_TRUE(absl::IsFailedPrecondition(ResizeTable(Config(), resize, {.token = kToken}).status()));

  ASSERT_OK(DropTable(Config(), "users", LosingTheFirstAnswer()));
  ASSERT_OK_AND_ASSIGN(tables, ListTables(Config(), {.token = kToken}));
  EXPECT_TRUE(tables.empty());
  EXPECT_TRUE(absl::IsNotFound(DropTable(Config(), "users", {.token = kToken})));
}

}  // namespace
}  // namespace fathom::server
