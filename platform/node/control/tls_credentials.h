// gRPC credentials for the control service: TLS when certificate files are configured, plaintext
// otherwise. Files are read once, when the server starts or the client is created, so a wrong path is
// a clear error then rather than a failed handshake later.
//
//   ServerTlsFiles files{.certificate_path = "node.crt", .private_key_path = "node.key"};
//   ASSIGN_OR_RETURN(auto server_credentials, MakeServerCredentials(files));   // insecure if both empty
//   ASSIGN_OR_RETURN(auto channel_credentials, MakeChannelCredentials("ca.crt"));  // insecure if ""
#ifndef FATHOM_PLATFORM_NODE_CONTROL_TLS_CREDENTIALS_H_
#define FATHOM_PLATFORM_NODE_CONTROL_TLS_CREDENTIALS_H_

#include <memory>
#include <string>
#include <string_view>

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>

#include "absl/status/statusor.h"

namespace fathom::control {

// PEM files of the server's certificate (chain) and its private key; both set, or both empty.
struct ServerTlsFiles {
  std::string certificate_path;
  std::string private_key_path;
  bool enabled() const { return !certificate_path.empty() || !private_key_path.empty(); }
};

inline constexpr size_t kMaxPemFileBytes = 1 << 20;

// Reads a PEM file and checks that it holds a PEM block of `block` ("CERTIFICATE", "PRIVATE KEY", which
// also matches "EC PRIVATE KEY" and "RSA PRIVATE KEY"). NotFound / PermissionDenied / ... from the
// errno when unreadable, InvalidArgument when empty, too large or not PEM; messages name `what` and path.
absl::StatusOr<std::string> ReadPemFile(const std::string& path, std::string_view what, std::string_view block);

// SslServerCredentials from the files, or InsecureServerCredentials when TLS is off. InvalidArgument if
// only one of the two paths is set.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const ServerTlsFiles& files);

// SslCredentials trusting the CA certificates in `ca_path`, or InsecureChannelCredentials when empty.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(const std::string& ca_path);

}  // namespace fathom::control

#endif  // FATHOM_PLATFORM_NODE_CONTROL_TLS_CREDENTIALS_H_
