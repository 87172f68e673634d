#include "platform/node/control/tls_credentials.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace fathom::control {

absl::StatusOr<std::string> ReadPemFile(const std::string& path, std::string_view what, std::string_view block) {
  const std::string label = absl::StrCat(std::string(what), " file '", path, "'");
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", label));
  std::string contents;
  char buffer[16384];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      close(fd);
      return absl::ErrnoToStatus(error, absl::StrCat("cannot read ", label));
    }
    if (n == 0) break;
    contents.append(buffer, static_cast<size_t>(n));
    if (contents.size() > kMaxPemFileBytes) {
      close(fd);
      return absl::InvalidArgumentError(absl::StrCat(label, " is larger than ", kMaxPemFileBytes, " bytes"));
    }
  }
  close(fd);
  if (contents.empty()) return absl::InvalidArgumentError(absl::StrCat(label, " is empty"));
  // The contents are only recognised here; OpenSSL parses them when gRPC builds the TLS context.
  const std::string footer = absl::StrCat(std::string(block), "-----");
  if (!absl::StrContains(contents, "-----BEGIN ") || !absl::StrContains(contents, footer)) {
    return absl::InvalidArgumentError(absl::StrCat(label, " holds no PEM block '", std::string(block), "'"));
  }
  return contents;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const ServerTlsFiles& files) {
  if (!files.enabled()) return grpc::InsecureServerCredentials();
  if (files.certificate_path.empty() || files.private_key_path.empty()) {
    return absl::InvalidArgumentError("TLS needs both a certificate and a private key path");
  }
  absl::StatusOr<std::string> certificate = ReadPemFile(files.certificate_path, "TLS certificate", "CERTIFICATE");
  if (!certificate.ok()) return certificate.status();
  absl::StatusOr<std::string> key = ReadPemFile(files.private_key_path, "TLS private key", "PRIVATE KEY");
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back({*std::move(key), *std::move(certificate)});
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(const std::string& ca_path) {
  if (ca_path.empty()) return grpc::InsecureChannelCredentials();
  absl::StatusOr<std::string> ca = ReadPemFile(ca_path, "TLS CA certificate", "CERTIFICATE");
  if (!ca.ok()) return ca.status();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = *std::move(ca);
  return grpc::SslCredentials(options);
}

}  // namespace fathom::control
