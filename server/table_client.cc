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

// What asking the members gave: the answer, and whether an earlier attempt may have run the call.
template <typename T>
struct Attempts {
  absl::StatusOr<T> result;
  bool maybe_ran = false;
};

// Runs `call` on the first member that answers something other than Unavailable.
template <typename T>
Attempts<T> OnSomeMember(const coordinator::Configuration& config, const TableCallOptions& options,
                         const std::function<absl::StatusOr<T>(control::ControlClient&)>& call) {
  const std::vector<const coordinator::MemberInfo*> members = Candidates(config);
  if (members.empty()) {
    return {absl::UnavailableError(absl::StrCat("the cluster has no member that holds data (configuration epoch ",
                                                config.epoch(), ")"))};
  }
  std::vector<std::string> tried;
  bool maybe_ran = false;
  for (const coordinator::MemberInfo* member : members) {
    control::ControlClientOptions client_options;
    client_options.target = member->control_address();
    client_options.cluster_token = options.token;
    client_options.tls_ca_path = options.tls_ca_path;
    client_options.call_timeout = options.timeout;
    auto client = control::ControlClient::Create(client_options);
    if (!client.ok()) return {client.status(), maybe_ran};
    absl::StatusOr<T> result = call(**client);
    if (options.lose_answer && options.lose_answer(static_cast<int>(tried.size()))) {
      result = absl::UnavailableError("the answer was lost (test)");
    }
    if (!absl::IsUnavailable(result.status())) return {std::move(result), maybe_ran};
    maybe_ran = true;
    tried.push_back(absl::StrCat("node ", member->node_id(), ": ", result.status().message()));
  }
  return {absl::UnavailableError(absl::StrCat("no member answered: ", absl::StrJoin(tried, "; "))), maybe_ran};
}

// The table named `name` as the members list it now; NotFound if none is.
absl::StatusOr<control::TableSummary> Listed(const coordinator::Configuration& config, const std::string& name,
                                             const TableCallOptions& options) {
  TableCallOptions plain = options;
  plain.lose_answer = nullptr;
  auto tables = ListTables(config, plain);
  if (!tables.ok()) return tables.status();
  for (const control::TableSummary& t : *tables) {
    if (t.name() == name) return t;
  }
  return absl::NotFoundError(absl::StrCat("no kv table named \"", name, "\""));  // as kv says it
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

// The table a create or resize answered with, checked.
absl::StatusOr<control::TableSummary> Checked(const absl::StatusOr<control::TableSummary>& table) {
  if (!table.ok()) return table.status();
  if (absl::Status s = CheckSummary(*table); !s.ok()) return s;
  return *table;
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
  if (absl::Status s = control::ValidateCreateTableRequest(request); !s.ok()) return s;
  Attempts<control::CreateTableResponse> created = OnSomeMember<control::CreateTableResponse>(
      config, options, [&](control::ControlClient& c) { return c.CreateTable(request); });
  if (created.result.ok()) return Checked(created.result->table());
  if (!absl::IsAlreadyExists(created.result.status()) || !created.maybe_ran) return created.result.status();
  // An attempt whose answer was lost may have made it: the table as asked for is this call's.
  absl::StatusOr<control::TableSummary> table = Listed(config, request.name(), options);
  const control::TableIndexKind kind =
      request.kind() == control::TABLE_INDEX_UNSPECIFIED ? control::TABLE_INDEX_HOPSCOTCH : request.kind();
  if (table.ok() && table->kind() == kind && (request.buckets() == 0 || table->buckets() == request.buckets())) {
    return Checked(*table);
  }
  return created.result.status();
}

absl::Status DropTable(const coordinator::Configuration& config, const std::string& name,
                       const TableCallOptions& options) {
  if (absl::Status s = control::ValidateTableName(name); !s.ok()) return s;
  control::DropTableRequest request;
  request.set_name(name);
  Attempts<control::DropTableResponse> dropped = OnSomeMember<control::DropTableResponse>(
      config, options, [&](control::ControlClient& c) { return c.DropTable(request); });
  // NotFound after an attempt whose answer was lost: that attempt dropped it.
  if (absl::IsNotFound(dropped.result.status()) && dropped.maybe_ran) return absl::OkStatus();
  return dropped.result.status();
}

absl::StatusOr<std::vector<control::TableSummary>> ListTables(const coordinator::Configuration& config,
                                                              const TableCallOptions& options) {
  Attempts<control::ListTablesResponse> listed = OnSomeMember<control::ListTablesResponse>(
      config, options, [](control::ControlClient& c) { return c.ListTables(); });
  if (!listed.result.ok()) return listed.result.status();
  std::vector<control::TableSummary> tables(listed.result->tables().begin(), listed.result->tables().end());
  for (const control::TableSummary& t : tables) {
    if (absl::Status s = CheckSummary(t); !s.ok()) return s;
  }
  return tables;
}

absl::StatusOr<control::TableSummary> ResizeTable(const coordinator::Configuration& config,
                                                  const control::ResizeTableRequest& request,
                                                  const TableCallOptions& options) {
  if (absl::Status s = control::ValidateResizeTableRequest(request); !s.ok()) return s;
  control::ResizeTableRequest from = request;
  if (from.from_epoch() == 0) {
    absl::StatusOr<control::TableSummary> now = Listed(config, request.name(), options);
    if (!now.ok()) return now.status();
    from.set_from_epoch(now->epoch());
  }
  Attempts<control::ResizeTableResponse> resized = OnSomeMember<control::ResizeTableResponse>(
      config, options, [&](control::ControlClient& c) { return c.ResizeTable(from); });
  if (resized.result.ok()) return Checked(resized.result->table());
  if (!absl::IsFailedPrecondition(resized.result.status()) || !resized.maybe_ran) return resized.result.status();
  // Past the epoch it started from after an attempt whose answer was lost: that attempt resized it.
  absl::StatusOr<control::TableSummary> table = Listed(config, request.name(), options);
  if (table.ok() && table->epoch() > from.from_epoch()) return Checked(*table);
  return resized.result.status();
}

}  // namespace fathom::server
