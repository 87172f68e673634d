// See fathom_remote.h.
#include "bench/ycsb/fathom_remote.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/ycsb/server_memory.h"
#include "fathom/internal.h"
#include "platform/base/status_macros.h"

namespace fathom::ycsb {

absl::StatusOr<std::unique_ptr<RemoteFathom>> RemoteFathom::Join(const RemoteFathomOptions& options) {
  std::unique_ptr<RemoteFathom> remote(new RemoteFathom());
  remote->options_ = options;
  if (absl::Status started = remote->Start(); !started.ok()) {
    remote->Leave().IgnoreError();
    return started;
  }
  return remote;
}

absl::Status RemoteFathom::Start() {
  if (options_.member.zookeeper.empty()) return absl::InvalidArgumentError("joining a cluster needs --zk=HOST:PORT");
  auto connected = fathom::Client::Impl::Connect(options_.member, options_.retry_deadline);
  if (!connected.ok()) return connected.status();
  client_ = std::move(*connected);
  member_ = fathom::Client::Impl::MemberOf(*client_);
  id_ = member_->id();
  threads_ = member_->threads();
  data_members_ = member_->server().data_members();
  absl::StatusOr<fathom::Table> table;
  if (options_.create_table) {
    // Shaped as the embedded cluster's tables.
    const TableShape shape = TableShapeFor(options_.records, options_.record_bytes);
    table = client_->OpenOrCreateTable(options_.table, {.buckets = shape.buckets, .inline_bytes = shape.inline_bytes});
  } else {
    table = client_->OpenTable(options_.table);
    if (absl::IsNotFound(table.status())) {
      return absl::NotFoundError(absl::StrCat("table '", options_.table, "' is not on cluster '",
                                              options_.member.cluster, "': a run-only phase reads the records an "
                                              "earlier load wrote; load them first (--phase=load or both)"));
    }
  }
  if (!table.ok()) return table.status();
  tables_.push_back(table->impl().table);
  for (int t = 0; t < threads_; ++t) {
    auto thread = TxnThreadOf(member_->transactions(), t);
    if (!thread.ok()) return thread.status();
    lanes_.push_back(std::make_unique<FathomAsyncBackend>(
        *thread, tables_[0], options_.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(t) + 1,
        options_.retry_deadline));
  }
  return absl::OkStatus();
}

absl::Status RemoteFathom::Leave() {
  if (left_) return absl::OkStatus();
  left_ = true;
  // The member leaves the configuration and stops its node; the handles on its transaction layer go after,
  // then the client.
  if (member_ != nullptr) member_->server().Stop();
  lanes_.clear();
  tables_.clear();
  member_ = nullptr;
  client_.reset();
  return absl::OkStatus();
}

RemoteFathom::~RemoteFathom() { Leave().IgnoreError(); }

absl::Status RemoteFathom::Post(int lane, std::function<void()> task) {
  if (lane < 0 || lane >= lanes()) return absl::InvalidArgumentError(absl::StrCat("no lane ", lane));
  return member_->transactions().Post(lane, [task = std::move(task)](txn::TxnThread&) { task(); });
}

std::unique_ptr<Backend> RemoteFathom::NewBackend() {
  return std::make_unique<FathomBackend>(&member_->transactions(), tables_[0], options_.retry_deadline,
                                         options_.seed * 0x9E3779B97F4A7C15ULL);
}

absl::StatusOr<ServerMemory> RemoteFathom::ObjectMemory() {
  if (member_ == nullptr) return absl::FailedPreconditionError("not joined");
  ASSIGN_OR_RETURN(std::vector<control::StatsResponse> stats, member_->DataMemberStats());
  std::vector<MemberCounters> members;
  for (const control::StatsResponse& s : stats) {
    members.push_back({s.node_id(), std::map<std::string, uint64_t>(s.counters().begin(), s.counters().end())});
  }
  return ClusterObjectMemory(members);
}

std::string RemoteFathom::StallReport() {
  return member_ == nullptr ? std::string() : member_->server().node().Describe();
}

std::string RemoteFathom::Describe() const {
  return absl::StrCat("client-only node ", node_id(), " (", threads_, " threads over UCX ",
                      options_.member.tcp ? "tcp" : "shared memory", ") of cluster '", options_.member.cluster, "' at ",
                      options_.member.zookeeper, ", data members [", absl::StrJoin(data_members_, ","), "], table ",
                      options_.table, " of ", tables_.empty() ? 0 : tables_[0].buckets(), " buckets");
}

}  // namespace fathom::ycsb
