#include "tests/util/fathomd_process.h"

#include "absl/strings/str_cat.h"

namespace fathom::testing {

absl::StatusOr<FathomdProcess> StartFathomd(int node_id, const std::vector<std::string>& flags,
                                            absl::Duration ready_timeout) {
  std::vector<std::string> argv = {RunfilePath("platform/node/fathomd"), absl::StrCat("--node_id=", node_id)};
  argv.insert(argv.end(), flags.begin(), flags.end());
  auto process = Subprocess::Start(argv);
  if (!process.ok()) return process.status();
  auto line = (*process)->ReadLine(ready_timeout);
  if (!line.ok()) {
    return absl::Status(line.status().code(), absl::StrCat("fathomd node ", node_id, ": ", line.status().message()));
  }
  const std::string prefix = absl::StrCat("READY node=", node_id, " control=");
  if (line->rfind(prefix, 0) != 0) {
    return absl::InternalError(absl::StrCat("fathomd node ", node_id, " printed '", *line, "' instead of READY"));
  }
  return FathomdProcess{std::move(*process), line->substr(prefix.size())};
}

absl::StatusOr<std::unique_ptr<control::ControlClient>> ConnectControl(const std::string& address,
                                                                       const std::string& token,
                                                                       absl::Duration call_timeout) {
  control::ControlClientOptions options;
  options.target = address;
  options.cluster_token = token;
  options.call_timeout = call_timeout;
  return control::ControlClient::Create(options);
}

}  // namespace fathom::testing
