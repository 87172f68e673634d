// --cluster_file for command-line tools (fathomctl, fathom-resp, the YCSB driver): the file's values
// become the tool's connection flags, except those given on the command line with a value other than
// their default, which win.
//
//   absl::ParseCommandLine(argc, argv);
//   RETURN_IF_ERROR(fathom::FillFlagsFromClusterFile(absl::GetFlag(FLAGS_cluster_file), {}));
#ifndef FATHOM_FATHOM_CLUSTER_FILE_FLAGS_H_
#define FATHOM_FATHOM_CLUSTER_FILE_FLAGS_H_

#include <string>

#include "absl/status/status.h"

namespace fathom {

// The tool's flag names (empty: it has no such flag).
struct ClusterFlagNames {
  std::string zk = "zk";
  std::string cluster = "cluster";
  std::string token_file = "token_file";
  std::string tcp = "tcp";        // a bool flag: true when the members run tcp
  std::string fabric = "";        // a string flag: "tcp" or "shm"
  std::string tls_ca = "tls_ca";
  std::string tls_cert = "tls_cert";
  std::string tls_key = "tls_key";
};

// Nothing for an empty path. Errors: the file's (ReadClusterFile), or Internal for a flag name the
// program does not define.
absl::Status FillFlagsFromClusterFile(const std::string& path, const ClusterFlagNames& names);

}  // namespace fathom

#endif  // FATHOM_FATHOM_CLUSTER_FILE_FLAGS_H_
