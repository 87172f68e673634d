// Loads from memory that peers write with one-sided operations while we read it.
//
// A ring and a credit word are written by the fabric (on UCX shared memory: a plain memcpy by the peer's
// thread or process) while their owner polls them. The owner never trusts what it reads: it copies the bytes
// out once, then checks the copy (sequence, length, checksum) and uses only the copy, so a record that
// changes under the reader is seen torn and retried, never half-trusted. These concurrent accesses are by
// design, so under ThreadSanitizer the copy is made with uninstrumented loads (the writer is the fabric,
// outside our synchronization); elsewhere it is a memcpy.
#ifndef FATHOM_PLATFORM_MSG_SHARED_LOAD_H_
#define FATHOM_PLATFORM_MSG_SHARED_LOAD_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace fathom::msg {

#if defined(__SANITIZE_THREAD__)
// Volatile, so the compiler keeps the loop (no memcpy call, which TSan would intercept).
__attribute__((no_sanitize("thread"), noinline)) inline void LoadShared(void* to, const void* from, size_t n) {
  auto* out = static_cast<uint64_t*>(to);
  const volatile uint64_t* in = static_cast<const volatile uint64_t*>(from);
  for (size_t i = 0; i < n / 8; ++i) out[i] = in[i];
}
__attribute__((no_sanitize("thread"), noinline)) inline void ClearShared(void* to, size_t n) {
  volatile uint64_t* out = static_cast<volatile uint64_t*>(to);
  for (size_t i = 0; i < n / 8; ++i) out[i] = 0;
}
#else
// Copies `n` bytes (a multiple of 8, both pointers 8-byte aligned) from peer-written memory.
inline void LoadShared(void* to, const void* from, size_t n) { std::memcpy(to, from, n); }
// Zeroes `n` bytes (a multiple of 8, 8-byte aligned) of memory a peer may still write (a late write of a
// connection that is gone).
inline void ClearShared(void* to, size_t n) { std::memset(to, 0, n); }
#endif

}  // namespace fathom::msg

#endif  // FATHOM_PLATFORM_MSG_SHARED_LOAD_H_
