// LogEpochs (a node's view of the epochs) and the protocol's message codec.
#include "txn/log_epochs.h"

#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "txn/epoch_protocol.h"

namespace fathom::txn {
namespace {

TEST(LogEpochsTest, LocksAreGrantedInTheCurrentEpochAndRefusedWhileItCloses) {
  LogEpochs epochs(5);
  uint64_t epoch = 0;
  ASSERT_TRUE(epochs.TryLock(&epoch));
  EXPECT_EQ(epoch, 5u);
  EXPECT_FALSE(epochs.Drained()) << "not closing";
  epochs.Close();
  EXPECT_FALSE(epochs.TryLock(&epoch)) << "closing: no lock is granted";
  EXPECT_FALSE(epochs.Drained()) << "a lock of epoch 5 is held";
  epochs.Released(5);
  EXPECT_TRUE(epochs.Drained());
  epochs.Open(6);
  EXPECT_FALSE(epochs.closing());
  ASSERT_TRUE(epochs.TryLock(&epoch));
  EXPECT_EQ(epoch, 6u);
  epochs.Close();
  EXPECT_FALSE(epochs.Drained());
  epochs.Released(6);
  EXPECT_TRUE(epochs.Drained());
}

TEST(LogEpochsTest, DurableOnlyGrows) {
  LogEpochs epochs(1);
  epochs.SetDurable(4);
  epochs.SetDurable(2);
  EXPECT_EQ(epochs.durable(), 4u);
}

TEST(EpochMessageTest, RoundTripsAndRefusesDamage) {
  for (auto kind : {EpochMessageKind::kClose, EpochMessageKind::kDrained, EpochMessageKind::kOpen,
                    EpochMessageKind::kPersisted, EpochMessageKind::kDurable, EpochMessageKind::kHurry}) {
    ASSERT_OK_AND_ASSIGN(EpochMessage m, DecodeEpochMessage(EncodeEpochMessage({kind, 77})));
    EXPECT_EQ(m.kind, kind);
    EXPECT_EQ(m.epoch, 77u);
  }
  const std::string good = EncodeEpochMessage({EpochMessageKind::kOpen, 9});
  ASSERT_EQ(good.size(), 16u);
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_TRUE(absl::IsInvalidArgument(DecodeEpochMessage(good.substr(0, n)).status())) << "cut to " << n;
  }
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeEpochMessage(good + "x").status())) << "longer";
  std::string s = good;
  s[0] = 2;
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeEpochMessage(s).status())) << "format";
  for (char kind : {0, 7, 100}) {
    s = good;
    s[1] = kind;
    EXPECT_TRUE(absl::IsInvalidArgument(DecodeEpochMessage(s).status())) << "kind " << int(kind);
  }
  for (size_t i = 2; i < 8; ++i) {
    s = good;
    s[i] = 1;
    EXPECT_TRUE(absl::IsInvalidArgument(DecodeEpochMessage(s).status())) << "reserved byte " << i;
  }
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeEpochMessage(EncodeEpochMessage({EpochMessageKind::kClose, 0})).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeEpochMessage(EncodeEpochMessage({EpochMessageKind::kOpen, 0})).status()));
  EXPECT_OK(DecodeEpochMessage(EncodeEpochMessage({EpochMessageKind::kDurable, 0})).status());
}

}  // namespace
}  // namespace fathom::txn
