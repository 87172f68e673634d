// UcxWorker: progress, completions, deadlines and the adaptive wait.
#include <poll.h>
#include <time.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "platform/fabric/ucx/ucx_internal.h"
#include "platform/fabric/ucx/ucx_status.h"
#include "platform/fabric/wire.h"

namespace fathom::fabric::ucx_internal {

UcxWorker::UcxWorker(ucp_context_h context, ucp_worker_h worker, int event_fd, const UcxOptions& options,
                     ProcessIdentity self, bool shared_memory_only, bool messages,
                     std::shared_ptr<RegionTable> regions)
    : context_(context),
      worker_(worker),
      event_fd_(event_fd),
      options_(options),
      self_(std::move(self)),
      shared_memory_only_(shared_memory_only),
      messages_(messages),
      regions_(std::move(regions)) {
  pool_.resize(options_.fabric.max_outstanding);
  free_.reserve(pool_.size());
  for (auto it = pool_.rbegin(); it != pool_.rend(); ++it) free_.push_back(&*it);
  ready_.reserve(pool_.size());
}

UcxWorker::~UcxWorker() {
  // Endpoints should be destroyed first. Any left are failed, closed and cut loose, so that their own
  // destruction later touches nothing of this worker.
  for (UcxEndpoint* endpoint : std::vector<UcxEndpoint*>(endpoints_)) {
    endpoint->Fail(absl::CancelledError("worker destroyed"));
    endpoint->Detach();
  }
  endpoints_.clear();
  // Let UCX finish closing and cancelling (bounded: a dead peer's close is forced anyway).
  const absl::Time deadline = options_.clock->Now() + options_.fabric.operation_timeout;
  while ((in_flight_ > 0 || !closing_.empty() || sends_in_flight_ > 0) && options_.clock->Now() < deadline) {
    ucp_worker_progress(worker_);
    ReapClosed();
  }
  ucp_worker_destroy(worker_);
}

absl::Status UcxWorker::Init() {
  ucp_address_t* address;
  size_t length;
  if (ucs_status_t s = ucp_worker_get_address(worker_, &address, &length); s != UCS_OK) {
    return FromUcs(s, "ucp_worker_get_address");
  }
  // Payload: the process identity (64 bytes), then UCX's worker address.
  std::string payload = self_.Serialize();
  payload.append(reinterpret_cast<const char*>(address), length);
  address_ = EncodeAddress(FabricKind::kUcx, payload);
  ucp_worker_release_address(worker_, address);
  ucp_am_handler_param_t doorbell{};
  doorbell.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB;
  doorbell.id = kDoorbellMessageId;
  doorbell.cb = &UcxWorker::OnDoorbell;
  if (ucs_status_t s = ucp_worker_set_am_recv_handler(worker_, &doorbell); s != UCS_OK) {
    return FromUcs(s, "ucp_worker_set_am_recv_handler");
  }
  // Peers' reads and writes as messages, and the replies to ours: served whatever this side's own setting.
  for (auto [id, handler] : {std::pair{kRmaRequestMessageId, &UcxWorker::OnRequest},
                             std::pair{kRmaReplyMessageId, &UcxWorker::OnReply},
                             std::pair{kRmaReplyAndRequestMessageId, &UcxWorker::OnReplyAndRequest}}) {
    ucp_am_handler_param_t param{};
    param.field_mask =
        UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    param.id = id;
    param.cb = handler;
    param.arg = this;
    if (ucs_status_t s = ucp_worker_set_am_recv_handler(worker_, &param); s != UCS_OK) {
      return FromUcs(s, "ucp_worker_set_am_recv_handler");
    }
  }
  return absl::OkStatus();
}

ucs_status_t UcxWorker::OnDoorbell(void*, const void*, size_t, void*, size_t, const ucp_am_recv_param_t*) {
  return UCS_OK;  // nothing to keep: UCX may reuse what it passed
}

absl::StatusOr<std::unique_ptr<Endpoint>> UcxWorker::Connect(std::string_view peer_address) {
  auto payload = DecodePeerAddress(FabricKind::kUcx, peer_address);
  if (!payload.ok()) return payload.status();
  if (payload->size() <= ProcessIdentity::kSerializedBytes) {
    return absl::InvalidArgumentError("fabric address: no UCX worker address");
  }
  auto peer = ProcessIdentity::Parse(std::string_view(*payload).substr(0, ProcessIdentity::kSerializedBytes));
  if (!peer.ok()) return peer.status();
  const bool probe = shared_memory_only_;
  if (probe && !self_.SameHostAs(*peer)) {
    return absl::FailedPreconditionError(
        "peer is on another host (or pid namespace) but the transports are shared-memory only");
  }
  auto endpoint = std::make_unique<UcxEndpoint>(this);
  if (absl::Status s = endpoint->Init(payload->substr(ProcessIdentity::kSerializedBytes), *peer, probe); !s.ok()) {
    return s;
  }
  endpoints_.push_back(endpoint.get());
  return endpoint;
}

absl::StatusOr<PendingOp*> UcxWorker::AcquireOp(UcxEndpoint* endpoint, OpType type, uint64_t context) {
  if (free_.empty()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("more than ", pool_.size(), " outstanding operations on this worker"));
  }
  PendingOp* op = free_.back();
  free_.pop_back();
  op->worker = this;
  op->endpoint = endpoint;
  op->context = context;
  op->type = type;
  op->reported = false;
  op->in_use = true;
  op->message = false;
  ++op->sequence;
  op->old_value = nullptr;
  op->destination = nullptr;
  op->reply_bytes = 0;
  op->deadline = absl::InfiniteFuture();
  return op;
}

void UcxWorker::ReleaseOp(PendingOp* op) {
  op->in_use = false;
  // A slot keeps a bucket-sized bounce buffer; a rare large read's goes back to the heap.
  if (op->bounce.size() > kKeptBounceBytes) std::vector<std::byte>().swap(op->bounce);
  free_.push_back(op);
}

void UcxWorker::Report(PendingOp* op, absl::Status status) {
  if (op->reported) return;
  op->reported = true;
  if (status.ok() && op->old_value != nullptr) *op->old_value = op->reply;
  if (status.ok() && op->destination != nullptr) std::memcpy(op->destination, op->bounce.data(), op->length);
  ready_.push_back(Completion{op->context, op->type, std::move(status), op->reply_bytes});
}

absl::Status UcxWorker::CompleteMapped(uint64_t context, OpType type) {
  ready_.push_back(Completion{context, type, absl::OkStatus()});
  return absl::OkStatus();
}

void UcxWorker::CompleteNow(PendingOp* op, ucs_status_t status) {
  Report(op, FromUcs(status, OpTypeName(op->type)));
  ReleaseOp(op);
}

void UcxWorker::OnOpDone(void* request, ucs_status_t status, void* user_data) {
  auto* op = static_cast<PendingOp*>(user_data);
  UcxWorker* self = op->worker;
  --self->in_flight_;
  const bool first_failure = status != UCS_OK && !op->reported && op->endpoint != nullptr;
  self->Report(op, FromUcs(status, OpTypeName(op->type)));  // the op carries its own failure
  if (first_failure) op->endpoint->Fail(FromUcs(status, "operation failed"));
  self->ReleaseOp(op);
  ucp_request_free(request);
}

void UcxWorker::OnFlushDone(void* request, ucs_status_t status, void* user_data) {
  auto* batch = static_cast<FlushBatch*>(user_data);
  UcxWorker* self = batch->worker;
  self->in_flight_ -= batch->writes.size();
  UcxEndpoint* failed = status != UCS_OK && !batch->writes.empty() ? batch->writes.front()->endpoint : nullptr;
  for (PendingOp* op : batch->writes) self->Report(op, FromUcs(status, "Write"));
  if (failed != nullptr) failed->Fail(FromUcs(status, "flush failed"));
  for (PendingOp* op : batch->writes) self->ReleaseOp(op);
  delete batch;
  if (request != nullptr) ucp_request_free(request);
}

void UcxWorker::Forget(UcxEndpoint* endpoint) {
  for (PendingOp& op : pool_) {
    if (op.in_use && op.endpoint == endpoint) op.endpoint = nullptr;
  }
  endpoints_.erase(std::remove(endpoints_.begin(), endpoints_.end(), endpoint), endpoints_.end());
  due_.erase(std::remove(due_.begin(), due_.end(), endpoint), due_.end());
  replying_.erase(std::remove(replying_.begin(), replying_.end(), endpoint), replying_.end());
}

void UcxWorker::FailEndpointOps(UcxEndpoint* endpoint, const absl::Status& status) {
  for (PendingOp& op : pool_) {
    if (op.in_use && op.endpoint == endpoint) Finish(&op, status);
  }
}

void UcxWorker::Finish(PendingOp* op, const absl::Status& status) {
  Report(op, status);
  if (op->message) {
    --in_flight_;
    ReleaseOp(op);
  }
}

void UcxWorker::ExpireOverdue() {
  const absl::Time now = options_.clock->Now();
  if (now < next_expiry_scan_) return;
  // Scanning every slot is cheap next to a timeout; doing it at most every 1/8 of the timeout keeps Poll
  // fast while still failing an operation within 1.125 timeouts.
  next_expiry_scan_ = now + options_.fabric.operation_timeout / 8;
  for (PendingOp& op : pool_) {
    if (!op.in_use || op.reported || op.deadline > now) continue;
    absl::Status expired = absl::DeadlineExceededError(
        absl::StrCat(OpTypeName(op.type), " not completed within ",
                     absl::FormatDuration(options_.fabric.operation_timeout)));
    UcxEndpoint* endpoint = op.endpoint;
    Finish(&op, expired);
    if (endpoint != nullptr) endpoint->Fail(expired);
  }
}

void UcxWorker::ReapClosed() {
  for (size_t i = 0; i < closing_.size();) {
    if (ucp_request_check_status(closing_[i]) == UCS_INPROGRESS) {
      ++i;
      continue;
    }
    ucp_request_free(closing_[i]);
    closing_[i] = closing_.back();
    closing_.pop_back();
  }
}

void UcxWorker::ProbePeers() {
  const absl::Time now = options_.clock->Now();
  if (now < next_probe_) return;
  next_probe_ = now + options_.fabric.keepalive_interval;
  // Copy: Fail() may remove endpoints from the list.
  std::vector<UcxEndpoint*> endpoints = endpoints_;
  for (UcxEndpoint* ep : endpoints) {
    if (ep->probed() && ep->health().ok() && !ProcessIdentity::IsAlive(ep->peer())) {
      ep->Fail(absl::UnavailableError(absl::StrCat("peer process ", ep->peer().pid, " has exited")));
    }
  }
}

size_t UcxWorker::Poll(absl::Span<Completion> out) {
  if (!due_.empty() || !replying_.empty()) SendDue();
  ucp_worker_progress(worker_);
  if (!closing_.empty()) ReapClosed();
  if (in_flight_ > 0) ExpireOverdue();
  if (shared_memory_only_ && !endpoints_.empty()) ProbePeers();
  size_t n = std::min(out.size(), ready_.size() - ready_head_);
  for (size_t i = 0; i < n; ++i) out[i] = std::move(ready_[ready_head_ + i]);
  ready_head_ += n;
  if (ready_head_ == ready_.size()) {
    ready_.clear();
    ready_head_ = 0;
  }
  return n;
}

void UcxWorker::Wait(absl::Duration timeout) {
  Clock* clock = options_.clock;
  const absl::Time start = clock->Now();
  const absl::Time deadline = start + timeout;
  const absl::Time spin_until = start + std::min(timeout, options_.fabric.spin_time);
  if (!due_.empty() || !replying_.empty()) SendDue();
  // Spin: cheap when completions or requests arrive within microseconds, as on a busy node. Requests
  // served end the wait too: their replies are not held over a sleep (the caller's next Poll sends them).
  // Without spin_time there is no spin: the caller's Poll just made progress (over tcp each progress is
  // an epoll_wait), and ucp_worker_arm below says BUSY if anything arrived since.
  if (ready_.size() > ready_head_ || !replying_.empty()) return;
  while (clock->Now() < spin_until) {
    if (ucp_worker_progress(worker_) > 0 && (ready_.size() > ready_head_ || !replying_.empty())) return;
  }
  // Sleep on the event fd. ucp_worker_arm fails with BUSY when events are pending: progress instead.
  ucs_status_t armed = ucp_worker_arm(worker_);
  if (armed == UCS_ERR_BUSY) {
    ucp_worker_progress(worker_);
    return;
  }
  absl::Duration remaining = deadline - clock->Now();
  if (in_flight_ > 0) remaining = std::min(remaining, options_.fabric.operation_timeout / 8);
  if (remaining <= absl::ZeroDuration() || ready_.size() > ready_head_) return;
  pollfd fd{event_fd_, POLLIN, 0};
  timespec ts = absl::ToTimespec(remaining);
  ppoll(&fd, 1, &ts, nullptr);
  ucp_worker_progress(worker_);
}

void UcxWorker::Signal() { ucp_worker_signal(worker_); }

}  // namespace fathom::fabric::ucx_internal
