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
// first, then by id; the next one is tried only when a member could not be reached (Unavailable), so a
// create (or resize) is never sent twice after it may have run. Replies are checked (names, kinds) before use.
#ifndef FATHOM_SERVER_TABLE_CLIENT_H_
#define FATHOM_SERVER_TABLE_CLIENT_H_

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
  absl::Duration timeout = absl::Seconds(60);  // a create writes every bucket: give it time
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
