// UcxEndpoint: posting one-sided operations, flushing writes to remote completion, failure handling.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "platform/fabric/ucx/ucx_internal.h"
#include "platform/fabric/ucx/ucx_status.h"

namespace fathom::fabric::ucx_internal {

absl::Status UcxEndpoint::Init(const std::string& ucx_address, const ProcessIdentity& peer, bool probe_peer) {
  peer_ = peer;
  probe_peer_ = probe_peer;
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.address = reinterpret_cast<const ucp_address_t*>(ucx_address.data());
  // Peer mode: UCX detects a dead peer (keepalive) and fails the requests pending to it. Shared-memory
  // transports do not support it; for them the worker probes the peer process (process_identity.h).
  params.err_mode = probe_peer ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
  if (!probe_peer) {
    params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.err_handler.cb = &UcxEndpoint::OnPeerError;
    params.err_handler.arg = this;
  }
  if (ucs_status_t s = ucp_ep_create(worker_->ucp(), &params, &ep_); s != UCS_OK) {
    ep_ = nullptr;
    return FromUcs(s, "ucp_ep_create");
  }
  return absl::OkStatus();
}

void UcxEndpoint::Detach() {
  for (Imported& r : regions_) {
    if (r.rkey != nullptr) ucp_rkey_destroy(r.rkey);
  }
  regions_.clear();
  worker_ = nullptr;
}

UcxEndpoint::~UcxEndpoint() {
  if (worker_ == nullptr) return;  // detached: its worker is gone and took everything with it
  Shutdown();
  // Close gracefully (a failed endpoint was force-closed already); a peer that does not answer gets the
  // forced close. The remote keys go right after, before UCX destroys the endpoint.
  CloseUcx(/*force=*/false);
  for (Imported& r : regions_) {
    if (r.rkey != nullptr) ucp_rkey_destroy(r.rkey);
  }
  worker_->Forget(this);
}

void UcxEndpoint::Shutdown() {
  if (!health_.ok()) return;
  SendGatheredReplies();  // what the peer asked was done: it learns so
  health_ = absl::CancelledError("endpoint closed");
  worker_->FailEndpointOps(this, health_);
  batch_.Clear();  // its ops were just failed
  for (PendingOp* op : unflushed_writes_) worker_->ReleaseOp(op);
  unflushed_writes_.clear();
  // The UCX endpoint stays open until destruction: its remote keys must be destroyed before it, and a
  // forced close of a healthy tcp endpoint left its peer sending to an id this side had dropped (a UCX
  // assertion, remote_ep_id, killed the process when the pair reconnected).
}

void UcxEndpoint::OnPeerError(void* arg, ucp_ep_h ep, ucs_status_t status) {
  static_cast<UcxEndpoint*>(arg)->Fail(FromUcs(status, "peer failed"));
}

void UcxEndpoint::Fail(absl::Status status) {
  if (health_.ok()) {
    health_ = std::move(status);
    // The operation that showed the failure already carries it; the others were merely caught up in it.
    worker_->FailEndpointOps(
        this, absl::UnavailableError(absl::StrCat("endpoint failed: ", health_.ToString())));
    // Writes never flushed have no UCX request that will complete them.
    for (PendingOp* op : unflushed_writes_) worker_->ReleaseOp(op);
    unflushed_writes_.clear();
    batch_.Clear();  // its ops were just failed
  }
  CloseUcx(/*force=*/true);  // also one Shutdown left open (nothing once closed)
}

void UcxEndpoint::CloseUcx(bool force) {
  if (ep_ == nullptr) return;
  ucp_ep_h ep = ep_;
  ep_ = nullptr;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  ucs_status_ptr_t request = ucp_ep_close_nbx(ep, &param);
  // Closing may need progress, which must not run here (this can be inside a UCX callback); the worker
  // finishes it from Poll.
  if (UCS_PTR_IS_PTR(request)) worker_->AdoptCloseRequest(request);
}

absl::StatusOr<RemoteRegion> UcxEndpoint::ImportRegion(const RegionDescriptor& descriptor) {
  if (!health_.ok()) return health_;
  if (descriptor.remote_key.empty()) return absl::InvalidArgumentError("ImportRegion: empty remote key");
  if (regions_.size() >= UINT32_MAX - 1) return absl::ResourceExhaustedError("too many imported regions");
  Imported imported;
  imported.base = descriptor.base;
  imported.length = descriptor.length;
  if (ucs_status_t s = ucp_ep_rkey_unpack(ep_, descriptor.remote_key.data(), &imported.rkey); s != UCS_OK) {
    return FromUcs(s, "ucp_ep_rkey_unpack (bad remote key?)");
  }
  void* mapped = nullptr;
  if (ucp_rkey_ptr(imported.rkey, imported.base, &mapped) == UCS_OK) {
    imported.mapped = static_cast<std::byte*>(mapped);
  }
  regions_.push_back(imported);
  return RemoteRegion{static_cast<uint32_t>(regions_.size() - 1), descriptor.length};
}

absl::StatusOr<uint64_t> UcxEndpoint::Check(RemoteRegion region, uint64_t offset, uint64_t length,
                                            bool atomic) const {
  if (!health_.ok()) return health_;
  if (region.index >= regions_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown remote region ", region.index));
  }
  const Imported& r = regions_[region.index];
  if (length == 0) return absl::InvalidArgumentError("zero-length operation");
  if (offset > r.length || length > r.length - offset) {
    return absl::OutOfRangeError(
        absl::StrCat("bytes [", offset, ", +", length, ") outside remote region of ", r.length, " bytes"));
  }
  if (atomic && offset % 8 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("atomic at offset ", offset, " is not 8-byte aligned"));
  }
  return r.base + offset;
}

bool UcxEndpoint::ReadsServedByPeer(const RemoteRegion& region) const {
  // A mapped region is read by a copy; otherwise, with messages, by the peer's progress (PostMessage).
  return region.index < regions_.size() && regions_[region.index].mapped == nullptr && worker_ != nullptr &&
         worker_->messages();
}

namespace {
ucp_request_param_t CallbackParam(PendingOp* op) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = &UcxWorker::OnOpDone;
  param.user_data = op;
  return param;
}
}  // namespace

absl::Status UcxEndpoint::CopyMapped(OpType type, void* to, const void* from, size_t length, uint64_t context) {
  if (worker_->outstanding() >= worker_->options().fabric.max_outstanding) {
    return absl::ResourceExhaustedError("too many outstanding operations on this worker");
  }
  std::memcpy(to, from, length);
  return worker_->CompleteMapped(context, type);
}

absl::Status UcxEndpoint::PostRead(RemoteRegion region, uint64_t offset, void* destination, size_t length,
                                   uint64_t context) {
  auto remote = Check(region, offset, length, /*atomic=*/false);
  if (!remote.ok()) return remote.status();
  if (std::byte* mapped = regions_[region.index].mapped; mapped != nullptr) {
    return CopyMapped(OpType::kRead, destination, mapped + offset, length, context);
  }
  if (worker_->messages() && length <= kMaxMessageOpBytes) {
    return PostMessage(OpType::kRead, *remote, destination, nullptr, length, context);
  }
  auto op = worker_->AcquireOp(this, OpType::kRead, context);
  if (!op.ok()) return op.status();
  PendingOp* p = *op;
  if (p->bounce.size() < length) p->bounce.resize(length);
  p->destination = destination;
  p->length = length;
  ucp_request_param_t param = CallbackParam(p);
  ucs_status_ptr_t request =
      ucp_get_nbx(ep_, p->bounce.data(), length, *remote, regions_[region.index].rkey, &param);
  if (!UCS_PTR_IS_PTR(request)) {
    worker_->CompleteNow(*op, UCS_PTR_STATUS(request));
    return absl::OkStatus();
  }
  (*op)->deadline = worker_->options().clock->Now() + worker_->options().fabric.operation_timeout;
  worker_->TrackInFlight();
  return absl::OkStatus();
}

absl::Status UcxEndpoint::PostWrite(RemoteRegion region, uint64_t offset, const void* source, size_t length,
                                    uint64_t context) {
  auto remote = Check(region, offset, length, /*atomic=*/false);
  if (!remote.ok()) return remote.status();
  if (std::byte* mapped = regions_[region.index].mapped; mapped != nullptr) {
    doorbell_due_ = true;
    return CopyMapped(OpType::kWrite, mapped + offset, source, length, context);  // in the peer's memory once copied
  }
  if (worker_->messages() && length <= kMaxMessageOpBytes) {
    return PostMessage(OpType::kWrite, *remote, nullptr, source, length, context);
  }
  auto op = worker_->AcquireOp(this, OpType::kWrite, context);
  if (!op.ok()) return op.status();
  // The put's own completion is local only; remote completion comes from the flush in Flush().
  ucp_request_param_t param{};
  ucs_status_ptr_t request = ucp_put_nbx(ep_, source, length, *remote, regions_[region.index].rkey, &param);
  if (UCS_PTR_IS_ERR(request)) {
    worker_->CompleteNow(*op, UCS_PTR_STATUS(request));
    return absl::OkStatus();
  }
  if (request != nullptr) ucp_request_free(request);  // UCX releases it when done; errors surface in the flush
  unflushed_writes_.push_back(*op);
  return absl::OkStatus();
}

absl::Status UcxEndpoint::PostAtomic(ucp_atomic_op_t opcode, OpType type, RemoteRegion region, uint64_t offset,
                                     uint64_t operand, uint64_t reply_in, uint64_t* old_value,
                                     uint64_t context) {
  if (old_value == nullptr) return absl::InvalidArgumentError("atomic: null old_value");
  auto remote = Check(region, offset, 8, /*atomic=*/true);
  if (!remote.ok()) return remote.status();
  auto op = worker_->AcquireOp(this, type, context);
  if (!op.ok()) return op.status();
  PendingOp* p = *op;
  p->operand = operand;
  p->reply = reply_in;
  p->old_value = old_value;
  ucp_request_param_t param = CallbackParam(p);
  param.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
  param.datatype = ucp_dt_make_contig(8);
  param.reply_buffer = &p->reply;
  ucs_status_ptr_t request =
      ucp_atomic_op_nbx(ep_, opcode, &p->operand, 1, *remote, regions_[region.index].rkey, &param);
  if (!UCS_PTR_IS_PTR(request)) {
    worker_->CompleteNow(p, UCS_PTR_STATUS(request));
    return absl::OkStatus();
  }
  p->deadline = worker_->options().clock->Now() + worker_->options().fabric.operation_timeout;
  worker_->TrackInFlight();
  return absl::OkStatus();
}

absl::Status UcxEndpoint::PostCompareSwap(RemoteRegion region, uint64_t offset, uint64_t expected,
                                          uint64_t desired, uint64_t* old_value, uint64_t context) {
  // UCX CSWAP: compares with `buffer`, swaps in the initial reply buffer, returns the old value there.
  return PostAtomic(UCP_ATOMIC_OP_CSWAP, OpType::kCompareSwap, region, offset, expected, desired, old_value,
                    context);
}

absl::Status UcxEndpoint::PostFetchAdd(RemoteRegion region, uint64_t offset, uint64_t add, uint64_t* old_value,
                                       uint64_t context) {
  return PostAtomic(UCP_ATOMIC_OP_ADD, OpType::kFetchAdd, region, offset, add, 0, old_value, context);
}

absl::Status UcxEndpoint::FlushWrites(bool wake) {
  if (!health_.ok()) return health_;
  if (doorbell_due_) {
    if (wake) {
      RingDoorbell();
    } else {
      doorbell_due_ = false;  // the caller says nobody waits on these writes now
      doorbell_owed_ = true;  // Wake rings it if somebody does later
    }
  }
  if (batch_.count() > 0 && !batch_due_) {
    batch_due_ = true;
    worker_->MarkDue(this);
  }
  if (unflushed_writes_.empty()) return absl::OkStatus();
  auto* batch = new FlushBatch{worker_, std::move(unflushed_writes_)};
  unflushed_writes_.clear();
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = &UcxWorker::OnFlushDone;
  param.user_data = batch;
  ucs_status_ptr_t request = ucp_ep_flush_nbx(ep_, &param);
  if (!UCS_PTR_IS_PTR(request)) {
    // Completed (or failed) at once: report through the same path as the callback.
    for (size_t i = 0; i < batch->writes.size(); ++i) worker_->TrackInFlight();
    UcxWorker::OnFlushDone(nullptr, UCS_PTR_STATUS(request), batch);
    return absl::OkStatus();
  }
  const absl::Time deadline = worker_->options().clock->Now() + worker_->options().fabric.operation_timeout;
  for (PendingOp* op : batch->writes) {
    op->deadline = deadline;
    worker_->TrackInFlight();
  }
  return absl::OkStatus();
}

void UcxEndpoint::Wake() {
  if (doorbell_owed_ && health_.ok()) RingDoorbell();
}

void UcxEndpoint::RingDoorbell() {
  doorbell_due_ = false;
  doorbell_owed_ = false;
  // After the copies, which x86 makes visible in order: the woken peer finds the bytes. Nothing to wait
  // for: a lost doorbell costs the peer only its sleep, and a broken connection shows in other operations.
  ucp_request_param_t param{};
  ucs_status_ptr_t request = ucp_am_send_nbx(ep_, kDoorbellMessageId, nullptr, 0, nullptr, 0, &param);
  if (UCS_PTR_IS_PTR(request)) ucp_request_free(request);
}

}  // namespace fathom::fabric::ucx_internal
