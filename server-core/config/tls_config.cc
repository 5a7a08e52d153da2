#include "server-core/config/tls_config.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/common/duration.h"
#include "server-core/config/yaml_fields.h"

namespace tock::server {
namespace {

using config_yaml::CheckKeys;
using config_yaml::FieldError;
using config_yaml::Read;

// A PEM bundle of certificates is a few KiB; a CA bundle (Debian's) about 200 KiB.
constexpr int64_t kMaxPemBytes = 1 << 20;
constexpr size_t kMaxPathLength = 4096;

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

// The whole file, at most kMaxPemBytes; an error naming `key` (and the path, which the
// operator wrote) otherwise.
absl::StatusOr<std::string> ReadPemFile(const std::string& key, const std::string& path) {
  if (path.size() > kMaxPathLength) {
    return FieldError(key, absl::StrCat("the path is over ", kMaxPathLength, " characters"));
  }
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return FieldError(key, absl::StrCat("cannot read ", path, ": ", strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) return FieldError(key, absl::StrCat(path, " is not a regular file"));
  if (st.st_size > kMaxPemBytes) {
    return FieldError(key, absl::StrCat(path, " is over ", kMaxPemBytes, " bytes; not a PEM file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return FieldError(key, absl::StrCat("cannot read ", path, ": ", strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::unique_ptr<BIO, BioFree> Bio(const std::string& pem) {
  return std::unique_ptr<BIO, BioFree>(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// The first certificate of a PEM file (a chain or a CA bundle).
absl::StatusOr<std::unique_ptr<X509, X509Free>> ReadCertificate(const std::string& key,
                                                                const std::string& path) {
  absl::StatusOr<std::string> pem = ReadPemFile(key, path);
  if (!pem.ok()) return pem.status();
  auto bio = Bio(*pem);
  std::unique_ptr<X509, X509Free> cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  if (cert == nullptr) {
    return FieldError(key, absl::StrCat(path, " holds no PEM certificate (-----BEGIN CERTIFICATE-----)"));
  }
  return cert;
}

// A passphrase callback that never asks: OpenSSL would otherwise prompt on the terminal.
int NoPassphrase(char*, int, int, void*) { return -1; }

absl::Status CheckKeyPair(const std::string& section, const std::string& cert_file,
                          const std::string& key_file) {
  const std::string cert_key = section + ".cert_file", key_key = section + ".key_file";
  absl::StatusOr<std::unique_ptr<X509, X509Free>> cert = ReadCertificate(cert_key, cert_file);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> pem = ReadPemFile(key_key, key_file);
  if (!pem.ok()) return pem.status();
  auto bio = Bio(*pem);
  std::unique_ptr<EVP_PKEY, KeyFree> pkey(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr));
  ERR_clear_error();
  if (pkey == nullptr) {
    return FieldError(key_key, absl::StrCat(key_file,
                                            " holds no unencrypted PEM private key (an "
                                            "encrypted key cannot be used: there is no "
                                            "passphrase to give)"));
  }
  if (X509_check_private_key(cert->get(), pkey.get()) != 1) {
    ERR_clear_error();
    return FieldError(key_key, absl::StrCat(key_file, " is not the key of the certificate in ",
                                            cert_key, " (", cert_file, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status TlsConfig::Validate() const {
  if (reload_interval < absl::Seconds(1) || reload_interval > absl::Hours(1)) {
    return FieldError("tls.reload_interval", absl::StrCat("must be between 1s and 1h; got ",
                                                         FormatHumanDuration(reload_interval)));
  }
  // The frontend port also takes the calls of the other hosts and of this server's own
  // batch and schedule runners, which dial with tls.internode.
  if (frontend.has_value() && !internode.has_value()) {
    return FieldError("tls.internode",
                      "is required with tls.frontend: other hosts and this server itself call "
                      "the frontend port, so they need its CA (ca_file) to dial it over TLS");
  }
  if (internode.has_value() && !frontend.has_value()) {
    return FieldError("tls.frontend",
                      "is required with tls.internode: other hosts and this server itself "
                      "dial the frontend port with TLS, so it must serve TLS");
  }
  if (frontend.has_value()) {
    const rpc::FrontendTls& f = *frontend;
    if (f.cert_file.empty()) return FieldError("tls.frontend.cert_file", "is required");
    if (f.key_file.empty()) return FieldError("tls.frontend.key_file", "is required");
    if (absl::Status s = CheckKeyPair("tls.frontend", f.cert_file, f.key_file); !s.ok()) return s;
    if (f.require_client_auth.value_or(false) && f.client_ca_file.empty()) {
      return FieldError("tls.frontend.require_client_auth",
                        "is true but tls.frontend.client_ca_file is not set: give the CA that "
                        "client certificates must chain to");
    }
    if (!f.client_ca_file.empty()) {
      if (absl::Status s = ReadCertificate("tls.frontend.client_ca_file", f.client_ca_file).status();
          !s.ok()) {
        return s;
      }
    }
  }
  if (internode.has_value()) {
    const rpc::InternodeTls& n = *internode;
    if (n.cert_file.empty() != n.key_file.empty()) {
      return FieldError(n.cert_file.empty() ? "tls.internode.cert_file" : "tls.internode.key_file",
                        "is required with the other: give both cert_file and key_file, or neither");
    }
    if (!n.cert_file.empty()) {
      if (absl::Status s = CheckKeyPair("tls.internode", n.cert_file, n.key_file); !s.ok()) return s;
    } else if (frontend.has_value() && frontend->RequiresClientCertificate()) {
      return FieldError("tls.internode.cert_file",
                        "is required: tls.frontend requires client certificates, and other hosts "
                        "and this server itself call the frontend port");
    }
    if (!n.ca_file.empty()) {
      if (absl::Status s = ReadCertificate("tls.internode.ca_file", n.ca_file).status(); !s.ok()) {
        return s;
      }
    }
    if (n.server_name.size() > 253) {
      return FieldError("tls.internode.server_name", "must be a host name of at most 253 characters");
    }
  }
  return absl::OkStatus();
}

absl::Status ParseTlsConfig(const YAML::Node& node, TlsConfig& config) {
  TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(node, "tls", {"frontend", "internode", "reload_interval"}));
  if (const YAML::Node f = node["frontend"]) {
    const std::string p = "tls.frontend";
    TOCK_CONFIG_RETURN_IF_ERROR(
        CheckKeys(f, p, {"cert_file", "key_file", "client_ca_file", "require_client_auth"}));
    rpc::FrontendTls tls;
    TOCK_CONFIG_RETURN_IF_ERROR(Read(f["cert_file"], p + ".cert_file", "a file path", &tls.cert_file));
    TOCK_CONFIG_RETURN_IF_ERROR(Read(f["key_file"], p + ".key_file", "a file path", &tls.key_file));
    TOCK_CONFIG_RETURN_IF_ERROR(
        Read(f["client_ca_file"], p + ".client_ca_file", "a file path", &tls.client_ca_file));
    if (f["require_client_auth"]) {
      bool require = false;
      TOCK_CONFIG_RETURN_IF_ERROR(
          Read(f["require_client_auth"], p + ".require_client_auth", "true or false", &require));
      tls.require_client_auth = require;
    }
    config.frontend = tls;
  }
  if (const YAML::Node n = node["internode"]) {
    const std::string p = "tls.internode";
    TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(n, p, {"cert_file", "key_file", "ca_file", "server_name"}));
    rpc::InternodeTls tls;
    TOCK_CONFIG_RETURN_IF_ERROR(Read(n["cert_file"], p + ".cert_file", "a file path", &tls.cert_file));
    TOCK_CONFIG_RETURN_IF_ERROR(Read(n["key_file"], p + ".key_file", "a file path", &tls.key_file));
    TOCK_CONFIG_RETURN_IF_ERROR(Read(n["ca_file"], p + ".ca_file", "a file path", &tls.ca_file));
    TOCK_CONFIG_RETURN_IF_ERROR(
        Read(n["server_name"], p + ".server_name", "a host name", &tls.server_name));
    config.internode = tls;
  }
  if (const YAML::Node r = node["reload_interval"]) {
    std::string text;
    TOCK_CONFIG_RETURN_IF_ERROR(Read(r, "tls.reload_interval", "a duration such as 1m", &text));
    absl::StatusOr<absl::Duration> d = ParseHumanDuration(text);
    if (!d.ok()) return FieldError("tls.reload_interval", "must be a duration such as 10s or 1m");
    config.reload_interval = *d;
  }
  return absl::OkStatus();
}

}  // namespace tock::server
