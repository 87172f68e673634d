// The cluster token: a shared secret every control call carries in metadata "x-fathom-token".
//
// The server admits a call only if the call carries exactly one token and it equals the configured one,
// compared in constant time (the time depends on the configured token's length only, never on how much
// of a guess is right). Everything else is PERMISSION_DENIED before the request is even validated.
//
//   RETURN_IF_ERROR(ValidateClusterToken(options.cluster_token));      // at start-up, both ends
//   context.AddMetadata(std::string(kTokenMetadataKey), token);        // client, per call
//   absl::Status admitted = CheckPresentedToken(context->client_metadata(), token);   // server
#ifndef FATHOM_PLATFORM_NODE_CONTROL_CLUSTER_TOKEN_H_
#define FATHOM_PLATFORM_NODE_CONTROL_CLUSTER_TOKEN_H_

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include <grpcpp/support/string_ref.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fathom::control {

// gRPC metadata keys are lower case; a "-bin" suffix would make it binary, which the token is not.
inline constexpr std::string_view kTokenMetadataKey = "x-fathom-token";
inline constexpr size_t kMinTokenBytes = 16;
inline constexpr size_t kMaxTokenBytes = 1024;

// OK if `token` can be a cluster token: kMinTokenBytes..kMaxTokenBytes visible ASCII characters
// (0x21-0x7e), which is what gRPC carries unchanged in a text metadata value. InvalidArgument otherwise;
// the message never includes the token.
absl::Status ValidateClusterToken(std::string_view token);

// True iff a == b. Runs in time that depends only on expected.size().
bool ConstantTimeEquals(std::string_view presented, std::string_view expected);

// OK if `metadata` holds exactly one kTokenMetadataKey entry and it equals `expected`; otherwise
// PermissionDenied saying whether the token was missing, repeated or wrong (never what it was).
absl::Status CheckPresentedToken(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
                                 std::string_view expected);

// The token a program was given by its --token / --token_file flags (the file's first line; prefer the
// file: flags are visible to other users). InvalidArgument for both, or for neither (with
// `missing_message`); NotFound for an unreadable file.
absl::StatusOr<std::string> TokenFromFlags(const std::string& inline_token, const std::string& path,
                                           std::string_view missing_message);

}  // namespace fathom::control

#endif  // FATHOM_PLATFORM_NODE_CONTROL_CLUSTER_TOKEN_H_
