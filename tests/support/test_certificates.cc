#include "tests/support/test_certificates.h"

#include <fstream>

#include "tests/support/process.h"

namespace tock::testing {

bool TestCertificates::Run(const std::vector<std::string>& argv) {
  std::vector<std::string> full = {"/usr/bin/openssl"};
  full.insert(full.end(), argv.begin(), argv.end());
  ProcessResult r = RunProcess(full, {}, "", std::chrono::seconds(30));
  if (r.exit_code != 0) {
    error_ = "openssl " + argv[0] + " failed: " + r.err;
    return false;
  }
  return true;
}

bool TestCertificates::MakeCa(const std::string& name) {
  return Run({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", Key(name), "-out",
              Pem(name), "-days", "2", "-subj", "/CN=" + name});
}

bool TestCertificates::MakeLeaf(const std::string& name, const std::string& ca,
                                const std::string& san, const std::string& subject) {
  const std::string csr = dir_ + "/" + name + ".csr", ext = dir_ + "/" + name + ".ext";
  {
    std::ofstream out(ext);
    out << "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth\n";
    if (!san.empty()) out << "subjectAltName=" << san << "\n";
    if (!out) {
      error_ = "cannot write " + ext;
      return false;
    }
  }
  return Run({"req", "-newkey", "rsa:2048", "-nodes", "-keyout", Key(name), "-out", csr, "-subj",
              subject.empty() ? "/CN=" + name : subject}) &&
         Run({"x509", "-req", "-in", csr, "-CA", Pem(ca), "-CAkey", Key(ca), "-set_serial",
              std::to_string(++serial_), "-out", Pem(name), "-days", "2", "-extfile", ext});
}

bool TestCertificates::MakeStandardSet() {
  return MakeCa("ca") && MakeCa("wrongca") &&
         MakeLeaf("server", "ca", "IP:127.0.0.1,DNS:localhost") && MakeLeaf("client", "ca", "") &&
         MakeLeaf("wrongclient", "wrongca", "");
}

}  // namespace tock::testing
