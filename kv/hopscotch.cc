// Bucketized hopscotch (index.h): neighbourhood = home bucket + next bucket, forward-only displacement.
#include <algorithm>

#include "absl/strings/str_cat.h"
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

HopscotchIndex::HopscotchIndex(uint64_t buckets, int max_chain) : buckets_(buckets), max_chain_(max_chain) {}

uint64_t HopscotchIndex::Home(uint64_t hash) const {
  // Multiply-shift: the hash's high bits decide, no modulo bias worth noting.
  return static_cast<uint64_t>((static_cast<unsigned __int128>(hash) * buckets_) >> 64);
}

std::optional<Step> HopscotchIndex::Find(std::string_view key, uint64_t hash, const Workspace& ws,
                                         std::optional<Location>* where) const {
  *where = std::nullopt;
  const uint64_t home = Home(hash);
  for (uint64_t b : {home, Next(home)}) {
    auto it = ws.buckets.find(b);
    if (it == ws.buckets.end()) return Step::NeedBuckets({b});
    const Bucket& bucket = it->second;
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
    // None of the home bucket's keys live in the next one: the key is absent.
    if (b == home && bucket.spilled == 0) return std::nullopt;
  }
  return std::nullopt;
}

Step HopscotchIndex::Get(std::string_view key, uint64_t hash, Workspace& ws) const {
  std::optional<Location> where;
  if (auto need = Find(key, hash, ws, &where)) return *need;
  if (!where) return Step::Done(absl::NotFoundError("no such key"));
  Step done = Step::Done(absl::OkStatus());
  done.found = ws.buckets[where->bucket].entries[where->index];
  return done;
}

Step HopscotchIndex::Delete(std::string_view key, uint64_t hash, Workspace& ws) const {
  std::optional<Location> where;
  if (auto need = Find(key, hash, ws, &where)) return *need;
  if (!where) return Step::Done(absl::NotFoundError("no such key"));
  Step done = Step::Done(absl::OkStatus());
  Bucket& bucket = ws.buckets[where->bucket];
  const Entry& old = bucket.entries[where->index];
  if (!old.is_inline) done.freed.push_back(old.ref);
  bucket.entries.erase(bucket.entries.begin() + where->index);
  ws.dirty.insert(where->bucket);
  const uint64_t home = Home(hash);
  if (where->bucket != home) {
    --ws.buckets[home].spilled;
    ws.dirty.insert(home);
  }
  return done;
}

Step HopscotchIndex::Put(std::string_view key, uint64_t hash, const Entry& entry, Workspace& ws) const {
  std::optional<Location> where;
  if (auto need = Find(key, hash, ws, &where)) return *need;
  Step done = Step::Done(absl::OkStatus());
  if (where) {  // overwrite in place: no key moves
    Entry& old = ws.buckets[where->bucket].entries[where->index];
    if (!old.is_inline) done.freed.push_back(old.ref);
    old = entry;
    ws.dirty.insert(where->bucket);
    return done;
  }
  done.inserted = true;
  const uint64_t home = Home(hash);
  Bucket& h = ws.buckets.at(home);  // Find read it
  if (h.entries.size() < kSlotsPerBucket) {
    h.entries.push_back(entry);
    ws.dirty.insert(home);
    return done;
  }
  const uint64_t first = Next(home);
  if (!ws.buckets.contains(first)) return Step::NeedBuckets({first});
  // Find a chain h+1 .. h+d whose every bucket has a key at home (movable forward) and h+d+1 with room.
  const int limit = static_cast<int>(std::min<uint64_t>(max_chain_, buckets_ - 2));
  int d = 0;
  auto movable = [&](uint64_t b) {
    const Bucket& bucket = ws.buckets.at(b);
    for (size_t i = 0; i < bucket.entries.size(); ++i) {
      if (Home(bucket.entries[i].hash) == b) return static_cast<int>(i);
    }
    return -1;
  };
  for (;; ++d) {
    const uint64_t b = Next(home, d + 1);
    if (ws.buckets.at(b).entries.size() < kSlotsPerBucket) break;  // room here
    if (d >= limit || movable(b) < 0) {
      return Step::Done(absl::ResourceExhaustedError(absl::StrCat(
          "kv table full: no room within ", d + 2, " buckets of the key's home bucket ", home,
          " (resize is not implemented yet)")));
    }
    const uint64_t next = Next(home, d + 2);
    if (!ws.buckets.contains(next)) {
      // Read the rest of the possible chain at once: full neighbourhoods are rare, round trips dear.
      std::vector<uint64_t> need;
      for (int j = d + 2; j <= limit + 1; ++j) {
        if (!ws.buckets.contains(Next(home, j))) need.push_back(Next(home, j));
      }
      return Step::NeedBuckets(std::move(need));
    }
  }
  // Move from the far end back: bucket h+i gives its movable key to h+i+1, for i = d .. 1.
  for (int i = d; i >= 1; --i) {
    const uint64_t from = Next(home, i);
    const uint64_t to = Next(home, i + 1);
    Bucket& src = ws.buckets.at(from);
    const int index = movable(from);
    ws.buckets.at(to).entries.push_back(std::move(src.entries[index]));
    src.entries.erase(src.entries.begin() + index);
    ++src.spilled;
    ws.dirty.insert(from);
    ws.dirty.insert(to);
  }
  ws.buckets.at(first).entries.push_back(entry);
  ++ws.buckets.at(home).spilled;
  ws.dirty.insert(first);
  ws.dirty.insert(home);
  return done;
}

}  // namespace fathom::kv
