#include "fathom/cluster_file_flags.h"

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "fathom/cluster_file.h"

namespace fathom {
namespace {

// Sets flag `name` to `value` if it still has its default value (this absl cannot tell whether the command
// line gave it: giving the default value explicitly counts as not giving it).
absl::Status Fill(const std::string& name, const std::string& value) {
  if (name.empty()) return absl::OkStatus();
  absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  if (flag == nullptr) return absl::InternalError(absl::StrCat("this program has no --", name));
  if (flag->CurrentValue() != flag->DefaultValue()) return absl::OkStatus();
  std::string error;
  if (!flag->ParseFrom(value, &error)) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, "=", value, " from the cluster file: ", error));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status FillFlagsFromClusterFile(const std::string& path, const ClusterFlagNames& names) {
  if (path.empty()) return absl::OkStatus();
  absl::StatusOr<ClientOptions> file = ReadClusterFile(path);
  if (!file.ok()) return file.status();
  for (absl::Status s : {Fill(names.zk, file->zookeeper), Fill(names.cluster, file->cluster),
                         file->token_file.empty() ? absl::OkStatus() : Fill(names.token_file, file->token_file),
                         Fill(names.tcp, file->tcp ? "true" : "false"),
                         Fill(names.fabric, file->tcp ? "tcp" : "shm"),
                         file->tls_ca_file.empty() ? absl::OkStatus() : Fill(names.tls_ca, file->tls_ca_file),
                         file->tls_cert_file.empty() ? absl::OkStatus() : Fill(names.tls_cert, file->tls_cert_file),
                         file->tls_key_file.empty() ? absl::OkStatus() : Fill(names.tls_key, file->tls_key_file)}) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace fathom
