// Options of the public API (client.h): how to reach a cluster, or what embedded cluster to start, and
// how a new table is laid out. No header of gRPC, UCX, ZooKeeper or RocksDB is behind this one.
#ifndef FATHOM_FATHOM_OPTIONS_H_
#define FATHOM_FATHOM_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"

namespace fathom {

// A running cluster of fathomd processes, members on ZooKeeper (fathomd --zk ... --cluster ...). The
// client joins it as a client-only member: a node of its own that holds no data, reads one-sided and
// coordinates its own transactions.
struct ClientOptions {
  std::string zookeeper;           // host:port[,host:port], the members' --zk
  std::string cluster = "fathom";  // the members' --cluster
  std::string token;               // the cluster token, or:
  std::string token_file;          // a file holding it (the members' --token_file)
  bool tcp = false;                // the members run --transports=tcp (default: shared memory, one host)
  absl::Duration join_timeout = absl::Seconds(30);
  absl::Duration lease_period = absl::Seconds(2);  // the members' --lease_period
  // The members' control services use TLS (fathomd --tls_cert/--tls_key/--tls_ca): the CA file their
  // certificates chain to, and a certificate and key that CA signed for this client's own control service
  // (the members call it to connect back). All three or none; PEM files.
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  // A Table's Get, Put or Delete that fails because the cluster is recovering (a member died and its
  // regions move to their backups: Unavailable, DeadlineExceeded) is tried again, with backoff, for up to
  // this long after its first failure; only then is the failure returned. Zero: never again.
  absl::Duration retry_deadline = absl::Seconds(10);
  // How long the client's node threads keep polling after their last work before they sleep (fathomd's
  // --busy_poll): shorter waits for replies when the client has a core to spare. 0 to 1 s; 0: sleep at once.
  absl::Duration busy_poll = absl::ZeroDuration();
};

// A cluster in this process, for tests and trying things out: `nodes` servers over UCX shared memory,
// each region replicated on `backups` + 1 of them.
struct EmbeddedOptions {
  int nodes = 3;
  int backups = 1;
  int threads = 2;                     // per node
  uint64_t memory_bytes = 64ull << 20;  // per node
};

enum class TableKind {
  kHopscotch,  // FaRM's: a key within 8 buckets of its home; fills to ~95%
  kCuckoo,     // Pilaf's 3-way cuckoo
};

struct TableOptions {
  TableKind kind = TableKind::kHopscotch;
  uint64_t buckets = 1024;  // 8 keys each; a GET mostly reads one bucket below ~75% fill
  // A key and value of up to this many bytes together live in the bucket (a GET reads one object);
  // larger ones in an object of their own that the bucket points to (two reads). Buckets are sized for 8
  // of them: 0 (the default, 232) makes 2 KiB buckets; when values are all larger anyway, 24 makes 512-byte
  // buckets (less memory, less to copy per GET). At most 2027.
  uint32_t inline_bytes = 0;
};

}  // namespace fathom

#endif  // FATHOM_FATHOM_OPTIONS_H_
