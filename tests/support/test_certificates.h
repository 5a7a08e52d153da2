// Certificates and keys for TLS tests, made with the `openssl` command in a directory: a CA
// ("ca"), a second, unrelated CA ("wrongca"), and leaves signed by either. Every leaf has
// an RSA 2048 key, is valid for two days and may serve as server and as client.
//
// Thread safety: one thread.
#pragma once

#include <string>
#include <vector>

namespace tock::testing {

class TestCertificates {
 public:
  // Files go to `dir` (which must exist): NAME.pem and NAME.key.
  explicit TestCertificates(std::string dir) : dir_(std::move(dir)) {}

  // The two CAs, a server certificate "server" (CN server, SAN IP:127.0.0.1 and
  // DNS:localhost, server and client auth: hosts use it for both) and client certificates
  // "client" (from ca) and "wrongclient" (from wrongca). False with error() set.
  bool MakeStandardSet();
  // A self-signed CA `name`.
  bool MakeCa(const std::string& name);
  // A leaf `name` (CN name, or `subject` in openssl's "/O=x/CN=y" form) signed by CA `ca`;
  // `san` is an openssl subjectAltName value ("IP:127.0.0.1,DNS:localhost") or "" for none.
  bool MakeLeaf(const std::string& name, const std::string& ca, const std::string& san,
                const std::string& subject = "");

  std::string Pem(const std::string& name) const { return dir_ + "/" + name + ".pem"; }
  std::string Key(const std::string& name) const { return dir_ + "/" + name + ".key"; }
  const std::string& error() const { return error_; }

 private:
  bool Run(const std::vector<std::string>& argv);

  std::string dir_;
  std::string error_;
  int serial_ = 1000;
};

}  // namespace tock::testing
