// The ZooKeeper identity of a cluster, derived from its token: every process that holds the token (its
// fathomd, the YCSB driver, fathomctl, fathom-resp) adds the same digest credentials to its ZooKeeper
// session, and the cluster's znodes (/fathom/<cluster> and below) carry an ACL that lets only that
// identity read or change them. ZooKeeper sees the password in clear and keeps the SHA-1 of
// "user:password" in each ACL, so the password is a hash of the token, never the token itself.
// docs/formats/configuration.md, "Access".
#ifndef FATHOM_COORDINATOR_ZOOKEEPER_ACL_H_
#define FATHOM_COORDINATOR_ZOOKEEPER_ACL_H_

#include <string>
#include <string_view>

namespace fathom::coordinator {

struct ZooKeeperCredentials {
  std::string auth;    // "fathom:<password>": zoo_add_auth(zh, "digest", auth, ...)
  std::string acl_id;  // "fathom:<base64 of SHA-1 of auth>": the id of the znodes' digest ACL
};

// The credentials of the cluster whose token is `token` (a non-empty token; validated elsewhere).
ZooKeeperCredentials ZooKeeperCredentialsFor(std::string_view token);

}  // namespace fathom::coordinator

#endif  // FATHOM_COORDINATOR_ZOOKEEPER_ACL_H_
