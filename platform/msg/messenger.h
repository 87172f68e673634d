// Messenger: RPC over rings for one thread. It owns the thread's sending rings (one per peer node) and polls
// the receive rings the node assigns to the thread; it pairs requests with replies by request id, runs
// handlers by message type, and fails calls at their deadline (injected Clock).
//
//   Messenger m(options);                                       // per thread, next to its fabric Worker
//   m.Register(kEcho, [](const Message& msg, std::string* reply) { reply->assign(msg.payload); return absl::OkStatus(); });
//   m.AddPeer(2, *endpoint_to_2, ring_at_2, *my_region, credit_offset);        // we send to node 2
//   m.AddReceiveRing(2, *my_region, ring_from_2, credit_at_2);                  // node 2 sends to us
//   m.Call(2, kEcho, "ping", absl::Milliseconds(10), [](absl::StatusOr<std::string_view> r) { ... });
//   m.Send(2, kNotify, "one-way");
//   while (running) {                                           // the thread's event loop
//     for (const Completion& c : worker completions) m.OnCompletion(c);
//     m.Poll();                                                 // handlers, replies, timeouts, flushes
//   }
//
// Batching: Call and Send only queue (framed into the ring's staging copy); Flush, or the end of Poll, writes
// all queued bytes of a peer with one PostWrite. A full ring makes Call and Send return ResourceExhausted
// (never overwriting anything): flush, poll and retry. Replies are never refused: one that does not fit
// waits in a per-peer queue and goes out as soon as the peer frees room.
//
// Routing: a request from node X is answered through this messenger's ring to X, and a reply is matched
// only against this messenger's calls. A node must therefore assign the ring (X's thread i -> us) to the
// thread whose ring to X is polled by X's thread i: with equal thread counts, thread i <-> thread i.
//
// Failures: when the ring to a peer fails (its endpoint failed, a write failed, a corrupt credit) or a ring
// from the peer is marked bad (corruption, too many rejected messages), the peer is marked failed: its
// pending calls complete with Unavailable and new calls and sends return Unavailable. Recovery is a new
// connection (a new Messenger peer), made by the node.
//
// Threading: one thread, the thread of the endpoints' Worker. Handlers and callbacks run inside Poll, on
// that thread; they may Call, Send and Flush, but not Poll or Register.
#ifndef FATHOM_PLATFORM_MSG_MESSENGER_H_
#define FATHOM_PLATFORM_MSG_MESSENGER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "platform/base/clock.h"
#include "platform/fabric/fabric.h"
#include "platform/msg/counters.h"
#include "platform/msg/handler_registry.h"
#include "platform/msg/pending_calls.h"
#include "platform/msg/ring_location.h"
#include "platform/msg/ring_receiver.h"
#include "platform/msg/ring_sender.h"
#include "platform/msg/rpc_envelope.h"

namespace fathom::msg {

// What a one-way message may ask for beyond being sent.
struct SendOptions {
  // Room set aside with Messenger::SetAside: the message then never fails for lack of room, and uses up
  // Messenger::ReservationFor(message size) of it.
  uint64_t* set_aside = nullptr;
  // Runs (inside a later Poll) once the message is in the peer's memory: the fabric completed the write
  // that carried it, whatever the peer's CPU has done with it yet. Runs with the peer's failure (or
  // Cancelled if the peer is removed or the messenger destroyed) if that never happens.
  absl::AnyInvocable<void(absl::Status)> on_written;
  // Runs (on the messenger's thread) if the connection fails or the peer is removed (not when the messenger
  // is destroyed) before the peer has consumed the message — its credit word has passed it — though the message was written (on_written, if
  // set, ran OK; a message whose write failed is reported there only). A receiver that drops the
  // connection discards what it had not consumed (node.cc), and a write that lands after its drain is
  // "written" yet never read. Credits are written back lazily, so the peer may have handled the message
  // after all: whoever sets this sends again something that is harmless twice.
  absl::AnyInvocable<void(absl::Status)> on_lost;
  // Whether the message wakes the peer (RingSender's Wake): kWhenAwake when nothing waits on the peer's
  // CPU for it (a record it applies later: no doorbell over shared memory unless its ring is half full);
  // kSoon when its handling is wanted soon but nobody waits on it now (a COMMIT-PRIMARY): its doorbell
  // is owed, and rung by Poll once it has been owed for MessengerOptions::owed_wake_delay, by
  // WakeOwedPeers, or with the next message that wakes the peer anyway.
  Wake wake = Wake::kNow;
};

struct MessengerOptions {
  // Deadlines of calls, and the receive rings' corruption timer. Not owned; must outlive the messenger.
  const Clock* clock = Clock::Real();
  RingSenderOptions sender;
  RingReceiverOptions receiver;  // its clock is replaced by `clock`
  // Records one Poll takes from one ring before it moves on to the next.
  size_t max_records_per_ring = 64;
  // How long a doorbell owed for kSoon messages may wait for a message that wakes the peer anyway before
  // a Poll rings it on its own (counted from the first Poll that finds it owed).
  absl::Duration owed_wake_delay = absl::Microseconds(100);
  // Calls pending at once; Call returns ResourceExhausted beyond it.
  size_t max_pending_calls = 1 << 16;
  // How long a removed peer's rings are kept (longer than any fabric operation can stay in flight).
  absl::Duration retire_grace = absl::Seconds(30);
  // Told, on the messenger's thread, when the connection to a peer fails (a failed write or endpoint, a bad
  // ring): it stays failed until the peer is removed, so whoever owns connections can make a new one. Must
  // not call into the messenger.
  std::function<void(NodeId peer)> on_peer_failed;
};

class Messenger {
 public:
  explicit Messenger(MessengerOptions options = {});
  // Pending calls complete with Cancelled (CancelPending).
  ~Messenger();
  Messenger(const Messenger&) = delete;
  Messenger& operator=(const Messenger&) = delete;

  // Completes every pending call and write-completion wait with Cancelled, and forgets every on_lost
  // callback without running it (the peers lost nothing; this end goes away). Their callbacks may still use
  // this messenger (release set-aside room, send), so an owner tearing it down calls this first, while the
  // messenger is still reachable through the owner, and destroys it after.
  void CancelPending();

  // See HandlerRegistry::Register. FailedPrecondition inside Poll.
  absl::Status Register(MessageType type, Handler handler);
  // A layer that starts later will Register `type`: until then a one-way message of that type is dropped
  // (counted in stats().unhandled_expected) instead of rejected, so a run of them (a peer's log-epoch
  // messages to a client still attaching its transaction layer) does not make the ring look bad. Its
  // sender must repeat what matters (the log-epoch driver repeats CLOSE).
  void Expect(MessageType type) { expected_.insert(type); }

  // Control path. Sending to `peer`: through `endpoint` (to the peer, on this thread's worker; it must
  // outlive the messenger) into the peer's ring at `ring`; the receiver writes its head back into the credit
  // word at `credit_offset` of our `credit_region` (registered, outliving the messenger; publish it to the
  // peer with MakeCreditLocation). AlreadyExists if the peer was added.
  absl::Status AddPeer(NodeId peer, fabric::Endpoint& endpoint, const RingLocation& ring,
                       fabric::Region& credit_region, uint64_t credit_offset);
  // Control path. A ring in our `ring_region` (described by `ring`, as published to the peer) that one of
  // `peer`'s threads writes; its head goes back to that thread's credit word `credit` through the endpoint
  // given to AddPeer(peer). FailedPrecondition if the peer was not added.
  absl::Status AddReceiveRing(NodeId peer, fabric::Region& ring_region, const RingLocation& ring,
                              const CreditLocation& credit);

  // Control path. Forgets `peer`: first every complete message it wrote into our rings is handled (as Poll
  // would; nothing it sent before its removal is lost), then its pending calls complete with Cancelled, its rings are no longer
  // polled, and completions still arriving for them are ignored. The rings' buffers are kept for
  // MessengerOptions::retire_grace (operations in flight may still touch them until their endpoint is gone),
  // then freed by Poll. The caller destroys the peer's endpoint afterwards. NotFound if unknown.
  absl::Status RemovePeer(NodeId peer);

  // Queues a request; `done` runs (inside a later Poll) with the reply, the handler's error, DeadlineExceeded
  // once `timeout` has passed, or Unavailable if the peer fails. If Call returns an error, `done` never runs:
  // NotFound (unknown peer), Unavailable (peer failed), InvalidArgument (too large, type 0),
  // ResourceExhausted (ring full, or too many pending calls).
  absl::Status Call(NodeId peer, MessageType type, std::string_view request, absl::Duration timeout,
                    ReplyCallback done);
  // Queues a one-way message. Errors as for Call.
  absl::Status Send(NodeId peer, MessageType type, std::string_view message);
  absl::Status Send(NodeId peer, MessageType type, std::string_view message, SendOptions options);
  // Sets room aside in the ring to `peer` for one-way messages of `message_sizes` bytes each, to be sent
  // later with SendOptions::set_aside; returns the bytes set aside (ResourceExhausted if there is no room
  // now; errors as for Send). Give back what is left with ReleaseSetAside.
  absl::StatusOr<uint64_t> SetAside(NodeId peer, std::span<const size_t> message_sizes);
  void ReleaseSetAside(NodeId peer, uint64_t bytes);
  // Writes every peer's queued messages (one PostWrite per peer, two if its ring wraps).
  absl::Status Flush();
  // Drains the receive rings (running handlers and reply callbacks), writes heads back, fails overdue calls,
  // sends waiting replies and flushes. Returns how many messages it took from the rings.
  size_t Poll();
  // Rings every doorbell owed for kSoon messages now: for a thread about to sleep, which would otherwise
  // keep them owed until it wakes.
  void WakeOwedPeers();
  // Routes a completion of this thread's worker; false if it is not the msg layer's (context.h).
  bool OnCompletion(const fabric::Completion& completion);

  // The largest request or message payload `peer` accepts (its ring's max payload less the envelope).
  absl::StatusOr<size_t> max_payload(NodeId peer) const;
  absl::Status peer_health(NodeId peer) const;
  size_t pending_calls() const { return pending_.size(); }
  // The sum of every receive ring's counters (messages the layers above rejected included).
  MsgCounters counters() const;
  // The send rings to every peer: bytes queued or written that the peer has not consumed as far as this
  // side last read its credit (an upper bound: the credit is read when a ring looks full), and their size.
  struct RingOccupancy {
    uint64_t used_bytes = 0;
    uint64_t capacity_bytes = 0;
  };
  RingOccupancy send_ring_occupancy() const;
  // One line per peer (health, ring positions, messages waiting to be written, calls pending) and per
  // receive ring: what an operator needs when operations stop completing (fathomd's SIGUSR1 dump).
  std::string Describe() const;
  struct Stats {
    uint64_t calls = 0;
    uint64_t one_way_sent = 0;
    uint64_t replies_sent = 0;
    uint64_t replies_deferred = 0;  // replies that waited for room in a full ring
    uint64_t timeouts = 0;
    uint64_t late_replies = 0;      // replies to calls no longer pending (timed out or failed)
    uint64_t unhandled_requests = 0;  // requests of a type with no handler (yet), answered "unimplemented"
    uint64_t unhandled_expected = 0;  // one-way messages of an Expect()ed type before its handler, dropped
    uint64_t drained_at_removal = 0;  // messages a removed peer had written, handled as it was removed
    uint64_t peer_failures = 0;
    uint64_t lost_after_written = 0;  // on_lost callbacks run: written, not known to be consumed
    uint64_t owed_wakes = 0;        // flushes that left a kSoon message's doorbell owed
    uint64_t owed_wakes_rung = 0;   // of those, rung on their own (after owed_wake_delay, or before the
                                    // thread slept); the others rode with a message that woke the peer
  };
  const Stats& stats() const { return stats_; }
  // Messages whose on_written callback has not run yet, over every peer.
  size_t written_waiters() const { return written_waiters_; }
  // Messages whose on_lost callback is kept until the peer consumes them, over every peer.
  size_t lost_waiters() const { return lost_waiters_; }
  // Ring and credit writes of the connected peers posted and not completed: the fabric reads their
  // staging buffers until then, so whoever destroys the messenger first polls until this is 0 (or the
  // fabric's operation timeout has passed, which completes every operation).
  size_t writes_in_flight() const;
  // For tests and diagnostics; null if unknown.
  RingSender* sender(NodeId peer);
  RingReceiver* receive_ring(size_t index);
  size_t receive_ring_count() const { return receivers_.size(); }

 private:
  struct Peer {
    NodeId id = 0;
    fabric::Endpoint* endpoint = nullptr;
    std::unique_ptr<RingSender> sender;
    absl::Status health;
    // Replies waiting for room, each [type u16][length u32][envelope and body], from deferred_head on.
    std::string deferred;
    size_t deferred_head = 0;
    // Messages whose writes someone waits for, by the stream position just past them (increasing).
    struct WrittenWaiter {
      uint64_t end = 0;
      absl::AnyInvocable<void(absl::Status)> done;
    };
    std::deque<WrittenWaiter> written_waiters;
    // Written waiters up to this stream position ran with OK.
    uint64_t written_ok_through = 0;
    // Messages someone wants to hear about if they are lost before the peer consumed them (on_lost), by
    // the stream position just past them.
    struct LostWaiter {
      uint64_t end = 0;
      bool reports_written = false;  // it has a written waiter too
      absl::AnyInvocable<void(absl::Status)> lost;
    };
    std::deque<LostWaiter> lost_waiters;
    // Since when (the first Poll that saw it) a doorbell for kSoon messages has been owed; InfiniteFuture
    // when none is.
    absl::Time wake_owed_since = absl::InfiniteFuture();
  };
  struct Receiver {
    NodeId peer = 0;
    std::unique_ptr<RingReceiver> ring;
    bool failed = false;
  };
  // A completion owner: exactly one of the two is set.
  struct Owner {
    RingSender* sender = nullptr;
    RingReceiver* receiver = nullptr;
  };

  Peer* FindPeer(NodeId peer);
  const Peer* FindPeer(NodeId peer) const;
  absl::Status Usable(NodeId peer, Peer** out);
  RejectReason Dispatch(NodeId peer, const RingRecord& record);
  RejectReason OnReply(NodeId peer, const DecodedEnvelope& reply);
  void SendReply(NodeId peer, MessageType type, uint64_t request_id, const absl::Status& status,
                 std::string_view body);
  void DrainDeferred(Peer& peer);
  void FlushPeer(Peer& peer);
  void ExpireCalls();
  void FailPeer(Peer& peer, const absl::Status& why);
  // Runs the written-waiters of `peer` whose messages are in the peer's memory (all of them, with
  // `failure`, if it is not OK).
  void NotifyWritten(Peer& peer, const absl::Status& failure = absl::OkStatus());
  // Forgets the lost-waiters of `peer` whose messages the peer consumed; with a `failure`, runs the rest
  // (those whose written waiter ran OK, or that have none) and forgets them all.
  void NotifyLost(Peer& peer, const absl::Status& failure = absl::OkStatus());
  void RunCallbacks(const absl::Status& status);  // runs and clears finished_

  // A removed peer's sender and receive rings, kept until operations in flight can no longer touch them.
  struct Retired {
    std::unique_ptr<Peer> peer;
    std::vector<std::unique_ptr<RingReceiver>> receivers;
    absl::Time at;
  };
  // Handles every complete message `peer` has written into our rings (RemovePeer, before forgetting it).
  void DrainFrom(NodeId peer);
  void FreeRetired();

  MessengerOptions options_;
  HandlerRegistry handlers_;
  absl::flat_hash_set<MessageType> expected_;  // Expect()
  std::vector<Retired> retired_;
  PendingCalls pending_;
  // Ordered: Poll and Flush visit peers in id order, so a run replays (a hash map's order depends on
  // heap addresses).
  absl::btree_map<NodeId, std::unique_ptr<Peer>> peers_;
  std::vector<Receiver> receivers_;
  std::vector<Owner> owners_;
  bool polling_ = false;
  std::string reply_;                           // the reply a handler fills; capacity reused
  std::vector<PendingCalls::Call> finished_;    // calls taken out to run their callbacks; capacity reused
  size_t written_waiters_ = 0;                  // over every peer
  size_t lost_waiters_ = 0;                     // over every peer
  Stats stats_;
};

// Makes `request` and waits for its reply, calling `pump` (which must poll this messenger and its worker and
// whatever else the reply needs, e.g. the peer in a single-threaded simulation) until it arrives or fails.
// A full ring is waited out until `timeout`. For tests and tools.
absl::StatusOr<std::string> CallAndWait(Messenger& messenger, NodeId peer, MessageType type,
                                        std::string_view request, absl::Duration timeout,
                                        absl::FunctionRef<void()> pump, const Clock& clock);

// Polls `worker` (routing completions to `messenger`) and then `messenger`; returns the messages polled.
// For threads whose worker carries only msg traffic (tests, benchmarks): other completions are dropped.
size_t PollWorkerAndMessenger(fabric::Worker& worker, Messenger& messenger);

}  // namespace fathom::msg

#endif  // FATHOM_PLATFORM_MSG_MESSENGER_H_
