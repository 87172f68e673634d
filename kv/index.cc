// What the hopscotch and cuckoo indexes share (index.h): matching keys, and the lookup's end steps.
#include "kv/index.h"

namespace fathom::kv {

std::optional<bool> EntryHasKey(const Entry& e, std::string_view key, const Workspace& ws) {
  if (e.key_bytes != key.size()) return false;
  if (e.is_inline) return e.key == key;
  auto it = ws.object_payloads.find(e.ref.address.raw());
  if (it == ws.object_payloads.end()) return std::nullopt;
  const std::string& payload = it->second;
  // A malformed or replaced object never matches: the transaction that read it will not commit if it
  // changed, and a corrupt one cannot be this key.
  return payload.size() >= 4 + key.size() && std::string_view(payload).substr(4, key.size()) == key;
}

std::optional<Step> FindInBucket(uint64_t b, std::string_view key, uint64_t hash, const Workspace& ws,
                                 std::optional<Location>* where) {
  const Bucket& bucket = ws.buckets.at(b);
  for (size_t i = 0; i < bucket.entries.size(); ++i) {
    const Entry& e = bucket.entries[i];
    if (e.hash != hash) continue;
    std::optional<bool> match = EntryHasKey(e, key, ws);
    if (!match.has_value()) return Step::NeedObject(e.ref);
    if (*match) {
      *where = Location{b, i};
      return std::nullopt;
    }
  }
  return std::nullopt;
}

Step FoundAt(const std::optional<Location>& where, Workspace& ws) {
  if (!where) return Step::Done(absl::NotFoundError("no such key"));
  Step done = Step::Done(absl::OkStatus());
  done.found = ws.buckets[where->bucket].entries[where->index];
  return done;
}

Step RemoveAt(const Location& where, Workspace& ws) {
  Step done = Step::Done(absl::OkStatus());
  Bucket& bucket = ws.buckets[where.bucket];
  if (!bucket.entries[where.index].is_inline) done.freed.push_back(bucket.entries[where.index].ref);
  bucket.entries.erase(bucket.entries.begin() + where.index);
  ws.dirty.insert(where.bucket);
  return done;
}

}  // namespace fathom::kv
