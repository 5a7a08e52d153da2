#include "server-core/security/authz_internode.h"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "server-core/security/authz_claims.h"

namespace tock::server::security {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};

// A subject quoted in a message: escaped, and cut (a certificate's subject has no length
// bound of its own).
std::string Quoted(const std::string& subject) {
  constexpr size_t kMaxShown = 512;
  std::string shown = absl::CHexEscape(subject.substr(0, kMaxShown));
  return absl::StrCat("\"", shown, subject.size() > kMaxShown ? "...\"" : "\"");
}

}  // namespace

absl::StatusOr<std::string> CertificateSubject(const std::string& cert_file) {
  std::unique_ptr<BIO, BioFree> file(BIO_new_file(cert_file.c_str(), "r"));
  std::unique_ptr<X509, X509Free> cert(
      file == nullptr ? nullptr : PEM_read_bio_X509(file.get(), nullptr, nullptr, nullptr));
  if (cert == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("config tls.internode.cert_file: no PEM certificate could be read from ",
                     cert_file));
  }
  std::unique_ptr<BIO, BioFree> out(BIO_new(BIO_s_mem()));
  if (out == nullptr ||
      X509_NAME_print_ex(out.get(), X509_get_subject_name(cert.get()), 0, XN_FLAG_RFC2253) < 0) {
    return absl::InternalError("could not print the subject of tls.internode.cert_file");
  }
  char* data = nullptr;
  const long length = BIO_get_mem_data(out.get(), &data);
  return length > 0 && data != nullptr ? std::string(data, static_cast<size_t>(length))
                                       : std::string();
}

absl::Status CheckInternodeSubject(const AuthorizationConfig& authorization,
                                   const rpc::InternodeTls& internode) {
  if (internode.cert_file.empty()) return absl::OkStatus();
  absl::StatusOr<std::string> subject = CertificateSubject(internode.cert_file);
  if (!subject.ok()) return subject.status();
  auto it = authorization.subjects.find(*subject);
  if (it != authorization.subjects.end() && MapPermissions(it->second).system >= Role::kAdmin) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "config authorization.subjects: the tls.internode certificate's subject ", Quoted(*subject),
      it == authorization.subjects.end() ? " is not listed"
                                         : " is listed without temporal-system:admin",
      "; calls from other clusters (replication, DC redirection) carry that certificate and "
      "no token, and need the temporal-system:admin role: add ",
      Quoted(*subject), ": [\"temporal-system:admin\"]"));
}

}  // namespace tock::server::security
