#include "fathom/cluster_file.h"

#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace fathom {
namespace {

constexpr size_t kMaxBytes = 64 << 10;

absl::Status Bad(int line, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("cluster file line ", line, ": ", std::string(what)));
}

}  // namespace

absl::StatusOr<ClientOptions> ParseClusterFile(std::string_view text, std::string_view directory) {
  if (text.size() > kMaxBytes) {
    return absl::InvalidArgumentError(absl::StrCat("cluster file of ", text.size(), " bytes: at most ", kMaxBytes));
  }
  ClientOptions options;
  std::set<std::string> seen;
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(absl::StripAsciiWhitespace(absl::string_view(text.data() + start, end - start)));
    start = end + 1;
    ++number;
    if (line.empty() || line[0] == '#') continue;
    const size_t equals = line.find('=');
    if (equals == std::string::npos) return Bad(number, "expected key=value");
    const std::string key(absl::StripAsciiWhitespace(line.substr(0, equals)));
    const std::string value(absl::StripAsciiWhitespace(line.substr(equals + 1)));
    if (value.empty()) return Bad(number, absl::StrCat(key, " has no value"));
    if (!seen.insert(key).second) return Bad(number, absl::StrCat(key, " is given twice"));
    if (key == "zk") {
      options.zookeeper = value;
    } else if (key == "cluster") {
      options.cluster = value;
    } else if (key == "token_file") {
      options.token_file = value[0] == '/' || directory.empty() ? value : absl::StrCat(std::string(directory), "/", value);
    } else if (key == "tls_ca" || key == "tls_cert" || key == "tls_key") {
      std::string path = value[0] == '/' || directory.empty() ? value : absl::StrCat(std::string(directory), "/", value);
      (key == "tls_ca" ? options.tls_ca_file : key == "tls_cert" ? options.tls_cert_file : options.tls_key_file) =
          std::move(path);
    } else if (key == "transports") {
      options.tcp = value.find("tcp") != std::string::npos;
    } else if (key == "lease_period") {
      if (!absl::ParseDuration(value, &options.lease_period) || options.lease_period <= absl::ZeroDuration()) {
        return Bad(number, absl::StrCat("lease_period '", value, "' is not a positive duration (e.g. 2s)"));
      }
    } else {
      return Bad(number, absl::StrCat("unknown key '", key.substr(0, 64), "'"));
    }
  }
  if (!seen.count("zk") || !seen.count("cluster")) {
    return absl::InvalidArgumentError("a cluster file needs zk= and cluster=");
  }
  if (seen.count("tls_ca") != seen.count("tls_cert") || seen.count("tls_cert") != seen.count("tls_key")) {
    return absl::InvalidArgumentError("a cluster file gives all of tls_ca, tls_cert and tls_key, or none");
  }
  return options;
}

absl::StatusOr<ClientOptions> ReadClusterFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read cluster file ", path));
  std::string text(kMaxBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  const size_t slash = path.rfind('/');
  absl::StatusOr<ClientOptions> options =
      ParseClusterFile(text, slash == std::string::npos ? "." : std::string_view(path).substr(0, slash));
  if (!options.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", options.status().message()));
  return options;
}

}  // namespace fathom
