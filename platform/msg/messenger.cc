#include "platform/msg/messenger.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "platform/base/status_macros.h"
#include "platform/base/log.h"
#include "platform/msg/context.h"

namespace fathom::msg {

namespace {

std::string_view View(absl::string_view s) { return std::string_view(s.data(), s.size()); }

constexpr size_t kDeferredPrefix = 2 + 4;  // type u16, length u32

}  // namespace

Messenger::Messenger(MessengerOptions options) : options_(std::move(options)) {
  options_.receiver.clock = options_.clock;
}

Messenger::~Messenger() { CancelPending(); }

void Messenger::CancelPending() {
  // A callback may start another call or write (a commit's abort); those are cancelled in the next round.
  for (int round = 0; round < 16 && (!pending_.empty() || written_waiters_ > 0); ++round) {
    pending_.TakeAll(finished_);
    RunCallbacks(absl::CancelledError("messenger destroyed"));
    for (auto& [id, peer] : peers_) NotifyWritten(*peer, absl::CancelledError("messenger destroyed"));
  }
  // Nothing is lost by the peers: this node is going away, and with it whoever would send again (a
  // redelivery now would only go out while the node stops).
  for (auto& [id, peer] : peers_) peer->lost_waiters.clear();
  lost_waiters_ = 0;
}

absl::Status Messenger::Register(MessageType type, Handler handler) {
  if (polling_) return absl::FailedPreconditionError("Register inside Poll");
  return handlers_.Register(type, std::move(handler));
}

Messenger::Peer* Messenger::FindPeer(NodeId peer) {
  auto it = peers_.find(peer);
  return it == peers_.end() ? nullptr : it->second.get();
}

const Messenger::Peer* Messenger::FindPeer(NodeId peer) const {
  auto it = peers_.find(peer);
  return it == peers_.end() ? nullptr : it->second.get();
}

absl::Status Messenger::AddPeer(NodeId peer, fabric::Endpoint& endpoint, const RingLocation& ring,
                                fabric::Region& credit_region, uint64_t credit_offset) {
  // Poll iterates the peers and rings: changing them under it would invalidate its iterators.
  if (polling_) return absl::FailedPreconditionError("AddPeer inside Poll");
  if (FindPeer(peer) != nullptr) return absl::AlreadyExistsError(absl::StrCat("peer ", peer, " already added"));
  if (owners_.size() >= kMaxContextOwners) return absl::ResourceExhaustedError("too many rings");
  if (ring.max_payload < kEnvelopeSize + 1) {
    return absl::InvalidArgumentError(absl::StrCat("ring max payload ", ring.max_payload, " too small for RPC"));
  }
  const uint32_t owner = static_cast<uint32_t>(owners_.size());
  ASSIGN_OR_RETURN(std::unique_ptr<RingSender> sender,
                   RingSender::Create(endpoint, ring, credit_region, credit_offset, owner, options_.sender));
  auto state = std::make_unique<Peer>();
  state->id = peer;
  state->endpoint = &endpoint;
  state->sender = std::move(sender);
  owners_.push_back(Owner{state->sender.get(), nullptr});
  peers_.emplace(peer, std::move(state));
  return absl::OkStatus();
}

absl::Status Messenger::AddReceiveRing(NodeId peer, fabric::Region& ring_region, const RingLocation& ring,
                                       const CreditLocation& credit) {
  if (polling_) return absl::FailedPreconditionError("AddReceiveRing inside Poll");
  Peer* state = FindPeer(peer);
  if (state == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("AddReceiveRing before AddPeer(", peer, ")"));
  }
  if (owners_.size() >= kMaxContextOwners) return absl::ResourceExhaustedError("too many rings");
  const uint32_t owner = static_cast<uint32_t>(owners_.size());
  ASSIGN_OR_RETURN(std::unique_ptr<RingReceiver> receiver,
                   RingReceiver::Create(ring_region, ring, *state->endpoint, credit, owner, options_.receiver));
  owners_.push_back(Owner{nullptr, receiver.get()});
  receivers_.push_back(Receiver{peer, std::move(receiver), false});
  return absl::OkStatus();
}

// Unavailable, like a connection that failed: a peer not connected (yet, or any more) is a transient
// condition to every caller. As NotFound it reached applications as "not found" (a YCSB update failed
// with NOT_FOUND: no connection to node 3 while a partition healed).
namespace {
absl::Status NoConnection(NodeId peer) {
  return absl::UnavailableError(absl::StrCat("no connection to node ", peer));
}
}  // namespace

absl::Status Messenger::Usable(NodeId peer, Peer** out) {
  Peer* state = FindPeer(peer);
  if (state == nullptr) return NoConnection(peer);
  if (!state->health.ok()) return state->health;
  *out = state;
  return absl::OkStatus();
}

absl::Status Messenger::Call(NodeId peer, MessageType type, std::string_view request, absl::Duration timeout,
                             ReplyCallback done) {
  Peer* state = nullptr;
  RETURN_IF_ERROR(Usable(peer, &state));
  if (!done) return absl::InvalidArgumentError("Call without a callback");
  if (pending_.size() >= options_.max_pending_calls) {
    return absl::ResourceExhaustedError(absl::StrCat(pending_.size(), " calls pending"));
  }
  if (state->deferred_head < state->deferred.size()) {
    DrainDeferred(*state);
    if (state->deferred_head < state->deferred.size()) {
      return absl::ResourceExhaustedError(absl::StrCat("ring to node ", peer, " full (replies waiting)"));
    }
  }
  // A full ring is the common refusal (callers retry): find it before registering the call. (A message
  // too large for any ring goes on to Send, which says so.)
  const size_t length = kEnvelopeSize + request.size();
  if (length <= state->sender->geometry().max_payload() && !state->sender->HasRoom(length)) {
    if (!state->sender->health().ok()) return state->sender->health();
    return absl::ResourceExhaustedError("ring full");
  }
  const uint64_t id = pending_.Add(peer, options_.clock->Now() + timeout, std::move(done));
  char envelope[kEnvelopeSize];
  EncodeEnvelope(envelope, Envelope{id, RpcKind::kRequest, absl::StatusCode::kOk});
  if (absl::Status s = state->sender->Send(type, std::string_view(envelope, kEnvelopeSize), request); !s.ok()) {
    pending_.Take(id);  // never sent: the callback is dropped unrun
    return s;
  }
  ++stats_.calls;
  return absl::OkStatus();
}

absl::Status Messenger::Send(NodeId peer, MessageType type, std::string_view message) {
  return Send(peer, type, message, SendOptions{});
}

absl::Status Messenger::Send(NodeId peer, MessageType type, std::string_view message, SendOptions options) {
  Peer* state = nullptr;
  RETURN_IF_ERROR(Usable(peer, &state));
  // Waiting replies go first; a message with room set aside does not need to wait for them (the room
  // they would take is not the room it was promised).
  if (options.set_aside == nullptr && state->deferred_head < state->deferred.size()) {
    DrainDeferred(*state);
    if (state->deferred_head < state->deferred.size()) {
      return absl::ResourceExhaustedError(absl::StrCat("ring to node ", peer, " full (replies waiting)"));
    }
  }
  char envelope[kEnvelopeSize];
  EncodeEnvelope(envelope, Envelope{0, RpcKind::kOneWay, absl::StatusCode::kOk});
  RETURN_IF_ERROR(
      state->sender->Send(type, std::string_view(envelope, kEnvelopeSize), message, options.set_aside, options.wake));
  ++stats_.one_way_sent;
  const bool reports_written = static_cast<bool>(options.on_written);
  if (reports_written) {
    state->written_waiters.push_back({state->sender->tail(), std::move(options.on_written)});
    ++written_waiters_;
  }
  if (options.on_lost) {
    state->lost_waiters.push_back({state->sender->tail(), reports_written, std::move(options.on_lost)});
    ++lost_waiters_;
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> Messenger::SetAside(NodeId peer, std::span<const size_t> message_sizes) {
  Peer* state = nullptr;
  RETURN_IF_ERROR(Usable(peer, &state));
  uint64_t bytes = 0;
  for (size_t size : message_sizes) {
    if (size + kEnvelopeSize > state->sender->geometry().max_payload()) {
      return absl::InvalidArgumentError(absl::StrCat("message of ", size, " bytes exceeds what node ", peer,
                                                     "'s ring takes"));
    }
    bytes += RingSender::ReservationFor(size + kEnvelopeSize);
  }
  RETURN_IF_ERROR(state->sender->SetAside(bytes));
  return bytes;
}

void Messenger::ReleaseSetAside(NodeId peer, uint64_t bytes) {
  if (Peer* state = FindPeer(peer)) state->sender->ReleaseSetAside(bytes);
}

void Messenger::NotifyWritten(Peer& peer, const absl::Status& failure) {
  if (peer.written_waiters.empty()) return;
  const uint64_t completed = peer.sender->completed();
  std::vector<absl::AnyInvocable<void(absl::Status)>> ready;
  while (!peer.written_waiters.empty() && (!failure.ok() || peer.written_waiters.front().end <= completed)) {
    ready.push_back(std::move(peer.written_waiters.front().done));
    peer.written_waiters.pop_front();
  }
  written_waiters_ -= ready.size();
  if (failure.ok()) peer.written_ok_through = std::max(peer.written_ok_through, completed);
  // Callbacks may Send (adding waiters): they run after the queue is consistent again.
  for (auto& done : ready) done(failure);
}

void Messenger::NotifyLost(Peer& peer, const absl::Status& failure) {
  if (peer.lost_waiters.empty()) return;
  if (failure.ok()) {
    const uint64_t consumed = peer.sender->ReadCredit();
    while (!peer.lost_waiters.empty() && peer.lost_waiters.front().end <= consumed) {
      peer.lost_waiters.pop_front();
      --lost_waiters_;
    }
    return;
  }
  std::deque<Peer::LostWaiter> waiters;
  waiters.swap(peer.lost_waiters);
  lost_waiters_ -= waiters.size();
  const uint64_t consumed = peer.sender->ReadCredit();
  // Callbacks may Send (adding waiters to another connection): they run after the queue is empty.
  for (Peer::LostWaiter& waiter : waiters) {
    if (waiter.end <= consumed) continue;
    // A message whose write failed (or never happened) is its written waiter's to report.
    if (waiter.reports_written && waiter.end > peer.written_ok_through) continue;
    ++stats_.lost_after_written;
    waiter.lost(failure);
  }
}

void Messenger::FlushPeer(Peer& peer) {
  if (!peer.health.ok() || peer.sender->queued_bytes() == 0) return;
  const uint64_t owed_before = peer.sender->stats().owed_wakes;
  absl::Status s = peer.sender->Flush();
  stats_.owed_wakes += peer.sender->stats().owed_wakes - owed_before;
  // ResourceExhausted: writes in flight at their limit; the rest goes with a later flush.
  if (!s.ok() && !absl::IsResourceExhausted(s)) FailPeer(peer, s);
}

void Messenger::WakeOwedPeers() {
  for (auto& [id, peer] : peers_) {
    if (!peer->health.ok()) continue;
    if (peer->sender->WakeIfOwed()) ++stats_.owed_wakes_rung;
    peer->wake_owed_since = absl::InfiniteFuture();
  }
}

absl::Status Messenger::Flush() {
  absl::Status first;
  for (auto& [id, peer] : peers_) {
    FlushPeer(*peer);
    if (first.ok() && !peer->health.ok()) first = peer->health;
  }
  return first;
}

size_t Messenger::Poll() {
  if (polling_) return 0;
  polling_ = true;
  size_t polled = 0;
  for (Receiver& r : receivers_) {
    if (r.failed) continue;
    const NodeId peer = r.peer;
    polled += r.ring->Poll([this, peer](const RingRecord& record) { return Dispatch(peer, record); },
                           options_.max_records_per_ring);
    if (!r.ring->health().ok()) {
      r.failed = true;
      if (Peer* state = FindPeer(peer)) {
        FailPeer(*state, absl::UnavailableError(absl::StrCat("ring from node ", peer,
                                                             " is bad: ", r.ring->health().ToString())));
      }
    }
  }
  ExpireCalls();
  absl::Time now = absl::InfinitePast();  // read once, and only when a doorbell is owed
  for (auto& [id, peer] : peers_) {
    if (!peer->health.ok()) continue;
    if (!peer->sender->health().ok()) {
      FailPeer(*peer, peer->sender->health());
      continue;
    }
    DrainDeferred(*peer);
    FlushPeer(*peer);
    if (!peer->sender->wake_owed()) {
      peer->wake_owed_since = absl::InfiniteFuture();
      continue;
    }
    if (now == absl::InfinitePast()) now = options_.clock->Now();
    if (peer->wake_owed_since == absl::InfiniteFuture()) {
      peer->wake_owed_since = now;
    } else if (now - peer->wake_owed_since >= options_.owed_wake_delay) {
      if (peer->sender->WakeIfOwed()) ++stats_.owed_wakes_rung;
      peer->wake_owed_since = absl::InfiniteFuture();
    }
  }
  if (written_waiters_ > 0) {
    for (auto& [id, peer] : peers_) {
      if (peer->health.ok()) NotifyWritten(*peer);
    }
  }
  if (lost_waiters_ > 0) {
    for (auto& [id, peer] : peers_) {
      if (peer->health.ok()) NotifyLost(*peer);
    }
  }
  if (!retired_.empty()) FreeRetired();
  polling_ = false;
  return polled;
}

RejectReason Messenger::Dispatch(NodeId peer, const RingRecord& record) {
  absl::StatusOr<DecodedEnvelope> decoded = DecodeEnvelope(record.payload);
  if (!decoded.ok()) return RejectReason::kBadEnvelope;
  const Envelope& envelope = decoded->envelope;
  if (envelope.kind == RpcKind::kReply) return OnReply(peer, *decoded);
  const bool request = envelope.kind == RpcKind::kRequest;
  Handler* handler = handlers_.Find(record.type);
  if (handler == nullptr) {
    if (!request && expected_.contains(record.type)) {
      ++stats_.unhandled_expected;
      return RejectReason::kNone;
    }
    if (!request) return RejectReason::kUnknownType;
    // A well-formed request the caller hears about is no sign of a bad ring: a starting node (a restart
    // gathering logs) gets requests of layers it has not started yet, and one run of them must not cut it off.
    ++stats_.unhandled_requests;
    SendReply(peer, record.type, envelope.request_id,
              absl::UnimplementedError(absl::StrCat("node has no handler for message type ", record.type)), {});
    return RejectReason::kNone;
  }
  reply_.clear();
  const absl::Status status = (*handler)(Message{peer, record.type, decoded->body}, request ? &reply_ : nullptr);
  if (request) SendReply(peer, record.type, envelope.request_id, status, reply_);
  return IsMalformedStatus(status) ? RejectReason::kBadPayload : RejectReason::kNone;
}

RejectReason Messenger::OnReply(NodeId peer, const DecodedEnvelope& reply) {
  const std::optional<NodeId> called = pending_.PeerOf(reply.envelope.request_id);
  if (!called.has_value()) {
    ++stats_.late_replies;  // the call already timed out or failed: not an error of the peer's
    return RejectReason::kNone;
  }
  if (*called != peer) return RejectReason::kUnexpectedReply;
  std::optional<PendingCalls::Call> call = pending_.Take(reply.envelope.request_id);
  if (reply.envelope.code == absl::StatusCode::kOk) {
    call->done(reply.body);
  } else {
    call->done(absl::Status(reply.envelope.code, absl::string_view(reply.body.data(), reply.body.size())));
  }
  return RejectReason::kNone;
}

void Messenger::SendReply(NodeId peer, MessageType type, uint64_t request_id, const absl::Status& status,
                          std::string_view body) {
  Peer* state = FindPeer(peer);
  if (state == nullptr || !state->health.ok()) return;  // the caller's deadline or failure handles it
  const size_t max_body = state->sender->geometry().max_payload() - kEnvelopeSize;
  absl::StatusCode code = status.code();
  std::string_view bytes = status.ok() ? body : View(status.message());
  if (bytes.size() > max_body) {
    if (status.ok()) {
      code = absl::StatusCode::kResourceExhausted;
      bytes = "reply larger than the ring's maximum payload";
    } else {
      bytes = bytes.substr(0, max_body);  // an error message is cut to fit
    }
  }
  char envelope[kEnvelopeSize];
  EncodeEnvelope(envelope, Envelope{request_id, RpcKind::kReply, code});
  ++stats_.replies_sent;
  if (state->deferred_head == state->deferred.size()) {
    absl::Status s = state->sender->Send(type, std::string_view(envelope, kEnvelopeSize), bytes);
    if (s.ok()) return;
    if (!absl::IsResourceExhausted(s)) {
      FailPeer(*state, s);
      return;
    }
  }
  // No room: keep the reply, in order, until the peer frees some. Its size is bounded by the peer's own
  // limit on pending calls.
  ++stats_.replies_deferred;
  const uint16_t t = type;
  const uint32_t length = static_cast<uint32_t>(kEnvelopeSize + bytes.size());
  char prefix[kDeferredPrefix];
  std::memcpy(prefix, &t, 2);
  std::memcpy(prefix + 2, &length, 4);
  state->deferred.append(prefix, kDeferredPrefix);
  state->deferred.append(envelope, kEnvelopeSize);
  state->deferred.append(bytes.data(), bytes.size());
}

void Messenger::DrainDeferred(Peer& peer) {
  while (peer.deferred_head < peer.deferred.size() && peer.health.ok()) {
    const char* at = peer.deferred.data() + peer.deferred_head;
    uint16_t type;
    uint32_t length;
    std::memcpy(&type, at, 2);
    std::memcpy(&length, at + 2, 4);
    absl::Status s = peer.sender->Send(type, std::string_view(at + kDeferredPrefix, length));
    if (absl::IsResourceExhausted(s)) break;
    if (!s.ok()) {
      FailPeer(peer, s);
      break;
    }
    peer.deferred_head += kDeferredPrefix + length;
  }
  if (peer.deferred_head == peer.deferred.size()) {
    peer.deferred.clear();  // keeps its capacity
    peer.deferred_head = 0;
  }
}

void Messenger::ExpireCalls() {
  if (pending_.empty()) return;
  const absl::Time now = options_.clock->Now();
  if (now < pending_.next_deadline()) return;
  pending_.TakeExpired(now, finished_);
  stats_.timeouts += finished_.size();
  RunCallbacks(absl::DeadlineExceededError("no reply before the call's deadline"));
}

void Messenger::FailPeer(Peer& peer, const absl::Status& why) {
  if (!peer.health.ok()) return;
  ++stats_.peer_failures;
  peer.health = absl::UnavailableError(absl::StrCat("connection to node ", peer.id, " failed: ", why.ToString()));
  LogWarning("msg", "%s", std::string(peer.health.message()).c_str());
  peer.deferred.clear();
  peer.deferred_head = 0;
  pending_.TakeForPeer(peer.id, finished_);
  if (options_.on_peer_failed) options_.on_peer_failed(peer.id);
  RunCallbacks(peer.health);
  NotifyWritten(peer, peer.health);
  NotifyLost(peer, peer.health);
}

void Messenger::RunCallbacks(const absl::Status& status) {
  // Callbacks may make calls (which never touch finished_ outside these runs), so take the batch first.
  std::vector<PendingCalls::Call> batch;
  batch.swap(finished_);
  for (PendingCalls::Call& call : batch) call.done(status);
  batch.clear();
  if (finished_.empty()) finished_.swap(batch);  // keep the capacity for next time
}

bool Messenger::OnCompletion(const fabric::Completion& completion) {
  if (!IsMsgContext(completion.context)) return false;
  const uint32_t owner = ContextOwner(completion.context);
  if (owner >= owners_.size()) return true;
  const Owner& o = owners_[owner];
  if (o.sender != nullptr) {
    o.sender->OnCompletion(completion);
  } else if (o.receiver != nullptr) {
    o.receiver->OnCompletion(completion);
  }  // else: a removed peer's ring
  return true;
}

absl::Status Messenger::RemovePeer(NodeId peer) {
  if (polling_) return absl::FailedPreconditionError("RemovePeer inside Poll");
  auto it = peers_.find(peer);
  if (it == peers_.end()) return absl::NotFoundError(absl::StrCat("peer ", peer, " unknown"));
  DrainFrom(peer);
  // Forgotten before its written-callbacks run: one that sends again (a COMMIT-BACKUP or ABORT resent at
  // once) must find no connection, not queue into this one, whose waiters would then never run.
  Retired retired;
  retired.at = options_.clock->Now();
  retired.peer = std::move(it->second);
  peers_.erase(it);
  Peer* removed = retired.peer.get();
  // Owner indices stay (contexts in flight name them); they just lead nowhere now.
  for (Owner& o : owners_) {
    if (o.sender == retired.peer->sender.get()) o.sender = nullptr;
  }
  for (auto r = receivers_.begin(); r != receivers_.end();) {
    if (r->peer != peer) {
      ++r;
      continue;
    }
    for (Owner& o : owners_) {
      if (o.receiver == r->ring.get()) o.receiver = nullptr;
    }
    retired.receivers.push_back(std::move(r->ring));
    r = receivers_.erase(r);
  }
  pending_.TakeForPeer(peer, finished_);
  retired_.push_back(std::move(retired));
  NotifyWritten(*removed, absl::CancelledError(absl::StrCat("peer ", peer, " removed")));
  NotifyLost(*removed, absl::CancelledError(absl::StrCat("peer ", peer, " removed")));
  RunCallbacks(absl::CancelledError(absl::StrCat("connection to node ", peer, " removed")));
  return absl::OkStatus();
}

void Messenger::DrainFrom(NodeId peer) {
  // What the peer wrote before it was removed is handled, not dropped: recovery decides its transactions
  // from what the receivers logged, so every record in the ring must have reached its handler first.
  polling_ = true;
  for (Receiver& r : receivers_) {
    if (r.peer != peer || r.failed) continue;
    size_t taken = 0;
    while ((taken = r.ring->Poll([this, peer](const RingRecord& record) { return Dispatch(peer, record); },
                                 options_.max_records_per_ring)) > 0) {
      stats_.drained_at_removal += taken;
    }
  }
  polling_ = false;
}

void Messenger::FreeRetired() {
  const absl::Time now = options_.clock->Now();
  retired_.erase(std::remove_if(retired_.begin(), retired_.end(),
                                [&](const Retired& r) { return now - r.at >= options_.retire_grace; }),
                 retired_.end());
}

absl::StatusOr<size_t> Messenger::max_payload(NodeId peer) const {
  const Peer* state = FindPeer(peer);
  if (state == nullptr) return NoConnection(peer);
  return state->sender->geometry().max_payload() - kEnvelopeSize;
}

size_t Messenger::writes_in_flight() const {
  size_t writes = 0;
  for (const auto& [id, peer] : peers_) writes += peer->sender->writes_in_flight();
  for (const Receiver& r : receivers_) writes += r.ring->credit_in_flight() ? 1 : 0;
  return writes;
}

absl::Status Messenger::peer_health(NodeId peer) const {
  const Peer* state = FindPeer(peer);
  if (state == nullptr) return NoConnection(peer);
  return state->health;
}

std::string Messenger::Describe() const {
  std::string out = absl::StrCat("calls pending ", pending_.size(), ", written-waiters ", written_waiters_,
                                 ", lost-waiters ", lost_waiters_, "\n");
  for (const auto& [id, peer] : peers_) {
    const RingSender& s = *peer->sender;
    absl::StrAppend(&out, "  to node ", id, ": ", peer->health.ok() ? "healthy" : peer->health.ToString(),
                    ", sender ", s.health().ok() ? "ok" : s.health().ToString(), ", tail ", s.tail(),
                    " completed ", s.completed(), " credited ", s.credited(), " queued ", s.queued_bytes(),
                    " writes in flight ", s.writes_in_flight(), ", waiting to be written ",
                    peer->written_waiters.size(), ", deferred replies ", peer->deferred.size() - peer->deferred_head,
                    "\n");
  }
  for (const Receiver& r : receivers_) {
    absl::StrAppend(&out, "  from node ", r.peer, ": ", r.failed ? "failed " : "",
                    r.ring->health().ok() ? "ok" : r.ring->health().ToString(), ", at position ", r.ring->position(),
                    " expecting seq ", r.ring->expected_seq(), "\n");
  }
  return out;
}

MsgCounters Messenger::counters() const {
  MsgCounters total;
  for (const Receiver& r : receivers_) total += r.ring->counters();
  return total;
}

Messenger::RingOccupancy Messenger::send_ring_occupancy() const {
  RingOccupancy total;
  for (const auto& [id, peer] : peers_) {
    if (peer->sender == nullptr) continue;
    total.used_bytes += peer->sender->tail() - peer->sender->credited();
    total.capacity_bytes += peer->sender->geometry().capacity();
  }
  return total;
}

RingSender* Messenger::sender(NodeId peer) {
  Peer* state = FindPeer(peer);
  return state == nullptr ? nullptr : state->sender.get();
}

RingReceiver* Messenger::receive_ring(size_t index) {
  return index < receivers_.size() ? receivers_[index].ring.get() : nullptr;
}

absl::StatusOr<std::string> CallAndWait(Messenger& messenger, NodeId peer, MessageType type,
                                        std::string_view request, absl::Duration timeout,
                                        absl::FunctionRef<void()> pump, const Clock& clock) {
  const absl::Time deadline = clock.Now() + timeout;
  bool finished = false;
  absl::StatusOr<std::string> result;
  auto done = [&](absl::StatusOr<std::string_view> reply) {
    finished = true;
    if (reply.ok()) {
      result = std::string(*reply);
    } else {
      result = reply.status();
    }
  };
  while (true) {
    absl::Status s = messenger.Call(peer, type, request, deadline - clock.Now(), done);
    if (s.ok()) break;
    if (!absl::IsResourceExhausted(s)) return s;
    if (clock.Now() >= deadline) return absl::DeadlineExceededError(std::string(s.message()));
    messenger.Flush().IgnoreError();
    pump();
  }
  messenger.Flush().IgnoreError();
  while (!finished) pump();
  return result;
}

size_t PollWorkerAndMessenger(fabric::Worker& worker, Messenger& messenger) {
  fabric::Completion done[32];
  const size_t n = worker.Poll(done);
  for (size_t i = 0; i < n; ++i) messenger.OnCompletion(done[i]);
  return messenger.Poll();
}

}  // namespace fathom::msg
