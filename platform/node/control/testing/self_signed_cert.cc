#include "platform/node/control/testing/self_signed_cert.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

#include "absl/strings/str_cat.h"

namespace fathom::control::testing {
namespace {

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free>>;
using ExtensionPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION_free>>;

absl::Status OpenSslError(const char* step) {
  char text[256] = "unknown error";
  if (unsigned long code = ERR_get_error(); code != 0) ERR_error_string_n(code, text, sizeof(text));
  ERR_clear_error();
  return absl::InternalError(absl::StrCat("OpenSSL ", step, ": ", text));
}

absl::Status AddExtension(X509* cert, int nid, const std::string& value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, cert, cert, nullptr, nullptr, 0);
  ExtensionPtr extension(X509V3_EXT_conf_nid(nullptr, &context, nid, value.c_str()));
  if (extension == nullptr || X509_add_ext(cert, extension.get(), -1) != 1) return OpenSslError("extension");
  return absl::OkStatus();
}

absl::StatusOr<std::string> DrainBio(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  if (size <= 0) return OpenSslError("PEM output");
  return std::string(data, static_cast<size_t>(size));
}

}  // namespace

absl::StatusOr<SelfSignedCertificate> MakeSelfSignedCertificate(std::string_view common_name) {
  const std::string name(common_name);
  KeyPtr key(EVP_EC_gen("P-256"));
  if (key == nullptr) return OpenSslError("key generation");

  CertPtr cert(X509_new());
  if (cert == nullptr) return OpenSslError("X509_new");
  X509_set_version(cert.get(), 2);  // v3, for extensions
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  if (X509_set_pubkey(cert.get(), key.get()) != 1) return OpenSslError("set public key");
  X509_NAME* subject = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0) != 1) {
    return OpenSslError("subject name");
  }
  if (X509_set_issuer_name(cert.get(), subject) != 1) return OpenSslError("issuer name");
  for (auto [nid, value] : {std::pair<int, std::string>{NID_basic_constraints, "critical,CA:TRUE"},
                            {NID_subject_alt_name, absl::StrCat("DNS:", name, ",IP:127.0.0.1")}}) {
    if (absl::Status added = AddExtension(cert.get(), nid, value); !added.ok()) return added;
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return OpenSslError("sign");

  BioPtr cert_bio(BIO_new(BIO_s_mem()));
  BioPtr key_bio(BIO_new(BIO_s_mem()));
  if (cert_bio == nullptr || key_bio == nullptr) return OpenSslError("BIO_new");
  if (PEM_write_bio_X509(cert_bio.get(), cert.get()) != 1) return OpenSslError("write certificate");
  if (PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return OpenSslError("write key");
  }
  SelfSignedCertificate out;
  absl::StatusOr<std::string> certificate_pem = DrainBio(cert_bio.get());
  if (!certificate_pem.ok()) return certificate_pem.status();
  absl::StatusOr<std::string> key_pem = DrainBio(key_bio.get());
  if (!key_pem.ok()) return key_pem.status();
  out.certificate_pem = *std::move(certificate_pem);
  out.private_key_pem = *std::move(key_pem);
  return out;
}

}  // namespace fathom::control::testing
