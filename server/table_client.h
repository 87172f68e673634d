// Table calls through a member: create, drop, list and resize the cluster's kv tables through a member's control
// service (its CreateTable, DropTable, ListTables and ResizeTable calls; docs/formats/control.md). The member does
// the work with the kv API and the cluster's catalog, so the table is the one every node opens by name.
//
//   TableCallOptions options{.token = token, .timeout = absl::Seconds(60)};
//   ASSIGN_OR_RETURN(control::TableSummary t, CreateTable(config, request, options));
//   RETURN_IF_ERROR(DropTable(config, "users", options));
//   ASSIGN_OR_RETURN(std::vector<control::TableSummary> all, ListTables(config, options));
//   ASSIGN_OR_RETURN(control::TableSummary grown, ResizeTable(config, resize_request, options));
//
// Which member: the data members (client-only ones hold no catalog work), the configuration manager
// first, then by id; the next one is tried when a member answers Unavailable. Unavailable does not prove
// the call did not run (a connection can reset after the member got it), so the calls are safe to repeat:
// a create that then finds its table AlreadyExists with the options asked for returns it; a drop that
// then finds NotFound is done; a resize names the epoch it starts from (ResizeTableRequest.from_epoch,
// filled from a listing when 0), so a repeat cannot resize twice, and one that finds the table past that
// epoch returns it. Replies are checked (names, kinds) before use.
#ifndef FATHOM_SERVER_TABLE_CLIENT_H_
#define FATHOM_SERVER_TABLE_CLIENT_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/configuration.h"
#include "platform/node/control/control.pb.h"

namespace fathom::server {

struct TableCallOptions {
  std::string token;
  std::string tls_ca_path;  // the members' control services use TLS: the CA their certificates chain to
  absl::Duration timeout = absl::Seconds(60);  // a create writes every bucket: give it time
  // Tests only: when it returns true for an attempt (0, 1, ...), that attempt's answer is lost after the
  // member ran the call, as if the connection reset (the caller sees Unavailable and asks the next member).
  std::function<bool(int attempt)> lose_answer;
};

// Parses "hopscotch" / "cuckoo"; InvalidArgument otherwise.
absl::StatusOr<control::TableIndexKind> ParseTableKind(std::string_view text);
// "hopscotch", "cuckoo", "unspecified".
std::string TableKindName(control::TableIndexKind kind);

absl::StatusOr<control::TableSummary> CreateTable(const coordinator::Configuration& config,
                                                  const control::CreateTableRequest& request,
                                                  const TableCallOptions& options);
absl::Status DropTable(const coordinator::Configuration& config, const std::string& name,
                       const TableCallOptions& options);
absl::StatusOr<std::vector<control::TableSummary>> ListTables(const coordinator::Configuration& config,
                                                              const TableCallOptions& options);
// Rebuilds the named table with request.buckets() buckets (0: twice the current count) while it stays in
// use; returns the table as it is afterwards. NotFound for an unknown table, InvalidArgument for a bad count,
// ResourceExhausted when the entries do not fit that many buckets (the table is left as it was).
absl::StatusOr<control::TableSummary> ResizeTable(const coordinator::Configuration& config,
                                                  const control::ResizeTableRequest& request,
                                                  const TableCallOptions& options);

}  // namespace fathom::server

#endif  // FATHOM_SERVER_TABLE_CLIENT_H_
