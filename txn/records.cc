#include "txn/records.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "platform/base/byte_order.h"
#include "platform/base/status_macros.h"
#include "platform/fabric/wire.h"
#include "platform/memory/size_classes.h"

namespace fathom::txn {
namespace {

constexpr size_t kHeaderBytes = 64;
constexpr size_t kEntryHeaderBytes = 32;
constexpr uint8_t kCheckVersionFlag = 1;

size_t Padded(size_t n) { return (n + 7) / 8 * 8; }

absl::Status Malformed(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed transaction record: ", what));
}

bool ValidKind(uint8_t kind) { return kind >= 1 && kind <= 5; }
bool ValidOp(uint8_t op) { return op >= 1 && op <= 3; }

}  // namespace

const char* WriteOpName(WriteOp op) {
  switch (op) {
    case WriteOp::kWrite: return "write";
    case WriteOp::kAlloc: return "alloc";
    case WriteOp::kFree: return "free";
  }
  return "?";
}

bool CoordinatorMark::Settles(const TxnId& id) const {
  return incarnation != 0 && id.epoch >= incarnation && id.counter < settled_below;
}

bool SettledBy(std::span<const CoordinatorMark> marks, const TxnId& id) {
  auto after = std::upper_bound(marks.begin(), marks.end(), id.epoch,
                                [](uint64_t epoch, const CoordinatorMark& m) { return epoch < m.incarnation; });
  return after != marks.begin() && std::prev(after)->Settles(id);
}

std::string TxnId::ToString() const { return absl::StrCat("tx(e", epoch, ",n", node, ",t", thread, ",#", counter, ")"); }

std::vector<uint32_t> RegionsOf(std::span<const WriteEntry> entries) {
  std::vector<uint32_t> regions;
  regions.reserve(entries.size());
  for (const WriteEntry& e : entries) regions.push_back(e.ref.address.region);
  std::sort(regions.begin(), regions.end());
  regions.erase(std::unique(regions.begin(), regions.end()), regions.end());
  return regions;
}

size_t RecordSize(size_t truncated, std::span<const WriteEntry* const> entries, size_t written_regions) {
  size_t size = kHeaderBytes + 8 * truncated + Padded(4 * written_regions);
  for (const WriteEntry* e : entries) size += kEntryHeaderBytes + Padded(e->payload.size());
  return size;
}

std::string EncodeRecord(const Record& record) {
  std::vector<const WriteEntry*> entries;
  entries.reserve(record.entries.size());
  for (const WriteEntry& e : record.entries) entries.push_back(&e);
  return EncodeRecord(record.kind, record.id, record.mark, record.log_epoch, record.truncated, record.written_regions,
                      entries);
}

std::string EncodeRecord(RecordKind kind, const TxnId& id, const CoordinatorMark& mark, uint64_t log_epoch,
                         const std::vector<uint64_t>& truncated, std::span<const uint32_t> written_regions,
                         std::span<const WriteEntry* const> entries) {
  std::string out;
  out.reserve(RecordSize(truncated.size(), entries, written_regions.size()));
  out.push_back(static_cast<char>(kRecordFormat));
  out.push_back(static_cast<char>(kind));
  out.push_back(static_cast<char>(id.thread & 0xff));
  out.push_back(static_cast<char>(id.thread >> 8));
  AppendU32(out, id.node);
  AppendU64(out, id.epoch);
  AppendU64(out, id.counter);
  AppendU32(out, static_cast<uint32_t>(truncated.size()));
  AppendU32(out, static_cast<uint32_t>(entries.size()));
  AppendU64(out, log_epoch);
  AppendU32(out, static_cast<uint32_t>(written_regions.size()));
  AppendU32(out, 0);
  AppendU64(out, mark.incarnation);
  AppendU64(out, mark.settled_below);
  for (uint64_t counter : truncated) AppendU64(out, counter);
  for (uint32_t region : written_regions) AppendU32(out, region);
  if (written_regions.size() % 2 != 0) AppendU32(out, 0);
  for (const WriteEntry* e : entries) {
    AppendU64(out, e->ref.address.raw());
    AppendU32(out, e->ref.incarnation);
    AppendU32(out, e->ref.capacity);
    out.push_back(static_cast<char>(e->op));
    out.push_back(static_cast<char>(e->check_version ? kCheckVersionFlag : 0));
    out.append(2, '\0');
    AppendU32(out, static_cast<uint32_t>(e->payload.size()));
    AppendU64(out, e->version);
    out.append(e->payload);
    out.append(Padded(e->payload.size()) - e->payload.size(), '\0');
  }
  return out;
}

absl::StatusOr<Record> DecodeRecord(std::string_view bytes) {
  if (bytes.size() < kHeaderBytes) return Malformed(absl::StrCat(bytes.size(), " bytes, shorter than a header"));
  const char* p = bytes.data();
  if (static_cast<uint8_t>(p[0]) != kRecordFormat) {
    return Malformed(absl::StrCat("format version ", static_cast<int>(static_cast<uint8_t>(p[0])), " is not ",
                                  kRecordFormat));
  }
  const uint8_t kind = static_cast<uint8_t>(p[1]);
  if (!ValidKind(kind)) return Malformed(absl::StrCat("unknown kind ", kind));
  Record record;
  record.kind = static_cast<RecordKind>(kind);
  record.id.thread = static_cast<uint16_t>(static_cast<uint8_t>(p[2]) | static_cast<uint8_t>(p[3]) << 8);
  record.id.node = LoadU32(p + 4);
  record.id.epoch = LoadU64(p + 8);
  record.id.counter = LoadU64(p + 16);
  const uint32_t truncated = LoadU32(p + 24);
  const uint32_t entries = LoadU32(p + 28);
  record.log_epoch = LoadU64(p + 32);
  const uint32_t regions = LoadU32(p + 40);
  if (LoadU32(p + 44) != 0) return Malformed("reserved header bytes are not zero");
  record.mark.incarnation = LoadU64(p + 48);
  record.mark.settled_below = LoadU64(p + 56);
  if (record.id.node == 0) return Malformed("node 0");
  if ((record.mark.incarnation == 0) != (record.mark.settled_below == 0)) {
    return Malformed(absl::StrCat("coordinator mark: incarnation ", record.mark.incarnation, ", settled below ",
                                  record.mark.settled_below, " (both 0 or neither)"));
  }
  if (record.mark.incarnation > record.id.epoch) {
    return Malformed(absl::StrCat("coordinator mark: incarnation ", record.mark.incarnation, " after the record's epoch ",
                                  record.id.epoch));
  }
  if (truncated > kMaxTruncatedPerRecord) return Malformed(absl::StrCat(truncated, " truncated ids"));
  if (entries > kMaxEntriesPerRecord) return Malformed(absl::StrCat(entries, " entries"));
  const bool has_entries = record.kind == RecordKind::kLock || record.kind == RecordKind::kCommitBackup;
  if (record.kind != RecordKind::kCommitBackup && record.log_epoch != 0) {
    return Malformed(absl::StrCat("a record of kind ", kind, " with a log epoch"));
  }
  if (!has_entries && entries != 0) return Malformed(absl::StrCat("a record of kind ", kind, " with entries"));
  if (has_entries && entries == 0) return Malformed("no entries");
  if (regions > kMaxRegionsPerRecord) return Malformed(absl::StrCat(regions, " written regions"));
  if (!has_entries && regions != 0) return Malformed(absl::StrCat("a record of kind ", kind, " with written regions"));
  if (has_entries && regions == 0) return Malformed("no written regions");
  size_t at = kHeaderBytes;
  if (bytes.size() - at < uint64_t{8} * truncated) return Malformed("truncated ids run past the end");
  for (uint32_t i = 0; i < truncated; ++i, at += 8) record.truncated.push_back(LoadU64(p + at));
  if (bytes.size() - at < Padded(uint64_t{4} * regions)) return Malformed("written regions run past the end");
  record.written_regions.reserve(regions);
  for (uint32_t i = 0; i < regions; ++i, at += 4) {
    const uint32_t region = LoadU32(p + at);
    if (i > 0 && region <= record.written_regions.back()) {
      return Malformed(absl::StrCat("written region ", i, " (", region, ") is not above the one before"));
    }
    record.written_regions.push_back(region);
  }
  if (regions % 2 != 0) {
    if (LoadU32(p + at) != 0) return Malformed("non-zero padding after the written regions");
    at += 4;
  }
  record.entries.reserve(entries);
  for (uint32_t i = 0; i < entries; ++i) {
    if (bytes.size() - at < kEntryHeaderBytes) return Malformed(absl::StrCat("entry ", i, " runs past the end"));
    WriteEntry e;
    e.ref.address = memory::GlobalAddress::FromRaw(LoadU64(p + at));
    e.ref.incarnation = LoadU32(p + at + 8);
    e.ref.capacity = LoadU32(p + at + 12);
    const uint8_t op = static_cast<uint8_t>(p[at + 16]);
    const uint8_t flags = static_cast<uint8_t>(p[at + 17]);
    const uint32_t length = LoadU32(p + at + 20);
    e.version = LoadU64(p + at + 24);
    if (!ValidOp(op)) return Malformed(absl::StrCat("entry ", i, ": unknown operation ", op));
    if ((flags & ~kCheckVersionFlag) != 0 || p[at + 18] != 0 || p[at + 19] != 0) {
      return Malformed(absl::StrCat("entry ", i, ": reserved bits set"));
    }
    e.op = static_cast<WriteOp>(op);
    e.check_version = (flags & kCheckVersionFlag) != 0;
    const uint32_t capacity = e.ref.capacity;
    if (capacity < memory::kMinSlotBytes || capacity > memory::kMaxSlotBytes || capacity % memory::kMinSlotBytes != 0 ||
        e.ref.address.offset % memory::kMinSlotBytes != 0) {
      return Malformed(absl::StrCat("entry ", i, ": ", e.ref.address.ToString(), " with capacity ", capacity,
                                    " is not a slot"));
    }
    if (length > capacity - object::kHeaderBytes) {
      return Malformed(absl::StrCat("entry ", i, ": payload of ", length, " bytes in a slot of ", capacity));
    }
    if (e.op == WriteOp::kFree && length != 0) return Malformed(absl::StrCat("entry ", i, ": a free with a payload"));
    if (e.version & object::kLockBit) return Malformed(absl::StrCat("entry ", i, ": version with the lock bit"));
    at += kEntryHeaderBytes;
    if (bytes.size() - at < Padded(length)) return Malformed(absl::StrCat("entry ", i, ": payload runs past the end"));
    e.payload.assign(p + at, length);
    for (size_t k = length; k < Padded(length); ++k) {
      if (p[at + k] != 0) return Malformed(absl::StrCat("entry ", i, ": non-zero padding"));
    }
    at += Padded(length);
    for (const WriteEntry& earlier : record.entries) {
      if (earlier.ref.address == e.ref.address) {
        return Malformed(absl::StrCat("entry ", i, ": ", e.ref.address.ToString(), " appears twice"));
      }
    }
    if (!std::binary_search(record.written_regions.begin(), record.written_regions.end(), e.ref.address.region)) {
      return Malformed(absl::StrCat("entry ", i, ": region ", e.ref.address.region, " is not among the written regions"));
    }
    record.entries.push_back(std::move(e));
  }
  if (at != bytes.size()) return Malformed(absl::StrCat(bytes.size() - at, " bytes after the last entry"));
  return record;
}

std::string EncodeLockReply(const LockGrant& grant) {
  std::string out;
  AppendU32(out, static_cast<uint32_t>(grant.versions.size()));
  AppendU64(out, grant.log_epoch);
  for (uint64_t v : grant.versions) AppendU64(out, v);
  return out;
}

absl::StatusOr<LockGrant> DecodeLockReply(std::string_view bytes, size_t expected_entries) {
  if (bytes.size() < 12 || LoadU32(bytes.data()) != expected_entries || bytes.size() != 12 + 8 * expected_entries) {
    return absl::DataLossError(absl::StrCat("lock reply of ", bytes.size(), " bytes for ", expected_entries,
                                            " entries"));
  }
  LockGrant grant;
  grant.log_epoch = LoadU64(bytes.data() + 4);
  for (size_t i = 0; i < expected_entries; ++i) grant.versions.push_back(LoadU64(bytes.data() + 12 + 8 * i));
  return grant;
}

std::string EncodeAllocRequest(const AllocRequest& request) {
  std::string out;
  AppendU32(out, request.payload_capacity);
  AppendU32(out, request.count);
  AppendU64(out, request.epoch);
  return out;
}

absl::StatusOr<AllocRequest> DecodeAllocRequest(std::string_view bytes) {
  if (bytes.size() != 16) return Malformed(absl::StrCat("allocation request of ", bytes.size(), " bytes"));
  AllocRequest request;
  request.payload_capacity = LoadU32(bytes.data());
  request.count = LoadU32(bytes.data() + 4);
  request.epoch = LoadU64(bytes.data() + 8);
  if (request.payload_capacity == 0 || request.payload_capacity > memory::kMaxSlotBytes - object::kHeaderBytes) {
    return Malformed(absl::StrCat("allocation of ", request.payload_capacity, " bytes"));
  }
  if (request.count == 0 || request.count > kMaxAllocCount) {
    return Malformed(absl::StrCat("allocation of ", request.count, " slots (1..", kMaxAllocCount, ")"));
  }
  return request;
}

std::string EncodeAllocReply(const std::vector<object::ObjectRef>& refs) {
  std::string out;
  AppendU32(out, static_cast<uint32_t>(refs.size()));
  for (const object::ObjectRef& ref : refs) out += EncodeRef(ref);
  return out;
}

absl::StatusOr<std::vector<object::ObjectRef>> DecodeAllocReply(std::string_view bytes, uint32_t requested,
                                                                uint32_t payload_capacity) {
  if (bytes.size() < 4) return Malformed(absl::StrCat("allocation reply of ", bytes.size(), " bytes"));
  const uint32_t count = LoadU32(bytes.data());
  if (count == 0 || count > requested) {
    return Malformed(absl::StrCat("allocation reply with ", count, " slots for ", requested, " asked"));
  }
  if (bytes.size() != 4 + 16 * uint64_t{count}) {
    return Malformed(absl::StrCat("allocation reply of ", bytes.size(), " bytes for ", count, " slots"));
  }
  std::vector<object::ObjectRef> refs;
  refs.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    ASSIGN_OR_RETURN(object::ObjectRef ref, DecodeRef(bytes.substr(4 + 16 * i, 16)));
    if (ref.capacity < uint64_t{payload_capacity} + object::kHeaderBytes) {
      return Malformed(absl::StrCat("allocation reply: ", ref.address.ToString(), " has ", ref.capacity,
                                    " bytes, less than ", payload_capacity, " + the header"));
    }
    refs.push_back(ref);
  }
  return refs;
}

std::string EncodeRef(const object::ObjectRef& ref) {
  std::string out;
  AppendU64(out, ref.address.raw());
  AppendU32(out, ref.incarnation);
  AppendU32(out, ref.capacity);
  return out;
}

absl::StatusOr<object::ObjectRef> DecodeRef(std::string_view bytes) {
  if (bytes.size() != 16) return Malformed(absl::StrCat("object reference of ", bytes.size(), " bytes"));
  object::ObjectRef ref;
  ref.address = memory::GlobalAddress::FromRaw(LoadU64(bytes.data()));
  ref.incarnation = LoadU32(bytes.data() + 8);
  ref.capacity = LoadU32(bytes.data() + 12);
  if (ref.capacity < memory::kMinSlotBytes || ref.capacity > memory::kMaxSlotBytes ||
      ref.capacity % memory::kMinSlotBytes != 0 || ref.address.offset % memory::kMinSlotBytes != 0) {
    return Malformed(absl::StrCat(ref.address.ToString(), " with capacity ", ref.capacity, " is not a slot"));
  }
  return ref;
}

}  // namespace fathom::txn
