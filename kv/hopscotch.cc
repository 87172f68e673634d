// Bucketized hopscotch (index.h): a neighbourhood of kHopscotchReach buckets, forward-only displacement.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kv/index.h"

namespace fathom::kv {
namespace {

bool HasRoom(const Bucket& b) { return b.entries.size() < kSlotsPerBucket; }

uint8_t Bit(uint64_t distance) { return static_cast<uint8_t>(1u << (distance - 1)); }

// One planned move: entry `index` of bucket `from` goes to bucket `to`.
struct PlannedMove {
  uint64_t from = 0;
  size_t index = 0;
  uint64_t to = 0;
};

}  // namespace

HopscotchIndex::HopscotchIndex(uint64_t buckets, int window)
    : buckets_(buckets),
      reach_(static_cast<int>(std::min<uint64_t>(kHopscotchReach, buckets))),
      window_(static_cast<int>(std::min<uint64_t>(std::max(window, kHopscotchReach), buckets))) {}

uint64_t HopscotchIndex::Home(uint64_t hash) const {
  // Multiply-shift: the hash's high bits decide, no modulo bias worth noting.
  return static_cast<uint64_t>((static_cast<unsigned __int128>(hash) * buckets_) >> 64);
}

absl::StatusOr<std::vector<uint64_t>> HopscotchIndex::MoreBuckets(uint64_t hash, std::string_view home_bucket) const {
  auto spilled = BucketSpilled(home_bucket);
  if (!spilled.ok()) return spilled.status();
  std::vector<uint64_t> more;
  for (int d = 1; d < reach_; ++d) {
    if (*spilled & Bit(d)) more.push_back(Next(Home(hash), d));
  }
  return more;
}

absl::Status HopscotchIndex::CheckBucket(uint64_t b, const Bucket& bucket) const {
  for (const Entry& e : bucket.entries) {
    if (Distance(Home(e.hash), b) >= static_cast<uint64_t>(reach_)) {
      return absl::DataLossError(absl::StrCat("kv bucket ", b, " holds a key whose home bucket ", Home(e.hash),
                                              " is out of reach"));
    }
  }
  for (int d = reach_; d < kHopscotchReach; ++d) {
    if (bucket.spilled & Bit(d)) {
      return absl::DataLossError(absl::StrCat("kv bucket ", b, " counts keys at distance ", d, " in a table of ",
                                              buckets_, " buckets"));
    }
  }
  return absl::OkStatus();
}

std::optional<Step> HopscotchIndex::Find(std::string_view key, uint64_t hash, const Workspace& ws,
                                         std::optional<Location>* where) const {
  *where = std::nullopt;
  const uint64_t home = Home(hash);
  auto h = ws.buckets.find(home);
  if (h == ws.buckets.end()) return Step::NeedBuckets({home});
  // The home bucket, then the buckets its spill counts name (all read in one round).
  std::vector<uint64_t> order = {home};
  std::vector<uint64_t> missing;
  for (int d = 1; d < reach_; ++d) {
    if ((h->second.spilled & Bit(d)) == 0) continue;
    order.push_back(Next(home, d));
    if (!ws.buckets.contains(order.back())) missing.push_back(order.back());
  }
  for (uint64_t b : order) {
    if (!ws.buckets.contains(b)) return Step::NeedBuckets(std::move(missing));
    if (auto need = FindInBucket(b, key, hash, ws, where)) return need;
    if (*where) return std::nullopt;
  }
  return std::nullopt;
}

Step HopscotchIndex::Get(std::string_view key, uint64_t hash, Workspace& ws) const {
  std::optional<Location> where;
  if (auto need = Find(key, hash, ws, &where)) return *need;
  return FoundAt(where, ws);
}

Step HopscotchIndex::Delete(std::string_view key, uint64_t hash, Workspace& ws) const {
  std::optional<Location> where;
  if (auto need = Find(key, hash, ws, &where)) return *need;
  if (!where) return Step::Done(absl::NotFoundError("no such key"));
  Step done = RemoveAt(*where, ws);
  ClearIfLast(Home(hash), where->bucket, ws);
  return done;
}

void HopscotchIndex::Move(uint64_t from, size_t index, uint64_t to, Workspace& ws) const {
  Bucket& src = ws.buckets.at(from);
  Entry e = std::move(src.entries[index]);
  src.entries.erase(src.entries.begin() + index);
  const uint64_t home = Home(e.hash);
  ws.buckets.at(home).spilled |= Bit(Distance(home, to));
  ws.buckets.at(to).entries.push_back(std::move(e));
  ws.dirty.insert(from);
  ws.dirty.insert(to);
  ws.dirty.insert(home);
  ClearIfLast(home, from, ws);
}

void HopscotchIndex::ClearIfLast(uint64_t home, uint64_t bucket, Workspace& ws) const {
  const uint64_t d = Distance(home, bucket);
  if (d == 0) return;
  for (const Entry& e : ws.buckets.at(bucket).entries) {
    if (Home(e.hash) == home) return;  // another key of `home` still lives there
  }
  ws.buckets.at(home).spilled &= static_cast<uint8_t>(~Bit(d));
  ws.dirty.insert(home);
}

void HopscotchIndex::Place(const Entry& entry, uint64_t home, uint64_t to, Workspace& ws) const {
  ws.buckets.at(to).entries.push_back(entry);
  ws.dirty.insert(to);
  if (const uint64_t d = Distance(home, to); d > 0) {
    ws.buckets.at(home).spilled |= Bit(d);
    ws.dirty.insert(home);
  }
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
  if (HasRoom(ws.buckets.at(home))) {  // the common case: no other bucket read
    Place(entry, home, home, ws);
    return done;
  }
  // Reads the buckets from h up to `until` (exclusive distance) that the workspace lacks, in one round.
  auto need_until = [&](int until) -> std::optional<Step> {
    std::vector<uint64_t> need;
    for (int d = 1; d < until; ++d) {
      if (!ws.buckets.contains(Next(home, d))) need.push_back(Next(home, d));
    }
    if (need.empty()) return std::nullopt;
    return Step::NeedBuckets(std::move(need));
  };
  if (auto need = need_until(reach_)) return *need;

  // Plan first (the workspace stays unchanged until every bucket a move touches has been read).
  std::vector<PlannedMove> moves;
  uint64_t target = home;
  bool planned = false;
  // (a) A guest of h (a key whose home is earlier) moves on within its neighbourhood; the new key
  // takes its slot and is found with one read.
  const Bucket& h = ws.buckets.at(home);
  for (size_t i = 0; i < h.entries.size() && !planned; ++i) {
    const uint64_t guest_home = Home(h.entries[i].hash);
    const uint64_t at = Distance(guest_home, home);
    if (at == 0) continue;
    for (uint64_t d = at + 1; d < static_cast<uint64_t>(reach_); ++d) {
      if (HasRoom(ws.buckets.at(Next(guest_home, d)))) {
        moves.push_back({home, i, Next(guest_home, d)});
        planned = true;
        break;
      }
    }
  }
  // (b) The nearest free slot in the neighbourhood.
  for (int d = 1; d < reach_ && !planned; ++d) {
    if (HasRoom(ws.buckets.at(Next(home, d)))) {
      target = Next(home, d);
      planned = true;
    }
  }
  // (c) A free slot further on, hopped back: a key in one of the reach-1 buckets before the free slot
  // whose neighbourhood includes it moves there, freeing its own slot nearer h; until the free slot is
  // in h's neighbourhood. Earliest bucket first (the longest hop), guests before keys at home.
  if (!planned) {
    // The nearest free slot: first within 16 buckets, then within the whole window (each bucket read
    // joins the transaction's read set, so read the far ones only when needed).
    int free = -1;
    for (int limit : {std::min(16, window_), window_}) {
      if (auto need = need_until(limit)) return *need;
      for (int d = reach_; d < limit; ++d) {
        if (HasRoom(ws.buckets.at(Next(home, d)))) {
          free = d;
          break;
        }
      }
      if (free >= 0) break;
    }
    while (free >= reach_) {
      std::optional<PlannedMove> hop;
      int hop_from = 0;
      for (int from = free - (reach_ - 1); from < free && !hop; ++from) {
        const Bucket& b = ws.buckets.at(Next(home, from));
        for (int pass = 0; pass < 2 && !hop; ++pass) {  // pass 0: guests only
          for (size_t i = 0; i < b.entries.size(); ++i) {
            const uint64_t at = Distance(Home(b.entries[i].hash), Next(home, from));
            if (pass == 0 && at == 0) continue;
            if (at + (free - from) < static_cast<uint64_t>(reach_)) {
              hop = PlannedMove{Next(home, from), i, Next(home, free)};
              hop_from = from;
              break;
            }
          }
        }
      }
      if (!hop) {
        free = -1;
        break;
      }
      moves.push_back(*hop);
      free = hop_from;
    }
    if (free < 0) {
      return Step::Done(absl::ResourceExhaustedError(
          absl::StrCat("kv table full: no free slot can be brought within ", reach_, " buckets of the key's home bucket ",
                       home, " (searched ", window_, " buckets; Table::Resize or grow_at_load makes room)")));
    }
    target = Next(home, free);
  }
  // Every moved key's home bucket holds its spill bits: read those not read yet.
  std::vector<uint64_t> homes;
  for (const PlannedMove& m : moves) {
    const uint64_t mh = Home(ws.buckets.at(m.from).entries[m.index].hash);
    if (!ws.buckets.contains(mh) && std::find(homes.begin(), homes.end(), mh) == homes.end()) homes.push_back(mh);
  }
  if (!homes.empty()) return Step::NeedBuckets(std::move(homes));
  // In plan order, from the far end back: each move fills the slot the previous one freed. Indexes stay
  // valid because a bucket gives away its entry (by index) before it receives one (appended).
  for (const PlannedMove& m : moves) Move(m.from, m.index, m.to, ws);
  Place(entry, home, target, ws);
  return done;
}

}  // namespace fathom::kv
