// Framing, ring geometry, locations and the RPC envelope: round trips, every flipped byte, every
// truncation, lying lengths, torn mixes. Pure functions, no fabric.
#include "platform/msg/framing.h"

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "platform/fabric/sim/test_seed.h"
#include "platform/msg/ring_layout.h"
#include "platform/msg/ring_location.h"
#include "platform/msg/rpc_envelope.h"

namespace fathom::msg {
namespace {

constexpr uint64_t kSession = 0x5e55105e55105e55ull;
constexpr uint32_t kMaxPayload = 1000;

std::string Bytes(size_t n, uint64_t seed) {
  std::string s(n, '\0');
  std::mt19937_64 rng(seed);
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// A message record as a string (8-aligned storage via std::string is fine for these pure functions).
std::string Message(uint64_t seq, uint64_t position, uint16_t type, std::string_view payload,
                    uint64_t session = kSession) {
  std::vector<std::byte> buf(RecordSpan(payload.size()), std::byte{0xEE});
  EncodeMessage(buf.data(), session, seq, position, type, payload);
  return std::string(AsView(buf.data(), buf.size()));
}

void StoreU32(std::string& s, size_t at, uint32_t v) { std::memcpy(s.data() + at, &v, 4); }

// Recomputes the checksum of the record in `s`, so a test can forge a record that verifies. For a length
// that runs past `s`, the checksum is over `s` padded with zeros to that length (at most 1 MiB).
void Reseal(std::string& s, uint64_t session = kSession) {
  RecordHeader h = LoadHeader(reinterpret_cast<const std::byte*>(s.data()));
  if (h.covered() > (1u << 20)) return;
  std::string padded = s;
  if (padded.size() < kRecordHeaderSize + h.covered()) padded.resize(kRecordHeaderSize + h.covered(), '\0');
  const uint64_t sum = RecordChecksum(reinterpret_cast<const std::byte*>(padded.data()), h.covered(), session);
  std::memcpy(s.data(), &sum, 8);
}

TEST(FramingTest, RoundTripsEverySize) {
  for (size_t length = 0; length <= 200; ++length) {
    const std::string payload = Bytes(length, length);
    const std::string record = Message(length + 1, 8 * length, static_cast<uint16_t>(length + 1), payload);
    ASSERT_EQ(record.size(), RecordSpan(length));
    ASSERT_EQ(record.size() % 8, 0u);
    absl::StatusOr<DecodedRecord> d = DecodeRecord(record, kSession, kMaxPayload);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->header.seq, length + 1);
    EXPECT_EQ(d->header.position, 8 * length);
    EXPECT_EQ(d->header.type, length + 1);
    EXPECT_EQ(d->header.length, length);
    EXPECT_EQ(d->payload, payload);
    EXPECT_EQ(d->span, record.size());
    for (size_t i = kRecordHeaderSize + length; i < record.size(); ++i) EXPECT_EQ(record[i], 0) << "filler " << i;
  }
}

TEST(FramingTest, HeadAndBodyConcatenate) {
  std::vector<std::byte> buf(RecordSpan(11));
  EncodeMessage(buf.data(), kSession, 1, 0, 9, "hello", " world");
  absl::StatusOr<DecodedRecord> d = DecodeRecord(AsView(buf.data(), buf.size()), kSession, kMaxPayload);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->payload, "hello world");
}

TEST(FramingTest, EveryFlippedBitOfHeaderAndPayloadIsRejected) {
  for (size_t length : {0, 1, 7, 8, 37, 200}) {
    const std::string record = Message(42, 4096, 7, Bytes(length, 99));
    for (size_t byte = 0; byte < kRecordHeaderSize + length; ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string bad = record;
        bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
        absl::StatusOr<DecodedRecord> d = DecodeRecord(bad, kSession, kMaxPayload);
        ASSERT_FALSE(d.ok()) << "length " << length << " byte " << byte << " bit " << bit;
        EXPECT_TRUE(absl::IsDataLoss(d.status()) || absl::IsInvalidArgument(d.status())) << d.status();
      }
    }
    // The alignment filler is not covered: the receiver never looks at it.
    for (size_t byte = kRecordHeaderSize + length; byte < record.size(); ++byte) {
      std::string filler = record;
      filler[byte] = static_cast<char>(filler[byte] ^ 0xFF);
      EXPECT_TRUE(DecodeRecord(filler, kSession, kMaxPayload).ok()) << byte;
    }
  }
}

TEST(FramingTest, EveryTruncationIsRejected) {
  const std::string record = Message(3, 64, 2, Bytes(45, 7));
  for (size_t n = 0; n < kRecordHeaderSize + 45; ++n) {
    absl::StatusOr<DecodedRecord> d = DecodeRecord(std::string_view(record).substr(0, n), kSession, kMaxPayload);
    ASSERT_FALSE(d.ok()) << n;
    EXPECT_TRUE(absl::IsInvalidArgument(d.status())) << n << ": " << d.status();
    EXPECT_NE(std::string(d.status().message()).find("truncated"), std::string::npos) << d.status();
  }
  // Filler may be cut: it is not part of the record's data.
  EXPECT_TRUE(DecodeRecord(std::string_view(record).substr(0, kRecordHeaderSize + 45), kSession, kMaxPayload).ok());
}

TEST(FramingTest, LyingLengthsAreRejectedWithoutReadingPastTheBuffer) {
  const std::string record = Message(5, 0, 3, Bytes(64, 5));
  // Exactly the record's bytes, in their own allocation: a read past them is an ASan error.
  for (uint32_t lie : {65u, 72u, 96u, kMaxPayload, kMaxPayload + 1, 1u << 20, 0x7FFFFFFFu, 0xFFFFFFF8u, 0xFFFFFFFFu}) {
    std::string bad = record;
    StoreU32(bad, 24, lie);
    auto exact = std::make_unique<char[]>(bad.size());
    std::memcpy(exact.get(), bad.data(), bad.size());
    absl::StatusOr<DecodedRecord> d = DecodeRecord(std::string_view(exact.get(), bad.size()), kSession, kMaxPayload);
    EXPECT_TRUE(absl::IsInvalidArgument(d.status())) << lie << ": " << d.status();
    // Even with a checksum that matches the lie (a forged record), the length is refused.
    Reseal(bad);
    std::memcpy(exact.get(), bad.data(), bad.size());
    d = DecodeRecord(std::string_view(exact.get(), bad.size()), kSession, kMaxPayload);
    EXPECT_TRUE(absl::IsInvalidArgument(d.status())) << lie << ": " << d.status();
  }
  // A shorter lie that stays inside the buffer is caught by the checksum.
  for (uint32_t lie : {0u, 1u, 63u}) {
    std::string bad = record;
    StoreU32(bad, 24, lie);
    EXPECT_TRUE(absl::IsDataLoss(DecodeRecord(bad, kSession, kMaxPayload).status())) << lie;
  }
}

TEST(FramingTest, ReservedBitsAndWrongSessionAreRejected) {
  std::string record = Message(1, 0, 1, "x");
  EXPECT_TRUE(absl::IsDataLoss(DecodeRecord(record, kSession + 1, kMaxPayload).status()));
  record[30] = 1;
  Reseal(record);
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeRecord(record, kSession, kMaxPayload).status()));
}

TEST(FramingTest, PaddingCoversOnlyItsHeader) {
  std::vector<std::byte> buf(kRecordHeaderSize);
  EncodePadding(buf.data(), kSession, 9, 4000, 96);
  const std::string padding(AsView(buf.data(), buf.size()));
  absl::StatusOr<DecodedRecord> d = DecodeRecord(padding, kSession, kMaxPayload);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->header.is_padding());
  EXPECT_EQ(d->header.length, 64u);
  EXPECT_EQ(d->span, 96u);
  EXPECT_TRUE(d->payload.empty());
  for (size_t byte = 0; byte < kRecordHeaderSize; ++byte) {
    std::string bad = padding;
    bad[byte] = static_cast<char>(bad[byte] ^ 0x10);
    EXPECT_FALSE(DecodeRecord(bad, kSession, kMaxPayload).ok()) << byte;
  }
}

// A record landing over older bytes in any order: every mix of old and new chunks is either rejected or
// identical to one of the two. (This is why the receiver may copy a record while it is being written.)
TEST(FramingTest, TornMixesNeverVerifyAsSomethingElse) {
  const uint64_t seed = fabric::sim::TestSeed();
  SCOPED_TRACE(fabric::sim::SeedTrace(seed));
  std::mt19937_64 rng(seed);
  const std::string fresh = Message(100, 8192, 4, Bytes(120, seed));
  // Old bytes at the same place: an older record there, or another record's payload.
  const std::string older = Message(60, 4096, 4, Bytes(120, seed + 1));
  const std::string garbage = Bytes(fresh.size(), seed + 2);
  int accepted_old = 0;
  for (const std::string* old : {&older, &garbage}) {
    for (int trial = 0; trial < 20000; ++trial) {
      std::string mix = *old;
      for (size_t at = 0; at < mix.size();) {
        const size_t n = std::min<size_t>(mix.size() - at, 1 + rng() % 16);
        if (rng() & 1) std::memcpy(mix.data() + at, fresh.data() + at, n);
        at += n;
      }
      absl::StatusOr<DecodedRecord> d = DecodeRecord(mix, kSession, kMaxPayload);
      if (!d.ok()) continue;
      const std::string_view covered = std::string_view(mix).substr(0, kRecordHeaderSize + d->header.length);
      if (covered == std::string_view(fresh).substr(0, covered.size())) continue;
      ASSERT_EQ(covered, std::string_view(older).substr(0, covered.size())) << "a torn mix verified";
      ++accepted_old;
    }
  }
  EXPECT_GE(accepted_old, 0);
}

TEST(FramingTest, CreditRoundTripsAndRejectsEveryFlipAndTornMix) {
  alignas(8) std::byte a[kCreditRecordSize], b[kCreditRecordSize];
  EncodeCredit(a, kSession, 0x00000000000FFFF8ull);
  EncodeCredit(b, kSession, 0x0000000000100000ull);
  ASSERT_EQ(DecodeCredit(a, kSession), 0xFFFF8u);
  ASSERT_EQ(DecodeCredit(b, kSession), 0x100000u);
  EXPECT_FALSE(DecodeCredit(a, kSession + 1).has_value());
  alignas(8) std::byte zeros[kCreditRecordSize] = {};
  EXPECT_FALSE(DecodeCredit(zeros, kSession).has_value());
  for (size_t byte = 0; byte < kCreditRecordSize; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      alignas(8) std::byte bad[kCreditRecordSize];
      std::memcpy(bad, a, sizeof bad);
      bad[byte] ^= std::byte(1 << bit);
      EXPECT_FALSE(DecodeCredit(bad, kSession).has_value()) << byte << "/" << bit;
    }
  }
  // Every byte-wise mix of the old and the new credit: only the two real values ever decode.
  for (uint32_t mask = 0; mask < (1u << kCreditRecordSize); ++mask) {
    alignas(8) std::byte mix[kCreditRecordSize];
    for (size_t i = 0; i < kCreditRecordSize; ++i) mix[i] = (mask >> i) & 1 ? b[i] : a[i];
    const std::optional<uint64_t> head = DecodeCredit(mix, kSession);
    if (head.has_value()) {
      ASSERT_TRUE(*head == 0xFFFF8u || *head == 0x100000u) << std::hex << *head;
    }
  }
}

TEST(RingGeometryTest, ValidatesAndPlaces) {
  EXPECT_FALSE(RingGeometry::Make(4095, 100).ok());
  EXPECT_FALSE(RingGeometry::Make(128, 10).ok());
  EXPECT_FALSE(RingGeometry::Make(4096, 0).ok());
  EXPECT_FALSE(RingGeometry::Make(4096, 2048 - 32 + 1).ok());
  ASSERT_TRUE(RingGeometry::Make(4096, 2048 - 32).ok());
  RingGeometry g = *RingGeometry::Make(4096, RingGeometry::DefaultMaxPayload(4096));
  EXPECT_EQ(g.max_payload(), 992u);
  EXPECT_EQ(g.CreditThreshold(), 2048u);
  EXPECT_EQ(g.OffsetOf(4096 * 3 + 17), 17u);
  EXPECT_EQ(g.SkipBefore(4096 - 64, 64), 0u);
  EXPECT_EQ(g.SkipBefore(4096 - 64, 72), 64u);
  EXPECT_TRUE(RingGeometry::SkipHasMarker(32));
  EXPECT_FALSE(RingGeometry::SkipHasMarker(24));
  // Largest messages: the receiver must write back sooner, or a blocked sender could wait forever.
  RingGeometry big = *RingGeometry::Make(4096, 2048 - 32);
  EXPECT_EQ(big.CreditThreshold(), 16u);
  RingGeometry mid = *RingGeometry::Make(4096, 1024);
  EXPECT_EQ(mid.CreditThreshold(), 4096 - (2 * RecordSpan(1024) - 8) + 8);
}

fabric::RegionDescriptor Descriptor() {
  fabric::RegionDescriptor d;
  d.base = 0x7f0000000000;
  d.length = 1 << 20;
  d.remote_key = "key-bytes";
  return d;
}

TEST(RingLocationTest, RoundTripsAndRejectsEveryFlipAndTruncation) {
  RingLocation ring;
  ring.region = Descriptor();
  ring.offset = 65536;
  ring.capacity = 4096;
  ring.max_payload = 992;
  ring.session = 0x1234567890abcdefull;
  ASSERT_TRUE(ring.Validate().ok());
  const std::string blob = ring.Serialize();
  absl::StatusOr<RingLocation> parsed = RingLocation::Parse(blob);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->offset, ring.offset);
  EXPECT_EQ(parsed->capacity, ring.capacity);
  EXPECT_EQ(parsed->max_payload, ring.max_payload);
  EXPECT_EQ(parsed->session, ring.session);
  EXPECT_EQ(parsed->region.base, ring.region.base);
  EXPECT_EQ(parsed->region.remote_key, ring.region.remote_key);
  for (size_t byte = 0; byte < blob.size(); ++byte) {
    std::string bad = blob;
    bad[byte] = static_cast<char>(bad[byte] ^ 0x01);
    EXPECT_FALSE(RingLocation::Parse(bad).ok()) << byte;
  }
  for (size_t n = 0; n < blob.size(); ++n) EXPECT_FALSE(RingLocation::Parse(blob.substr(0, n)).ok()) << n;
  EXPECT_FALSE(RingLocation::Parse(blob + "x").ok());

  RingLocation outside = ring;
  outside.offset = (1 << 20) - 2048;
  EXPECT_FALSE(outside.Validate().ok());
  EXPECT_TRUE(absl::IsInvalidArgument(RingLocation::Parse(outside.Serialize()).status()));
  RingLocation overflow = ring;
  overflow.offset = ~uint64_t{0} - 7;
  EXPECT_FALSE(overflow.Validate().ok());
  RingLocation misaligned = ring;
  misaligned.offset = 4;
  EXPECT_FALSE(misaligned.Validate().ok());
  RingLocation huge_payload = ring;
  huge_payload.max_payload = 4096;
  EXPECT_FALSE(huge_payload.Validate().ok());
}

TEST(CreditLocationTest, RoundTripsAndRejectsEveryFlipAndTruncation) {
  CreditLocation credit;
  credit.region = Descriptor();
  credit.offset = 128;
  const std::string blob = credit.Serialize();
  absl::StatusOr<CreditLocation> parsed = CreditLocation::Parse(blob);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->offset, 128u);
  EXPECT_EQ(parsed->region.remote_key, credit.region.remote_key);
  for (size_t byte = 0; byte < blob.size(); ++byte) {
    std::string bad = blob;
    bad[byte] = static_cast<char>(bad[byte] ^ 0x80);
    EXPECT_FALSE(CreditLocation::Parse(bad).ok()) << byte;
  }
  for (size_t n = 0; n < blob.size(); ++n) EXPECT_FALSE(CreditLocation::Parse(blob.substr(0, n)).ok()) << n;
  credit.offset = (1 << 20) - 8;
  EXPECT_FALSE(CreditLocation::Parse(credit.Serialize()).ok());
  EXPECT_FALSE(RingLocation::Parse(blob).ok()) << "a credit location is not a ring location";
}

TEST(EnvelopeTest, RoundTripsAndRejectsMalformed) {
  char buf[kEnvelopeSize + 3];
  EncodeEnvelope(buf, Envelope{77, RpcKind::kReply, absl::StatusCode::kNotFound});
  std::memcpy(buf + kEnvelopeSize, "abc", 3);
  absl::StatusOr<DecodedEnvelope> d = DecodeEnvelope(std::string_view(buf, sizeof buf));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->envelope.request_id, 77u);
  EXPECT_EQ(d->envelope.kind, RpcKind::kReply);
  EXPECT_EQ(d->envelope.code, absl::StatusCode::kNotFound);
  EXPECT_EQ(d->body, "abc");
  for (size_t n = 0; n < kEnvelopeSize; ++n) EXPECT_FALSE(DecodeEnvelope(std::string_view(buf, n)).ok()) << n;

  auto decode = [](const Envelope& e, int patch_at = -1, char value = 0) {
    char b[kEnvelopeSize];
    EncodeEnvelope(b, e);
    if (patch_at >= 0) b[patch_at] = value;
    return DecodeEnvelope(std::string_view(b, sizeof b)).status();
  };
  EXPECT_TRUE(decode(Envelope{1, RpcKind::kRequest, absl::StatusCode::kOk}).ok());
  EXPECT_TRUE(decode(Envelope{0, RpcKind::kOneWay, absl::StatusCode::kOk}).ok());
  EXPECT_FALSE(decode(Envelope{0, RpcKind::kRequest, absl::StatusCode::kOk}).ok());  // request without id
  EXPECT_FALSE(decode(Envelope{5, RpcKind::kOneWay, absl::StatusCode::kOk}).ok());   // one-way with id
  EXPECT_FALSE(decode(Envelope{1, RpcKind::kRequest, absl::StatusCode::kOk}, 8, 0).ok());     // kind 0
  EXPECT_FALSE(decode(Envelope{1, RpcKind::kRequest, absl::StatusCode::kOk}, 8, 4).ok());     // kind
  EXPECT_FALSE(decode(Envelope{1, RpcKind::kRequest, absl::StatusCode::kOk}, 9, 5).ok());     // code on request
  EXPECT_FALSE(decode(Envelope{1, RpcKind::kReply, absl::StatusCode::kOk}, 9, 17).ok());      // code unknown
  for (int at = 10; at < 16; ++at) {
    EXPECT_FALSE(decode(Envelope{1, RpcKind::kRequest, absl::StatusCode::kOk}, at, 1).ok()) << at;
  }
}

}  // namespace
}  // namespace fathom::msg
