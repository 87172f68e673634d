#include "bench/ycsb/fathom_backend.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "bench/ycsb/record_codec.h"

namespace fathom::ycsb {
namespace {

constexpr uint64_t kMiB = 1 << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<FathomCluster>> FathomCluster::Start(const FathomClusterOptions& options) {
  if (options.nodes < options.backups + 1) {
    return absl::InvalidArgumentError(absl::StrCat(options.nodes, " nodes cannot hold ", options.backups + 1,
                                                   " copies of each record"));
  }
  std::unique_ptr<FathomCluster> fathom(new FathomCluster());
  fathom->options_ = options;
  // Buckets hold 8 keys and a table fills to about 57% before an insert fails (docs/formats/kv.md): size
  // for 40%. A YCSB record (10 fields of 100 bytes) goes out of line into a 2 KiB slot.
  const uint64_t records = std::max<uint64_t>(options.records, 1000);
  fathom->buckets_ = std::max<uint64_t>(64, records * 10 / 32);
  const uint64_t bytes = (fathom->buckets_ * 2048 + records * 2048) * 3 / 2 / options.nodes;
  node::EmbeddedClusterOptions cluster;
  cluster.nodes = options.nodes;
  cluster.threads = options.threads_per_node;
  cluster.fabric = options.tcp ? node::EmbeddedFabric::kUcxTcp : node::EmbeddedFabric::kUcxSharedMemory;
  cluster.memory_bytes = std::max<uint64_t>(64 * kMiB, (bytes + kMiB - 1) / kMiB * kMiB);
  auto started = node::EmbeddedCluster::Start(cluster);
  if (!started.ok()) return started.status();
  fathom->cluster_ = std::move(*started);
  std::vector<uint32_t> members;
  for (int i = 1; i <= options.nodes; ++i) members.push_back(i);
  txn::TxnOptions txn_options;
  txn_options.backups = options.backups;
  for (int i = 1; i <= options.nodes; ++i) {
    auto service = txn::TransactionService::Attach(&fathom->cluster_->node(i), txn_options);
    if (!service.ok()) return service.status();
    (*service)->SetConfiguration(1, members);
    fathom->services_.push_back(std::move(*service));
  }
  kv::TableOptions table;
  table.buckets = fathom->buckets_;
  auto created = kv::Table::Create(*fathom->services_[0], fathom->catalog_, "usertable", table);
  if (!created.ok()) return created.status();
  for (int i = 0; i < options.nodes; ++i) {
    auto opened = kv::Table::Open(*fathom->services_[i], fathom->catalog_, "usertable");
    if (!opened.ok()) return opened.status();
    fathom->tables_.push_back(std::move(*opened));
  }
  return fathom;
}

FathomCluster::~FathomCluster() {
  // The nodes stop first: their threads use the transaction layer.
  cluster_.reset();
  tables_.clear();
  services_.clear();
}

std::unique_ptr<Backend> FathomCluster::NewBackend() {
  const size_t node = next_.fetch_add(1) % tables_.size();
  return std::make_unique<FathomBackend>(services_[node].get(), tables_[node]);
}

std::string FathomCluster::Describe() const {
  return absl::StrCat(options_.nodes, " nodes x ", options_.threads_per_node, " threads over UCX ",
                      options_.tcp ? "tcp" : "shared memory", ", f=", options_.backups, ", table of ", buckets_,
                      " buckets");
}

absl::Status FathomBackend::Read(const std::string& table, const std::string& key, const FieldList* fields,
                                 Record* result) {
  auto bytes = table_.Get(key);
  if (!bytes.ok()) return bytes.status();
  auto record = DecodeRecord(*bytes);
  if (!record.ok()) return record.status();
  *result = ProjectFields(std::move(*record), fields);
  return absl::OkStatus();
}

absl::Status FathomBackend::Update(const std::string& table, const std::string& key, const Record& values) {
  // Read, merge, write back, atomically: YCSB's update changes some fields and keeps the others.
  return txn::RunTransaction(*txns_, [&](txn::Transaction& tx) -> absl::Status {
    auto bytes = table_.Get(tx, key);
    if (!bytes.ok()) return bytes.status();
    auto record = DecodeRecord(*bytes);
    if (!record.ok()) return record.status();
    for (const auto& [name, value] : values) (*record)[name] = value;
    return table_.Put(tx, key, EncodeRecord(*record));
  });
}

absl::Status FathomBackend::Insert(const std::string& table, const std::string& key, const Record& values) {
  return table_.Put(key, EncodeRecord(values));
}

absl::Status FathomBackend::Delete(const std::string& table, const std::string& key) { return table_.Delete(key); }

}  // namespace fathom::ycsb
