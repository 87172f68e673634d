// The index algorithms, as pure functions over the buckets an operation has read so far (a Workspace).
// An operation asks its index what to do next: read more buckets, read an out-of-line object to learn
// its key, or it is done (with the buckets it changed marked dirty). The drivers (operation.h) do the
// reads and writes inside a transaction; tests run the same functions over plain memory. Keeping the
// algorithm free of I/O is what lets one implementation serve the blocking, the asynchronous and the
// in-memory paths.
#ifndef FATHOM_KV_INDEX_H_
#define FATHOM_KV_INDEX_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
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

// The interface both indexes implement. Every call is a pure function of the workspace and leaves it
// unchanged unless it returns kDone with OK (then the changed buckets are in it, marked dirty).
class Index {
 public:
  virtual ~Index() = default;
  virtual Step Get(std::string_view key, uint64_t hash, Workspace& ws) const = 0;
  virtual Step Put(std::string_view key, uint64_t hash, const Entry& entry, Workspace& ws) const = 0;
  virtual Step Delete(std::string_view key, uint64_t hash, Workspace& ws) const = 0;
  // The buckets a lock-free GET reads, in order: it reads the next one only when the previous one says
  // the key may be there (see each index).
  virtual uint64_t Home(uint64_t hash) const = 0;
  virtual uint64_t buckets() const = 0;
};

// Bucketized hopscotch: a key's neighbourhood is its home bucket h and the next one, h+1 (mod n), i.e.
// 2H = 16 slots, read as 2 objects. Bucket h counts (`spilled`) its keys living in h+1, so a lookup
// reads h+1 only when that count is nonzero: one read for most lookups. An insert into a full
// neighbourhood moves keys forward along a chain (a key in h+i whose home is h+i moves to h+i+1), from
// the far end back, all in one transaction. Keys only ever move forward, away from their home bucket:
// that is what lets a GET read h and then h+1 without validation (docs/formats/kv.md, "Why GET needs no
// validation").
class HopscotchIndex final : public Index {
 public:
  // `max_chain`: how many buckets past h+1 an insert may displace keys into.
  HopscotchIndex(uint64_t buckets, int max_chain = 4);
  Step Get(std::string_view key, uint64_t hash, Workspace& ws) const override;
  Step Put(std::string_view key, uint64_t hash, const Entry& entry, Workspace& ws) const override;
  Step Delete(std::string_view key, uint64_t hash, Workspace& ws) const override;
  uint64_t Home(uint64_t hash) const override;
  uint64_t buckets() const override { return buckets_; }
  uint64_t Next(uint64_t bucket, uint64_t by = 1) const { return (bucket + by) % buckets_; }

 private:
  struct Location {
    uint64_t bucket = 0;
    size_t index = 0;
  };
  // Finds `key`: a Location, nullopt (absent), or a Step that needs more reads.
  std::optional<Step> Find(std::string_view key, uint64_t hash, const Workspace& ws,
                           std::optional<Location>* where) const;
  uint64_t buckets_;
  int max_chain_;
};

// Whether `e` holds `key`; nullopt when it is an out-of-line entry whose object is not in the workspace.
std::optional<bool> EntryHasKey(const Entry& e, std::string_view key, const Workspace& ws);

}  // namespace fathom::kv

#endif  // FATHOM_KV_INDEX_H_
