#include "platform/object/local_object.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "platform/object/object_codec.h"

namespace fathom::object {

uint64_t LocalObject::LoadWord(size_t offset) const {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(slot_ + offset)).load(std::memory_order_relaxed);
}

void LocalObject::StoreWord(size_t offset, uint64_t value) {
  std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(slot_ + offset)).store(value, std::memory_order_relaxed);
}

uint64_t LocalObject::version_word() const {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(slot_ + kVersionOffset))
      .load(std::memory_order_acquire);
}

ObjectHeader LocalObject::ReadHeader() const {
  ObjectHeader h;
  h.checksum = LoadWord(kChecksumOffset);
  h.version_word = version_word();
  const uint64_t incarnation_length = LoadWord(kIncarnationOffset);
  const uint64_t capacity_flags = LoadWord(kCapacityOffset);
  h.incarnation = static_cast<uint32_t>(incarnation_length);
  h.payload_length = static_cast<uint32_t>(incarnation_length >> 32);
  h.capacity = static_cast<uint32_t>(capacity_flags);
  h.flags = static_cast<uint32_t>(capacity_flags >> 32);
  return h;
}

absl::StatusOr<uint64_t> LocalObject::TryLock(std::optional<uint64_t> expected_version) {
  std::atomic_ref<uint64_t> word(*reinterpret_cast<uint64_t*>(slot_ + kVersionOffset));
  uint64_t current = word.load(std::memory_order_acquire);
  if ((current & kLockBit) != 0) return absl::AbortedError("object is locked");
  if (expected_version.has_value() && current != *expected_version) {
    return absl::AbortedError(absl::StrCat("object version ", current, " is not ", *expected_version));
  }
  if (!word.compare_exchange_strong(current, current | kLockBit, std::memory_order_acquire)) {
    return absl::AbortedError("object was locked concurrently");
  }
  return current;
}

absl::StatusOr<uint64_t> LocalObject::Lock(int max_attempts) {
  for (int attempt = 0; attempt < max_attempts; ++attempt) {
    auto locked = TryLock();
    if (locked.ok()) return locked;
    if (attempt > 16) std::this_thread::yield();
  }
  return absl::UnavailableError(absl::StrCat("object still locked after ", max_attempts, " attempts"));
}

void LocalObject::InstallAndUnlock(uint64_t locked_version, std::span<const std::byte> payload,
                                   uint32_t incarnation, uint32_t flags) {
  InstallAtVersionAndUnlock(((locked_version & kVersionMask) + 1) & kVersionMask, payload, incarnation, flags);
}

void LocalObject::InstallAtVersionAndUnlock(uint64_t new_version, std::span<const std::byte> payload,
                                            uint32_t incarnation, uint32_t flags) {
  // Bytes past the payload stay zero (the old payload's tail is cleared), so a slot's bytes depend only
  // on its last state, not on its history: a backup that skips stale states ends byte-identical.
  const uint64_t old_length = static_cast<uint32_t>(LoadWord(kIncarnationOffset) >> 32);
  const uint64_t old_end = std::min<uint64_t>((old_length + 7) / 8 * 8, capacity_ - kHeaderBytes);
  // Payload first, a word at a time; the tail word is zero-padded.
  const size_t full_words = payload.size() / 8;
  for (size_t i = 0; i < full_words; ++i) {
    uint64_t w;
    std::memcpy(&w, payload.data() + i * 8, 8);
    StoreWord(kHeaderBytes + i * 8, w);
  }
  size_t new_end = full_words * 8;
  if (size_t tail = payload.size() % 8; tail != 0) {
    uint64_t w = 0;
    std::memcpy(&w, payload.data() + full_words * 8, tail);
    StoreWord(kHeaderBytes + full_words * 8, w);
    new_end += 8;
  }
  for (size_t offset = new_end; offset < old_end; offset += 8) StoreWord(kHeaderBytes + offset, 0);
  new_version &= kVersionMask;
  StoreWord(kIncarnationOffset, uint64_t{static_cast<uint32_t>(payload.size())} << 32 | incarnation);
  StoreWord(kCapacityOffset, uint64_t{flags} << 32 | capacity_);
  StoreWord(kChecksumOffset, ComputeChecksum(new_version, incarnation, capacity_, flags, payload));
  // Release: a local reader that sees the new version sees everything above.
  std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(slot_ + kVersionOffset))
      .store(new_version, std::memory_order_release);
}

void LocalObject::Unlock(uint64_t locked_version) {
  std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(slot_ + kVersionOffset))
      .store(locked_version & kVersionMask, std::memory_order_release);
}

void LocalObject::CopyTo(std::span<std::byte> out) const {
  // Version first with acquire, so a copy taken after an install sees at least that install.
  uint64_t version = version_word();
#if defined(__SANITIZE_THREAD__)
  // Word by word with atomic loads, so ThreadSanitizer can check everything else in the process.
  for (size_t offset = 0; offset < capacity_; offset += 8) {
    if (offset == kVersionOffset) continue;
    uint64_t w = LoadWord(offset);
    std::memcpy(out.data() + offset, &w, 8);
  }
#else
  // A plain copy may race the writer, as a one-sided read does: that is the design (a seqlock read).
  // The copy is validated by its checksum, never the source, and memcpy is 5x faster than atomic words.
  std::atomic_thread_fence(std::memory_order_acquire);
  std::memcpy(out.data(), slot_, capacity_);
#endif
  std::memcpy(out.data() + kVersionOffset, &version, 8);
}

}  // namespace fathom::object
