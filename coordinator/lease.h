// Leases over the node runtime: the wire format of a lease request and its grant
// (docs/formats/lease.md), and LeaseTable, the configuration manager's view of its members' leases.
//
// A member asks the configuration manager (CM) for a lease every period / renewals_per_period with a
// kLeaseRequestMessage RPC; the reply grants (or refuses) it. Safety rests on one asymmetry: the member's
// lease runs from the moment it SENT the request, the CM's view from the moment it GRANTED it (later), so
// the member always gives its lease up before the CM can consider it expired and remove it.
//
//   LeaseTable table(absl::Seconds(2));
//   table.SetMembers(config, /*self=*/1, clock->Now());          // newcomers get a full period
//   LeaseVerdict v = table.Renew(2, incarnation, clock->Now());  // in the request handler
//   for (const auto& [id, incarnation] : table.Expired(clock->Now())) coordinator->RemoveExpiredMember(id, incarnation);
#ifndef FATHOM_COORDINATOR_LEASE_H_
#define FATHOM_COORDINATOR_LEASE_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/configuration.h"
#include "platform/msg/handler_registry.h"

namespace fathom::coordinator {

// Node message types 1..99 are the runtime's (kPingMessage = 1). The grant is the RPC reply to a
// request; 3 is CONFIG-APPLIED (platform/node/config_applied.h).
inline constexpr msg::MessageType kLeaseRequestMessage = 2;
inline constexpr uint16_t kLeaseFormatVersion = 2;
inline constexpr size_t kLeaseMessageBytes = 32;

struct LeaseRequest {
  uint32_t node_id = 0;
  uint64_t incarnation = 0;
  uint64_t epoch = 0;  // the newest configuration the member has seen
  // The `grant` of the last grant this member accepted from the CM it asks (0: none it confirms). The CM
  // holds its own lease only while a majority confirm grants (lease_agent.h).
  uint64_t confirms = 0;
};

enum class LeaseVerdict : uint16_t {
  kGranted = 0,
  kNotManager = 1,  // ask the CM the configuration names
  kNotMember = 2,   // not in the CM's configuration with this incarnation: join again
};
const char* LeaseVerdictName(LeaseVerdict verdict);

struct LeaseReply {
  LeaseVerdict verdict = LeaseVerdict::kNotManager;
  absl::Duration period;  // the lease granted, from the moment the member sent its request
  uint64_t epoch = 0;     // the CM's configuration
  uint64_t grant = 0;     // granted: a token the member echoes (LeaseRequest::confirms); else 0
};

// How long a member's requests to its CM go unanswered (at least two in a row) before it votes the CM out
// (Coordinator::ReportSuspect): a quarter period, so a successor can grant before the member's lease lapses.
// The vote states how long the member had confirmed none of the CM's grants, from which its successor
// bounds the old CM's lease (LeaseAgent::ShortenDeposedManager): every node of a cluster runs with the
// same lease period.
inline absl::Duration SuspicionSilence(absl::Duration period) { return period / 4; }
// A CM whose lease ticks stopped for longer than this (it was paused, or starved) may have been voted out
// meanwhile (its members suspect it after SuspicionSilence): it grants nothing until the coordinator
// confirms it still holds the role (Coordinator::ConfirmManager). Ticks come every period / 16.
inline absl::Duration ManagerGapToConfirm(absl::Duration period) { return period / 8; }

std::string EncodeLeaseRequest(const LeaseRequest& request);
// InvalidArgument (which the messenger counts as a malformed message) if the size, version, reserved
// bits or node id are wrong.
absl::StatusOr<LeaseRequest> DecodeLeaseRequest(std::string_view bytes);
std::string EncodeLeaseReply(const LeaseReply& reply);
absl::StatusOr<LeaseReply> DecodeLeaseReply(std::string_view bytes);
// Whether the CM answers a lease-channel request for `node` that came from `source` (ip:port): a member
// `config` lists must ask from the lease address it published (the UDP analogue of a ring's sender); a
// node it does not list is answered (Renew refuses it: not a member).
bool LeaseSourceMatches(const coordinator::Configuration& config, uint32_t node, const std::string& source);

// The CM's leases: one per member (but itself), by node id. Not thread-safe (LeaseAgent locks it).
class LeaseTable {
 public:
  struct Entry {
    uint64_t incarnation = 0;
    absl::Time last_renewal;  // or when the member (or this CM) appeared
    uint64_t renewals = 0;
    bool joining = false;     // admitted while this CM ran and not renewed yet: has the join grace
    // When this CM made the newest grant the member confirmed it received (InfinitePast: none).
    absl::Time confirmed = absl::InfinitePast();
  };

  // `join_grace`: how long a member that joined has for its first renewal, if longer than the period (it
  // connects to every member first, which takes longer than a short lease).
  explicit LeaseTable(absl::Duration period, absl::Duration join_grace = absl::ZeroDuration())
      : period_(period), join_grace_(std::max(period, join_grace)) {}

  // Follows a new configuration: its members (but `self`) that are new, or back as another incarnation,
  // get a lease from `now`, with the join grace; members that left are forgotten.
  void SetMembers(const coordinator::Configuration& config, uint32_t self, absl::Time now);
  // Gives every member a lease from `now` (a CM that just took over, or that was stalled itself and so
  // could not hear renewals, blames no one for the gap), without the join grace: members it took over
  // have joined long ago, and a dead CM among them must go after one period.
  void RenewAll(absl::Time now);
  void Clear() { entries_.clear(); }
  // A request from `node_id`: granted if it is a member with this incarnation.
  LeaseVerdict Renew(uint32_t node_id, uint64_t incarnation, absl::Time now);
  // The member says it received the grant this CM made at `granted` (at most now: the caller clamps).
  void Confirm(uint32_t node_id, uint64_t incarnation, absl::Time granted);
  // The member's lease here expires at `expires` at the latest (a CM deposed by a majority's votes: its
  // own lease ended soon after the last vote, lease_agent.h).
  void ExpireBy(uint32_t node_id, uint64_t incarnation, absl::Time expires);
  // Members whose last renewal is a full period old (id, incarnation), in id order.
  std::vector<std::pair<uint32_t, uint64_t>> Expired(absl::Time now) const;
  // Whether `node_id`'s `incarnation` holds a lease here at `now` (not Expired).
  bool Holds(uint32_t node_id, uint64_t incarnation, absl::Time now) const;
  void Forget(uint32_t node_id) { entries_.erase(node_id); }

  const std::map<uint32_t, Entry>& entries() const { return entries_; }
  absl::Duration period() const { return period_; }

 private:
  bool ExpiredAt(const Entry& entry, absl::Time now) const {
    return now - entry.last_renewal >= (entry.joining ? join_grace_ : period_);
  }

  const absl::Duration period_;
  const absl::Duration join_grace_;
  std::map<uint32_t, Entry> entries_;
};

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_LEASE_H_
