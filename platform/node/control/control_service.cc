#include "platform/node/control/control_service.h"

#include <utility>

#include "platform/node/control/cluster_token.h"
#include "platform/node/control/grpc_status.h"

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

ControlServerCounters ControlService::counters() const {
  return {handled_.load(std::memory_order_relaxed), rejected_token_.load(std::memory_order_relaxed),
          rejected_invalid_.load(std::memory_order_relaxed)};
}

}  // namespace fathom::control
