// See client.h.
#include "fathom/client.h"

#include <functional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "fathom/internal.h"
#include "fathom/retry.h"
#include "platform/node/control/cluster_token.h"

namespace fathom {
namespace {

kv::TableOptions KvOptions(const TableOptions& options) {
  kv::TableOptions kv;
  kv.kind = options.kind == TableKind::kCuckoo ? kv::IndexKind::kCuckoo : kv::IndexKind::kHopscotch;
  kv.buckets = options.buckets;
  if (options.inline_bytes != 0) kv.inline_bytes = options.inline_bytes;
  return kv;
}

// What a data member is asked for when a client-only member creates a table.
control::CreateTableRequest CreateRequestOf(const TableOptions& options) {
  control::CreateTableRequest request;
  request.set_kind(options.kind == TableKind::kCuckoo ? control::TABLE_INDEX_CUCKOO : control::TABLE_INDEX_HOPSCOTCH);
  request.set_buckets(options.buckets);
  request.set_inline_bytes(options.inline_bytes);  // 0: kv's default
  return request;
}

Table Wrap(kv::Table table, absl::Duration retry_deadline) {
  return Table(std::make_shared<const Table::Impl>(Table::Impl{std::move(table), retry_deadline}));
}

}  // namespace

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Client::~Client() = default;  // the member leaves, or the embedded cluster stops

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(const ClientOptions& options) {
  if (options.zookeeper.empty()) return absl::InvalidArgumentError("ClientOptions.zookeeper is required (host:port)");
  auto token = control::TokenFromFlags(options.token, options.token_file,
                                       "a cluster token is required (ClientOptions.token or token_file)");
  if (!token.ok()) return absl::InvalidArgumentError(token.status().message());
  server::ClientMemberOptions member;
  member.zookeeper = options.zookeeper;
  member.cluster = options.cluster;
  member.token = *token;
  member.tcp = options.tcp;
  member.join_timeout = options.join_timeout;
  member.lease_period = options.lease_period;
  member.busy_poll = options.busy_poll;
  if (options.tls_ca_file.empty() != options.tls_cert_file.empty() ||
      options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return absl::InvalidArgumentError(
        "TLS needs all of ClientOptions.tls_ca_file, tls_cert_file and tls_key_file, or none of them");
  }
  member.tls_ca_path = options.tls_ca_file;
  member.tls = {.certificate_path = options.tls_cert_file, .private_key_path = options.tls_key_file};
  return Impl::Connect(std::move(member), options.retry_deadline);
}

absl::StatusOr<std::unique_ptr<Client>> Client::Impl::Connect(server::ClientMemberOptions options,
                                                              absl::Duration retry_deadline) {
  auto joined = server::ClientMember::Join(std::move(options));
  if (!joined.ok()) return joined.status();
  auto impl = std::make_unique<Impl>();
  impl->member = std::move(*joined);
  impl->retry_deadline = retry_deadline;
  return std::unique_ptr<Client>(new Client(std::move(impl)));
}

absl::StatusOr<std::unique_ptr<Client>> Client::StartEmbedded(const EmbeddedOptions& options) {
  if (options.nodes < options.backups + 1 || options.backups < 0) {
    return absl::InvalidArgumentError(absl::StrCat(options.nodes, " nodes cannot hold ", options.backups + 1,
                                                   " copies of each region"));
  }
  server::EmbeddedClusterOptions cluster;
  cluster.nodes = options.nodes;
  cluster.threads = options.threads;
  cluster.memory_bytes = options.memory_bytes;
  cluster.transactions.backups = options.backups;
  auto started = server::EmbeddedCluster::Start(cluster);
  if (!started.ok()) return started.status();
  auto impl = std::make_unique<Impl>();
  impl->embedded = std::move(*started);
  return std::unique_ptr<Client>(new Client(std::move(impl)));
}

absl::StatusOr<Table> Client::CreateTable(std::string_view name, const TableOptions& options) {
  if (impl_->member != nullptr) {
    // A client-only member holds no data: a data member makes the table.
    auto created = impl_->member->CreateTable(name, CreateRequestOf(options));
    if (!created.ok()) return created.status();
    return Wrap(*std::move(created), impl_->retry_deadline);
  }
  auto created = kv::Table::Create(impl_->transactions(), impl_->catalog(), std::string(name), KvOptions(options));
  if (!created.ok()) return created.status();
  return Wrap(*std::move(created), impl_->retry_deadline);
}

absl::StatusOr<Table> Client::OpenTable(std::string_view name) {
  auto opened = kv::Table::Open(impl_->transactions(), impl_->catalog(), name);
  if (!opened.ok()) return opened.status();
  return Wrap(*std::move(opened), impl_->retry_deadline);
}

absl::StatusOr<Table> Client::OpenOrCreateTable(std::string_view name, const TableOptions& options) {
  if (impl_->member != nullptr) {
    // When another client made it meanwhile, the member waits for the name to reach this node's view.
    auto table = impl_->member->OpenOrCreateTable(name, CreateRequestOf(options));
    if (!table.ok()) return table.status();
    return Wrap(*std::move(table), impl_->retry_deadline);
  }
  auto opened = OpenTable(name);
  if (!absl::IsNotFound(opened.status())) return opened;
  auto created = CreateTable(name, options);
  if (!absl::IsAlreadyExists(created.status())) return created;  // another client made it meanwhile
  return OpenTable(name);
}

absl::Status Client::DropTable(std::string_view name) {
  if (impl_->member != nullptr) return impl_->member->DropTable(name);
  return kv::Table::Drop(impl_->transactions(), impl_->catalog(), name);
}

absl::Status Client::Transact(absl::FunctionRef<absl::Status(Transaction&)> body) {
  // A transient failure is tried again only if the commit certainly took no effect (running the body
  // twice is then the same as running it once).
  auto certainly_not_committed = [](const absl::Status& s) { return IsTransient(s) && !txn::MayHaveCommitted(s); };
  const uint64_t jitter_seed = std::hash<std::thread::id>()(std::this_thread::get_id());  // threads apart
  return RetryTransient(
      impl_->retry_deadline, jitter_seed,
      [&] {
        return txn::RunTransaction(impl_->transactions(), [&](txn::Transaction& tx) -> absl::Status {
          Transaction::Impl impl{tx};
          Transaction transaction(&impl);
          return body(transaction);
        });
      },
      certainly_not_committed);
}

bool MayHaveCommitted(const absl::Status& status) { return txn::MayHaveCommitted(status); }

}  // namespace fathom
