// The restart exchange's stream and chunk messages (docs/formats/ssd-log.md, "Restart exchange"): round
// trips, and every flipped byte, every cut and lying lengths refused.
#include "logging/log_exchange.h"

#include <xxhash.h>

#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "server/embedded_cluster.h"

namespace fathom::logging {
namespace {

PeerLog Sample(uint32_t node) {
  PeerLog log;
  log.has_log = true;
  log.contents.node_id = node;
  log.contents.position = 9;
  for (uint32_t i = 0; i < 3; ++i) {
    ObjectState s;
    s.address = memory::GlobalAddress{node << 16, 64 * i};
    s.capacity = 64;
    s.flags = 1;
    s.version = 2 + i;
    s.payload = "balance-" + std::to_string(i);
    s.role = i == 2 ? Role::kBackup : Role::kPrimary;
    s.position = 3 + i;
    s.txn_epoch = 1;
    s.txn_node = 4;
    s.txn_counter = 100 + i;
    log.contents.states.push_back(s);
  }
  return log;
}

// Rewrites the trailer so damage inside is found by the field checks, not by the checksum.
std::string Reseal(std::string stream) {
  stream.resize(stream.size() - 8);
  const uint64_t sum = XXH3_64bits(stream.data(), stream.size());
  for (int i = 0; i < 8; ++i) stream.push_back(static_cast<char>(sum >> (8 * i)));
  return stream;
}

void PutU32At(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
}

TEST(LogExchangeTest, ASnapshotRoundTrips) {
  const PeerLog log = Sample(2);
  ASSERT_OK_AND_ASSIGN(PeerLog back, DecodeLogSnapshot(EncodeLogSnapshot(log), 2));
  EXPECT_TRUE(back.has_log);
  EXPECT_EQ(back.contents.node_id, 2u);
  EXPECT_EQ(back.contents.position, 9u);
  ASSERT_EQ(back.contents.states.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back.contents.states[i].address, log.contents.states[i].address);
    EXPECT_EQ(back.contents.states[i].payload, log.contents.states[i].payload);
    EXPECT_EQ(back.contents.states[i].version, log.contents.states[i].version);
    EXPECT_EQ(back.contents.states[i].role, log.contents.states[i].role);
    EXPECT_EQ(back.contents.states[i].txn_counter, log.contents.states[i].txn_counter);
  }
  PeerLog none;
  none.contents.node_id = 3;
  ASSERT_OK_AND_ASSIGN(PeerLog empty, DecodeLogSnapshot(EncodeLogSnapshot(none), 3));
  EXPECT_FALSE(empty.has_log);
  EXPECT_TRUE(empty.contents.states.empty());
}

TEST(LogExchangeTest, EveryFlippedByteAndEveryCutIsRefused) {
  const std::string stream = EncodeLogSnapshot(Sample(2));
  for (size_t at = 0; at < stream.size(); ++at) {
    std::string bad = stream;
    bad[at] ^= 0x20;
    EXPECT_FALSE(DecodeLogSnapshot(bad, 2).ok()) << "flipped byte " << at;
  }
  for (size_t size = 0; size < stream.size(); ++size) {
    auto cut = DecodeLogSnapshot(stream.substr(0, size), 2);
    ASSERT_FALSE(cut.ok()) << "cut to " << size;
    EXPECT_EQ(cut.status().code(), absl::StatusCode::kDataLoss) << cut.status();
    EXPECT_NE(cut.status().message().find("node 2"), std::string::npos) << cut.status();
  }
}

TEST(LogExchangeTest, LyingLengthsWrongNodeAndUnknownFormatAreRefused) {
  const std::string stream = EncodeLogSnapshot(Sample(2));
  // The state count says more than the bytes can hold.
  std::string count = stream;
  PutU32At(count, 16, 1000000);
  auto lied = DecodeLogSnapshot(Reseal(count), 2);
  EXPECT_EQ(lied.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(lied.status().message().find("do not fit"), std::string::npos) << lied.status();
  // Fewer states than there are: bytes are left over.
  PutU32At(count, 16, 2);
  EXPECT_NE(DecodeLogSnapshot(Reseal(count), 2).status().message().find("after the last state"), std::string::npos);
  // The first value's length runs past the end.
  std::string value_len = stream;
  PutU32At(value_len, kSnapshotHeaderBytes + 1 + 9, 1u << 30);
  auto past = DecodeLogSnapshot(Reseal(value_len), 2);
  EXPECT_EQ(past.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(past.status().message().find("at byte 42"), std::string::npos) << past.status();
  // One byte shorter: the value no longer passes its own checksum.
  PutU32At(value_len, kSnapshotHeaderBytes + 1 + 9, EncodeState(Sample(2).contents.states[0]).size() - 1);
  EXPECT_FALSE(DecodeLogSnapshot(Reseal(value_len), 2).ok());
  // A snapshot that says it is another node's.
  EXPECT_NE(DecodeLogSnapshot(stream, 3).status().message().find("says it is node 2"), std::string::npos);
  // A format this build does not read.
  std::string format = stream;
  format[0] = 3;
  EXPECT_EQ(DecodeLogSnapshot(Reseal(format), 2).status().code(), absl::StatusCode::kFailedPrecondition);
  // States from a node that says it has no log.
  std::string flag = stream;
  flag[1] = 0;
  EXPECT_FALSE(DecodeLogSnapshot(Reseal(flag), 2).ok());
}

TEST(LogExchangeTest, ChunkMessagesAreChecked) {
  ASSERT_OK_AND_ASSIGN(uint64_t offset, DecodeChunkRequest(EncodeChunkRequest(16384)));
  EXPECT_EQ(offset, 16384u);
  EXPECT_FALSE(DecodeChunkRequest(EncodeChunkRequest(1).substr(0, 8)).ok());
  EXPECT_FALSE(DecodeChunkRequest(EncodeChunkRequest(1) + "x").ok());
  std::string wrong = EncodeChunkRequest(1);
  wrong[0] = 9;
  EXPECT_FALSE(DecodeChunkRequest(wrong).ok());

  const std::string encoded = EncodeChunkReply(100, "abc");  // the reply's chunk points into it
  ASSERT_OK_AND_ASSIGN(ChunkReply reply, DecodeChunkReply(encoded, 97));
  EXPECT_EQ(reply.total, 100u);
  EXPECT_EQ(reply.chunk, "abc");
  EXPECT_FALSE(DecodeChunkReply(EncodeChunkReply(100, "abcd"), 97).ok());     // past the total
  EXPECT_FALSE(DecodeChunkReply(EncodeChunkReply(100, ""), 50).ok());         // no progress
  EXPECT_FALSE(DecodeChunkReply(EncodeChunkReply(10, "a"), 50).ok());         // offset past the total
  EXPECT_FALSE(DecodeChunkReply(EncodeChunkReply(uint64_t{1} << 50, "a"), 0).ok());  // absurd total
  EXPECT_FALSE(DecodeChunkReply(std::string(kSnapshotChunkBytes + 9 + 1, '\1'), 0).ok());
  EXPECT_FALSE(DecodeChunkReply("\1abc", 0).ok());
  EXPECT_OK(DecodeChunkReply(EncodeChunkReply(3, "abc"), 0).status());
}

// Over a real node runtime (SimFabric): a log of many chunks arrives whole; a damaged one is refused.
TEST(LogExchangeTest, APeerFetchesALogOfManyChunksAndRefusesADamagedOne) {
  PeerLog big;
  big.has_log = true;
  big.contents.node_id = 2;
  big.contents.position = 1000;
  for (uint32_t i = 0; i < 600; ++i) {
    ObjectState s;
    s.address = memory::GlobalAddress{(2 << 16) | 1, 256 * i};
    s.capacity = 256;
    s.flags = 1;
    s.version = 1 + i % 7;
    s.payload = std::string(100 + i % 50, static_cast<char>('a' + i % 26));
    s.role = Role::kPrimary;
    s.position = 1 + i;
    big.contents.states.push_back(s);
  }
  std::map<uint32_t, std::shared_ptr<const std::string>> served;
  served[1] = std::make_shared<const std::string>(EncodeLogSnapshot(PeerLog{.contents = {.node_id = 1}}));
  served[2] = std::make_shared<const std::string>(EncodeLogSnapshot(big));
  ASSERT_GT(served[2]->size(), 5 * kSnapshotChunkBytes);
  PeerLog three = big;
  three.contents.node_id = 3;
  std::string damaged = EncodeLogSnapshot(three);
  damaged[damaged.size() / 2] ^= 0x08;
  served[3] = std::make_shared<const std::string>(damaged);

  server::EmbeddedClusterOptions options;
  options.fabric = server::EmbeddedFabric::kSim;
  options.customize = [&served](node::NodeOptions& node) {
    node.register_handlers = [snapshot = served.at(node.node_id)](msg::Messenger& m, int) {
      ServeLogSnapshot(m, snapshot);
    };
  };
  ASSERT_OK_AND_ASSIGN(auto cluster, server::EmbeddedCluster::Start(options));

  ASSERT_OK_AND_ASSIGN(PeerLog fetched, FetchLogSnapshot(cluster->node(1), 2, absl::Seconds(10)));
  EXPECT_TRUE(fetched.has_log);
  ASSERT_EQ(fetched.contents.states.size(), 600u);
  for (size_t i = 0; i < 600; ++i) {
    EXPECT_EQ(fetched.contents.states[i].payload, big.contents.states[i].payload) << i;
    EXPECT_EQ(fetched.contents.states[i].version, big.contents.states[i].version) << i;
  }
  ASSERT_OK_AND_ASSIGN(PeerLog none, FetchLogSnapshot(cluster->node(2), 1, absl::Seconds(10)));
  EXPECT_FALSE(none.has_log);
  auto bad = FetchLogSnapshot(cluster->node(1), 3, absl::Seconds(10));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss) << bad.status();
  EXPECT_NE(bad.status().message().find("node 3"), std::string::npos) << bad.status();

  // A connection that flapped is transient (a whole-cluster restart asks again once it is back), not a
  // missing node: it was NotFound, and the restart gave up.
  ASSERT_OK(cluster->node(1).Disconnect(2));
  auto unconnected = FetchLogSnapshot(cluster->node(1), 2, absl::Seconds(10));
  EXPECT_EQ(unconnected.status().code(), absl::StatusCode::kUnavailable) << unconnected.status();
}

}  // namespace
}  // namespace fathom::logging
