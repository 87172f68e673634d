// 3-way bucketized cuckoo (index.h): three candidate buckets per key, displacement paths found
// breadth-first and applied from the last move to the first.
#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "kv/index.h"

namespace fathom::kv {
namespace {

bool HasRoom(const Bucket& b) { return b.entries.size() < kSlotsPerBucket; }

// splitmix64's finalizer over the key hash and a salt: the second and third candidates must not be
// correlated with the first (which uses the hash's high bits directly).
uint64_t Remix(uint64_t hash, uint64_t salt) {
  uint64_t x = hash + salt * 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

CuckooIndex::CuckooIndex(uint64_t buckets, int max_depth, int max_search)
    : buckets_(buckets), max_depth_(max_depth), max_search_(max_search) {}

std::array<uint64_t, 3> CuckooIndex::Candidates(uint64_t hash) const {
  auto pick = [this](uint64_t h) { return static_cast<uint64_t>((static_cast<unsigned __int128>(h) * buckets_) >> 64); };
  std::array<uint64_t, 3> c = {pick(hash), pick(Remix(hash, 1)), pick(Remix(hash, 2))};
  // Three distinct buckets (a key with two equal candidates would have less room than the others).
  if (c[1] == c[0]) c[1] = (c[1] + 1) % buckets_;
  while (c[2] == c[0] || c[2] == c[1]) c[2] = (c[2] + 1) % buckets_;
  return c;
}

absl::StatusOr<std::vector<uint64_t>> CuckooIndex::MoreBuckets(uint64_t hash, std::string_view) const {
  const std::array<uint64_t, 3> c = Candidates(hash);
  return std::vector<uint64_t>{c[1], c[2]};
}

absl::Status CuckooIndex::CheckBucket(uint64_t b, const Bucket& bucket) const {
  if (bucket.spilled != 0) return absl::DataLossError(absl::StrCat("cuckoo kv bucket ", b, " has hopscotch spill bits"));
  for (const Entry& e : bucket.entries) {
    const std::array<uint64_t, 3> c = Candidates(e.hash);
    if (std::find(c.begin(), c.end(), b) == c.end()) {
      return absl::DataLossError(absl::StrCat("cuckoo kv bucket ", b, " holds a key that is not one of its candidates"));
    }
  }
  return absl::OkStatus();
}

std::optional<Step> CuckooIndex::Find(std::string_view key, uint64_t hash, const Workspace& ws,
                                      std::optional<Location>* where) const {
  *where = std::nullopt;
  const std::array<uint64_t, 3> c = Candidates(hash);
  for (int i = 0; i < 3; ++i) {
    auto it = ws.buckets.find(c[i]);
    if (it == ws.buckets.end()) {
      // The first candidate alone (most keys live there), then the other two in one round.
      if (i == 0) return Step::NeedBuckets({c[0]});
      std::vector<uint64_t> need;
      for (int j = i; j < 3; ++j) {
        if (!ws.buckets.contains(c[j])) need.push_back(c[j]);
      }
      return Step::NeedBuckets(std::move(need));
    }
    if (auto need = FindInBucket(c[i], key, hash, ws, where)) return need;
    if (*where) return std::nullopt;
  }
  return std::nullopt;
}

Step CuckooIndex::Get(std::string_view key, uint64_t hash, Workspace& ws) const {
  std::optional<Location> where;
  if (auto need = Find(key, hash, ws, &where)) return *need;
  return FoundAt(where, ws);
}

Step CuckooIndex::Delete(std::string_view key, uint64_t hash, Workspace& ws) const {
  std::optional<Location> where;
  if (auto need = Find(key, hash, ws, &where)) return *need;
  if (!where) return Step::Done(absl::NotFoundError("no such key"));
  return RemoveAt(*where, ws);
}

Step CuckooIndex::Put(std::string_view key, uint64_t hash, const Entry& entry, Workspace& ws) const {
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
  const std::array<uint64_t, 3> c = Candidates(hash);
  for (uint64_t b : c) {  // Find read all three
    if (HasRoom(ws.buckets.at(b))) {
      ws.buckets.at(b).entries.push_back(entry);
      ws.dirty.insert(b);
      return done;
    }
  }
  // Breadth-first search for a displacement path. A node is a bucket reached by moving entry `index` of
  // its parent's bucket to it (that entry's other candidate). The search is a pure function of the
  // buckets read so far, so it is simply redone after each round of reads.
  struct Node {
    uint64_t bucket;
    int parent;
    size_t index;
  };
  std::vector<Node> nodes = {{c[0], -1, 0}, {c[1], -1, 0}, {c[2], -1, 0}};
  std::set<uint64_t> seen(c.begin(), c.end());
  size_t level_begin = 0;
  size_t level_end = nodes.size();
  int found = -1;
  for (int depth = 1; depth <= max_depth_ && found < 0; ++depth) {
    for (size_t n = level_begin; n < level_end; ++n) {
      const Bucket& b = ws.buckets.at(nodes[n].bucket);
      for (size_t k = 0; k < b.entries.size(); ++k) {
        for (uint64_t alt : Candidates(b.entries[k].hash)) {
          if (alt == nodes[n].bucket || seen.contains(alt)) continue;
          if (nodes.size() >= static_cast<size_t>(max_search_) + 3) break;
          seen.insert(alt);
          nodes.push_back({alt, static_cast<int>(n), k});
        }
      }
    }
    level_begin = level_end;
    level_end = nodes.size();
    std::vector<uint64_t> need;
    for (size_t n = level_begin; n < level_end; ++n) {
      if (!ws.buckets.contains(nodes[n].bucket)) need.push_back(nodes[n].bucket);
    }
    if (!need.empty()) return Step::NeedBuckets(std::move(need));
    for (size_t n = level_begin; n < level_end; ++n) {
      if (HasRoom(ws.buckets.at(nodes[n].bucket))) {
        found = static_cast<int>(n);
        break;
      }
    }
  }
  if (found < 0) {
    return Step::Done(absl::ResourceExhaustedError(absl::StrCat(
        "kv table full: no cuckoo path of up to ", max_depth_, " moves frees a candidate bucket (searched ",
        nodes.size(), " buckets; Table::Resize or grow_at_load makes room)")));
  }
  // Apply from the last move to the first: the key that moves into the free slot goes first, so every
  // key is in one of its candidates after each step (and the transaction makes the whole path one
  // change anyway). A bucket gives away its entry (by index) before it receives one (appended).
  int n = found;
  while (nodes[n].parent >= 0) {
    const Node& node = nodes[n];
    Bucket& from = ws.buckets.at(nodes[node.parent].bucket);
    ws.buckets.at(node.bucket).entries.push_back(std::move(from.entries[node.index]));
    from.entries.erase(from.entries.begin() + node.index);
    ws.dirty.insert(node.bucket);
    ws.dirty.insert(nodes[node.parent].bucket);
    n = node.parent;
  }
  ws.buckets.at(nodes[n].bucket).entries.push_back(entry);
  ws.dirty.insert(nodes[n].bucket);
  return done;
}

absl::StatusOr<std::unique_ptr<Index>> MakeIndex(IndexKind kind, uint64_t buckets) {
  switch (kind) {
    case IndexKind::kHopscotch:
      if (buckets < 2) return absl::InvalidArgumentError("a hopscotch kv table needs at least 2 buckets");
      return std::unique_ptr<Index>(new HopscotchIndex(buckets));
    case IndexKind::kCuckoo:
      if (buckets < 3) return absl::InvalidArgumentError("a cuckoo kv table needs at least 3 buckets");
      return std::unique_ptr<Index>(new CuckooIndex(buckets));
  }
  return absl::InvalidArgumentError("unknown kv index kind");
}

}  // namespace fathom::kv
