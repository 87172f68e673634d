// ObjectStore: the owner's API over its own objects, one per thread (it uses that thread's slab
// allocator). Allocate gives a slot a live header; Free bumps its incarnation so that every outstanding
// reference to it is detected as stale by any reader, local or remote.
//
//   memory::SlabAllocator allocator(&slab_source);            // per thread
//   ObjectStore store({region.get()}, &allocator);
//   ASSIGN_OR_RETURN(ObjectRef ref, store.Allocate(/*payload_capacity=*/100));
//   RETURN_IF_ERROR(store.Write(ref, payload));
//   std::vector<std::byte> buffer;
//   ASSIGN_OR_RETURN(std::span<const std::byte> bytes, store.Read(ref, buffer));
//   RETURN_IF_ERROR(store.Free(ref));
#ifndef FATHOM_PLATFORM_OBJECT_OBJECT_STORE_H_
#define FATHOM_PLATFORM_OBJECT_OBJECT_STORE_H_

#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "platform/memory/region.h"
#include "platform/memory/slab_allocator.h"
#include "platform/object/local_object.h"
#include "platform/object/object_layout.h"
#include "platform/object/object_reader.h"

namespace fathom::object {

class ObjectStore {
 public:
  ObjectStore(const std::vector<memory::LocalRegion*>& regions, memory::SlabAllocator* allocator,
              ReadPolicy policy = {});

  // A live object with room for `payload_capacity` bytes and an empty payload.
  absl::StatusOr<ObjectRef> Allocate(uint32_t payload_capacity);
  // Replaces the payload. OutOfRange if it does not fit; NotFound if `ref` is stale; Unavailable if the
  // lock cannot be taken within the policy's attempts.
  absl::Status Write(const ObjectRef& ref, std::span<const std::byte> payload);
  // The payload, checked as every reader checks it (into `buffer`, reused across calls).
  absl::StatusOr<std::span<const std::byte>> Read(const ObjectRef& ref, std::vector<std::byte>& buffer,
                                                  ReadStats* stats = nullptr);
  // Frees the slot: the incarnation moves on and the object is no longer live. NotFound if already stale.
  absl::Status Free(const ObjectRef& ref);

  // Serves objects of `region` too (a backup copy this node was promoted to serve). Allocation stays in
  // the allocator's regions.
  void AddRegion(memory::LocalRegion* region) { regions_[region->id()] = region; }
  bool HasRegion(uint32_t region) const { return regions_.contains(region); }

  // The owner's view of `ref`'s slot; NotFound if the region is not local, OutOfRange if outside it.
  absl::StatusOr<LocalObject> Resolve(const ObjectRef& ref) const;

 private:
  // Locks `ref`'s object and checks it is the live incarnation `ref` names.
  absl::StatusOr<uint64_t> LockLive(LocalObject& object, const ObjectRef& ref, ObjectHeader* header);

  absl::flat_hash_map<uint32_t, memory::LocalRegion*> regions_;
  memory::SlabAllocator* allocator_;
  ReadPolicy policy_;
  std::vector<std::byte> scratch_;
};

}  // namespace fathom::object

#endif  // FATHOM_PLATFORM_OBJECT_OBJECT_STORE_H_
