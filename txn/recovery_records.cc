#include "txn/recovery_records.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "platform/base/byte_order.h"

namespace fathom::txn {
namespace {

constexpr size_t kRequestBytes = 16;
constexpr size_t kReplyHeaderBytes = 8;
constexpr size_t kHoldHeaderBytes = 24;  // id, kind, a reserved byte; two region lists follow
constexpr size_t kResolveBytes = 40;

absl::Status Malformed(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed recovery message: ", what));
}

bool AllZero(std::string_view bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
}

void AppendId(std::string& out, const TxnId& id) {
  AppendU64(out, id.epoch);
  AppendU64(out, id.counter);
  AppendU32(out, id.node);
  AppendU16(out, id.thread);
}

// The id at `p` (22 bytes: epoch, counter, node, thread); InvalidArgument for node 0.
absl::StatusOr<TxnId> LoadId(const char* p) {
  TxnId id;
  id.epoch = LoadU64(p);
  id.counter = LoadU64(p + 8);
  id.node = LoadU32(p + 16);
  id.thread = LoadU16(p + 20);
  if (id.node == 0) return Malformed("transaction id names node 0");
  return id;
}

}  // namespace

const char* HoldKindName(HoldKind kind) {
  switch (kind) {
    case HoldKind::kLocked: return "locked";
    case HoldKind::kCommitted: return "committed";
    case HoldKind::kRecord: return "record";
    case HoldKind::kAborted: return "aborted";
    case HoldKind::kTruncated: return "truncated";
  }
  return "?";
}

std::string EncodeOrphansRequest(const OrphansRequest& request) {
  std::string out;
  out.push_back(static_cast<char>(kRecoveryFormat));
  out.append(7, '\0');
  AppendU64(out, request.epoch);
  return out;
}

absl::StatusOr<OrphansRequest> DecodeOrphansRequest(std::string_view bytes) {
  if (bytes.size() != kRequestBytes) {
    return Malformed(absl::StrCat("orphans request of ", bytes.size(), " bytes, not ", kRequestBytes));
  }
  if (static_cast<uint8_t>(bytes[0]) != kRecoveryFormat) {
    return Malformed(absl::StrCat("format ", static_cast<int>(static_cast<uint8_t>(bytes[0]))));
  }
  if (!AllZero(bytes.substr(1, 7))) return Malformed("reserved bytes of an orphans request are not zero");
  OrphansRequest request;
  request.epoch = LoadU64(bytes.data() + 8);
  if (request.epoch == 0) return Malformed("orphans request for configuration 0");
  return request;
}

size_t HoldSize(const Hold& hold) { return kHoldHeaderBytes + 8 + 4 * (hold.regions.size() + hold.written.size()); }

absl::StatusOr<OrphansReply> FillOrphansReply(std::vector<Hold> holds, size_t budget) {
  std::stable_sort(holds.begin(), holds.end(), [](const Hold& a, const Hold& b) { return KeyOf(a.id) < KeyOf(b.id); });
  OrphansReply reply;
  size_t used = 0;
  for (Hold& hold : holds) {
    if (reply.holds.size() == kMaxHoldsPerReply || used + HoldSize(hold) > budget) {
      reply.more = true;
      while (!reply.holds.empty() && reply.holds.back().id == hold.id) reply.holds.pop_back();
      if (reply.holds.empty()) {
        return absl::ResourceExhaustedError(
            absl::StrCat("the holds of ", hold.id.ToString(), " do not fit in one reply of ", budget, " bytes"));
      }
      break;
    }
    used += HoldSize(hold);
    reply.holds.push_back(std::move(hold));
  }
  return reply;
}

std::string EncodeOrphansReply(const OrphansReply& reply) {
  std::string out;
  AppendU32(out, static_cast<uint32_t>(reply.holds.size()));
  out.push_back(reply.more ? 1 : 0);
  out.push_back('\0');
  AppendU16(out, static_cast<uint16_t>(reply.marks.size()));
  for (const ThreadMark& m : reply.marks) {
    AppendU32(out, m.node);
    AppendU16(out, m.thread);
    AppendU16(out, 0);
    AppendU64(out, m.mark.incarnation);
    AppendU64(out, m.mark.settled_below);
  }
  for (const Hold& hold : reply.holds) {
    AppendId(out, hold.id);
    out.push_back(static_cast<char>(hold.kind));
    out.push_back('\0');
    AppendU32(out, static_cast<uint32_t>(hold.regions.size()));
    for (uint32_t region : hold.regions) AppendU32(out, region);
    AppendU32(out, static_cast<uint32_t>(hold.written.size()));
    for (uint32_t region : hold.written) AppendU32(out, region);
  }
  return out;
}

absl::StatusOr<OrphansReply> DecodeOrphansReply(std::string_view bytes) {
  if (bytes.size() < kReplyHeaderBytes) return Malformed(absl::StrCat("orphans reply of ", bytes.size(), " bytes"));
  const char* p = bytes.data();
  const uint32_t count = LoadU32(p);
  if (count > kMaxHoldsPerReply) return Malformed(absl::StrCat(count, " holds (at most ", kMaxHoldsPerReply, ")"));
  const uint8_t more = static_cast<uint8_t>(p[4]);
  if (more > 1) return Malformed(absl::StrCat("'more' flag ", static_cast<int>(more)));
  if (p[5] != 0) return Malformed("reserved byte of an orphans reply is not zero");
  const uint16_t marks = LoadU16(p + 6);
  OrphansReply reply;
  reply.more = more == 1;
  size_t at = kReplyHeaderBytes;
  if (marks > kMaxMarksPerReply || (bytes.size() - at) / kMarkBytes < marks) {
    return Malformed(absl::StrCat("reply claims ", marks, " marks; ", bytes.size() - at, " bytes left"));
  }
  for (uint16_t i = 0; i < marks; ++i, at += kMarkBytes) {
    ThreadMark m;
    m.node = LoadU32(p + at);
    m.thread = LoadU16(p + at + 4);
    m.mark.incarnation = LoadU64(p + at + 8);
    m.mark.settled_below = LoadU64(p + at + 16);
    if (m.node == 0 || LoadU16(p + at + 6) != 0 || m.mark.incarnation == 0 || m.mark.settled_below == 0) {
      return Malformed(absl::StrCat("mark ", i, ": node 0, a reserved field set, or no incarnation or bound"));
    }
    reply.marks.push_back(m);
  }
  for (uint32_t i = 0; i < count; ++i) {
    if (bytes.size() - at < kHoldHeaderBytes) return Malformed(absl::StrCat("hold ", i, " is cut short"));
    absl::StatusOr<TxnId> id = LoadId(p + at);
    if (!id.ok()) return Malformed(absl::StrCat("hold ", i, ": ", id.status().message()));
    Hold hold;
    hold.id = *id;
    const uint8_t kind = static_cast<uint8_t>(p[at + 22]);
    if (kind < 1 || kind > 5) return Malformed(absl::StrCat("hold ", i, " has kind ", static_cast<int>(kind)));
    hold.kind = static_cast<HoldKind>(kind);
    if (p[at + 23] != 0) return Malformed(absl::StrCat("hold ", i, " has a nonzero reserved byte"));
    at += kHoldHeaderBytes;
    for (auto [list, name] : {std::pair{&hold.regions, "regions"}, std::pair{&hold.written, "written regions"}}) {
      if (bytes.size() - at < 4) return Malformed(absl::StrCat("hold ", i, " is cut short"));
      const uint32_t count = LoadU32(p + at);
      at += 4;
      if (count > kMaxRegionsPerHold || (bytes.size() - at) / 4 < count) {
        return Malformed(absl::StrCat("hold ", i, " claims ", count, " ", name, "; ", bytes.size() - at, " bytes left"));
      }
      for (uint32_t r = 0; r < count; ++r, at += 4) {
        const uint32_t region = LoadU32(p + at);
        if (region == 0 || (!list->empty() && region <= list->back())) {
          return Malformed(absl::StrCat("hold ", i, ": ", name, " must be nonzero, sorted and distinct"));
        }
        list->push_back(region);
      }
    }
    const bool tombstone = hold.kind == HoldKind::kAborted || hold.kind == HoldKind::kTruncated;
    if (tombstone ? !hold.regions.empty() || !hold.written.empty() : hold.regions.empty()) {
      return Malformed(absl::StrCat("hold ", i, " (", HoldKindName(hold.kind), ") writes ", hold.regions.size(),
                                    " regions here"));
    }
    if (!std::includes(hold.written.begin(), hold.written.end(), hold.regions.begin(), hold.regions.end())) {
      return Malformed(absl::StrCat("hold ", i, " writes regions here that are not among its written regions"));
    }
    if (!reply.holds.empty() && KeyOf(hold.id) < KeyOf(reply.holds.back().id)) {
      return Malformed(absl::StrCat("hold ", i, " is out of id order"));
    }
    reply.holds.push_back(std::move(hold));
  }
  if (at != bytes.size()) return Malformed(absl::StrCat(bytes.size() - at, " bytes after the last hold"));
  return reply;
}

std::string EncodeResolveRequest(const ResolveRequest& request) {
  std::string out;
  out.push_back(static_cast<char>(kRecoveryFormat));
  out.push_back(static_cast<char>(request.action));
  out.append(6, '\0');
  AppendU64(out, request.epoch);
  AppendId(out, request.id);
  out.append(2, '\0');
  return out;
}

absl::StatusOr<ResolveRequest> DecodeResolveRequest(std::string_view bytes) {
  if (bytes.size() != kResolveBytes) {
    return Malformed(absl::StrCat("resolve request of ", bytes.size(), " bytes, not ", kResolveBytes));
  }
  const char* p = bytes.data();
  if (static_cast<uint8_t>(p[0]) != kRecoveryFormat) {
    return Malformed(absl::StrCat("format ", static_cast<int>(static_cast<uint8_t>(p[0]))));
  }
  const uint8_t action = static_cast<uint8_t>(p[1]);
  if (action < 1 || action > 3) return Malformed(absl::StrCat("resolve action ", static_cast<int>(action)));
  if (!AllZero(bytes.substr(2, 6)) || !AllZero(bytes.substr(38, 2))) {
    return Malformed("reserved bytes of a resolve request are not zero");
  }
  ResolveRequest request;
  request.action = static_cast<ResolveAction>(action);
  request.epoch = LoadU64(p + 8);
  if (request.epoch == 0) return Malformed("resolve request for configuration 0");
  absl::StatusOr<TxnId> id = LoadId(p + 16);
  if (!id.ok()) return id.status();
  request.id = *id;
  return request;
}

}  // namespace fathom::txn
