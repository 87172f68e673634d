#include "platform/msg/handler_registry.h"

#include "absl/strings/str_cat.h"

namespace fathom::msg {

absl::Status HandlerRegistry::Register(MessageType type, Handler handler) {
  if (type == 0) return absl::InvalidArgumentError("message type 0 is reserved for ring padding");
  if (!handler) return absl::InvalidArgumentError("empty handler");
  if (!handlers_.try_emplace(type, std::move(handler)).second) {
    return absl::AlreadyExistsError(absl::StrCat("message type ", type, " already has a handler"));
  }
  return absl::OkStatus();
}

Handler* HandlerRegistry::Find(MessageType type) {
  auto it = handlers_.find(type);
  return it == handlers_.end() ? nullptr : &it->second;
}

}  // namespace fathom::msg
