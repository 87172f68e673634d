// The lease wire format (docs/formats/lease.md), corrupted on purpose, and the CM's LeaseTable on
// injected times.
#include "coordinator/lease.h"

#include "gtest/gtest.h"

namespace fathom::coordinator {
namespace {

coordinator::Configuration Config(std::initializer_list<std::pair<uint32_t, uint64_t>> members) {
  coordinator::Configuration config;
  config.set_epoch(7);
  for (const auto& [id, incarnation] : members) {
    coordinator::MemberInfo* m = config.add_members();
    m->set_node_id(id);
    m->set_control_address("127.0.0.1:1");
    m->set_incarnation(incarnation);
  }
  return config;
}

TEST(LeaseFormatTest, AChannelRequestMustComeFromTheAddressTheMemberPublished) {
  coordinator::Configuration config = Config({{2, 20}, {3, 30}});
  config.mutable_members(0)->set_lease_address("10.0.0.2:4000");
  EXPECT_TRUE(LeaseSourceMatches(config, 2, "10.0.0.2:4000"));
  EXPECT_FALSE(LeaseSourceMatches(config, 2, "10.0.0.9:4000")) << "another host claiming node 2";
  EXPECT_FALSE(LeaseSourceMatches(config, 2, "10.0.0.2:4001")) << "another socket of the same host";
  EXPECT_FALSE(LeaseSourceMatches(config, 3, "10.0.0.3:1")) << "node 3 published no channel: it renews on its rings";
  EXPECT_TRUE(LeaseSourceMatches(config, 9, "10.0.0.9:1")) << "not a member: answered, and refused by Renew";
}

TEST(LeaseFormatTest, RequestAndReplyRoundTrip) {
  const std::string request =
      EncodeLeaseRequest({.node_id = 3, .incarnation = 0x1122334455667788, .epoch = 9, .confirms = 0xabcdef});
  ASSERT_EQ(request.size(), kLeaseMessageBytes);
  auto decoded = DecodeLeaseRequest(request);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->node_id, 3u);
  EXPECT_EQ(decoded->incarnation, 0x1122334455667788u);
  EXPECT_EQ(decoded->epoch, 9u);
  EXPECT_EQ(decoded->confirms, 0xabcdefu);
  // Little-endian, as documented: version 2, reserved, node id; the grant confirmed at offset 24.
  EXPECT_EQ(request.substr(0, 8), std::string("\x02\x00\x00\x00\x03\x00\x00\x00", 8));
  EXPECT_EQ(request.substr(24, 4), std::string("\xef\xcd\xab\x00", 4));

  const std::string reply = EncodeLeaseReply(
      {.verdict = LeaseVerdict::kGranted, .period = absl::Milliseconds(1500), .epoch = 9, .grant = 77});
  auto back = DecodeLeaseReply(reply);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->verdict, LeaseVerdict::kGranted);
  EXPECT_EQ(back->period, absl::Milliseconds(1500));
  EXPECT_EQ(back->epoch, 9u);
  EXPECT_EQ(back->grant, 77u);
}

TEST(LeaseFormatTest, CorruptRequestsAreRejectedAsMalformed) {
  const std::string good = EncodeLeaseRequest({.node_id = 3, .incarnation = 5, .epoch = 9});
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeLeaseRequest(good.substr(0, 31)).status()));  // truncated
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeLeaseRequest(good.substr(0, 24)).status()));  // a version 1 length
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeLeaseRequest(good + "x").status()));          // trailing byte
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeLeaseRequest("").status()));
  std::string bad = good;
  bad[0] = 1;  // format version 1 (no confirmation field)
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeLeaseRequest(bad).status()));
  bad[0] = 3;  // unknown format version
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeLeaseRequest(bad).status()));
  bad = good;
  bad[2] = 1;  // reserved bits
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeLeaseRequest(bad).status()));
  bad = good;
  bad[4] = 0;  // node id 0
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeLeaseRequest(bad).status()));
  bad = good;
  bad[6] = 1;  // node id above 65535
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeLeaseRequest(bad).status()));
  // Every single-byte flip of the header is either rejected or decodes to a different, still valid request.
  for (size_t i = 0; i < good.size(); ++i) {
    std::string flipped = good;
    flipped[i] ^= 0x40;
    auto decoded = DecodeLeaseRequest(flipped);
    if (i < 4) {
      EXPECT_FALSE(decoded.ok()) << "byte " << i;
    }
  }
}

TEST(LeaseFormatTest, CorruptRepliesAreRejected) {
  const std::string good =
      EncodeLeaseReply({.verdict = LeaseVerdict::kGranted, .period = absl::Seconds(2), .epoch = 1, .grant = 5});
  EXPECT_FALSE(DecodeLeaseReply(good.substr(1)).ok());
  std::string bad = good;
  bad[2] = 9;  // unknown verdict
  EXPECT_FALSE(DecodeLeaseReply(bad).ok());
  bad = good;
  bad[5] = 1;  // reserved
  EXPECT_FALSE(DecodeLeaseReply(bad).ok());
  bad = good;
  bad[15] = 0x7f;  // a grant of centuries is refused, not trusted
  EXPECT_FALSE(DecodeLeaseReply(bad).ok());
  const std::string zero =
      EncodeLeaseReply({.verdict = LeaseVerdict::kGranted, .period = absl::ZeroDuration(), .grant = 5});
  EXPECT_FALSE(DecodeLeaseReply(zero).ok());
  // A grant carries its token, a refusal none: a lie either way is refused.
  EXPECT_FALSE(DecodeLeaseReply(EncodeLeaseReply({.verdict = LeaseVerdict::kGranted, .period = absl::Seconds(2)})).ok());
  EXPECT_FALSE(DecodeLeaseReply(EncodeLeaseReply({.verdict = LeaseVerdict::kNotManager, .grant = 5})).ok());
  const std::string refused = EncodeLeaseReply({.verdict = LeaseVerdict::kNotMember, .period = absl::ZeroDuration()});
  ASSERT_TRUE(DecodeLeaseReply(refused).ok());
  EXPECT_EQ(DecodeLeaseReply(refused)->verdict, LeaseVerdict::kNotMember);
}

TEST(LeaseTableTest, MembersExpireAPeriodAfterTheirLastRenewal) {
  const absl::Time t0 = absl::UnixEpoch() + absl::Hours(1);
  LeaseTable table(absl::Seconds(2));
  table.SetMembers(Config({{1, 11}, {2, 22}, {3, 33}}), /*self=*/1, t0);
  EXPECT_EQ(table.entries().size(), 2u);  // not itself
  EXPECT_TRUE(table.Expired(t0 + absl::Milliseconds(1999)).empty());
  EXPECT_EQ(table.Renew(2, 22, t0 + absl::Seconds(1)), LeaseVerdict::kGranted);
  EXPECT_EQ(table.Renew(2, 99, t0 + absl::Seconds(1)), LeaseVerdict::kNotMember);  // another incarnation
  EXPECT_EQ(table.Renew(4, 44, t0 + absl::Seconds(1)), LeaseVerdict::kNotMember);  // not a member
  auto expired = table.Expired(t0 + absl::Seconds(2));
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0], std::make_pair(3u, uint64_t{33}));
  EXPECT_EQ(table.Expired(t0 + absl::Seconds(3)).size(), 2u);
  // Holds is the other side of Expired, for one incarnation.
  EXPECT_TRUE(table.Holds(2, 22, t0 + absl::Milliseconds(2999)));
  EXPECT_FALSE(table.Holds(2, 22, t0 + absl::Seconds(3)));
  EXPECT_FALSE(table.Holds(2, 99, t0 + absl::Seconds(1))) << "another incarnation";
  EXPECT_FALSE(table.Holds(3, 33, t0 + absl::Seconds(2)));
  EXPECT_FALSE(table.Holds(1, 11, t0)) << "itself: no entry";
  // A stalled CM renews everyone rather than blaming them.
  table.RenewAll(t0 + absl::Seconds(10));
  EXPECT_TRUE(table.Expired(t0 + absl::Seconds(11)).empty());
}

TEST(LeaseTableTest, ConfirmationsOnlyMoveForwardAndNeedTheIncarnation) {
  const absl::Time t0 = absl::UnixEpoch() + absl::Hours(1);
  LeaseTable table(absl::Seconds(2));
  table.SetMembers(Config({{1, 11}, {2, 22}, {3, 33}}), /*self=*/1, t0);
  EXPECT_EQ(table.entries().at(2).confirmed, absl::InfinitePast());
  table.Confirm(2, 22, t0 + absl::Seconds(1));
  table.Confirm(2, 22, t0 + absl::Milliseconds(500));  // an older grant, confirmed late
  table.Confirm(2, 99, t0 + absl::Seconds(5));         // another incarnation
  table.Confirm(4, 44, t0 + absl::Seconds(5));         // not a member
  EXPECT_EQ(table.entries().at(2).confirmed, t0 + absl::Seconds(1));
  EXPECT_EQ(table.entries().at(3).confirmed, absl::InfinitePast());
  EXPECT_EQ(table.entries().size(), 2u);
}

// A new CM that took over from one a majority voted out gives it only until `expires`, whatever it gave
// everyone at the takeover; a renewal after that counts again.
TEST(LeaseTableTest, ExpireByShortensOneMembersLease) {
  const absl::Time t0 = absl::UnixEpoch() + absl::Hours(1);
  LeaseTable table(absl::Milliseconds(200));
  table.SetMembers(Config({{1, 11}, {2, 22}, {3, 33}}), /*self=*/2, t0);
  table.RenewAll(t0);
  table.ExpireBy(1, 11, t0 + absl::Milliseconds(75));
  table.ExpireBy(3, 99, t0 + absl::Milliseconds(75));  // another incarnation: untouched
  EXPECT_TRUE(table.Expired(t0 + absl::Milliseconds(74)).empty());
  auto expired = table.Expired(t0 + absl::Milliseconds(75));
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0], std::make_pair(1u, uint64_t{11}));
  EXPECT_EQ(table.Renew(1, 11, t0 + absl::Milliseconds(60)), LeaseVerdict::kGranted);
  EXPECT_TRUE(table.Expired(t0 + absl::Milliseconds(199)).empty());
  expired = table.Expired(t0 + absl::Milliseconds(250));  // node 3's full period from the takeover is over
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].first, 3u);
}

TEST(LeaseTableTest, ConfigurationChangesKeepRenewalsAndResetNewcomers) {
  const absl::Time t0 = absl::UnixEpoch();
  LeaseTable table(absl::Seconds(1));
  table.SetMembers(Config({{1, 1}, {2, 2}, {3, 3}}), 1, t0);
  table.Renew(2, 2, t0 + absl::Milliseconds(500));
  // Node 3 restarted (new incarnation): a fresh lease; node 2 keeps its renewal; node 4 is new.
  table.SetMembers(Config({{1, 1}, {2, 2}, {3, 30}, {4, 4}}), 1, t0 + absl::Milliseconds(900));
  EXPECT_EQ(table.entries().at(2).last_renewal, t0 + absl::Milliseconds(500));
  EXPECT_EQ(table.entries().at(3).incarnation, 30u);
  EXPECT_EQ(table.entries().at(3).last_renewal, t0 + absl::Milliseconds(900));
  auto expired = table.Expired(t0 + absl::Milliseconds(1500));
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].first, 2u);
  table.SetMembers(Config({{1, 1}, {4, 4}}), 1, t0 + absl::Seconds(2));
  EXPECT_EQ(table.entries().size(), 1u);
}

// A member admitted while the CM runs has the join grace for its first renewal; after it, the period
// again. Members a new CM takes over (RenewAll) have only the period, so a dead old CM goes quickly.
TEST(LeaseTableTest, AJoiningMemberHasTheJoinGraceForItsFirstRenewalOnly) {
  const absl::Time t0 = absl::UnixEpoch();
  LeaseTable table(absl::Milliseconds(200), /*join_grace=*/absl::Seconds(2));
  table.SetMembers(Config({{1, 1}, {2, 2}, {3, 3}}), 1, t0);
  EXPECT_TRUE(table.Expired(t0 + absl::Milliseconds(1999)).empty());
  EXPECT_EQ(table.Expired(t0 + absl::Seconds(2)).size(), 2u);
  EXPECT_EQ(table.Renew(2, 2, t0 + absl::Seconds(1)), LeaseVerdict::kGranted);
  auto expired = table.Expired(t0 + absl::Milliseconds(1200));
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].first, 2u);  // renewed once: the period from then on
  LeaseTable taken_over(absl::Milliseconds(200), absl::Seconds(2));
  taken_over.SetMembers(Config({{1, 1}, {2, 2}}), 1, t0);
  taken_over.RenewAll(t0);
  EXPECT_EQ(taken_over.Expired(t0 + absl::Milliseconds(200)).size(), 1u);
  // The grace is never shorter than the period.
  LeaseTable long_lease(absl::Seconds(5), absl::Seconds(2));
  long_lease.SetMembers(Config({{1, 1}, {2, 2}}), 1, t0);
  EXPECT_TRUE(long_lease.Expired(t0 + absl::Seconds(4)).empty());
}

}  // namespace
}  // namespace fathom::coordinator
