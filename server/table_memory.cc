// See table_memory.h.
#include "server/table_memory.h"

#include <optional>
#include <utility>

#include "kv/format.h"
#include "kv/table_state.h"
#include "platform/base/mutex.h"
#include "txn/slot_walk.h"

namespace fathom::server {

absl::StatusOr<TableMemory::Layout> TableMemory::Load(txn::TransactionService& txns, const kv::TableInfo& info) {
  absl::StatusOr<std::shared_ptr<kv::TableState>> state = kv::LoadState(txns, info);
  if (!state.ok()) return state.status();
  Layout layout;
  layout.epoch = info.epoch;
  layout.root = info.root;
  layout.index_bytes[info.root.address.region] += info.root.capacity;
  for (const object::ObjectRef& chunk : (*state)->chunk_refs) {
    layout.index_bytes[chunk.address.region] += chunk.capacity;
  }
  for (const object::ObjectRef& bucket : (*state)->bucket_refs) {
    layout.index_bytes[bucket.address.region] += bucket.capacity;
    layout.buckets[bucket.address.region].push_back(bucket);
  }
  return layout;
}

uint64_t TableMemory::ScanValues(const memory::LocalRegion& region, const std::vector<object::ObjectRef>& buckets) {
  uint64_t bytes = 0;
  std::vector<std::byte> buffer;
  for (const object::ObjectRef& bucket : buckets) {
    if (bucket.address.offset + bucket.capacity > region.size()) continue;
    absl::StatusOr<std::optional<txn::WriteEntry>> copy =
        txn::CopySlot(region, bucket.address.offset, bucket.capacity, buffer);
    // Locked or torn for long, freed, or another object now (the table was dropped meanwhile): nothing.
    if (!copy.ok() || !copy->has_value() || (*copy)->op != txn::WriteOp::kWrite || !((*copy)->ref == bucket)) continue;
    absl::StatusOr<kv::Bucket> decoded = kv::DecodeBucket((*copy)->payload);
    if (!decoded.ok()) continue;
    for (const kv::Entry& entry : decoded->entries) {
      if (!entry.is_inline) bytes += entry.ref.capacity;
    }
  }
  return bytes;
}

absl::StatusOr<std::map<std::string, TableBytes>> TableMemory::Measure(Server& server) {
  if (server.catalog() == nullptr || !server.has_transactions()) {
    return absl::FailedPreconditionError("no catalog of tables here (a static cluster, or no transaction layer)");
  }
  absl::StatusOr<std::vector<kv::TableInfo>> tables = server.catalog()->List();
  if (!tables.ok()) return tables.status();
  const std::shared_ptr<const memory::RegionMap> map = server.transactions().replicas();
  auto served_here = [&](uint32_t region) {
    absl::StatusOr<uint32_t> primary = map->PrimaryOf(region);
    return primary.ok() && *primary == server.id();
  };
  const absl::Time now = clock_->Now();
  std::map<std::string, TableBytes> measured;
  MutexLock lock(&mu_);
  std::map<std::string, Layout> kept;  // tables dropped since are forgotten
  for (const kv::TableInfo& info : *tables) {
    Layout layout;
    if (auto known = layouts_.find(info.name);
        known != layouts_.end() && known->second.epoch == info.epoch && known->second.root == info.root) {
      layout = std::move(known->second);
    } else {
      absl::StatusOr<Layout> loaded = Load(server.transactions(), info);
      if (!loaded.ok()) continue;
      layout = *std::move(loaded);
    }
    const bool scan = now - layout.scanned >= value_scan_interval_;
    TableBytes bytes;
    for (const auto& [region, index] : layout.index_bytes) {
      if (served_here(region)) bytes.index += index;
    }
    for (const auto& [region, buckets] : layout.buckets) {
      if (!served_here(region)) continue;
      if (scan) {
        const memory::LocalRegion* memory = server.node().ServedRegion(region);
        layout.value_bytes[region] = memory == nullptr ? 0 : ScanValues(*memory, buckets);
      }
      bytes.values += layout.value_bytes[region];
    }
    if (scan) layout.scanned = now;
    measured[info.name] = bytes;
    kept[info.name] = std::move(layout);
  }
  layouts_ = std::move(kept);
  return measured;
}

}  // namespace fathom::server
