#!/usr/bin/env bash
# Lists every header fathom/client.h pulls in (g++ -M) and fails if one is gRPC's, protobuf's, UCX's,
# ZooKeeper's or RocksDB's, or one of Fathom's own outside fathom/ (which could bring them in later).
set -euo pipefail
cd "${TEST_SRCDIR}/${TEST_WORKSPACE}"
deps="$(g++ -std=c++20 -I. -M fathom/client.h | tr ' \\' '\n\n' | sed '/^$/d')"
grep -q 'absl/status/status.h' <<<"$deps" || { echo "the header list looks wrong (no absl):"; echo "$deps"; exit 1; }
grep -q 'fathom/transaction.h' <<<"$deps" || { echo "client.h does not include transaction.h"; exit 1; }
bad="$(grep -E 'grpc|google/protobuf|/ucp/|/ucs/|/uct/|zookeeper|rocksdb|^(platform|txn|kv|logging|coordinator|server)/' <<<"$deps" || true)"
if [[ -n "$bad" ]]; then
  echo "fathom/client.h pulls in headers an application must not need:"
  echo "$bad"
  exit 1
fi
echo "fathom/client.h: $(wc -l <<<"$deps") headers, none of gRPC, protobuf, UCX, ZooKeeper, RocksDB or Fathom's internals"
