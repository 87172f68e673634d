// Table calls through a member: create, drop, list and resize the cluster's kv tables through a member's control
#include "server/table_client.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "platform/node/control/control_client.h"
#include "platform/node/control/table_validation.h"

namespace fathom::server {
namespace {

// Data members' control addresses, the manager first.
std::vector<const coordinator::MemberInfo*> Candidates(const coordinator::Configuration& config) {
  std::vector<const coordinator::MemberInfo*> members;
  for (const coordinator::MemberInfo& m : config.members()) {
    if (!m.client_only()) members.push_back(&m);
  }
  std::stable_sort(members.begin(), members.end(), [&](const auto* a, const auto* b) {
    return (a->node_id() == config.manager_id()) > (b->node_id() == config.manager_id());
  });
  return members;
}

// Runs `call` on the first member that can be reached.
template <typename T>
absl::StatusOr<T> OnSomeMember(const coordinator::Configuration& config, const TableCallOptions& options,
                               const std::function<absl::StatusOr<T>(control::ControlClient&)>& call) {
  const std::vector<const coordinator::MemberInfo*> members = Candidates(config);
  if (members.empty()) {
    return absl::UnavailableError(absl::StrCat("the cluster has no member that holds data (configuration epoch ",
                                               config.epoch(), ")"));
  }
  std::vector<std::string> tried;
  for (const coordinator::MemberInfo* member : members) {
    control::ControlClientOptions client_options;
    client_options.target = member->control_address();
    client_options.cluster_token = options.token;
    client_options.call_timeout = options.timeout;
    auto client = control::ControlClient::Create(client_options);
    if (!client.ok()) return client.status();
    absl::StatusOr<T> result = call(**client);
    if (!absl::IsUnavailable(result.status())) return result;
    tried.push_back(absl::StrCat("node ", member->node_id(), ": ", result.status().message()));
  }
  return absl::UnavailableError(absl::StrCat("no member answered: ", absl::StrJoin(tried, "; ")));
}

absl::Status CheckSummary(const control::TableSummary& t) {
  if (absl::Status s = control::ValidateTableName(t.name()); !s.ok()) {
    return absl::DataLossError(absl::StrCat("a member answered with a bad table: ", s.message()));
  }
  if (t.kind() != control::TABLE_INDEX_HOPSCOTCH && t.kind() != control::TABLE_INDEX_CUCKOO) {
    return absl::DataLossError(absl::StrCat("a member answered with table ", t.name(), " of unknown kind ", t.kind()));
  }
  return absl::OkStatus();
}

// A call that answers with one table (create, resize): the request checked first, the answer after.
template <typename Request, typename Response>
absl::StatusOr<control::TableSummary> TableCall(const coordinator::Configuration& config,
                                                const TableCallOptions& options, const Request& request,
                                                const absl::Status& valid,
                                                absl::StatusOr<Response> (control::ControlClient::*call)(const Request&)) {
  if (!valid.ok()) return valid;
  auto response = OnSomeMember<Response>(config, options,
                                         [&](control::ControlClient& c) { return (c.*call)(request); });
  if (!response.ok()) return response.status();
  if (absl::Status s = CheckSummary(response->table()); !s.ok()) return s;
  return response->table();
}

}  // namespace

absl::StatusOr<control::TableIndexKind> ParseTableKind(std::string_view text) {
  if (text == "hopscotch") return control::TABLE_INDEX_HOPSCOTCH;
  if (text == "cuckoo") return control::TABLE_INDEX_CUCKOO;
  return absl::InvalidArgumentError(absl::StrCat("--kind=", std::string(text), ": want hopscotch or cuckoo"));
}

std::string TableKindName(control::TableIndexKind kind) {
  switch (kind) {
    case control::TABLE_INDEX_HOPSCOTCH: return "hopscotch";
    case control::TABLE_INDEX_CUCKOO: return "cuckoo";
    default: return "unspecified";
  }
}

absl::StatusOr<control::TableSummary> CreateTable(const coordinator::Configuration& config,
                                                  const control::CreateTableRequest& request,
                                                  const TableCallOptions& options) {
  return TableCall(config, options, request, control::ValidateCreateTableRequest(request),
                   &control::ControlClient::CreateTable);
}

absl::Status DropTable(const coordinator::Configuration& config, const std::string& name,
                       const TableCallOptions& options) {
  if (absl::Status s = control::ValidateTableName(name); !s.ok()) return s;
  control::DropTableRequest request;
  request.set_name(name);
  return OnSomeMember<control::DropTableResponse>(config, options,
                                                  [&](control::ControlClient& c) { return c.DropTable(request); })
      .status();
}

absl::StatusOr<std::vector<control::TableSummary>> ListTables(const coordinator::Configuration& config,
                                                              const TableCallOptions& options) {
  auto response = OnSomeMember<control::ListTablesResponse>(config, options,
                                                            [](control::ControlClient& c) { return c.ListTables(); });
  if (!response.ok()) return response.status();
  std::vector<control::TableSummary> tables(response->tables().begin(), response->tables().end());
  for (const control::TableSummary& t : tables) {
    if (absl::Status s = CheckSummary(t); !s.ok()) return s;
  }
  return tables;
}

absl::StatusOr<control::TableSummary> ResizeTable(const coordinator::Configuration& config,
                                                  const control::ResizeTableRequest& request,
                                                  const TableCallOptions& options) {
  return TableCall(config, options, request, control::ValidateResizeTableRequest(request),
                   &control::ControlClient::ResizeTable);
}

}  // namespace fathom::server
