#include "platform/node/control/cluster_token.h"

#include <cstdint>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace fathom::control {

absl::Status ValidateClusterToken(std::string_view token) {
  if (token.size() < kMinTokenBytes || token.size() > kMaxTokenBytes) {
    return absl::InvalidArgumentError(absl::StrCat("cluster token: ", token.size(), " characters, need ",
                                                   kMinTokenBytes, " to ", kMaxTokenBytes));
  }
  for (char c : token) {
    if (c < 0x21 || c > 0x7e) {
      return absl::InvalidArgumentError(
          "cluster token: only visible ASCII characters (0x21-0x7e) are allowed");
    }
  }
  return absl::OkStatus();
}

bool ConstantTimeEquals(std::string_view presented, std::string_view expected) {
  // Walks all of `expected` whatever `presented` holds, and folds differences in without branching on
  // them, so a guess that is right for longer takes no longer.
  uint8_t difference = presented.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    const uint8_t guess = i < presented.size() ? static_cast<uint8_t>(presented[i]) : 0;
    difference |= guess ^ static_cast<uint8_t>(expected[i]);
  }
  // Read back through a volatile so the compiler keeps the full fold rather than short-circuiting it.
  volatile uint8_t result = difference;
  return result == 0;
}

absl::Status CheckPresentedToken(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
                                 std::string_view expected) {
  const grpc::string_ref key(kTokenMetadataKey.data(), kTokenMetadataKey.size());
  auto [first, last] = metadata.equal_range(key);
  if (first == last) {
    return absl::PermissionDeniedError(absl::StrCat("missing cluster token (metadata '",
                                                    std::string(kTokenMetadataKey), "')"));
  }
  if (std::next(first) != last) return absl::PermissionDeniedError("more than one cluster token");
  const std::string_view presented(first->second.data(), first->second.size());
  if (!ConstantTimeEquals(presented, expected)) return absl::PermissionDeniedError("wrong cluster token");
  return absl::OkStatus();
}

absl::StatusOr<std::string> TokenFromFlags(const std::string& inline_token, const std::string& path,
                                           std::string_view missing_message) {
  if (!inline_token.empty() && !path.empty()) return absl::InvalidArgumentError("give --token or --token_file, not both");
  if (!inline_token.empty()) return inline_token;
  if (path.empty()) return absl::InvalidArgumentError(std::string(missing_message));
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read token file ", path));
  std::string token;
  std::getline(in, token);
  return token;
}

}  // namespace fathom::control
