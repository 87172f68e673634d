// MetricsPage: a node's page is valid Prometheus text and counts what the node did; served over HTTP by
// the endpoint fathomd runs.
#include "server/metrics_page.h"


#include <map>
#include <regex>
#include <set>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "platform/metrics/http_endpoint.h"
#include "platform/metrics/http_test_client.h"

namespace fathom::server {
namespace {

using ::testing::HasSubstr;

constexpr char kToken[] = "metrics-page-test-token-0123456789";

ServerOptions Options(uint32_t id, const std::string& transports = "sm") {
  ServerOptions options;
  options.node.node_id = id;
  options.node.cluster_token = kToken;
  options.node.listen_address = "127.0.0.1:0";
  options.node.memory_bytes = 4 << 20;
  options.node.region_bytes = 4 << 20;
  options.node.worker_threads = 1;
  options.transports = transports;
  return options;
}

absl::Status WriteNew(txn::TransactionService& txns, uint32_t node) {
  txn::Transaction tx = txns.Begin();
  auto ref = tx.Alloc(8, {.node = node});
  if (!ref.ok()) return ref.status();
  if (absl::Status s = tx.Write(*ref, std::string(8, 'x')); !s.ok()) return s;
  return tx.Commit();
}

// Checks the page against the text format: every family's TYPE comes before its samples, every sample
// line is `name{labels} value` with a number, and returns the samples by their name and labels.
std::map<std::string, double> Samples(const std::string& page) {
  static const std::regex kSample(R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*",?)*\})? (\S+))");
  std::map<std::string, double> samples;
  std::set<std::string> typed;
  for (absl::string_view line : absl::StrSplit(page, '\n', absl::SkipEmpty())) {
    const std::string text(line);
    if (text.rfind("# HELP ", 0) == 0) continue;
    if (text.rfind("# TYPE ", 0) == 0) {
      const std::vector<std::string> parts = absl::StrSplit(text, ' ');
      EXPECT_EQ(parts.size(), 4u) << text;
      if (parts.size() == 4) {
        EXPECT_TRUE(typed.insert(parts[2]).second) << "family typed twice: " << text;
      }
      continue;
    }
    std::smatch match;
    if (!std::regex_match(text, match, kSample)) {
      ADD_FAILURE() << "not a sample line: " << text;
      continue;
    }
    std::string family = match[1];
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      if (!typed.count(family) && absl::EndsWith(family, suffix)) family.resize(family.size() - strlen(suffix));
    }
    EXPECT_TRUE(typed.count(family)) << "sample before its TYPE: " << text;
    double value = 0;
    if (match[4] == "+Inf") value = HUGE_VAL;
    else EXPECT_TRUE(absl::SimpleAtod(std::string(match[4]), &value)) << text;
    samples[std::string(match[1]) + std::string(match[2])] = value;
  }
  return samples;
}

// Reads `ref` in `tx`, in a new transaction again while a commit just made leaves it locked at its
// primary (Aborted).
absl::StatusOr<std::string> ReadSettled(txn::TransactionService& txns, txn::Transaction& tx,
                                        const object::ObjectRef& ref) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    absl::StatusOr<std::string> value = tx.Read(ref);
    if (!absl::IsAborted(value.status())) return value;
    tx.Abort();
    tx = txns.Begin();
  }
  return absl::DeadlineExceededError("stayed locked");
}

// Nodes 1 and 2 of a static cluster, both holding data.
absl::Status StartTwo(std::unique_ptr<Server>* one, std::unique_ptr<Server>* two,
                      const std::string& transports = "sm") {
  ServerOptions first = Options(1, transports);
  first.txn_members = {1, 2};
  absl::StatusOr<std::unique_ptr<Server>> started = Server::Start(std::move(first));
  if (!started.ok()) return started.status();
  *one = std::move(*started);
  ServerOptions second = Options(2, transports);
  second.node.peers.push_back({1, (*one)->node().control_address()});
  started = Server::Start(std::move(second));
  if (!started.ok()) return started.status();
  *two = std::move(*started);
  return absl::OkStatus();
}

TEST(MetricsPageTest, CountsCommitsLocksAndLatencyOfEachNode) {
  std::unique_ptr<Server> one, two;
  ASSERT_OK(StartTwo(&one, &two));

  for (int i = 0; i < 3; ++i) ASSERT_OK(WriteNew(one->transactions(), 2));
  // Two reads by node 1 of an object on node 2: remote, so timed.
  {
    txn::Transaction tx = one->transactions().Begin();
    ASSERT_OK_AND_ASSIGN(object::ObjectRef ref, tx.Alloc(8, {.node = 2}));
    ASSERT_OK(tx.Write(ref, std::string(8, 'r')));
    ASSERT_OK(tx.Commit());
    for (int read = 0; read < 2; ++read) {
      txn::Transaction reader = one->transactions().Begin();
      ASSERT_OK_AND_ASSIGN(std::string value, ReadSettled(one->transactions(), reader, ref));
      EXPECT_EQ(value, std::string(8, 'r'));
      reader.Abort();  // the read was the point; the counts of commits below stay the writes'
    }
  }

  std::map<std::string, double> at_one = Samples(MetricsPage(*one));
  EXPECT_EQ(at_one["fathom_txn_commits_total{node=\"1\"}"], 4);
  EXPECT_EQ(at_one["fathom_txn_commit_seconds_count{node=\"1\"}"], 4);
  EXPECT_EQ(at_one["fathom_txn_commit_seconds_bucket{node=\"1\",le=\"+Inf\"}"], 4);
  EXPECT_GE(at_one["fathom_txn_remote_read_seconds_count{node=\"1\"}"], 2);
  EXPECT_GT(at_one["fathom_txn_remote_read_seconds_sum{node=\"1\"}"], 0);
  EXPECT_GT(at_one["fathom_txn_commit_seconds_sum{node=\"1\"}"], 0);
  EXPECT_EQ(at_one.count("fathom_txn_aborts_total{node=\"1\",reason=\"lock\",kind=\"conflict\"}"), 1u);
  EXPECT_GT(at_one["fathom_ring_bytes{node=\"1\"}"], 0);
  EXPECT_GT(at_one["fathom_stats_msg_messages{node=\"1\"}"], 0);
  EXPECT_EQ(at_one["fathom_memory_region_bytes{node=\"1\"}"], 4 << 20);
  EXPECT_GT(at_one["fathom_uptime_seconds{node=\"1\"}"], 0);
  EXPECT_EQ(at_one.count("fathom_configuration_epoch{node=\"1\"}"), 0u) << "a static cluster has no coordinator";
  // Over shared memory reads and writes are copies, not messages: the fabric's counters are there, at 0.
  EXPECT_EQ(at_one.count("fathom_fabric_batches_sent_total{node=\"1\"}"), 1u);
  EXPECT_EQ(at_one["fathom_fabric_batches_sent_total{node=\"1\"}"], 0);

  // Node 2 is the objects' primary: it granted their locks and committed nothing itself.
  std::map<std::string, double> at_two = Samples(MetricsPage(*two));
  EXPECT_EQ(at_two["fathom_locks_granted_total{node=\"2\"}"], 4);
  EXPECT_EQ(at_two["fathom_lock_conflicts_total{node=\"2\"}"], 0);
  EXPECT_EQ(at_two["fathom_txn_commits_total{node=\"2\"}"], 0);

  // Served as fathomd serves it.
  Server* server = one.get();
  ASSERT_OK_AND_ASSIGN(auto endpoint, metrics::HttpEndpoint::Start({}, [server] { return MetricsPage(*server); }));
  const std::string response = metrics::testing::Exchange(endpoint->port(), "GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_THAT(response, HasSubstr("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(response, HasSubstr("\nfathom_txn_commits_total{node=\"1\"} 4\n"));
  endpoint->Stop();
  two->Stop();
  one->Stop();
}
TEST(MetricsPageTest, CountsTheFabricsMessagesOverTcp) {
  std::unique_ptr<Server> one, two;
  ASSERT_OK(StartTwo(&one, &two, "tcp"));
  // Node 1 commits an object on node 2 and reads it back: over tcp its reads and the ring writes travel
  // as batches node 2 serves and answers.
  txn::Transaction tx = one->transactions().Begin();
  ASSERT_OK_AND_ASSIGN(object::ObjectRef ref, tx.Alloc(8, {.node = 2}));
  ASSERT_OK(tx.Write(ref, std::string(8, 't')));
  ASSERT_OK(tx.Commit());
  txn::Transaction reader = one->transactions().Begin();
  ASSERT_OK_AND_ASSIGN(std::string value, ReadSettled(one->transactions(), reader, ref));
  EXPECT_EQ(value, std::string(8, 't'));
  reader.Abort();

  std::map<std::string, double> at_one = Samples(MetricsPage(*one));
  const double sent = at_one["fathom_fabric_batches_sent_total{node=\"1\"}"];
  EXPECT_GT(sent, 0);
  EXPECT_GE(at_one["fathom_fabric_records_sent_total{node=\"1\"}"], sent);
  std::map<std::string, double> at_two = Samples(MetricsPage(*two));
  EXPECT_GT(at_two["fathom_fabric_batches_served_total{node=\"2\"}"], 0);
  EXPECT_GT(at_two["fathom_fabric_replies_sent_total{node=\"2\"}"] +
                at_two["fathom_fabric_replies_with_requests_total{node=\"2\"}"],
            0);
  EXPECT_EQ(at_two["fathom_fabric_batches_served_total{node=\"2\"}"],
            at_two["fathom_stats_fabric_batches_served{node=\"2\"}"]);
  two->Stop();
  one->Stop();
}

TEST(MetricsPageTest, CountsAbortsByReason) {
  std::unique_ptr<Server> one, two;
  ASSERT_OK(StartTwo(&one, &two));
  txn::TransactionService& txns = one->transactions();
  object::ObjectRef a, b;
  {
    txn::Transaction tx = txns.Begin();
    ASSERT_OK_AND_ASSIGN(a, tx.Alloc(8, {.node = 2}));
    ASSERT_OK_AND_ASSIGN(b, tx.Alloc(8, {.node = 2}));
    ASSERT_OK(tx.Write(a, std::string(8, 'a')));
    ASSERT_OK(tx.Write(b, std::string(8, 'b')));
    ASSERT_OK(tx.Commit());
  }
  // Lock: two transactions read `a` at one version and write it; the second's LOCK is refused.
  {
    txn::Transaction winner = txns.Begin();
    txn::Transaction loser = txns.Begin();
    ASSERT_OK(ReadSettled(txns, winner, a).status());
    ASSERT_OK(ReadSettled(txns, loser, a).status());
    ASSERT_OK(winner.Write(a, std::string(8, 'w')));
    ASSERT_OK(loser.Write(a, std::string(8, 'l')));
    ASSERT_OK(winner.Commit());
    EXPECT_TRUE(absl::IsAborted(loser.Commit()));
  }
  // Validate: a transaction reads `a` and writes `b`; `a` changes before it commits.
  {
    txn::Transaction reader = txns.Begin();
    ASSERT_OK(ReadSettled(txns, reader, a).status());
    ASSERT_OK(reader.Write(b, std::string(8, 'v')));
    txn::Transaction writer = txns.Begin();
    ASSERT_OK(ReadSettled(txns, writer, a).status());
    ASSERT_OK(writer.Write(a, std::string(8, 'x')));
    ASSERT_OK(writer.Commit());
    EXPECT_TRUE(absl::IsAborted(reader.Commit()));
  }

  std::map<std::string, double> page = Samples(MetricsPage(*one));
  auto aborts = [&](const char* reason, const char* kind) {
    const std::string sample =
        absl::StrCat("fathom_txn_aborts_total{node=\"1\",reason=\"", reason, "\",kind=\"", kind, "\"}");
    EXPECT_EQ(page.count(sample), 1u) << sample;
    return page[sample];
  };
  EXPECT_EQ(aborts("lock", "conflict"), 1);
  EXPECT_EQ(aborts("validate", "conflict"), 1);
  EXPECT_EQ(aborts("plan", "conflict"), 0);
  EXPECT_EQ(aborts("commit", "conflict"), 0);
  EXPECT_GE(aborts("read", "conflict"), 0);  // a read that found an object still locked
  EXPECT_EQ(aborts("unavailable", "error"), 0);
  EXPECT_EQ(aborts("deadline_exceeded", "error"), 0);
  EXPECT_EQ(aborts("other", "error"), 0);
  EXPECT_EQ(Samples(MetricsPage(*two))["fathom_lock_conflicts_total{node=\"2\"}"], 1) << "the primary refused";
  two->Stop();
  one->Stop();
}

}  // namespace
}  // namespace fathom::server
