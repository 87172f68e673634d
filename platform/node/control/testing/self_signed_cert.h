// A throwaway self-signed TLS certificate made at test time (OpenSSL's C API, which gRPC already links),
// so TLS tests need no checked-in keys and no openssl binary.
//
//   ASSIGN_OR_RETURN(SelfSignedCertificate cert, MakeSelfSignedCertificate("localhost"));
//   // cert.certificate_pem is both the server's certificate and the CA the client trusts.
#ifndef FATHOM_PLATFORM_NODE_CONTROL_TESTING_SELF_SIGNED_CERT_H_
#define FATHOM_PLATFORM_NODE_CONTROL_TESTING_SELF_SIGNED_CERT_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace fathom::control::testing {

struct SelfSignedCertificate {
  std::string certificate_pem;
  std::string private_key_pem;
};

// An EC P-256 key and a certificate valid for a day, with subject CN=`common_name` and subject
// alternative names DNS:`common_name` and IP:127.0.0.1, marked as a CA so clients can trust it directly.
absl::StatusOr<SelfSignedCertificate> MakeSelfSignedCertificate(std::string_view common_name);

}  // namespace fathom::control::testing

#endif  // FATHOM_PLATFORM_NODE_CONTROL_TESTING_SELF_SIGNED_CERT_H_
