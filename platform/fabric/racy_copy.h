// RacyCopy: the copy a fabric makes between registered memory and a caller's buffer, racing with the
// owner's threads by design (readers check what they copied: self-verifying objects, checked ring records).
// Used where the copy runs in this process's instrumented code: the sim fabric, and UCX's message reads and
// writes at their target.
#ifndef FATHOM_PLATFORM_FABRIC_RACY_COPY_H_
#define FATHOM_PLATFORM_FABRIC_RACY_COPY_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace fathom::fabric {

// A one-sided copy races with the owner's CPU by design (readers check what they copied). Under
// ThreadSanitizer the side in registered memory is accessed with relaxed atomics, word by word where
// aligned, as the owner's own accesses are (LocalObject), so TSan checks everything else; otherwise memcpy.
inline void RacyCopy(std::byte* to, const std::byte* from, size_t length, bool to_is_shared) {
#if defined(__SANITIZE_THREAD__)
  size_t i = 0;
  auto shared_address = [&](size_t at) { return reinterpret_cast<uintptr_t>(to_is_shared ? to + at : from + at); };
  while (i < length) {
    if (shared_address(i) % 8 == 0 && length - i >= 8) {
      uint64_t word;
      if (to_is_shared) {
        std::memcpy(&word, from + i, 8);
        std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(to + i)).store(word, std::memory_order_relaxed);
      } else {
        word = std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(const_cast<std::byte*>(from + i)))
                   .load(std::memory_order_relaxed);
        std::memcpy(to + i, &word, 8);
      }
      i += 8;
    } else {
      if (to_is_shared) {
        std::atomic_ref<std::byte>(to[i]).store(from[i], std::memory_order_relaxed);
      } else {
        to[i] = std::atomic_ref<std::byte>(const_cast<std::byte&>(from[i])).load(std::memory_order_relaxed);
      }
      ++i;
    }
  }
#else
  (void)to_is_shared;
  std::memcpy(to, from, length);
#endif
}

}  // namespace fathom::fabric

#endif  // FATHOM_PLATFORM_FABRIC_RACY_COPY_H_
