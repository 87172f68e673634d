// fathomctl replicas' comparison: equal digests agree; a differing, missing or unreachable replica does not;
// a backup still filling is not compared.
#include "tools/fathomctl/replicas.h"

#include "gtest/gtest.h"

namespace fathom::fathomctl {
namespace {

coordinator::Configuration TwoRegions() {
  coordinator::Configuration config;
  coordinator::RegionPlacement* a = config.add_regions();
  a->set_region_id(65537);
  a->set_primary(1);
  a->add_backups(2);
  coordinator::RegionPlacement* b = config.add_regions();
  b->set_region_id(131073);
  b->set_primary(2);
  b->add_backups(1);
  b->add_backups(3);
  b->add_filling(3);
  return config;
}

MemberStats Member(uint32_t node, std::vector<std::tuple<uint32_t, bool, uint64_t>> digests) {
  MemberStats m;
  m.node_id = node;
  for (const auto& [region, primary, digest] : digests) {
    control::ReplicaDigest* d = m.stats.add_replicas();
    d->set_region_id(region);
    d->set_primary(primary);
    d->set_digest(digest);
    d->set_objects(3);
  }
  return m;
}

TEST(ReplicasTest, EqualDigestsAgreeAndAFillingBackupIsNotCompared) {
  const ReplicaReport report = CompareReplicas(
      TwoRegions(), {Member(1, {{65537, true, 7}, {131073, false, 9}}), Member(2, {{65537, false, 7}, {131073, true, 9}}),
                     Member(3, {{131073, false, 1}})});
  EXPECT_TRUE(report.identical) << report.text;
  EXPECT_EQ(report.regions, 2);
}

TEST(ReplicasTest, ADifferingMissingOrUnreachableReplicaIsNamed) {
  ReplicaReport report = CompareReplicas(
      TwoRegions(), {Member(1, {{65537, true, 7}, {131073, false, 9}}), Member(2, {{65537, false, 8}, {131073, true, 9}})});
  EXPECT_FALSE(report.identical);
  EXPECT_NE(report.text.find("1 of 2 regions do not agree"), std::string::npos) << report.text;
  EXPECT_NE(report.text.find("region 65537: primary 1=0000000000000007 (3 objects) backup 2=0000000000000008"),
            std::string::npos)
      << report.text;

  report = CompareReplicas(TwoRegions(), {Member(1, {{65537, true, 7}}), Member(2, {{65537, false, 7}, {131073, true, 9}})});
  EXPECT_FALSE(report.identical);
  EXPECT_NE(report.text.find("backup 1=not reported"), std::string::npos) << report.text;

  MemberStats down = Member(2, {});
  down.status = absl::UnavailableError("connection refused");
  report = CompareReplicas(TwoRegions(), {Member(1, {{65537, true, 7}, {131073, false, 9}}), down});
  EXPECT_FALSE(report.identical);
  EXPECT_NE(report.text.find("backup 2=unreachable (connection refused)"), std::string::npos) << report.text;
}

}  // namespace
}  // namespace fathom::fathomctl
