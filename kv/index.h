// The index algorithms, as pure functions over the buckets an operation has read so far (a Workspace).
// An operation asks its index what to do next: read more buckets, read an out-of-line object to learn
// its key, or it is done (with the buckets it changed marked dirty). The drivers (operation.h) do the
// reads and writes inside a transaction; tests run the same functions over plain memory. Keeping the
// algorithm free of I/O is what lets one implementation serve the blocking, the asynchronous and the
// in-memory paths.
#ifndef FATHOM_KV_INDEX_H_
#define FATHOM_KV_INDEX_H_

#include <array>
#include <cstdint>
#include <memory>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kv/format.h"

namespace fathom::kv {

// What one operation has read (buckets by index; keys of out-of-line entries by object address) and
// what it changed.
struct Workspace {
  std::map<uint64_t, Bucket> buckets;
  std::set<uint64_t> dirty;
  absl::flat_hash_map<uint64_t, std::string> object_payloads;  // value objects read, by address
};

struct Step {
  enum class Kind { kNeedBuckets, kNeedObject, kDone };
  Kind kind = Kind::kDone;
  std::vector<uint64_t> buckets;  // kNeedBuckets: indexes to read
  object::ObjectRef object;       // kNeedObject: a value object whose key must be compared
  // kDone: OK; NotFound (Get/Delete of a missing key); ResourceExhausted (Put into a full neighbourhood).
  absl::Status status;
  std::optional<Entry> found;               // Get: the entry
  std::vector<object::ObjectRef> freed;     // objects no entry points to any more (Put over, Delete)
  bool inserted = false;                    // Put: a new key (not an overwrite)

  static Step NeedBuckets(std::vector<uint64_t> b) {
    Step s;
    s.kind = Kind::kNeedBuckets;
    s.buckets = std::move(b);
    return s;
  }
  static Step NeedObject(const object::ObjectRef& ref) {
    Step s;
    s.kind = Kind::kNeedObject;
    s.object = ref;
    return s;
  }
  static Step Done(absl::Status status) {
    Step s;
    s.status = std::move(status);
    return s;
  }
};

// Where an entry is: its bucket, and its index among the bucket's entries.
struct Location {
  uint64_t bucket = 0;
  size_t index = 0;
};

// The interface both indexes implement. Every call is a pure function of the workspace and leaves it
// unchanged unless it returns kDone with OK (then the changed buckets are in it, marked dirty).
class Index {
 public:
  virtual ~Index() = default;
  virtual Step Get(std::string_view key, uint64_t hash, Workspace& ws) const = 0;
  virtual Step Put(std::string_view key, uint64_t hash, const Entry& entry, Workspace& ws) const = 0;
  virtual Step Delete(std::string_view key, uint64_t hash, Workspace& ws) const = 0;
  // The first bucket a lookup reads (hopscotch: the home bucket; cuckoo: the first candidate).
  virtual uint64_t Home(uint64_t hash) const = 0;
  // A lock-free GET that missed in Home(hash) reads these next, one at a time, in order, until it finds
  // the key; `home_bucket` is Home's encoded bucket as read. A miss over several buckets is validated
  // (table_async.cc), so the order is about cost, not correctness.
  virtual absl::StatusOr<std::vector<uint64_t>> MoreBuckets(uint64_t hash, std::string_view home_bucket) const = 0;
  // DataLoss unless every entry of `bucket` (bucket number `b`) may live there and the header fits the
  // index: a decoded bucket is well formed, this says it belongs where it was found.
  virtual absl::Status CheckBucket(uint64_t b, const Bucket& bucket) const = 0;
  virtual uint64_t buckets() const = 0;
};

// Bucketized hopscotch (FaRM): a key's neighbourhood is its home bucket h and the next
// kHopscotchReach - 1 buckets (mod n), 8 x 8 = 64 slots. Bucket h has a bit per distance (`spilled`)
// saying whether a key of h lives there, so a lookup reads the buckets past h only when a bit says it
// may be there: one read for most lookups. An insert goes home if there is room; else it moves a guest of h (a key whose
// home is earlier) further on within the guest's own neighbourhood and takes its slot; else it takes the
// nearest free slot in the neighbourhood; else it finds a free slot further on and hops it back
// towards h, each hop moving a key forward inside its own neighbourhood (FaRM's displacement). All
// buckets changed are written by one transaction. Keys only ever move forward, away from their home.
class HopscotchIndex final : public Index {
 public:
  // `window`: how many buckets from h (h included) an insert searches for a free slot.
  explicit HopscotchIndex(uint64_t buckets, int window = 128);
  Step Get(std::string_view key, uint64_t hash, Workspace& ws) const override;
  Step Put(std::string_view key, uint64_t hash, const Entry& entry, Workspace& ws) const override;
  Step Delete(std::string_view key, uint64_t hash, Workspace& ws) const override;
  uint64_t Home(uint64_t hash) const override;
  absl::StatusOr<std::vector<uint64_t>> MoreBuckets(uint64_t hash, std::string_view home_bucket) const override;
  absl::Status CheckBucket(uint64_t b, const Bucket& bucket) const override;
  uint64_t buckets() const override { return buckets_; }
  uint64_t Next(uint64_t bucket, uint64_t by = 1) const { return (bucket + by) % buckets_; }
  // How far `bucket` is past `home`, 0 .. n-1.
  uint64_t Distance(uint64_t home, uint64_t bucket) const { return (bucket + buckets_ - home) % buckets_; }
  // Buckets in a neighbourhood: kHopscotchReach, fewer in tables that small.
  int reach() const { return reach_; }

 private:
  // Finds `key`: a Location, nullopt (absent), or a Step that needs more reads.
  std::optional<Step> Find(std::string_view key, uint64_t hash, const Workspace& ws,
                           std::optional<Location>* where) const;
  // Moves entry `index` of bucket `from` to bucket `to` (further on, within its neighbourhood), keeping
  // its home's spill bits.
  void Move(uint64_t from, size_t index, uint64_t to, Workspace& ws) const;
  // Clears `home`'s spill bit for `bucket` if no key of `home` is left there.
  void ClearIfLast(uint64_t home, uint64_t bucket, Workspace& ws) const;
  // Puts `entry` (home `home`) into bucket `to`, which has room.
  void Place(const Entry& entry, uint64_t home, uint64_t to, Workspace& ws) const;
  uint64_t buckets_;
  int reach_;
  int window_;
};

// 3-way bucketized cuckoo (Pilaf): a key lives in one of three candidate buckets chosen by independent
// hashes. An insert goes to the first candidate with room; else it searches breadth-first (over at most
// `max_search` buckets, `max_depth` moves) for a path of keys each moving to another of its candidates,
// ending in a bucket with room, and applies it from the last move to the first, all in one transaction.
class CuckooIndex final : public Index {
 public:
  // REQUIRES: buckets >= 3 (three distinct candidates).
  explicit CuckooIndex(uint64_t buckets, int max_depth = 3, int max_search = 96);
  Step Get(std::string_view key, uint64_t hash, Workspace& ws) const override;
  Step Put(std::string_view key, uint64_t hash, const Entry& entry, Workspace& ws) const override;
  Step Delete(std::string_view key, uint64_t hash, Workspace& ws) const override;
  uint64_t Home(uint64_t hash) const override { return Candidates(hash)[0]; }
  absl::StatusOr<std::vector<uint64_t>> MoreBuckets(uint64_t hash, std::string_view home_bucket) const override;
  absl::Status CheckBucket(uint64_t b, const Bucket& bucket) const override;
  uint64_t buckets() const override { return buckets_; }
  // The three distinct candidate buckets of a key, in lookup order.
  std::array<uint64_t, 3> Candidates(uint64_t hash) const;

 private:
  std::optional<Step> Find(std::string_view key, uint64_t hash, const Workspace& ws,
                           std::optional<Location>* where) const;
  uint64_t buckets_;
  int max_depth_;
  int max_search_;
};

// The index a table of `kind` uses; InvalidArgument for a kind or size it cannot have.
absl::StatusOr<std::unique_ptr<Index>> MakeIndex(IndexKind kind, uint64_t buckets);

// Whether `e` holds `key`; nullopt when it is an out-of-line entry whose object is not in the workspace.
std::optional<bool> EntryHasKey(const Entry& e, std::string_view key, const Workspace& ws);

// What both indexes share once they know which buckets to look in (index.cc).
// Looks for `key` in bucket `b` (in the workspace): sets *where on a match; returns a Step when an
// out-of-line entry's object must be read first to tell.
std::optional<Step> FindInBucket(uint64_t b, std::string_view key, uint64_t hash, const Workspace& ws,
                                 std::optional<Location>* where);
// Get's answer once the key was looked for: the entry at `where`, or NotFound.
Step FoundAt(const std::optional<Location>& where, Workspace& ws);
// Takes the entry at `where` out of its bucket (its out-of-line object to be freed); the bucket is dirty.
Step RemoveAt(const Location& where, Workspace& ws);

}  // namespace fathom::kv

#endif  // FATHOM_KV_INDEX_H_
