// The fathom backend against a running cluster: the driver connects as any application does, through
// fathom::Client (fathom/client.h): a client-only member (coordinator/configuration.proto,
// MemberInfo.client_only), a Node of its own over UCX, with no data, never a backup, never the
// configuration manager, connected to every member, holding a lease like any member, coordinating its own
// transactions and reading one-sided. It opens the table by name (Client::OpenTable), creating it through
// a data member when it does not exist (Client::OpenOrCreateTable), and leaves the configuration when it
// is done (Leave, or the destructor). Beyond the public API it runs its clients on the client node's own
// threads (AsyncLanes), so it reaches the member underneath through fathom/internal.h.
//
//   ASSIGN_OR_RETURN(auto remote, RemoteFathom::Join({.zk = "127.0.0.1:2181", .cluster = "prod",
//                                                     .token = token, .records = 100000}));
//   RunPhaseAsync(*workload, *remote, options);      // clients on the driver node's threads
//   RETURN_IF_ERROR(remote->Leave());
#ifndef FATHOM_BENCH_YCSB_FATHOM_REMOTE_H_
#define FATHOM_BENCH_YCSB_FATHOM_REMOTE_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/ycsb/async_backend.h"
#include "bench/ycsb/backend.h"
#include "bench/ycsb/server_memory.h"
#include "bench/ycsb/fathom_backend.h"
#include "fathom/client.h"
#include "kv/kv.h"
#include "server/client_member.h"
#include "txn/txn.h"

namespace fathom::ycsb {

struct RemoteFathomOptions {
  server::ClientMemberOptions member;  // the cluster to join (its --zk, --cluster, token, fabric, ...)
  std::string table = "usertable";
  uint64_t records = 0;  // sizes the table if the driver creates it (TableShapeFor)...
  uint64_t record_bytes = 1200;  // ...with the largest encoded record
  // False (a run-only phase): the table must exist; NotFound says to load it first.
  bool create_table = true;
  uint64_t seed = 1;     // retry jitter of the lanes
  absl::Duration retry_deadline = absl::Seconds(10);  // FathomAsyncBackend's
};

class RemoteFathom final : public AsyncLanes {
 public:
  // Unavailable when ZooKeeper or the cluster cannot be reached (no configuration, no data member);
  // DeadlineExceeded when the members were not all connected within join_timeout.
  static absl::StatusOr<std::unique_ptr<RemoteFathom>> Join(const RemoteFathomOptions& options);
  ~RemoteFathom() override;  // Leave()

  // Leaves the configuration and stops the node. Idempotent.
  absl::Status Leave();

  // A blocking backend for an application thread.
  std::unique_ptr<Backend> NewBackend();
  uint32_t node_id() const { return id_; }
  // The memory the data members' objects take, every copy counted (server_memory.h).
  absl::StatusOr<ServerMemory> ObjectMemory();
  // The client node's transaction layer and the cluster's catalog, for callers that use the kv API
  // directly (tests/node/fathomd_resize_test opens its own handles). REQUIRES: joined and not left.
  txn::TransactionService& txns() { return member_->transactions(); }
  kv::Catalog& catalog() { return member_->catalog(); }

  // AsyncLanes: lane l is this node's thread l.
  int lanes() const override { return static_cast<int>(lanes_.size()); }
  absl::Status Post(int lane, std::function<void()> task) override;
  AsyncBackend& backend(int lane) override { return *lanes_.at(static_cast<size_t>(lane)); }
  std::string Describe() const override;
  std::string StallReport() override;

 private:
  RemoteFathom() = default;
  absl::Status Start();
  RemoteFathomOptions options_;
  std::unique_ptr<fathom::Client> client_;
  server::ClientMember* member_ = nullptr;  // underneath client_
  std::vector<kv::Table> tables_;  // one handle, kept in a vector so Leave can drop it
  std::vector<std::unique_ptr<AsyncBackend>> lanes_;
  std::vector<uint32_t> data_members_;  // when it joined
  uint32_t id_ = 0;
  int threads_ = 0;  // as the members'
  bool left_ = false;
};

}  // namespace fathom::ycsb

#endif  // FATHOM_BENCH_YCSB_FATHOM_REMOTE_H_
