// Node: the control service's admin calls, on top of the blocking data-path helpers.
#include "absl/strings/str_cat.h"
#include "platform/base/mutex.h"
#include "platform/node/node.h"

namespace fathom::node {
namespace {

control::ObjectRefMessage ToMessage(const object::ObjectRef& ref) {
  control::ObjectRefMessage m;
  m.set_address(ref.address.raw());
  m.set_incarnation(ref.incarnation);
  m.set_capacity(ref.capacity);
  return m;
}

object::ObjectRef FromMessage(const control::ObjectRefMessage& m) {
  return object::ObjectRef{memory::GlobalAddress::FromRaw(m.address()), m.incarnation(), m.capacity()};
}

}  // namespace

absl::StatusOr<control::AllocateObjectResponse> Node::OnAllocateObject(const control::AllocateObjectRequest& request) {
  auto ref = AllocateObject(request.payload(), static_cast<int>(request.thread()));
  if (!ref.ok()) return ref.status();
  control::AllocateObjectResponse response;
  *response.mutable_ref() = ToMessage(*ref);
  return response;
}

absl::StatusOr<control::ReadObjectResponse> Node::OnReadObject(const control::ReadObjectRequest& request) {
  auto payload = ReadObject(FromMessage(request.ref()), static_cast<int>(request.thread()));
  if (!payload.ok()) return payload.status();
  control::ReadObjectResponse response;
  response.set_payload(*payload);
  return response;
}

absl::StatusOr<control::PingPeerResponse> Node::OnPingPeer(const control::PingPeerRequest& request) {
  auto stats = PingPeer(request.peer_node_id(), static_cast<int>(request.thread()), static_cast<int>(request.count()),
                        request.payload_bytes());
  if (!stats.ok()) return stats.status();
  control::PingPeerResponse response;
  response.set_ok(stats->ok);
  response.set_failed(stats->failed);
  response.set_p50_nanos(absl::ToInt64Nanoseconds(stats->p50));
  response.set_max_nanos(absl::ToInt64Nanoseconds(stats->max));
  if (!stats->first_error.ok()) response.set_first_error(stats->first_error.ToString());
  return response;
}

void Node::SetTableCalls(std::shared_ptr<control::TableCalls> tables) {
  MutexLock lock(&tables_mu_);
  table_calls_ = std::move(tables);
}

absl::StatusOr<std::shared_ptr<control::TableCalls>> Node::TableCallsOrError() {
  MutexLock lock(&tables_mu_);
  if (table_calls_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("node ", id(), " serves no table calls: kv tables need a "
                                                      "cluster on ZooKeeper (fathomd --zk)"));
  }
  return table_calls_;
}

absl::StatusOr<control::CreateTableResponse> Node::OnCreateTable(const control::CreateTableRequest& request) {
  auto tables = TableCallsOrError();
  if (!tables.ok()) return tables.status();
  return (*tables)->Create(request);
}

absl::StatusOr<control::DropTableResponse> Node::OnDropTable(const control::DropTableRequest& request) {
  auto tables = TableCallsOrError();
  if (!tables.ok()) return tables.status();
  return (*tables)->Drop(request);
}

absl::StatusOr<control::ListTablesResponse> Node::OnListTables(const control::ListTablesRequest&) {
  auto tables = TableCallsOrError();
  if (!tables.ok()) return tables.status();
  return (*tables)->List();
}

absl::StatusOr<control::ResizeTableResponse> Node::OnResizeTable(const control::ResizeTableRequest& request) {
  auto tables = TableCallsOrError();
  if (!tables.ok()) return tables.status();
  return (*tables)->Resize(request);
}

}  // namespace fathom::node
