// A cluster file: how to reach a running cluster, written by `tools/cluster.sh start` (DIR/cluster) and
// read by the tools (`--cluster_file`) and by applications, so nobody copies addresses and names by hand
// (docs/formats/cluster-file.md).
//
//   ASSIGN_OR_RETURN(fathom::ClientOptions options, fathom::ReadClusterFile("/tmp/fathom-cluster.x/cluster"));
//   ASSIGN_OR_RETURN(std::unique_ptr<fathom::Client> client, fathom::Client::Connect(options));
//
// Lines `key=value`; blank lines and lines starting with '#' are skipped. Keys: zk (required), cluster
// (required), token_file (relative paths are taken from the file's directory), transports (the members'
// --transports: tcp in it means a tcp client), lease_period (an absl duration, e.g. 2s), tls_ca,
// tls_cert, tls_key (all three or none; paths as token_file's: the control services use TLS).
#ifndef FATHOM_FATHOM_CLUSTER_FILE_H_
#define FATHOM_FATHOM_CLUSTER_FILE_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "fathom/options.h"

namespace fathom {

// NotFound if the file cannot be read; InvalidArgument, naming the line, for anything it does not expect
// (an unknown or repeated key, a line without '=', an empty value, a bad duration, a file over 64 KiB).
absl::StatusOr<ClientOptions> ReadClusterFile(const std::string& path);
// The same, from the text; `directory` resolves a relative token_file.
absl::StatusOr<ClientOptions> ParseClusterFile(std::string_view text, std::string_view directory);

}  // namespace fathom

#endif  // FATHOM_FATHOM_CLUSTER_FILE_H_
