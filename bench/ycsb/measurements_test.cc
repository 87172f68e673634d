// Measurements keep why operations failed: each ERROR's status with a count, merged across clients, and
// capped so a run with many distinct messages stays readable.
#include "bench/ycsb/measurements.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace fathom::ycsb {
namespace {

TEST(MeasurementsTest, ErrorsAreKeptWithCountsAndMerged) {
  Measurements a, b;
  a.Record(Operation::kRead, 1000, absl::UnavailableError("node 2 left"));
  a.Record(Operation::kRead, 1000, absl::UnavailableError("node 2 left"));
  a.Record(Operation::kRead, 1000, absl::NotFoundError("no such key"));  // NOT_FOUND, not an error
  a.Record(Operation::kUpdate, 1000, absl::OkStatus());
  b.Record(Operation::kRead, 1000, absl::UnavailableError("node 2 left"));
  b.Record(Operation::kInsert, 1000, absl::ResourceExhaustedError("no free slab left"));
  a.Merge(b);
  EXPECT_EQ(a.error_count(), 4u);
  EXPECT_EQ(a.Returns(Operation::kRead, ReturnCode::kNotFound), 1u);
  ASSERT_EQ(a.errors().size(), 2u);
  EXPECT_EQ(a.errors().at("READ: UNAVAILABLE: node 2 left"), 3u);
  EXPECT_EQ(a.errors().at("INSERT: RESOURCE_EXHAUSTED: no free slab left"), 1u);
  // Kept apart, with its message: the fault tests treat a loaded key not found as a lost record.
  ASSERT_EQ(a.not_found().size(), 1u);
  EXPECT_EQ(a.not_found().at("READ: NOT_FOUND: no such key"), 1u);
}

TEST(MeasurementsTest, DistinctErrorsBeyondTheCapAreCountedTogether) {
  Measurements m;
  for (size_t i = 0; i < Measurements::kMaxErrorKinds + 5; ++i) {
    m.Record(Operation::kUpdate, 10, absl::InternalError(absl::StrCat("failure ", i)));
  }
  EXPECT_EQ(m.errors().size(), Measurements::kMaxErrorKinds + 1);
  EXPECT_EQ(m.errors().at("(other errors)"), 5u);
  EXPECT_EQ(m.error_count(), Measurements::kMaxErrorKinds + 5);
}

}  // namespace
}  // namespace fathom::ycsb
