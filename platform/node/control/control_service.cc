#include "platform/node/control/control_service.h"

#include <utility>

#include "platform/node/control/cluster_token.h"
#include "platform/node/control/grpc_status.h"
#include "platform/node/control/table_validation.h"

namespace fathom::control {

ControlService::ControlService(std::string cluster_token, NodeInfoExpectations expectations,
                               ControlHandler* handler)
    : cluster_token_(std::move(cluster_token)), expectations_(std::move(expectations)), handler_(handler) {}

grpc::Status ControlService::Admit(const grpc::ServerContext& context) {
  absl::Status admitted = CheckPresentedToken(context.client_metadata(), cluster_token_);
  if (admitted.ok()) return grpc::Status::OK;
  rejected_token_.fetch_add(1, std::memory_order_relaxed);
  return ToGrpcStatus(admitted);
}

grpc::Status ControlService::RejectInvalid(const absl::Status& problem) {
  rejected_invalid_.fetch_add(1, std::memory_order_relaxed);
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, std::string(problem.message()));
}

grpc::Status ControlService::Join(grpc::ServerContext* context, const JoinRequest* request,
                                  JoinResponse* response) {
  if (grpc::Status admitted = Admit(*context); !admitted.ok()) return admitted;
  if (!request->has_caller()) return RejectInvalid(absl::InvalidArgumentError("caller: missing"));
  if (absl::Status valid = ValidateNodeInfo(request->caller(), expectations_, "caller"); !valid.ok()) {
    return RejectInvalid(valid);
  }
  handled_.fetch_add(1, std::memory_order_relaxed);
  absl::StatusOr<NodeInfo> callee = handler_->OnJoin(*request);
  if (!callee.ok()) return ToGrpcStatus(callee.status());
  *response->mutable_callee() = *std::move(callee);
  return grpc::Status::OK;
}

grpc::Status ControlService::Stats(grpc::ServerContext* context, const StatsRequest* request,
                                   StatsResponse* response) {
  if (grpc::Status admitted = Admit(*context); !admitted.ok()) return admitted;
  handled_.fetch_add(1, std::memory_order_relaxed);
  *response = handler_->OnStats();
  if (request->replica_digests()) {
    absl::StatusOr<std::vector<ReplicaDigest>> digests = handler_->OnReplicaDigests();
    if (!digests.ok()) return ToGrpcStatus(digests.status());
    for (ReplicaDigest& d : *digests) *response->add_replicas() = std::move(d);
  }
  // The "control." names belong to this server; they overwrite whatever the handler put there.
  const ControlServerCounters mine = counters();
  auto& counters = *response->mutable_counters();
  counters["control.calls_handled"] = mine.handled;
  counters["control.calls_rejected_token"] = mine.rejected_token;
  counters["control.calls_rejected_invalid"] = mine.rejected_invalid;
  return grpc::Status::OK;
}

grpc::Status ControlService::Shutdown(grpc::ServerContext* context, const ShutdownRequest* request,
                                      ShutdownResponse* response) {
  if (grpc::Status admitted = Admit(*context); !admitted.ok()) return admitted;
  if (absl::Status valid = ValidateShutdownRequest(*request, expectations_.limits); !valid.ok()) {
    return RejectInvalid(valid);
  }
  handled_.fetch_add(1, std::memory_order_relaxed);
  handler_->OnShutdown(request->reason());
  return grpc::Status::OK;
}

namespace {

absl::Status ValidateThread(uint32_t thread) {
  if (thread >= 256) return absl::InvalidArgumentError(absl::StrCat("thread ", thread, " is not below 256"));
  return absl::OkStatus();
}

absl::Status ValidateRef(const ObjectRefMessage& ref) {
  if ((ref.address() >> 32) == 0) return absl::InvalidArgumentError("ref.address: null region");
  if (ref.capacity() < 64 || ref.capacity() > (1u << 20) || ref.capacity() % 64 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("ref.capacity ", ref.capacity(), " is not a slot size"));
  }
  return absl::OkStatus();
}

}  // namespace

// The admin calls share one shape: token, validation, handler.
template <typename Request, typename Response, typename Handler>
grpc::Status ControlService::Serve(grpc::ServerContext* context, const Request& request, Response* response,
                                   const absl::Status& valid, Handler&& handler) {
  if (grpc::Status admitted = Admit(*context); !admitted.ok()) return admitted;
  if (!valid.ok()) return RejectInvalid(valid);
  handled_.fetch_add(1, std::memory_order_relaxed);
  absl::StatusOr<Response> result = handler(request);
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

grpc::Status ControlService::AllocateObject(grpc::ServerContext* context, const AllocateObjectRequest* request,
                                            AllocateObjectResponse* response) {
  absl::Status valid = ValidateThread(request->thread());
  if (valid.ok() && request->payload().size() > expectations_.limits.max_object_payload_bytes) {
    valid = absl::InvalidArgumentError(absl::StrCat("payload of ", request->payload().size(), " bytes"));
  }
  return Serve(context, *request, response, valid,
               [this](const AllocateObjectRequest& r) { return handler_->OnAllocateObject(r); });
}

grpc::Status ControlService::ReadObject(grpc::ServerContext* context, const ReadObjectRequest* request,
                                        ReadObjectResponse* response) {
  absl::Status valid = ValidateThread(request->thread());
  if (valid.ok()) valid = ValidateRef(request->ref());
  return Serve(context, *request, response, valid,
               [this](const ReadObjectRequest& r) { return handler_->OnReadObject(r); });
}

grpc::Status ControlService::PingPeer(grpc::ServerContext* context, const PingPeerRequest* request,
                                      PingPeerResponse* response) {
  absl::Status valid = ValidateThread(request->thread());
  if (valid.ok() && request->peer_node_id() == 0) valid = absl::InvalidArgumentError("peer_node_id: 0");
  if (valid.ok() && (request->count() > expectations_.limits.max_ping_count ||
                     request->payload_bytes() > expectations_.limits.max_object_payload_bytes)) {
    valid = absl::InvalidArgumentError("ping count or payload too large");
  }
  return Serve(context, *request, response, valid,
               [this](const PingPeerRequest& r) { return handler_->OnPingPeer(r); });
}

grpc::Status ControlService::CreateTable(grpc::ServerContext* context, const CreateTableRequest* request,
                                         CreateTableResponse* response) {
  return Serve(context, *request, response, ValidateCreateTableRequest(*request),
               [this](const CreateTableRequest& r) { return handler_->OnCreateTable(r); });
}

grpc::Status ControlService::DropTable(grpc::ServerContext* context, const DropTableRequest* request,
                                       DropTableResponse* response) {
  return Serve(context, *request, response, ValidateTableName(request->name()),
               [this](const DropTableRequest& r) { return handler_->OnDropTable(r); });
}

grpc::Status ControlService::ListTables(grpc::ServerContext* context, const ListTablesRequest* request,
                                        ListTablesResponse* response) {
  return Serve(context, *request, response, absl::OkStatus(),
               [this](const ListTablesRequest& r) { return handler_->OnListTables(r); });
}

grpc::Status ControlService::ResizeTable(grpc::ServerContext* context, const ResizeTableRequest* request,
                                         ResizeTableResponse* response) {
  return Serve(context, *request, response, ValidateResizeTableRequest(*request),
               [this](const ResizeTableRequest& r) { return handler_->OnResizeTable(r); });
}

ControlServerCounters ControlService::counters() const {
  return {handled_.load(std::memory_order_relaxed), rejected_token_.load(std::memory_order_relaxed),
          rejected_invalid_.load(std::memory_order_relaxed)};
}

}  // namespace fathom::control
