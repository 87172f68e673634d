#include "coordinator/lease.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace fathom::coordinator {
namespace {

// Little-endian fixed-width fields (docs/formats/lease.md).
template <typename T>
void Put(std::string* out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) out->push_back(static_cast<char>((static_cast<uint64_t>(value) >> (8 * i)) & 0xff));
}

template <typename T>
T Get(std::string_view bytes, size_t offset) {
  uint64_t value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) value |= uint64_t(static_cast<uint8_t>(bytes[offset + i])) << (8 * i);
  return static_cast<T>(value);
}

absl::Status CheckFrame(std::string_view bytes, const char* what) {
  if (bytes.size() != kLeaseMessageBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " of ", bytes.size(), " bytes, expected ", kLeaseMessageBytes));
  }
  if (const uint16_t version = Get<uint16_t>(bytes, 0); version != kLeaseFormatVersion) {
    return absl::InvalidArgumentError(absl::StrCat(what, " of format version ", version, ", expected ", kLeaseFormatVersion));
  }
  return absl::OkStatus();
}

}  // namespace

const char* LeaseVerdictName(LeaseVerdict verdict) {
  switch (verdict) {
    case LeaseVerdict::kGranted:
      return "granted";
    case LeaseVerdict::kNotManager:
      return "not the configuration manager";
    case LeaseVerdict::kNotMember:
      return "not a member";
  }
  return "unknown";
}

std::string EncodeLeaseRequest(const LeaseRequest& request) {
  std::string out;
  Put<uint16_t>(&out, kLeaseFormatVersion);
  Put<uint16_t>(&out, 0);
  Put<uint32_t>(&out, request.node_id);
  Put<uint64_t>(&out, request.incarnation);
  Put<uint64_t>(&out, request.epoch);
  Put<uint64_t>(&out, request.confirms);
  return out;
}

absl::StatusOr<LeaseRequest> DecodeLeaseRequest(std::string_view bytes) {
  if (absl::Status s = CheckFrame(bytes, "lease request"); !s.ok()) return s;
  if (Get<uint16_t>(bytes, 2) != 0) return absl::InvalidArgumentError("lease request with reserved bits set");
  LeaseRequest request;
  request.node_id = Get<uint32_t>(bytes, 4);
  request.incarnation = Get<uint64_t>(bytes, 8);
  request.epoch = Get<uint64_t>(bytes, 16);
  request.confirms = Get<uint64_t>(bytes, 24);
  if (request.node_id == 0 || request.node_id > coordinator::kMaxNodeId) {
    return absl::InvalidArgumentError(absl::StrCat("lease request from node id ", request.node_id));
  }
  return request;
}

std::string EncodeLeaseReply(const LeaseReply& reply) {
  std::string out;
  Put<uint16_t>(&out, kLeaseFormatVersion);
  Put<uint16_t>(&out, static_cast<uint16_t>(reply.verdict));
  Put<uint32_t>(&out, 0);
  Put<uint64_t>(&out, static_cast<uint64_t>(absl::ToInt64Microseconds(reply.period)));
  Put<uint64_t>(&out, reply.epoch);
  Put<uint64_t>(&out, reply.grant);
  return out;
}

absl::StatusOr<LeaseReply> DecodeLeaseReply(std::string_view bytes) {
  if (absl::Status s = CheckFrame(bytes, "lease reply"); !s.ok()) return s;
  const uint16_t verdict = Get<uint16_t>(bytes, 2);
  if (verdict > static_cast<uint16_t>(LeaseVerdict::kNotMember)) {
    return absl::InvalidArgumentError(absl::StrCat("lease reply with unknown verdict ", verdict));
  }
  if (Get<uint32_t>(bytes, 4) != 0) return absl::InvalidArgumentError("lease reply with reserved bits set");
  const uint64_t micros = Get<uint64_t>(bytes, 8);
  // A grant of more than an hour is no lease a sane CM gives: refuse it rather than trust it.
  if (micros > uint64_t{3600} * 1000 * 1000) {
    return absl::InvalidArgumentError(absl::StrCat("lease reply granting ", micros, " us"));
  }
  LeaseReply reply;
  reply.verdict = static_cast<LeaseVerdict>(verdict);
  reply.period = absl::Microseconds(static_cast<int64_t>(micros));
  reply.epoch = Get<uint64_t>(bytes, 16);
  reply.grant = Get<uint64_t>(bytes, 24);
  if (reply.verdict == LeaseVerdict::kGranted && reply.period <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("lease granted for no time");
  }
  if ((reply.verdict == LeaseVerdict::kGranted) != (reply.grant != 0)) {
    return absl::InvalidArgumentError(absl::StrCat("lease reply (", LeaseVerdictName(reply.verdict), ") with grant ", reply.grant));
  }
  return reply;
}

bool LeaseSourceMatches(const coordinator::Configuration& config, uint32_t node, const std::string& source) {
  const coordinator::MemberInfo* m = coordinator::FindMember(config, node);
  return m == nullptr || m->lease_address() == source;
}

void LeaseTable::SetMembers(const coordinator::Configuration& config, uint32_t self, absl::Time now) {
  std::map<uint32_t, Entry> next;
  for (const coordinator::MemberInfo& m : config.members()) {
    if (m.node_id() == self) continue;
    auto it = entries_.find(m.node_id());
    if (it != entries_.end() && it->second.incarnation == m.incarnation()) {
      next[m.node_id()] = it->second;
    } else {
      next[m.node_id()] = Entry{m.incarnation(), now, 0, /*joining=*/true};
    }
  }
  entries_ = std::move(next);
}

void LeaseTable::RenewAll(absl::Time now) {
  for (auto& [id, entry] : entries_) {
    entry.last_renewal = std::max(entry.last_renewal, now);
    entry.joining = false;
  }
}

LeaseVerdict LeaseTable::Renew(uint32_t node_id, uint64_t incarnation, absl::Time now) {
  auto it = entries_.find(node_id);
  if (it == entries_.end() || it->second.incarnation != incarnation) return LeaseVerdict::kNotMember;
  it->second.last_renewal = std::max(it->second.last_renewal, now);
  ++it->second.renewals;
  it->second.joining = false;
  return LeaseVerdict::kGranted;
}

void LeaseTable::Confirm(uint32_t node_id, uint64_t incarnation, absl::Time granted) {
  auto it = entries_.find(node_id);
  if (it == entries_.end() || it->second.incarnation != incarnation) return;
  it->second.confirmed = std::max(it->second.confirmed, granted);
}

void LeaseTable::ExpireBy(uint32_t node_id, uint64_t incarnation, absl::Time expires) {
  auto it = entries_.find(node_id);
  if (it == entries_.end() || it->second.incarnation != incarnation) return;
  it->second.last_renewal = std::min(it->second.last_renewal, expires - period_);
  it->second.joining = false;
}

std::vector<std::pair<uint32_t, uint64_t>> LeaseTable::Expired(absl::Time now) const {
  std::vector<std::pair<uint32_t, uint64_t>> out;
  for (const auto& [id, entry] : entries_) {
    if (ExpiredAt(entry, now)) out.push_back({id, entry.incarnation});
  }
  return out;
}

bool LeaseTable::Holds(uint32_t node_id, uint64_t incarnation, absl::Time now) const {
  auto it = entries_.find(node_id);
  return it != entries_.end() && it->second.incarnation == incarnation && !ExpiredAt(it->second, now);
}

}  // namespace fathom::coordinator
