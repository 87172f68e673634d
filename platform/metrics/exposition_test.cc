#include "platform/metrics/exposition.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fathom::metrics {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ExpositionTest, FamiliesComeOnceWithTheirSamplesTogether) {
  Exposition page;
  page.Counter("fathom_txn_commits_total", "Transactions committed.", {{"node", "1"}}, 12);
  page.Gauge("fathom_configuration_epoch", "The configuration.", {{"node", "1"}}, 6);
  page.Counter("fathom_txn_commits_total", "Transactions committed.", {{"node", "2"}}, 3);
  EXPECT_EQ(page.Text(),
            "# HELP fathom_txn_commits_total Transactions committed.\n"
            "# TYPE fathom_txn_commits_total counter\n"
            "fathom_txn_commits_total{node=\"1\"} 12\n"
            "fathom_txn_commits_total{node=\"2\"} 3\n"
            "# HELP fathom_configuration_epoch The configuration.\n"
            "# TYPE fathom_configuration_epoch gauge\n"
            "fathom_configuration_epoch{node=\"1\"} 6\n");
  EXPECT_EQ(page.refused(), 0);
}

TEST(ExpositionTest, EscapesHelpAndLabelValues) {
  Exposition page;
  page.Gauge("g", "a \\ b\nc", {{"table", "we\"ird\\\n"}}, 1.5);
  EXPECT_EQ(page.Text(),
            "# HELP g a \\\\ b\\nc\n"
            "# TYPE g gauge\n"
            "g{table=\"we\\\"ird\\\\\\n\"} 1.5\n");
}

TEST(ExpositionTest, RefusesBadNamesAndASecondType) {
  Exposition page;
  page.Counter("9lives", "", {}, 1);
  page.Counter("has-dash", "", {}, 1);
  page.Counter("", "", {}, 1);
  page.Gauge("ok", "", {{"bad-label", "x"}}, 1);
  page.Gauge("ok", "", {{"__reserved", "x"}}, 1);
  page.Gauge("ok", "", {}, 2);
  page.Counter("ok", "", {}, 3);  // already a gauge
  page.Histogram("h", "", {{"le", "1"}}, LatencyHistogram());
  EXPECT_EQ(page.refused(), 7);
  EXPECT_EQ(page.Text(), "# TYPE ok gauge\nok 2\n");
}

TEST(ExpositionTest, ValuesAreWholeWhenWholeAndSpecialValuesAreSpelledOut) {
  Exposition page;
  page.Untyped("a", "", {}, 18446744073709551615.0);  // beyond 2^53: printed as a double
  page.Untyped("b", "", {}, 0.25);
  page.Untyped("c", "", {}, 1.0 / 0.0);
  page.Untyped("d", "", {}, 1234567);
  const std::string text = page.Text();
  EXPECT_THAT(text, HasSubstr("\na 1.8446744073709552e+19\n"));
  EXPECT_THAT(text, HasSubstr("\nb 0.25\n"));
  EXPECT_THAT(text, HasSubstr("\nc +Inf\n"));
  EXPECT_THAT(text, HasSubstr("\nd 1234567\n"));
}

TEST(ExpositionTest, HistogramBucketsAreCumulativeWithSumAndCount) {
  LatencyHistogram h;
  h.Record(absl::Microseconds(1));     // ≤ 1 µs
  h.Record(absl::Microseconds(3));     // ≤ 4 µs
  h.Record(absl::Microseconds(4));     // ≤ 4 µs
  h.Record(absl::Nanoseconds(4001));   // ≤ 8 µs (rounded up)
  h.Record(absl::Seconds(10));         // +Inf only
  LatencyHistogram other;
  other.Record(absl::Microseconds(2));  // ≤ 2 µs
  h += other;
  EXPECT_EQ(h.count(), 6);
  Exposition page;
  page.Histogram("lat_seconds", "Latency.", {{"node", "1"}}, h);
  const std::string text = page.Text();
  EXPECT_THAT(text, HasSubstr("# TYPE lat_seconds histogram\n"));
  EXPECT_THAT(text, HasSubstr("lat_seconds_bucket{node=\"1\",le=\"1e-06\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("lat_seconds_bucket{node=\"1\",le=\"2e-06\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("lat_seconds_bucket{node=\"1\",le=\"4e-06\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("lat_seconds_bucket{node=\"1\",le=\"8e-06\"} 5\n"));
  EXPECT_THAT(text, HasSubstr("lat_seconds_bucket{node=\"1\",le=\"1.048576\"} 5\n"));
  EXPECT_THAT(text, HasSubstr("lat_seconds_bucket{node=\"1\",le=\"+Inf\"} 6\n"));
  EXPECT_THAT(text, HasSubstr("lat_seconds_count{node=\"1\"} 6\n"));
  EXPECT_THAT(text, HasSubstr("lat_seconds_sum{node=\"1\"} 10.000014001"));
}

TEST(ExpositionTest, DottedCounterNamesBecomeNamesAndLabels) {
  auto [name, labels] = FromDottedName("lease.member.2.age_ms");
  EXPECT_EQ(name, "fathom_lease_member_age_ms");
  EXPECT_EQ(labels, (Labels{{"member", "2"}}));
  std::tie(name, labels) = FromDottedName("msg.bytes");
  EXPECT_EQ(name, "fathom_msg_bytes");
  EXPECT_TRUE(labels.empty());
  std::tie(name, labels) = FromDottedName("odd-name..x");
  EXPECT_EQ(name, "fathom_odd_name_x");
  EXPECT_TRUE(IsMetricName(name));
  std::tie(name, labels) = FromDottedName("7.a");
  EXPECT_EQ(name, "fathom_a");
  EXPECT_EQ(labels, (Labels{{"id", "7"}}));
}

}  // namespace
}  // namespace fathom::metrics
