// What is behind the public API's handles (client.h, table.h, transaction.h). Not for applications: it
// brings in the whole server.
#ifndef FATHOM_FATHOM_INTERNAL_H_
#define FATHOM_FATHOM_INTERNAL_H_

#include <memory>

#include "fathom/client.h"
#include "kv/catalog.h"
#include "kv/kv.h"
#include "server/client_member.h"
#include "server/embedded_cluster.h"
#include "txn/txn.h"

namespace fathom {

struct Client::Impl {
  // Joins a running cluster as Client::Connect does, with the member's own options (node threads, node
  // id, listen address, test hooks: what the YCSB driver sets and ClientOptions does not offer).
  static absl::StatusOr<std::unique_ptr<Client>> Connect(server::ClientMemberOptions options,
                                                         absl::Duration retry_deadline);
  // The member underneath a Client that Connect made (null for an embedded cluster).
  static server::ClientMember* MemberOf(Client& client) { return client.impl_->member.get(); }

  // One of the two: a client-only member of a running cluster, or a cluster in this process.
  std::unique_ptr<server::ClientMember> member;
  std::unique_ptr<server::EmbeddedCluster> embedded;
  kv::InProcessCatalog embedded_catalog;  // an embedded cluster's table names
  absl::Duration retry_deadline;          // ClientOptions::retry_deadline

  // Embedded: node 1's layer (any node may coordinate; one keeps a Table's handle and a transaction's
  // node the same).
  txn::TransactionService& transactions() {
    return member != nullptr ? member->transactions() : embedded->server(1).transactions();
  }
  kv::Catalog& catalog() { return member != nullptr ? member->catalog() : embedded_catalog; }
};

struct Table::Impl {
  kv::Table table;
  absl::Duration retry_deadline;  // ClientOptions::retry_deadline (embedded clusters: none)
};

struct Transaction::Impl {
  txn::Transaction& tx;
};

}  // namespace fathom

#endif  // FATHOM_FATHOM_INTERNAL_H_
