// The gRPC Control service behind ControlServer: admits a call (cluster token), validates its request,
// and only then hands it to the ControlHandler. Internal to this package; use ControlServer.
//
// Order matters: the token is checked first, so a caller without it learns nothing, not even whether
// its request would have been valid. Rejected calls never reach the handler and are counted.
#ifndef FATHOM_PLATFORM_NODE_CONTROL_CONTROL_SERVICE_H_
#define FATHOM_PLATFORM_NODE_CONTROL_CONTROL_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "platform/node/control/control.grpc.pb.h"
#include "platform/node/control/control_handler.h"
#include "platform/node/control/node_info_validation.h"

namespace fathom::control {

// Calls the server has seen since it started, by outcome.
struct ControlServerCounters {
  uint64_t handled = 0;           // passed token and validation, given to the handler
  uint64_t rejected_token = 0;    // PERMISSION_DENIED: token missing, repeated or wrong
  uint64_t rejected_invalid = 0;  // INVALID_ARGUMENT: request broke a validation rule
};

class ControlService final : public Control::Service {
 public:
  // `handler` must outlive the service.
  ControlService(std::string cluster_token, NodeInfoExpectations expectations, ControlHandler* handler);

  grpc::Status Join(grpc::ServerContext* context, const JoinRequest* request, JoinResponse* response) override;
  grpc::Status Stats(grpc::ServerContext* context, const StatsRequest* request, StatsResponse* response) override;
  grpc::Status AllocateObject(grpc::ServerContext* context, const AllocateObjectRequest* request,
                              AllocateObjectResponse* response) override;
  grpc::Status ReadObject(grpc::ServerContext* context, const ReadObjectRequest* request,
                          ReadObjectResponse* response) override;
  grpc::Status PingPeer(grpc::ServerContext* context, const PingPeerRequest* request,
                        PingPeerResponse* response) override;
  grpc::Status Shutdown(grpc::ServerContext* context, const ShutdownRequest* request,
                        ShutdownResponse* response) override;
  grpc::Status CreateTable(grpc::ServerContext* context, const CreateTableRequest* request,
                           CreateTableResponse* response) override;
  grpc::Status DropTable(grpc::ServerContext* context, const DropTableRequest* request,
                         DropTableResponse* response) override;
  grpc::Status ListTables(grpc::ServerContext* context, const ListTablesRequest* request,
                          ListTablesResponse* response) override;
  grpc::Status ResizeTable(grpc::ServerContext* context, const ResizeTableRequest* request,
                           ResizeTableResponse* response) override;

  ControlServerCounters counters() const;

 private:
  // OK if the call carries the cluster token; otherwise counts it and returns PERMISSION_DENIED.
  grpc::Status Admit(const grpc::ServerContext& context);
  template <typename Request, typename Response, typename Handler>
  grpc::Status Serve(grpc::ServerContext* context, const Request& request, Response* response,
                     const absl::Status& valid, Handler&& handler);
  // Counts an invalid request and turns `problem` into INVALID_ARGUMENT.
  grpc::Status RejectInvalid(const absl::Status& problem);

  const std::string cluster_token_;
  const NodeInfoExpectations expectations_;
  ControlHandler* const handler_;
  std::atomic<uint64_t> handled_{0};
  std::atomic<uint64_t> rejected_token_{0};
  std::atomic<uint64_t> rejected_invalid_{0};
};

}  // namespace fathom::control

#endif  // FATHOM_PLATFORM_NODE_CONTROL_CONTROL_SERVICE_H_
