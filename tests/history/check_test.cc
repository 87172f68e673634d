// Hand-made histories, one per anomaly class, each detected as exactly that class; and valid histories,
// serial and concurrent, that pass. Transaction ids are in order of invocation, from 0.
#include "tests/history/check.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"
#include "tests/history/history_builder.h"

namespace fathom::history {
namespace {

using ::fathom::history::testing::A;
using ::fathom::history::testing::HistoryBuilder;
using ::fathom::history::testing::R;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAreArray;

CheckResult Check(const HistoryBuilder& h, CheckOptions options = {}) {
  absl::StatusOr<History> history = h.Parse();
  EXPECT_TRUE(history.ok()) << history.status() << "\n" << h.Text();
  if (!history.ok()) return {};
  return CheckHistory(*history, options);
}

// Exactly one anomaly, of `type`, naming exactly `txns`.
void ExpectExactly(const CheckResult& result, AnomalyType type, std::vector<int> txns) {
  ASSERT_EQ(result.anomalies.size(), 1u) << result.ToString();
  EXPECT_EQ(result.anomalies[0].type, type) << result.ToString();
  EXPECT_THAT(result.anomalies[0].txns, UnorderedElementsAreArray(txns)) << result.ToString();
}

TEST(CheckTest, EmptyHistoryIsValid) {
  HistoryBuilder h;
  EXPECT_TRUE(Check(h).valid());
}

TEST(CheckTest, SerialHistoryIsValid) {
  HistoryBuilder h;
  h.Serial(0, {R(1, {}), A(1, 1)});
  h.Serial(1, {R(1, {1}), A(1, 2), A(2, 1)});
  h.Serial(0, {R(1, {1, 2}), R(2, {1}), A(2, 2), R(2, {1, 2})});
  h.Serial(2, {R(1, {1, 2}), R(2, {1, 2}), R(3, {})});
  const CheckResult result = Check(h);
  EXPECT_TRUE(result.valid()) << result.ToString();
  EXPECT_EQ(result.ok, 4);
}

TEST(CheckTest, ConcurrentHistoryIsValid) {
  // T0 and T1 overlap; T1 serializes first (T0 saw its append). T2 overlaps both and saw neither.
  HistoryBuilder h;
  h.Invoke(0, {A(1, 1), R(2, {5})});
  h.Invoke(1, {A(2, 5)});
  h.Invoke(2, {R(1, {}), R(2, {})});
  h.Ok(1).Ok(0).Ok(2);
  h.Serial(1, {R(1, {1}), R(2, {5})});
  const CheckResult result = Check(h);
  EXPECT_TRUE(result.valid()) << result.ToString();
}

TEST(CheckTest, FailedAndInfoTransactionsAreHandled) {
  HistoryBuilder h;
  h.Invoke(0, {A(1, 1)}).Fail(0);          // T0 failed: never seen
  h.Invoke(1, {A(1, 2)}).Info(1);          // T1 unknown: it did commit, T3 sees it
  h.Invoke(2, {A(1, 3), A(2, 1)}).Info(2);  // T2 unknown: never seen, so it did not commit (or not yet)
  h.Serial(3, {R(1, {2})});
  h.Invoke(4, {A(2, 2)});                  // T4 never completes: counts as info
  const CheckResult result = Check(h);
  EXPECT_TRUE(result.valid()) << result.ToString();
  EXPECT_EQ(result.ok, 1);
  EXPECT_EQ(result.failed, 1);
  EXPECT_EQ(result.info, 3);
}

TEST(CheckTest, G0WriteCycle) {
  // T0 and T1 each append to keys 1 and 2; T2 sees them in opposite orders on the two keys.
  HistoryBuilder h;
  h.Invoke(0, {A(1, 1), A(2, 1)}).Invoke(1, {A(1, 2), A(2, 2)}).Ok(0).Ok(1);
  h.Serial(2, {R(1, {1, 2}), R(2, {2, 1})});
  const CheckResult result = Check(h);
  ExpectExactly(result, AnomalyType::kG0, {0, 1});
  EXPECT_THAT(result.anomalies[0].explanation, HasSubstr("-ww-> T1"));
}

TEST(CheckTest, G1cCircularInformationFlow) {
  // Each of two concurrent transactions saw the other's append.
  HistoryBuilder h;
  h.Invoke(0, {A(1, 1), R(2, {1})}).Invoke(1, {A(2, 1), R(1, {1})}).Ok(0).Ok(1);
  ExpectExactly(Check(h), AnomalyType::kG1c, {0, 1});
}

TEST(CheckTest, GSingleReadSkew) {
  // T1 saw T0's append to key 2 but not its append to key 1.
  HistoryBuilder h;
  h.Invoke(0, {A(1, 1), A(2, 1)}).Invoke(1, {R(1, {}), R(2, {1})}).Ok(0).Ok(1);
  const CheckResult result = Check(h);
  ExpectExactly(result, AnomalyType::kGSingle, {0, 1});
  EXPECT_THAT(result.anomalies[0].explanation, HasSubstr("T1 read key 1 empty and missed 1"));
}

TEST(CheckTest, G2WriteSkew) {
  // Each read the key the other appended to and saw it empty.
  HistoryBuilder h;
  h.Invoke(0, {R(1, {}), A(2, 1)}).Invoke(1, {R(2, {}), A(1, 1)}).Ok(0).Ok(1);
  ExpectExactly(Check(h), AnomalyType::kG2, {0, 1});
}

TEST(CheckTest, G1aAbortedRead) {
  HistoryBuilder h;
  h.Invoke(0, {A(1, 1)}).Fail(0);
  h.Serial(1, {R(1, {1})});
  const CheckResult result = Check(h);
  ExpectExactly(result, AnomalyType::kG1a, {0, 1});
  EXPECT_THAT(result.anomalies[0].explanation, HasSubstr("which failed"));
}

TEST(CheckTest, G1bIntermediateRead) {
  // T1 saw T0's first append to key 1 but not its second.
  HistoryBuilder h;
  h.Invoke(0, {A(1, 1), A(1, 2)}).Invoke(1, {R(1, {1})}).Ok(0).Ok(1);
  ExpectExactly(Check(h), AnomalyType::kG1b, {0, 1});
}

TEST(CheckTest, G1bBeforeTheReadersOwnAppend) {
  // The intermediate value is followed by the reader's own append; still G1b.
  HistoryBuilder h;
  h.Invoke(0, {A(1, 1), A(1, 2)}).Invoke(1, {A(1, 3), R(1, {1, 3})}).Ok(0).Ok(1);
  const CheckResult result = Check(h);
  EXPECT_TRUE(result.Has(AnomalyType::kG1b)) << result.ToString();
}

TEST(CheckTest, GarbageRead) {
  HistoryBuilder h;
  h.Serial(0, {A(1, 1)});
  h.Serial(1, {R(1, {1, 99})});
  const CheckResult result = Check(h);
  ExpectExactly(result, AnomalyType::kGarbageRead, {1});
  EXPECT_THAT(result.anomalies[0].explanation, HasSubstr("99 was never appended to key 1"));
}

TEST(CheckTest, ValueAppendedToAnotherKeyIsGarbage) {
  HistoryBuilder h;
  h.Serial(0, {A(2, 1)});
  h.Serial(1, {R(1, {1})});
  ExpectExactly(Check(h), AnomalyType::kGarbageRead, {1});
}

TEST(CheckTest, DuplicateElements) {
  HistoryBuilder h;
  h.Serial(0, {A(1, 1)});
  h.Serial(1, {R(1, {1, 1})});
  ExpectExactly(Check(h), AnomalyType::kDuplicateElements, {0, 1});
}

TEST(CheckTest, IncompatibleOrder) {
  HistoryBuilder h;
  h.Invoke(0, {A(1, 1)}).Invoke(1, {A(1, 2)}).Ok(0).Ok(1);
  h.Serial(2, {R(1, {1, 2})});
  h.Serial(3, {R(1, {2, 1})});
  const CheckResult result = Check(h);
  ExpectExactly(result, AnomalyType::kIncompatibleOrder, {2, 3});
  EXPECT_THAT(result.anomalies[0].explanation, HasSubstr("neither is a prefix of the other"));
}

TEST(CheckTest, InternalReadMissesOwnAppend) {
  HistoryBuilder h;
  h.Serial(0, {A(1, 1), R(1, {})});
  ExpectExactly(Check(h), AnomalyType::kInternal, {0});
}

TEST(CheckTest, InternalListShrinksWithinATransaction) {
  HistoryBuilder h;
  h.Serial(0, {A(1, 1)});
  h.Serial(1, {A(1, 2)});
  h.Serial(2, {R(1, {1, 2}), R(1, {1})});
  const CheckResult result = Check(h);
  EXPECT_TRUE(result.Has(AnomalyType::kInternal)) << result.ToString();
}

TEST(CheckTest, InternalFutureRead) {
  HistoryBuilder h;
  h.Serial(0, {R(1, {1}), A(1, 1)});
  ExpectExactly(Check(h), AnomalyType::kInternal, {0});
}

// Serializable (T1 before T0) but not strictly: T1 began after T0 finished and did not see its append.
TEST(CheckTest, StaleReadIsGSingleRealtime) {
  HistoryBuilder h;
  h.Serial(0, {A(1, 1)});
  h.Serial(1, {R(1, {})});
  const CheckResult result = Check(h);
  ExpectExactly(result, AnomalyType::kGSingleRealtime, {0, 1});
  EXPECT_THAT(result.anomalies[0].explanation, HasSubstr("completed on line 2 before T1 was invoked on line 3"));

  CheckOptions serializable;
  serializable.realtime = false;
  EXPECT_TRUE(Check(h, serializable).valid());
}

TEST(CheckTest, G0Realtime) {
  // T1 began after T0 finished, yet its append comes first.
  HistoryBuilder h;
  h.Serial(0, {A(1, 1)});
  h.Serial(1, {A(1, 2)});
  h.Serial(2, {R(1, {2, 1})});
  ExpectExactly(Check(h), AnomalyType::kG0Realtime, {0, 1});
}

TEST(CheckTest, G1cRealtime) {
  // T0 saw an append by T1, which began only after T0 finished.
  HistoryBuilder h;
  h.Serial(0, {R(1, {1})});
  h.Serial(1, {A(1, 1)});
  ExpectExactly(Check(h), AnomalyType::kG1cRealtime, {0, 1});
}

TEST(CheckTest, G2Realtime) {
  // T0 -rw-> T1 -rw-> T2 -realtime-> T0, with T1 concurrent with both.
  HistoryBuilder h;
  h.Invoke(1, {R(2, {}), A(1, 1)});
  h.Serial(2, {A(2, 1)});
  h.Serial(0, {R(1, {})});
  h.Ok(1);
  ExpectExactly(Check(h), AnomalyType::kG2Realtime, {0, 1, 2});
}

TEST(CheckTest, WeakestClassOfAComponentIsReported) {
  // T0 and T1 form a ww cycle (G0) and also a write skew (G2) through keys 3 and 4: one component,
  // reported as G0.
  HistoryBuilder h;
  h.Invoke(0, {A(1, 1), A(2, 1), R(3, {}), A(4, 1)});
  h.Invoke(1, {A(1, 2), A(2, 2), R(4, {}), A(3, 1)});
  h.Ok(0).Ok(1);
  h.Serial(2, {R(1, {1, 2}), R(2, {2, 1})});
  ExpectExactly(Check(h), AnomalyType::kG0, {0, 1});
}

TEST(CheckTest, SeparateComponentsAreReportedSeparately) {
  HistoryBuilder h;
  h.Invoke(0, {R(1, {}), A(2, 1)}).Invoke(1, {R(2, {}), A(1, 1)}).Ok(0).Ok(1);  // G2
  h.Invoke(2, {A(5, 1), R(6, {1})}).Invoke(3, {A(6, 1), R(5, {1})}).Ok(2).Ok(3);  // G1c
  const CheckResult result = Check(h);
  ASSERT_EQ(result.anomalies.size(), 2u) << result.ToString();
  EXPECT_EQ(result.anomalies[0].type, AnomalyType::kG1c);  // ordered by type
  EXPECT_EQ(result.anomalies[1].type, AnomalyType::kG2);
}

TEST(CheckTest, LongerCycleIsFound) {
  // A ring of five transactions, each reading the key the next appends to, all concurrent: G2.
  HistoryBuilder h;
  for (int i = 0; i < 5; ++i) h.Invoke(i, {R(i, {}), A((i + 1) % 5, 1)});
  for (int i = 0; i < 5; ++i) h.Ok(i);
  ExpectExactly(Check(h), AnomalyType::kG2, {0, 1, 2, 3, 4});
}

TEST(CheckTest, ToStringNamesTheVerdict) {
  HistoryBuilder h;
  h.Serial(0, {A(1, 1)});
  EXPECT_THAT(Check(h).ToString(), HasSubstr("no anomalies found"));
  h.Serial(1, {R(1, {})});
  EXPECT_THAT(Check(h).ToString(), HasSubstr("G-single-realtime: "));
}

}  // namespace
}  // namespace fathom::history
