// RunOperation over an in-memory TxnOps: a PUT's value object must get the slot its bytes imply, since a
// 27-byte pointer names no slot size (docs/formats/kv.md); a larger slot is given back, not pointed to.
#include "kv/operation.h"

#include <map>

#include "gtest/gtest.h"
#include "platform/base/status_test_macros.h"

namespace fathom::kv {
namespace {

constexpr uint32_t kRegion = 0x10001;

// Buckets live in a map by address; Alloc hands out slots of `slot_bytes` (0: the size class's).
class MemoryOps final : public TxnOps {
 public:
  void ReadMany(std::vector<object::ObjectRef> refs, ReadManyCallback done) override {
    std::vector<std::string> out;
    for (const object::ObjectRef& ref : refs) out.push_back(objects[ref.address.raw()]);
    done(std::move(out));
  }
  absl::Status Write(const object::ObjectRef& ref, std::string_view bytes) override {
    objects[ref.address.raw()] = std::string(bytes);
    return absl::OkStatus();
  }
  void Alloc(uint32_t payload_capacity, const object::ObjectRef&, AllocCallback done) override {
    const uint32_t slot = slot_bytes != 0 ? slot_bytes
                                          : memory::SlotBytes(memory::SizeClassFor(payload_capacity + object::kHeaderBytes));
    next_offset += 1 << 20;
    done(object::ObjectRef{memory::GlobalAddress{kRegion, next_offset}, 1, slot});
  }
  absl::Status Free(const object::ObjectRef& ref) override {
    freed.push_back(ref);
    return absl::OkStatus();
  }

  uint32_t slot_bytes = 0;
  uint32_t next_offset = 0;
  std::map<uint64_t, std::string> objects;
  std::vector<object::ObjectRef> freed;
};

class OperationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto state = std::make_shared<TableState>();
    state->root.buckets = 4;
    state->root.inline_bytes = kInlineBytesOfAPointer;
    Bucket empty;
    empty.epoch = state->epoch_word();
    for (uint32_t b = 0; b < 4; ++b) {
      state->bucket_refs.push_back(object::ObjectRef{memory::GlobalAddress{kRegion, 256 * b}, 1, 256});
      ASSERT_OK(ops_->Write(state->bucket_refs.back(), EncodeBucket(empty)));
    }
    ASSERT_OK_AND_ASSIGN(state->index, MakeIndex(IndexKind::kHopscotch, 4));
    table_ = std::move(state);
  }

  absl::StatusOr<std::string> Run(OpKind kind, std::string key, std::string value = "") {
    absl::StatusOr<std::string> result = absl::UnknownError("not done");
    RunOperation(table_, ops_, kind, std::move(key), std::move(value),
                 [&result](absl::StatusOr<std::string> r) { result = std::move(r); });
    return result;
  }

  std::shared_ptr<MemoryOps> ops_ = std::make_shared<MemoryOps>();
  std::shared_ptr<const TableState> table_;
};

TEST_F(OperationTest, AValueObjectInItsSizeClassGetsA27BytePointer) {
  const std::string value(1081, 'v');
  ASSERT_OK(Run(OpKind::kPut, "user1", value).status());
  EXPECT_TRUE(ops_->freed.empty());
  const uint64_t home = table_->index->Home(KeyHash("user1"));
  ASSERT_OK_AND_ASSIGN(Bucket bucket, DecodeBucket(ops_->objects[table_->bucket_refs[home].address.raw()]));
  ASSERT_EQ(bucket.entries.size(), 1u);
  EXPECT_EQ(bucket.EncodedBytes(), kBucketHeaderBytes + kPointerEntryBytes);
  EXPECT_EQ(bucket.entries[0].ref.capacity, 1152u);
  EXPECT_FALSE(bucket.entries[0].checksum.has_value());
  ASSERT_OK_AND_ASSIGN(std::string back, Run(OpKind::kGet, "user1"));
  EXPECT_EQ(back, value);
}

TEST_F(OperationTest, ALargerSlotIsGivenBackAndThePutSaysResourceExhausted) {
  ops_->slot_bytes = 2048;  // what a carved-up allocator offers for 1,140 bytes
  const absl::Status s = Run(OpKind::kPut, "user1", std::string(1081, 'v')).status();
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_NE(std::string(s.message()).find("no free slot of 1152 bytes"), std::string::npos) << s;
  ASSERT_EQ(ops_->freed.size(), 1u);
  EXPECT_EQ(ops_->freed[0].capacity, 2048u);
  EXPECT_TRUE(absl::IsNotFound(Run(OpKind::kGet, "user1").status()));
}

}  // namespace
}  // namespace fathom::kv
