#include "kv/fetch_at_owner.h"

#include <span>

#include "kv/format.h"
#include "kv/get_at_owner.h"
#include "platform/base/log.h"

namespace fathom::kv {
namespace {

std::span<const std::byte> Bytes(std::string_view s) {
  return std::span<const std::byte>(reinterpret_cast<const std::byte*>(s.data()), s.size());
}

}  // namespace

void FetchAtOwner(txn::TxnThread& thread, const std::shared_ptr<txn::TxState>& tx, const TableState& table,
                  const std::string& key, std::function<void()> then) {
  const object::ObjectRef home = table.bucket_refs[table.index->Home(KeyHash(key))];
  // Read before (a second operation on the key, or a neighbour's) or written: the read set answers.
  if (tx->finished || tx->reads.contains(home.address.raw()) || tx->writes.contains(home.address.raw())) return then();
  node::NodeThread& node_thread = thread.thread();
  const std::optional<node::NodeThread::Route> route = RouteToServingOwner(node_thread, thread.node_id(), home);
  if (!route.has_value()) return then();
  const std::string request = EncodeGetAtOwnerRequest(home, table.epoch_word(), key);
  // Shared, not copied: `then` may hold the operation's key and value, and runs here if the call fails.
  auto next = std::make_shared<std::function<void()>>(std::move(then));
  auto call_done = [&thread, tx, home, next](absl::StatusOr<std::span<const std::byte>> reply) {
    if (reply.ok()) {
      absl::StatusOr<std::optional<OwnerObjects>> objects = DecodeOwnerObjects(
          std::string_view(reinterpret_cast<const char*>(reply->data()), reply->size()), home);
      if (!objects.ok()) {
        // The operation reads for itself; the owner that sent this is broken.
        LogError("kv", "fetch at the owner: %s", objects.status().ToString().c_str());
      } else if (objects->has_value()) {
        // A copy that does not join (the transaction read another version meanwhile, or ended) is simply
        // not used: the operation's own read meets the same and says so.
        const OwnerObjects& got = **objects;
        if (thread.AddRead(*tx, got.bucket.ref, got.bucket.version, Bytes(got.bucket.payload)).ok() &&
            got.value.has_value()) {
          thread.AddRead(*tx, got.value->ref, got.value->version, Bytes(got.value->payload)).IgnoreError();
        }
      }
    }
    (*next)();
  };
  const absl::Status called = node_thread.reader().Call(*route->endpoint, kFetchAtOwnerCall, Bytes(request),
                                                        OwnerObjectsCapacity(home), std::move(call_done));
  if (!called.ok()) (*next)();
}

}  // namespace fathom::kv
