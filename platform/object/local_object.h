// LocalObject: an object in this node's own memory, as its owner sees it. The owner is the only writer of
// an object's bytes; writers on the owner's threads exclude each other with the lock bit (a CPU
// compare-and-swap, never a fabric atomic: on RDMA NICs the two are not atomic with respect to each
// other). Readers never lock: they copy and check (object_codec.h).
//
//   LocalObject object(slot_pointer);
//   ASSIGN_OR_RETURN(uint64_t version, object.Lock(/*max_attempts=*/1000));
//   object.InstallAndUnlock(version, payload, incarnation, kLiveFlag);
//
// All accesses are 8-byte atomic loads and stores (slots are 64-byte aligned and payload room is a
// multiple of 8), so a reader racing a writer in this process is well-defined and ThreadSanitizer-clean;
// its copy may still mix two writes, which the checksum rejects.
#ifndef FATHOM_PLATFORM_OBJECT_LOCAL_OBJECT_H_
#define FATHOM_PLATFORM_OBJECT_LOCAL_OBJECT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "absl/status/statusor.h"
#include "platform/object/object_layout.h"

namespace fathom::object {

class LocalObject {
 public:
  // REQUIRES: `slot` 8-byte aligned, `capacity` bytes, a multiple of 8.
  LocalObject(std::byte* slot, uint32_t capacity) : slot_(slot), capacity_(capacity) {}

  // Takes the lock if the object is unlocked (and, if `expected_version` is given, at that version).
  // Returns the version locked; Aborted if locked by someone else or the version moved on.
  absl::StatusOr<uint64_t> TryLock(std::optional<uint64_t> expected_version = std::nullopt);
  // TryLock with bounded spinning; Unavailable if still locked after `max_attempts`.
  absl::StatusOr<uint64_t> Lock(int max_attempts);
  // Writes a new object state and releases the lock with version + 1. REQUIRES: this thread holds the lock
  // taken at `locked_version`; payload.size() <= capacity - kHeaderBytes.
  // Payload bytes the old state used beyond the new payload are zeroed.
  void InstallAndUnlock(uint64_t locked_version, std::span<const std::byte> payload, uint32_t incarnation,
                        uint32_t flags);
  // The same with the version given (a backup copying its primary's state). REQUIRES: the lock is held.
  void InstallAtVersionAndUnlock(uint64_t new_version, std::span<const std::byte> payload, uint32_t incarnation,
                                 uint32_t flags);
  // Releases the lock without a change (the version stays). REQUIRES: lock held at `locked_version`.
  void Unlock(uint64_t locked_version);

  // Copies the whole slot (header and payload room) with atomic loads. REQUIRES: out.size() >= capacity.
  void CopyTo(std::span<std::byte> out) const;
  uint64_t version_word() const;
  // The header fields, each read atomically (the header as a whole may mix two writes unless the caller
  // holds the lock).
  ObjectHeader ReadHeader() const;
  uint32_t capacity() const { return capacity_; }

 private:
  uint64_t LoadWord(size_t offset) const;
  void StoreWord(size_t offset, uint64_t value);
  std::byte* slot_;
  uint32_t capacity_;
};

}  // namespace fathom::object

#endif  // FATHOM_PLATFORM_OBJECT_LOCAL_OBJECT_H_
