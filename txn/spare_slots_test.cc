#include "txn/spare_slots.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "txn/records.h"

namespace fathom::txn {
namespace {

object::ObjectRef Slot(uint32_t offset) { return object::ObjectRef{{(2u << 16) | 1, offset}, 0, 1152}; }
auto AlwaysServed() {
  return [](const object::ObjectRef&) { return true; };
}

TEST(SpareSlotsTest, WaitersAreServedInOrderAndTheRestIsKept) {
  SpareSlots spares;
  std::vector<std::string> got;
  auto record = [&got](std::string who) {
    return [&got, who](absl::StatusOr<object::ObjectRef> ref) {
      got.push_back(who + (ref.ok() ? std::to_string(ref->address.offset) : ref.status().ToString()));
    };
  };
  EXPECT_FALSE(spares.Take(2, 12, AlwaysServed()).has_value());
  EXPECT_TRUE(spares.Wait(2, 12, record("a")));   // the first asks
  EXPECT_FALSE(spares.Wait(2, 12, record("b")));  // the second waits for the same request
  EXPECT_TRUE(spares.Wait(3, 12, record("c")));   // another node: its own request
  EXPECT_EQ(spares.Asking(2, 12), SpareSlots::kBatch);
  EXPECT_FALSE(spares.Fill(2, 12, std::vector<object::ObjectRef>{Slot(0), Slot(1152), Slot(2304)}));
  EXPECT_EQ(got, (std::vector<std::string>{"a0", "b1152"}));
  EXPECT_EQ(spares.kept(), 1u);
  EXPECT_EQ(spares.waiting(), 1u);  // c
  ASSERT_TRUE(spares.Take(2, 12, AlwaysServed()).has_value());
  EXPECT_FALSE(spares.Take(2, 12, AlwaysServed()).has_value());
  EXPECT_FALSE(spares.Take(2, 13, AlwaysServed()).has_value()) << "another size class";
}

TEST(SpareSlotsTest, AShortReplyAsksAgainAndAnErrorFailsEveryWaiter) {
  SpareSlots spares;
  int served = 0;
  std::vector<absl::Status> errors;
  auto done = [&](absl::StatusOr<object::ObjectRef> ref) {
    if (ref.ok()) {
      ++served;
    } else {
      errors.push_back(ref.status());
    }
  };
  ASSERT_TRUE(spares.Wait(2, 12, done));
  for (int i = 0; i < 9; ++i) EXPECT_FALSE(spares.Wait(2, 12, done));
  EXPECT_EQ(spares.Asking(2, 12), 10u) << "more waiters than a batch: ask for all of them";
  EXPECT_TRUE(spares.Fill(2, 12, std::vector<object::ObjectRef>{Slot(0), Slot(1152)}));  // memory ran out
  EXPECT_EQ(served, 2);
  EXPECT_FALSE(spares.Wait(2, 12, done)) << "the second request is in flight";
  EXPECT_FALSE(spares.Fill(2, 12, absl::ResourceExhaustedError("node 2 is out of memory")));
  EXPECT_EQ(errors.size(), 9u);
  EXPECT_EQ(spares.waiting(), 0u);
  EXPECT_EQ(spares.kept(), 0u);
  EXPECT_TRUE(spares.Wait(2, 12, done)) << "after an error the next waiter asks again";
}

TEST(SpareSlotsTest, SlotsOfARegionThatMovedAreDropped) {
  SpareSlots spares;
  spares.Put(2, 12, Slot(0));
  spares.Put(2, 12, Slot(1152));
  auto served = [](const object::ObjectRef& ref) { return ref.address.offset == 0; };
  std::optional<object::ObjectRef> ref = spares.Take(2, 12, served);
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->address.offset, 0u);
  EXPECT_EQ(spares.kept(), 0u) << "the one no longer served was dropped on the way";
}

// After this node left the configuration and came back, its owners freed what they had reserved for it.
TEST(SpareSlotsTest, DroppingKeptSlotsLeavesWaitersAndRequestsInFlight) {
  SpareSlots spares;
  int served = 0;
  auto count = [&served](absl::StatusOr<object::ObjectRef> ref) { served += ref.ok(); };
  spares.Put(2, 12, Slot(0));
  spares.Put(3, 12, Slot(1152));
  EXPECT_TRUE(spares.Wait(4, 12, count));
  EXPECT_EQ(spares.DropKept(), 2u);
  EXPECT_EQ(spares.kept(), 0u);
  EXPECT_FALSE(spares.Take(2, 12, AlwaysServed()).has_value());
  EXPECT_EQ(spares.waiting(), 1u);
  EXPECT_FALSE(spares.Wait(4, 12, count)) << "the request in flight is still awaited";
  EXPECT_FALSE(spares.Fill(4, 12, std::vector<object::ObjectRef>{Slot(0), Slot(1152)}));
  EXPECT_EQ(served, 2);
}

TEST(SpareSlotsTest, ACallbackMayWaitAgain) {
  SpareSlots spares;
  bool asked_again = false;
  ASSERT_TRUE(spares.Wait(2, 12, [&](absl::StatusOr<object::ObjectRef>) {
    asked_again = spares.Wait(2, 12, [](absl::StatusOr<object::ObjectRef>) {});  // a retried transaction
  }));
  EXPECT_FALSE(spares.Fill(2, 12, absl::AbortedError("ring full")));
  EXPECT_TRUE(asked_again);
  EXPECT_EQ(spares.waiting(), 1u);
}

}  // namespace
}  // namespace fathom::txn
