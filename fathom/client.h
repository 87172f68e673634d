// Fathom's public C++ API: connect to a cluster (or start one in this process), create and open tables,
// read and write keys, and run transactions across keys and tables. This header and the ones it includes
// (options.h, table.h, transaction.h) are all an application needs; no gRPC, UCX, ZooKeeper or RocksDB
// header is behind them. docs/api.md has a complete program.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<fathom::Client> client,
//                    fathom::Client::Connect({.zookeeper = "10.0.0.5:2181", .cluster = "prod",
//                                             .token_file = "/etc/fathom/token"}));
//   ASSIGN_OR_RETURN(fathom::Table users, client->OpenTable("users"));   // or CreateTable(name, options)
//   RETURN_IF_ERROR(users.Put("alice", "42"));
//   absl::StatusOr<std::string> v = users.Get("alice");
//   RETURN_IF_ERROR(client->Transact([&](fathom::Transaction& tx) -> absl::Status { ... }));
//
// Tests use the same calls on a cluster in their own process: fathom::Client::StartEmbedded({.nodes = 3}).
// A Client is safe to use from several threads; its Tables must not outlive it.
#ifndef FATHOM_FATHOM_CLIENT_H_
#define FATHOM_FATHOM_CLIENT_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fathom/options.h"
#include "fathom/table.h"
#include "fathom/transaction.h"

namespace fathom {

class Client {
 public:
  // Joins a running cluster. InvalidArgument for missing options (no ZooKeeper address, no token);
  // Unavailable when ZooKeeper or the cluster cannot be reached; DeadlineExceeded when the members were not
  // all connected within join_timeout.
  static absl::StatusOr<std::unique_ptr<Client>> Connect(const ClientOptions& options);
  // Starts a cluster in this process (stopped when the Client is destroyed).
  static absl::StatusOr<std::unique_ptr<Client>> StartEmbedded(const EmbeddedOptions& options = {});
  ~Client();  // leaves the cluster (or stops the embedded one)

  // AlreadyExists if the name is taken.
  absl::StatusOr<Table> CreateTable(std::string_view name, const TableOptions& options = {});
  // NotFound for an unknown name.
  absl::StatusOr<Table> OpenTable(std::string_view name);
  // Opens the table, creating it with `options` if there is none.
  absl::StatusOr<Table> OpenOrCreateTable(std::string_view name, const TableOptions& options = {});
  // No operation may be running on the table anywhere. NotFound for an unknown name.
  absl::Status DropTable(std::string_view name);

  // Runs `body` in a transaction and commits it; on a conflict, runs it again (with backoff) a bounded
  // number of times, then returns Aborted. An error returned by `body` aborts and is returned. Through a
  // failure (Unavailable, DeadlineExceeded: a member died, a region moves to its backup) it is run again
  // with backoff for ClientOptions::retry_deadline, but only while the failed commit certainly took no
  // effect: an error for which MayHaveCommitted() is true is returned at once, since only the caller
  // knows whether running `body` twice is harmless.
  absl::Status Transact(absl::FunctionRef<absl::Status(Transaction&)> body);

  struct Impl;  // internal (fathom/internal.h)

 private:
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// True for an error of Transact (or of a Table's Put or Delete, after its own retries) whose commit may
// nonetheless have taken effect: every replica needed may hold it but none acknowledged in time, or this
// client's lease lapsed before it did (the cluster's recovery then decides). Any other error means the
// transaction certainly took no effect. Read the keys again to find out.
bool MayHaveCommitted(const absl::Status& status);

}  // namespace fathom

#endif  // FATHOM_FATHOM_CLIENT_H_
