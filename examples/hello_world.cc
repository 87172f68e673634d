// hello_world: a complete program against Fathom's public API (fathom/client.h), shown in docs/api.md.
//
//   bazel run //examples:hello_world                       # a 3-node cluster in this process
//   bazel run //examples:hello_world -- 127.0.0.1:2181 local /tmp/cluster/token
//                                                          # a running cluster: ZooKeeper, cluster, token file
//
// It writes two accounts, moves 10 from one to the other in a transaction, and prints both.
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fathom/client.h"

absl::Status Run(int argc, char** argv) {
  absl::StatusOr<std::unique_ptr<fathom::Client>> client =
      argc == 4 ? fathom::Client::Connect({.zookeeper = argv[1], .cluster = argv[2], .token_file = argv[3]})
                : fathom::Client::StartEmbedded({.nodes = 3, .backups = 1});
  if (!client.ok()) return client.status();

  absl::StatusOr<fathom::Table> accounts = (*client)->OpenOrCreateTable("accounts", {.buckets = 256});
  if (!accounts.ok()) return accounts.status();
  if (absl::Status s = (*accounts).Put("greeting", "hello, world"); !s.ok()) return s;

  // Atomic across keys (and tables); the body may run more than once, so it only touches the transaction.
  absl::Status moved = (*client)->Transact([&](fathom::Transaction& tx) -> absl::Status {
    if (absl::Status s = tx.PutInt(*accounts, "alice", 100); !s.ok()) return s;
    if (absl::Status s = tx.PutInt(*accounts, "bob", 0); !s.ok()) return s;
    absl::StatusOr<int64_t> alice = tx.GetInt(*accounts, "alice");
    if (!alice.ok()) return alice.status();
    absl::StatusOr<int64_t> bob = tx.GetInt(*accounts, "bob");
    if (!bob.ok()) return bob.status();
    if (absl::Status s = tx.PutInt(*accounts, "alice", *alice - 10); !s.ok()) return s;
    return tx.PutInt(*accounts, "bob", *bob + 10);
  });
  if (!moved.ok()) return moved;

  absl::StatusOr<std::string> greeting = (*accounts).Get("greeting");
  if (!greeting.ok()) return greeting.status();
  int64_t alice = 0, bob = 0;
  absl::Status read = (*client)->Transact([&](fathom::Transaction& tx) -> absl::Status {
    absl::StatusOr<int64_t> a = tx.GetInt(*accounts, "alice");
    if (!a.ok()) return a.status();
    absl::StatusOr<int64_t> b = tx.GetInt(*accounts, "bob");
    if (!b.ok()) return b.status();
    alice = *a;
    bob = *b;
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  std::printf("%s\nalice=%lld bob=%lld\n", greeting->c_str(), static_cast<long long>(alice),
              static_cast<long long>(bob));
  return absl::OkStatus();
}

int main(int argc, char** argv) {
  if (argc != 1 && argc != 4) {
    std::fprintf(stderr, "usage: hello_world [ZOOKEEPER CLUSTER TOKEN_FILE]\n");
    return 2;
  }
  absl::Status s = Run(argc, argv);
  if (!s.ok()) {
    std::fprintf(stderr, "hello_world: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
