// The start-time check of tls.internode's certificate under `authorization:`
// (server-core/security/authz_internode.h): calls from other clusters carry that certificate
// and no token, so its subject must be mapped to temporal-system:admin or tock-server
// refuses to start (exit 2, naming
// authorization.subjects, the subject and the role). The subject is computed as gRPC reports
// a peer's: checked here against real calls, with a certificate of three name parts whose
// RFC 2253 form reverses their order. Certificates are made with the openssl command.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/support/process.h"
#include "tests/support/test_certificates.h"

namespace tock::testing {
namespace {

constexpr char kSubject[] = "CN=node,OU=hosts,O=Tock Test";  // of /O=Tock Test/OU=hosts/CN=node

class AuthzInternodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(certs_.MakeStandardSet()) << certs_.error();
    ASSERT_TRUE(certs_.MakeLeaf("node", "ca", "IP:127.0.0.1,DNS:localhost",
                                "/O=Tock Test/OU=hosts/CN=node"))
        << certs_.error();
  }

  // Mutual TLS with "node" as the internode (and frontend) certificate; `subjects` is the
  // YAML of authorization.subjects.
  std::string Config(const std::string& subjects) {
    return dir_.Write(
        "server.yaml",
        "tls:\n  frontend:\n    cert_file: " + certs_.Pem("node") + "\n    key_file: " +
            certs_.Key("node") + "\n    client_ca_file: " + certs_.Pem("ca") +
            "\n  internode:\n    cert_file: " + certs_.Pem("node") + "\n    key_file: " +
            certs_.Key("node") + "\n    ca_file: " + certs_.Pem("ca") +
            "\nauthorization:\n  subjects:\n" + subjects);
  }

  TempDir dir_;
  TestCertificates certs_{dir_.path().string()};
};

TEST_F(AuthzInternodeTest, AnInternodeSubjectWithoutTheSystemAdminRoleStopsTheStart) {
  const std::string add = absl::StrCat("add \"", kSubject, "\": [\"temporal-system:admin\"]");
  {
    ServerProcess server(TOCK_SERVER_BIN);
    EXPECT_FALSE(server.Start({"--config", Config(absl::StrCat("    \"", kSubject,
                                                               "\": [\"default:admin\"]\n"))}));
    EXPECT_EQ(server.exit_code(), 2);
    EXPECT_TRUE(absl::StrContains(
        server.error(), absl::StrCat("tock-server: config authorization.subjects: the "
                                     "tls.internode certificate's subject \"",
                                     kSubject, "\" is listed without temporal-system:admin; ")))
        << server.error();
    EXPECT_TRUE(absl::StrContains(server.error(), add)) << server.error();
  }
  {
    // The order OpenSSL's one-line form and the certificate's own use: not what gRPC reports.
    ServerProcess server(TOCK_SERVER_BIN);
    EXPECT_FALSE(server.Start({"--config", Config("    \"O=Tock Test,OU=hosts,CN=node\": "
                                                  "[\"temporal-system:admin\"]\n")}));
    EXPECT_EQ(server.exit_code(), 2);
    EXPECT_TRUE(absl::StrContains(
        server.error(), absl::StrCat("the tls.internode certificate's subject \"", kSubject,
                                     "\" is not listed; calls from other clusters")))
        << server.error();
    EXPECT_TRUE(absl::StrContains(server.error(), add)) << server.error();
  }
}

TEST_F(AuthzInternodeTest, TheSubjectCheckedIsTheOneGrpcReportsForACall) {
  ServerProcess server(TOCK_SERVER_BIN);
  ASSERT_TRUE(server.Start({"--config", Config(absl::StrCat("    \"", kSubject,
                                                            "\": [\"temporal-system:admin\"]\n"))}))
      << server.error();
  auto tock = [&](const std::string& cert, std::vector<std::string> args) {
    std::vector<std::string> argv = {TOCK_CLI_BIN,    "--address",         server.address(),
                                     "--tls-ca-cert", certs_.Pem("ca"),    "--tls-cert",
                                     certs_.Pem(cert), "--tls-key",        certs_.Key(cert)};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv);
  };
  // A client presenting the same certificate, no token: let in by the mapping, so the
  // subject the server was started with is the one gRPC reports (ListNamespaces needs
  // temporal-system:read). Another certificate of the same CA is not.
  ProcessResult listed = tock("node", {"namespace", "list", "-o", "json"});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  ProcessResult other = tock("client", {"namespace", "list", "-o", "json"});
  EXPECT_EQ(other.exit_code, 1) << other.err;
  EXPECT_TRUE(absl::StrContains(other.err, "ListNamespaces needs the temporal-system:read role"))
      << other.err;
}

}  // namespace
}  // namespace tock::testing
