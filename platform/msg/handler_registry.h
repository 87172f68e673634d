// HandlerRegistry: which function handles each RPC message type.
//
//   registry.Register(kEcho, [](const Message& m, std::string* reply) {
//     reply->assign(m.payload);  // a request: fill the reply (it starts empty)
//     return absl::OkStatus();   // or an error, which becomes the caller's status
//   });
//
// A handler runs on the polling thread, inside Messenger::Poll, once per request or one-way message of its
// type. `reply` is null for a one-way message. Returning InvalidArgument or OutOfRange says the message was
// malformed (e.g. CheckRange failed): it is counted as rejected (RejectReason::kBadPayload) and counts toward
// the ring's consecutive-reject limit. Any other error is an ordinary answer. Handlers may Call and Send;
// they must not Poll or register handlers.
#ifndef FATHOM_PLATFORM_MSG_HANDLER_REGISTRY_H_
#define FATHOM_PLATFORM_MSG_HANDLER_REGISTRY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "platform/msg/pending_calls.h"

namespace fathom::msg {

using MessageType = uint16_t;

struct Message {
  NodeId peer = 0;            // the node that sent it
  MessageType type = 0;
  std::string_view payload;   // valid during the handler call only
};

using Handler = absl::AnyInvocable<absl::Status(const Message& message, std::string* reply)>;

class HandlerRegistry {
 public:
  // InvalidArgument for type 0 (ring padding) or an empty handler; AlreadyExists if the type is taken.
  absl::Status Register(MessageType type, Handler handler);
  // The handler of `type`, or null. The pointer stays valid until the next Register.
  Handler* Find(MessageType type);

 private:
  absl::flat_hash_map<MessageType, Handler> handlers_;
};

// Whether a handler's status says the message itself was malformed.
inline bool IsMalformedStatus(const absl::Status& status) {
  return absl::IsInvalidArgument(status) || absl::IsOutOfRange(status);
}

}  // namespace fathom::msg

#endif  // FATHOM_PLATFORM_MSG_HANDLER_REGISTRY_H_
