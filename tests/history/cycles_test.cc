#include "tests/history/cycles.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/history/graph.h"

namespace fathom::history {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

DependencyGraph Graph(int nodes, const std::vector<std::tuple<int, int, EdgeKind>>& edges) {
  DependencyGraph g(nodes);
  for (const auto& [from, to, kind] : edges) g.Add(from, to, kind, {});
  g.Finalize();
  return g;
}

TEST(DependencyGraphTest, MergesKindsAndKeepsTheFirstWitness) {
  DependencyGraph g(3);
  g.Add(0, 1, kWW, {1, 10, 11});
  g.Add(0, 1, kWW, {2, 20, 21});
  g.Add(0, 1, kRW, {3, std::nullopt, 30});
  g.Add(1, 1, kWR, {});  // self edges are dropped
  g.Add(2, 0, kRealtime, {});
  g.Finalize();
  ASSERT_EQ(g.OutEdges(0).size(), 1u);
  EXPECT_EQ(g.OutEdges(0)[0].to, 1);
  EXPECT_EQ(g.OutEdges(0)[0].kinds, kWW | kRW);
  EXPECT_THAT(g.OutEdges(1), IsEmpty());
  ASSERT_NE(g.Why(0, 1, kWW), nullptr);
  EXPECT_EQ(g.Why(0, 1, kWW)->key, 1);
  EXPECT_EQ(g.Why(0, 1, kRW)->b, 30);
  EXPECT_EQ(g.Why(0, 1, kWR), nullptr);
  EXPECT_EQ(g.edge_count(), 2u);
}

TEST(SccTest, FindsComponentsOfTwoOrMore) {
  // 0 <-> 1, 2 -> 3 -> 4 -> 2, 5 alone, 1 -> 2 joins nothing.
  DependencyGraph g = Graph(6, {{0, 1, kWW}, {1, 0, kWR}, {1, 2, kWW}, {2, 3, kRW}, {3, 4, kRW}, {4, 2, kRealtime}});
  EXPECT_THAT(StronglyConnectedComponents(g, kAllEdgeKinds), ElementsAre(ElementsAre(0, 1), ElementsAre(2, 3, 4)));
  EXPECT_THAT(StronglyConnectedComponents(g, kWW | kWR | kRW), ElementsAre(ElementsAre(0, 1)));
  EXPECT_THAT(StronglyConnectedComponents(g, kWW), IsEmpty());
}

TEST(SccTest, LongChainDoesNotOverflowTheStack) {
  const int n = 200000;
  std::vector<std::tuple<int, int, EdgeKind>> edges;
  for (int i = 0; i + 1 < n; ++i) edges.emplace_back(i, i + 1, kWW);
  edges.emplace_back(n - 1, 0, kWR);
  DependencyGraph g = Graph(n, edges);
  const auto components = StronglyConnectedComponents(g, kAllEdgeKinds);
  ASSERT_EQ(components.size(), 1u);
  EXPECT_EQ(components[0].size(), static_cast<size_t>(n));
}

TEST(FindCyclesTest, PrefersTheWeakestClassThenTheShortestCycle) {
  // One component with a ww cycle 0 -> 1 -> 2 -> 0 and a shorter rw/wr cycle 0 <-> 3. G0 wins.
  DependencyGraph g = Graph(4, {{0, 1, kWW}, {1, 2, kWW}, {2, 0, kWW}, {0, 3, kRW}, {3, 0, kWR}});
  const std::vector<Cycle> cycles = FindCycles(g, {});
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(cycles[0].nodes.size(), 3u);
  EXPECT_THAT(cycles[0].kinds, ElementsAre(kWW, kWW, kWW));
}

TEST(FindCyclesTest, SingleRwCycleBeforeTwoRw) {
  // 0 -rw-> 1 -rw-> 0 (G2) and 0 -rw-> 2 -wr-> 0 (G-single): G-single is reported.
  DependencyGraph g = Graph(3, {{0, 1, kRW}, {1, 0, kRW}, {0, 2, kRW}, {2, 0, kWR}});
  const std::vector<Cycle> cycles = FindCycles(g, {});
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_THAT(cycles[0].nodes, ElementsAre(0, 2));
  EXPECT_THAT(cycles[0].kinds, ElementsAre(kRW, kWR));
  EXPECT_TRUE(cycles[0].exhaustive);
}

TEST(FindCyclesTest, EdgeWithSeveralKindsUsesTheWeakest) {
  DependencyGraph g = Graph(2, {{0, 1, kRW}, {0, 1, kWW}, {1, 0, kWR}});
  const std::vector<Cycle> cycles = FindCycles(g, {});
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_THAT(cycles[0].kinds, ElementsAre(kWW, kWR));
}

TEST(FindCyclesTest, RealtimeCyclesOnlyWhenAsked) {
  DependencyGraph g = Graph(2, {{0, 1, kRealtime}, {1, 0, kRW}});
  const std::vector<Cycle> cycles = FindCycles(g, {});
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_THAT(cycles[0].kinds, ::testing::UnorderedElementsAre(kRealtime, kRW));
  CycleSearchOptions no_realtime;
  no_realtime.realtime = false;
  EXPECT_THAT(FindCycles(g, no_realtime), IsEmpty());
}

TEST(FindCyclesTest, SearchLimitIsReported) {
  // The only cycle has two rw edges; with no steps allowed the single-rw search gives up, and the G2
  // cycle found next says a weaker one may have been missed.
  DependencyGraph g = Graph(2, {{0, 1, kRW}, {1, 0, kRW}});
  CycleSearchOptions options;
  options.max_steps = 0;
  const std::vector<Cycle> cycles = FindCycles(g, options);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_FALSE(cycles[0].exhaustive);
}

}  // namespace
}  // namespace fathom::history
