// Reads, writes and calls as messages (UcxOptions::RemoteAccess, docs/formats/fabric.md): an endpoint
// batches them until its worker's next Poll or Wait, the target's worker serves a batch in its progress
// and answers it (its replies to one peer gathered until its next Poll or Wait, riding in the request
// batch it then sends that peer if any), and the reply completes them.
#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "platform/base/log.h"
#include "platform/fabric/racy_copy.h"
#include "platform/fabric/ucx/ucx_internal.h"
#include "platform/fabric/ucx/ucx_status.h"

namespace fathom::fabric::ucx_internal {

// ---- Requester: batching and sending ----

absl::Status UcxEndpoint::MakeRoom(RmaKind kind, size_t length) {
  // A batch that would grow too large goes now; the record starts the next one.
  if (batch_.count() > 0 &&
      (batch_.count() >= kMaxBatchRecords || batch_.bytes() + RequestRecordBytes(kind, length) > kMaxBatchBytes ||
       batch_.reply_bytes() + ReplyRecordBytes(kind, length) > kMaxBatchBytes)) {
    SendBatch();
    if (!health_.ok()) return health_;
  }
  return absl::OkStatus();
}

absl::StatusOr<PendingOp*> UcxEndpoint::AcquireMessageOp(OpType type, size_t length, uint64_t context) {
  auto op = worker_->AcquireOp(this, type, context);
  if (!op.ok()) return op.status();
  PendingOp* p = *op;
  p->message = true;
  p->length = length;
  p->deadline = worker_->options().clock->Now() + worker_->options().fabric.operation_timeout;
  worker_->TrackInFlight();
  return p;
}

absl::Status UcxEndpoint::PostMessage(OpType type, uint64_t remote, void* destination, const void* source,
                                      size_t length, uint64_t context) {
  const RmaKind kind = type == OpType::kRead ? RmaKind::kRead : RmaKind::kWrite;
  if (absl::Status room = MakeRoom(kind, length); !room.ok()) return room;
  auto op = AcquireMessageOp(type, length, context);
  if (!op.ok()) return op.status();
  const uint64_t id = worker_->MessageId(*op);
  if (type == OpType::kRead) {
    // The reply's bytes go straight to the caller's buffer, and only while the op is live (Report does
    // not copy: no bounce buffer is involved).
    batch_.AddRead(id, remote, static_cast<uint32_t>(length));
    (*op)->message_destination = destination;
  } else {
    batch_.AddWrite(id, remote, source, static_cast<uint32_t>(length));
  }
  return absl::OkStatus();
}

absl::Status UcxEndpoint::PostCall(uint32_t handler, absl::Span<const std::byte> argument, void* destination,
                                   size_t capacity, uint64_t context) {
  if (!health_.ok()) return health_;
  if (!worker_->messages()) {
    return absl::UnimplementedError("calls travel with reads sent as messages, which this endpoint does not send");
  }
  if (handler >= Worker::kMaxCallHandlers) {
    return absl::InvalidArgumentError(absl::StrCat("call handler ", handler, " is not below ", Worker::kMaxCallHandlers));
  }
  if (argument.empty() || argument.size() > kMaxMessageOpBytes || capacity == 0 || capacity > kMaxMessageOpBytes) {
    return absl::InvalidArgumentError(absl::StrCat("a call of ", argument.size(), " argument bytes and ", capacity,
                                                   " reply bytes (each must be 1 to ", kMaxMessageOpBytes, ")"));
  }
  // The larger of the request and the reply decides whether the batch has room.
  if (absl::Status room = MakeRoom(RmaKind::kCall, std::max(argument.size(), capacity)); !room.ok()) return room;
  auto op = AcquireMessageOp(OpType::kCall, capacity, context);
  if (!op.ok()) return op.status();
  (*op)->message_destination = destination;
  batch_.AddCall(worker_->MessageId(*op), handler, static_cast<uint32_t>(capacity), argument.data(),
                 static_cast<uint32_t>(argument.size()));
  return absl::OkStatus();
}

void UcxEndpoint::SendBatch() {
  batch_due_ = false;
  if (batch_.count() == 0) return;
  const size_t records = batch_.count();
  std::vector<std::byte> bytes = batch_.Take();
  if (!health_.ok()) return;  // its ops were failed with the endpoint
  worker_->CountBatchSent(records);
  unsigned id = kRmaRequestMessageId;
  // The gathered replies to this peer ride along, within a batch's bound (a message is sent eager).
  if (replies_.count() > 0 && replies_.bytes() + bytes.size() > kMaxBatchBytes) SendGatheredReplies();
  if (replies_.count() > 0) {
    bytes = JoinReplyAndRequest(replies_.Take(), bytes);
    id = kRmaReplyAndRequestMessageId;
    worker_->CountReplyWithRequest();
  }
  if (ucs_status_t s = worker_->SendMessage(ep_, id, std::move(bytes), /*want_reply_ep=*/true); s != UCS_OK) {
    Fail(FromUcs(s, "sending reads and writes"));
  }
}

ReplyBuilder& UcxEndpoint::GatherReply(size_t records, size_t bytes) {
  if (replies_.count() > 0 &&
      (replies_.count() + records > kMaxBatchRecords || replies_.bytes() + bytes > kMaxBatchBytes)) {
    SendGatheredReplies();
  }
  if (!replies_due_) {
    replies_due_ = true;
    worker_->MarkReplying(this);
  }
  return replies_;
}

void UcxEndpoint::SendDueReplies() {
  replies_due_ = false;
  SendGatheredReplies();
}

void UcxEndpoint::SendGatheredReplies() {
  if (replies_.count() == 0) return;
  std::vector<std::byte> bytes = replies_.Take();
  // A reply that cannot be sent leaves the requester to its deadline (its connection is broken anyway).
  if (!health_.ok()) return;
  worker_->SendMessage(ep_, kRmaReplyMessageId, std::move(bytes), /*want_reply_ep=*/false);
  worker_->CountReplySent();
}

uint64_t UcxWorker::MessageId(const PendingOp* op) const {
  return (static_cast<uint64_t>(op - pool_.data()) << 32) | op->sequence;
}

UcxEndpoint* UcxWorker::EndpointOf(ucp_ep_h ep) const {
  for (UcxEndpoint* endpoint : endpoints_) {
    if (endpoint->ucp_ep() == ep && endpoint->health().ok()) return endpoint;
  }
  return nullptr;
}

void UcxWorker::MarkDue(UcxEndpoint* endpoint) { due_.push_back(endpoint); }

void UcxWorker::SendDue() {
  // Swap first: a send that fails the endpoint must not touch the list being walked.
  std::vector<UcxEndpoint*> due;
  due.swap(due_);
  for (UcxEndpoint* endpoint : due) endpoint->SendBatch();  // with the peer's replies, if gathered
  if (due_.empty()) {
    due.clear();
    due_.swap(due);  // keep the capacity
  }
  // Replies that found no batch to ride in go alone.
  std::vector<UcxEndpoint*> replying;
  replying.swap(replying_);
  for (UcxEndpoint* endpoint : replying) endpoint->SendDueReplies();
  if (replying_.empty()) {
    replying.clear();
    replying_.swap(replying);
  }
}

namespace {
struct SentMessage {
  UcxWorker* worker;
  std::vector<std::byte> bytes;
};
}  // namespace

ucs_status_t UcxWorker::SendMessage(ucp_ep_h ep, unsigned id, std::vector<std::byte> bytes, bool want_reply_ep) {
  auto* sent = new SentMessage{this, std::move(bytes)};
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  param.cb.send = &UcxWorker::OnMessageSent;
  param.user_data = sent;
  // Eager: the receiver gets the bytes in its handler (no rendezvous to complete), which a batch's bound
  // (kMaxBatchBytes) keeps reasonable.
  param.flags = UCP_AM_SEND_FLAG_EAGER | (want_reply_ep ? UCP_AM_SEND_FLAG_REPLY : 0);
  ucs_status_ptr_t request = ucp_am_send_nbx(ep, id, nullptr, 0, sent->bytes.data(), sent->bytes.size(), &param);
  if (UCS_PTR_IS_PTR(request)) {
    ++sends_in_flight_;
    return UCS_OK;
  }
  // Done at once, or failed. A failure later (in OnMessageSent) shows as the endpoint's: UCX reports a
  // broken connection; a reply that is lost leaves the requester to its deadline.
  delete sent;
  return UCS_PTR_STATUS(request);
}

void UcxWorker::OnMessageSent(void* request, ucs_status_t, void* user_data) {
  auto* sent = static_cast<SentMessage*>(user_data);
  --sent->worker->sends_in_flight_;
  delete sent;
  ucp_request_free(request);
}

namespace {
// Requests and replies are sent eager; one that arrives by rendezvous is not ours: released unread.
bool DroppedRendezvous(ucp_worker_h worker, void* data, const ucp_am_recv_param_t* param, const char* what) {
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) == 0) return false;
  LogError("fabric", "a read/write %s arrived by rendezvous; dropped", what);
  ucp_am_data_release(worker, data);
  return true;
}
}  // namespace

// ---- Target: serving a batch ----

namespace {
// A request needs a reply endpoint; one without is dropped.
bool HasReplyEndpoint(const ucp_am_recv_param_t* param) {
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) != 0) return true;
  LogError("fabric", "a read/write request without a reply endpoint; dropped");
  return false;
}

absl::Span<const std::byte> Bytes(const void* data, size_t length) {
  return absl::Span<const std::byte>(static_cast<const std::byte*>(data), length);
}
}  // namespace

ucs_status_t UcxWorker::OnRequest(void* arg, const void*, size_t, void* data, size_t length,
                                  const ucp_am_recv_param_t* param) {
  auto* self = static_cast<UcxWorker*>(arg);
  if (DroppedRendezvous(self->worker_, data, param, "request") || !HasReplyEndpoint(param)) return UCS_OK;
  auto records = ParseRequest(Bytes(data, length));
  if (!records.ok()) {
    // Its reads and writes end at the requester's deadline, which fails that connection.
    LogError("fabric", "dropped a malformed read/write request: %s", records.status().ToString().c_str());
    return UCS_OK;
  }
  self->Serve(*records, param->reply_ep);
  return UCS_OK;
}

ucs_status_t UcxWorker::OnReplyAndRequest(void* arg, const void*, size_t, void* data, size_t length,
                                          const ucp_am_recv_param_t* param) {
  auto* self = static_cast<UcxWorker*>(arg);
  if (DroppedRendezvous(self->worker_, data, param, "reply and request") || !HasReplyEndpoint(param)) {
    return UCS_OK;
  }
  // Both parts are checked before either is acted on.
  auto dropped = [](const absl::Status& s) {
    LogError("fabric", "dropped a malformed read/write reply and request: %s", s.ToString().c_str());
    return UCS_OK;
  };
  auto parts = SplitReplyAndRequest(Bytes(data, length));
  if (!parts.ok()) return dropped(parts.status());
  auto replies = ParseReply(parts->reply);
  if (!replies.ok()) return dropped(replies.status());
  auto requests = ParseRequest(parts->request);
  if (!requests.ok()) return dropped(requests.status());
  self->Complete(*replies);
  self->Serve(*requests, param->reply_ep);
  return UCS_OK;
}

void UcxWorker::Serve(const std::vector<RequestRecord>& records, ucp_ep_h reply_ep) {
  ++counts_.batches_served;
  size_t reply_bytes = 8;
  for (const RequestRecord& r : records) reply_bytes += r.reply_bytes();
  // The reply endpoint is this worker's own endpoint to the requester when it has one (UCX matches the
  // two directions of a connection): the reply then waits for this worker's next Poll or Wait, sharing
  // one message with the replies to the peer's other batches, and with a request batch to it if one goes
  // then. Else it goes alone, now.
  UcxEndpoint* peer = EndpointOf(reply_ep);
  ReplyBuilder alone;
  ReplyBuilder& reply = peer != nullptr ? peer->GatherReply(records.size(), reply_bytes) : alone;
  // No region is unmapped while its bytes are copied; a call's handler runs without the table held.
  std::optional<RegionTable::Reader> regions;
  for (const RequestRecord& r : records) {
    if (r.kind == RmaKind::kCall) {
      regions.reset();
      ServeCall(r, reply);
      continue;
    }
    if (!regions.has_value()) regions.emplace(*regions_);
    if (!regions->Holds(r.address, r.length)) {
      reply.AddResult(r.id, RmaResult::kNoRegion);
    } else if (r.kind == RmaKind::kRead) {
      RacyCopy(reply.AddRead(r.id, r.length), reinterpret_cast<const std::byte*>(r.address), r.length,
               /*to_is_shared=*/false);
    } else {
      RacyCopy(reinterpret_cast<std::byte*>(r.address), r.data, r.length, /*to_is_shared=*/true);
      reply.AddResult(r.id, RmaResult::kOk);
    }
  }
  regions.reset();
  // A reply that cannot be sent leaves the requester to its deadline (its connection is broken anyway).
  if (peer == nullptr) {
    SendMessage(reply_ep, kRmaReplyMessageId, reply.Take(), /*want_reply_ep=*/false);
    ++counts_.replies_sent;
  }
}

void UcxWorker::ServeCall(const RequestRecord& record, ReplyBuilder& reply) {
  CallHandler* handler = record.handler() < call_handlers_.size() ? &call_handlers_[record.handler()] : nullptr;
  if (handler == nullptr || !*handler) {
    reply.AddResult(record.id, RmaResult::kNotServed);
    return;
  }
  call_reply_.clear();
  (*handler)(absl::Span<const std::byte>(record.data, record.length), record.reply_limit(), call_reply_);
  if (call_reply_.size() > record.reply_limit()) {
    reply.AddResult(record.id, RmaResult::kNotServed);
    return;
  }
  std::memcpy(reply.AddRead(record.id, static_cast<uint32_t>(call_reply_.size())), call_reply_.data(),
              call_reply_.size());
}

absl::Status UcxWorker::SetCallHandler(uint32_t handler, CallHandler run) {
  if (handler >= kMaxCallHandlers) {
    return absl::InvalidArgumentError(absl::StrCat("call handler ", handler, " is not below ", kMaxCallHandlers));
  }
  if (call_handlers_.size() <= handler) call_handlers_.resize(handler + 1);
  call_handlers_[handler] = std::move(run);
  return absl::OkStatus();
}

// ---- Requester: completing from the reply ----

ucs_status_t UcxWorker::OnReply(void* arg, const void*, size_t, void* data, size_t length,
                                const ucp_am_recv_param_t* param) {
  auto* self = static_cast<UcxWorker*>(arg);
  if (DroppedRendezvous(self->worker_, data, param, "reply")) return UCS_OK;
  auto records = ParseReply(Bytes(data, length));
  if (!records.ok()) {
    LogError("fabric", "dropped a malformed read/write reply: %s", records.status().ToString().c_str());
    return UCS_OK;
  }
  self->Complete(*records);
  return UCS_OK;
}

void UcxWorker::Complete(const std::vector<ReplyRecord>& records) {
  for (const ReplyRecord& r : records) {
    const uint64_t index = r.id >> 32;
    if (index >= pool_.size()) continue;
    PendingOp* op = &pool_[index];
    // An op already ended (deadline, closed endpoint) has been released, and maybe reused since.
    if (!op->in_use || !op->message || op->sequence != static_cast<uint32_t>(r.id)) continue;
    UcxEndpoint* endpoint = op->endpoint;
    absl::Status status;
    const bool call = op->type == OpType::kCall;
    if (r.result == RmaResult::kNoRegion && !call) {
      // Confined to this op, as for a deregistered region on any transport.
      status = absl::NotFoundError(absl::StrCat(OpTypeName(op->type), ": no region at the peer holds these bytes"));
    } else if (r.result == RmaResult::kNotServed && call) {
      status = absl::UnimplementedError("the peer serves no such call, or its reply did not fit");
    } else if (r.result != RmaResult::kOk) {
      status = absl::DataLossError(absl::StrCat(OpTypeName(op->type), " answered with result ",
                                                static_cast<int>(r.result)));
    } else if (call ? r.length > op->length
                    : (op->type == OpType::kRead) != (r.length > 0) || (r.length > 0 && r.length != op->length)) {
      status = absl::DataLossError(absl::StrCat(OpTypeName(op->type), " of ", op->length, " bytes answered with ",
                                                r.length, " bytes"));
    } else if (op->type == OpType::kRead || call) {
      if (r.length > 0) std::memcpy(op->message_destination, r.data, r.length);
      op->reply_bytes = r.length;
    }
    const bool broken = absl::IsDataLoss(status);
    Finish(op, status);  // reports it (OK too) and frees the slot
    if (broken && endpoint != nullptr) endpoint->Fail(status);
  }
}

}  // namespace fathom::fabric::ucx_internal
