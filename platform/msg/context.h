// Completion contexts of the msg layer, so that a thread's event loop can route its Worker's completions.
//
// A context is [tag:8 | owner:24 | serial:32]: the tag kMsgContextTag marks the msg layer, the owner is the
// ring (sender or receiver) within one Messenger that posted the operation, the serial tells its operations
// apart. Other layers posting on the same worker must use other tags.
#ifndef FATHOM_PLATFORM_MSG_CONTEXT_H_
#define FATHOM_PLATFORM_MSG_CONTEXT_H_

#include <cstdint>

namespace fathom::msg {

inline constexpr uint64_t kMsgContextTag = 0x4D;  // 'M'
inline constexpr uint32_t kMaxContextOwners = 1u << 24;

constexpr uint64_t MsgContext(uint32_t owner, uint32_t serial) {
  return (kMsgContextTag << 56) | (uint64_t{owner & (kMaxContextOwners - 1)} << 32) | serial;
}
constexpr bool IsMsgContext(uint64_t context) { return (context >> 56) == kMsgContextTag; }
constexpr uint32_t ContextOwner(uint64_t context) {
  return static_cast<uint32_t>(context >> 32) & (kMaxContextOwners - 1);
}
constexpr uint32_t ContextSerial(uint64_t context) { return static_cast<uint32_t>(context); }

}  // namespace fathom::msg

#endif  // FATHOM_PLATFORM_MSG_CONTEXT_H_
