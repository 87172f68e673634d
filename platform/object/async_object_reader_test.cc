// AsyncObjectReader on SimFabric: reads finish through the event loop, torn and locked copies are retried,
// stale references and failed endpoints end with errors.
#include "platform/object/async_object_reader.h"

#include <optional>

#include "gtest/gtest.h"
#include "platform/fabric/sim/sim_fabric.h"
#include "platform/fabric/sim/test_seed.h"
#include "platform/object/object_store.h"
#include "platform/object/testing/object_pattern.h"

namespace fathom::object {
namespace {

class AsyncObjectReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = fabric::sim::TestSeed();
    fabric::sim::SimOptions options;
    options.seed = seed_;
    options.torn_copies = true;
    options.fabric.operation_timeout = absl::Seconds(1);
    network_ = std::make_unique<fabric::sim::SimNetwork>(options);
    owner_ = *network_->AddNode(1);
    reader_fabric_ = *network_->AddNode(2);
    region_ = *memory::LocalRegion::Allocate(*owner_, 1, 1, 4 << 20);
    source_ = std::make_unique<memory::SlabSource>(std::vector<memory::LocalRegion*>{region_.get()});
    allocator_ = std::make_unique<memory::SlabAllocator>(source_.get());
    store_ = std::make_unique<ObjectStore>(std::vector<memory::LocalRegion*>{region_.get()}, allocator_.get());
    owner_worker_ = *owner_->CreateWorker();
    worker_ = *reader_fabric_->CreateWorker();
    endpoint_ = *worker_->Connect(owner_worker_->address());
    remote_ = *endpoint_->ImportRegion(region_->info().descriptor);
  }
  void TearDown() override {
    endpoint_.reset();
    worker_.reset();
    owner_worker_.reset();
  }

  // Runs the event loop until `done` is set.
  template <typename T>
  void Loop(AsyncObjectReader& reader, const std::optional<T>& done, const std::function<void()>& between = {}) {
    fabric::Completion completions[8];
    for (int i = 0; i < 100000 && !done.has_value(); ++i) {
      if (between) between();
      size_t n = worker_->Poll(completions);
      for (size_t k = 0; k < n; ++k) ASSERT_TRUE(reader.OnCompletion(completions[k]));
      reader.Poll();
    }
  }

  uint64_t seed_;
  std::unique_ptr<fabric::sim::SimNetwork> network_;
  std::unique_ptr<fabric::Fabric> owner_, reader_fabric_;
  std::unique_ptr<memory::LocalRegion> region_;
  std::unique_ptr<memory::SlabSource> source_;
  std::unique_ptr<memory::SlabAllocator> allocator_;
  std::unique_ptr<ObjectStore> store_;
  std::unique_ptr<fabric::Worker> owner_worker_, worker_;
  std::unique_ptr<fabric::Endpoint> endpoint_;
  fabric::RemoteRegion remote_;
};

TEST_F(AsyncObjectReaderTest, ReadsWhileTheOwnerRewritesAndNeverAcceptsATornCopy) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  auto ref = store_->Allocate(3000);
  ASSERT_TRUE(ref.ok());
  std::vector<std::byte> payload;
  testing::FillPattern(0, 0, ref->payload_capacity(), payload);
  ASSERT_TRUE(store_->Write(*ref, payload).ok());
  AsyncObjectReader reader({}, &network_->clock());
  uint64_t generation = 1;
  for (int round = 0; round < 50; ++round) {
    std::optional<absl::Status> result;
    ASSERT_TRUE(reader
                    .Read(*endpoint_, remote_, *ref,
                          [&](absl::StatusOr<std::span<const std::byte>> r) {
                            if (!r.ok()) {
                              result = r.status();
                            } else if (!testing::MatchesPattern(0, ref->payload_capacity(), *r)) {
                              result = absl::DataLossError("accepted a payload that is not one write");
                            } else {
                              result = absl::OkStatus();
                            }
                          })
                    .ok());
    // The owner rewrites the object on the first turns of each round (copies in flight tear), then lets
    // it rest so that a whole copy can arrive.
    int turn = 0;
    Loop(reader, result, [&] {
      if (++turn > 6) return;
      testing::FillPattern(0, generation++, ref->payload_capacity(), payload);
      ASSERT_TRUE(store_->Write(*ref, payload).ok());
    });
    ASSERT_TRUE(result.has_value());
    EXPECT_TRUE(result->ok()) << *result;
  }
  EXPECT_GT(reader.stats().torn_retries, 0u) << "no copy tore: the test lost its teeth";
  EXPECT_EQ(reader.stats().reads, 50u);
  EXPECT_EQ(reader.in_flight(), 0u);
}

TEST_F(AsyncObjectReaderTest, LockedObjectIsRetriedUntilUnlockedOrGivenUp) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  auto ref = store_->Allocate(100);
  ASSERT_TRUE(ref.ok());
  auto object = store_->Resolve(*ref);
  auto version = object->TryLock();
  ASSERT_TRUE(version.ok());
  ReadPolicy policy;
  policy.max_attempts = 20;
  AsyncObjectReader reader(policy, &network_->clock());
  std::optional<absl::Status> result;
  ASSERT_TRUE(reader.Read(*endpoint_, remote_, *ref, [&](auto r) { result = r.status(); }).ok());
  Loop(reader, result, [&] { network_->Advance(absl::Microseconds(50)); });
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->code(), absl::StatusCode::kUnavailable);
  EXPECT_GE(reader.stats().locked_retries, 19u);

  // Released after some retries: the read then succeeds.
  result.reset();
  int polls = 0;
  ASSERT_TRUE(reader.Read(*endpoint_, remote_, *ref, [&](auto r) { result = r.status(); }).ok());
  Loop(reader, result, [&] {
    network_->Advance(absl::Microseconds(5));
    if (++polls == 30) object->Unlock(*version);
  });
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->ok()) << *result;
}

TEST_F(AsyncObjectReaderTest, VersionedReadsReportTheVersionAndCanRefuseLockedObjects) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  auto ref = store_->Allocate(100);
  ASSERT_TRUE(ref.ok());
  const std::string text = "versioned";
  ASSERT_TRUE(store_->Write(*ref, std::as_bytes(std::span<const char>(text.data(), text.size()))).ok());
  ASSERT_TRUE(store_->Write(*ref, std::as_bytes(std::span<const char>(text.data(), text.size()))).ok());
  AsyncObjectReader reader({}, &network_->clock());
  std::optional<absl::StatusOr<uint64_t>> result;
  auto on_read = [&](absl::StatusOr<VersionedObject> r) {
    if (!r.ok()) {
      result = r.status();
      return;
    }
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(r->payload.data()), r->payload.size()), text);
    result = r->header.version();
  };
  ASSERT_TRUE(reader.ReadVersioned(*endpoint_, remote_, *ref, on_read).ok());
  Loop(reader, result, [&] { network_->Advance(absl::Microseconds(5)); });
  ASSERT_TRUE(result.has_value() && result->ok());
  EXPECT_EQ(**result, 3u) << "allocation and two writes";

  auto object = store_->Resolve(*ref);
  auto version = object->TryLock();
  ASSERT_TRUE(version.ok());
  result.reset();
  ASSERT_TRUE(reader.ReadVersioned(*endpoint_, remote_, *ref, on_read, /*fail_if_locked=*/true).ok());
  Loop(reader, result, [&] { network_->Advance(absl::Microseconds(5)); });
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(absl::IsAborted(result->status())) << result->status();
  EXPECT_EQ(reader.stats().locked_retries, 0u);
  object->Unlock(*version);
}

TEST_F(AsyncObjectReaderTest, StaleReferenceAndFailedEndpointEndReads) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  auto ref = store_->Allocate(100);
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE(store_->Free(*ref).ok());
  AsyncObjectReader reader({}, &network_->clock());
  std::optional<absl::Status> result;
  ASSERT_TRUE(reader.Read(*endpoint_, remote_, *ref, [&](auto r) { result = r.status(); }).ok());
  Loop(reader, result);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->code(), absl::StatusCode::kNotFound);

  auto live = store_->Allocate(100);
  ASSERT_TRUE(live.ok());
  network_->Crash(1);
  result.reset();
  absl::Status posted = reader.Read(*endpoint_, remote_, *live, [&](auto r) { result = r.status(); });
  if (posted.ok()) {
    Loop(reader, result);
    ASSERT_TRUE(result.has_value());
    EXPECT_FALSE(result->ok());
  }
  EXPECT_EQ(reader.in_flight(), 0u);
  EXPECT_EQ(reader.Read(*endpoint_, remote_, ObjectRef{{1, 0}, 0, 20}, [](auto) {}).code(),
            absl::StatusCode::kInvalidArgument);
}

// A read whose connection is about to be replaced (Forget) ends with Unavailable, which callers retry,
// not Cancelled (the read was not called off; its connection went).
TEST_F(AsyncObjectReaderTest, AReadThroughAForgottenConnectionEndsUnavailable) {
  SCOPED_TRACE(fabric::sim::SeedTrace(seed_));
  auto ref = store_->Allocate(100);
  ASSERT_TRUE(ref.ok());
  AsyncObjectReader reader({}, &network_->clock());
  std::optional<absl::Status> result;
  ASSERT_TRUE(reader.Read(*endpoint_, remote_, *ref, [&](auto r) { result = r.status(); }).ok());
  reader.Forget(*endpoint_);  // posted: it ends when its completion arrives
  Loop(reader, result);
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(absl::IsUnavailable(*result)) << *result;
  EXPECT_EQ(reader.in_flight(), 0u);
}

}  // namespace
}  // namespace fathom::object
