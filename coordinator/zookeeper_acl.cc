// See zookeeper_acl.h.
#include "coordinator/zookeeper_acl.h"

#include <openssl/evp.h>

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace fathom::coordinator {
namespace {

constexpr char kUser[] = "fathom";
// Keeps this hash of the token apart from any other use of it.
constexpr char kPasswordContext[] = "fathom zookeeper digest password v1";

std::string Digest(const EVP_MD* md, std::string_view bytes) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  // Cannot fail for these built-in digests and in-memory input.
  EVP_Digest(bytes.data(), bytes.size(), out, &length, md, nullptr);
  return std::string(reinterpret_cast<const char*>(out), length);
}

}  // namespace

ZooKeeperCredentials ZooKeeperCredentialsFor(std::string_view token) {
  std::string input = kPasswordContext;
  input.push_back('\0');
  input.append(token.data(), token.size());
  const std::string password = absl::BytesToHexString(Digest(EVP_sha256(), input));
  ZooKeeperCredentials credentials;
  credentials.auth = absl::StrCat(kUser, ":", password);
  // ZooKeeper's DigestAuthenticationProvider: user ":" base64(sha1(user ":" password)).
  credentials.acl_id = absl::StrCat(kUser, ":", absl::Base64Escape(Digest(EVP_sha1(), credentials.auth)));
  return credentials;
}

}  // namespace fathom::coordinator
