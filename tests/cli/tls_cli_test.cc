// TLS and mutual TLS on tock-server's frontend, from outside: real tock-server processes
// configured with `tls:`, the real `tock` with its --tls* flags, and certificates made by
// the test with the openssl command (tests/support/test_certificates.h).
//
// TLS only: a client trusting the CA works; a plaintext client, a client that does not trust
// the CA, and a TLS client against a plaintext server fail with exit 4 and a message saying
// which; TLS 1.1 is refused. Mutual TLS: no client certificate and one from another CA are
// refused, the right one accepted, also by the server's own calls to its frontend; optional
// client certificates are checked when sent. A certificate replaced on disk is served
// without a restart. Bad `tls:` settings stop the start with exit 2 and the key named. The
// --tls-* flags of tock-server do the same as the keys they mirror.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "tests/support/process.h"
#include "tests/support/test_certificates.h"

namespace tock::testing {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitUnavailable = 4;

class TlsCliTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(certs_.MakeStandardSet()) << certs_.error(); }

  // The server's config: TLS with the standard server certificate; `client_ca` (empty: no
  // client certificates asked for); internode with the server certificate as client one.
  std::string Config(const std::string& client_ca, const std::string& extra = "") {
    std::string yaml = "tls:\n  reload_interval: 1s\n  frontend:\n    cert_file: " +
                       certs_.Pem("server") + "\n    key_file: " + certs_.Key("server") + "\n";
    if (!client_ca.empty()) yaml += "    client_ca_file: " + certs_.Pem(client_ca) + "\n";
    yaml += "  internode:\n    ca_file: " + certs_.Pem("ca") + "\n    cert_file: " +
            certs_.Pem("server") + "\n    key_file: " + certs_.Key("server") + "\n" + extra;
    return dir_.Write("tls.yaml", yaml);
  }

  void Start(const std::string& config) {
    ASSERT_TRUE(server_.Start({"--config", config})) << server_.error();
  }

  // `tock --address SERVER <tls flags> namespace describe default`.
  ProcessResult Describe(const std::vector<std::string>& tls_flags,
                         const std::string& address = "") {
    std::vector<std::string> argv = {TOCK_CLI_BIN, "--address",
                                     address.empty() ? server_.address() : address};
    argv.insert(argv.end(), tls_flags.begin(), tls_flags.end());
    for (const char* a : {"namespace", "describe", "default", "-o", "json"}) argv.push_back(a);
    return RunProcess(argv);
  }

  std::vector<std::string> Trusting(const std::string& ca) { return {"--tls-ca-cert", certs_.Pem(ca)}; }
  std::vector<std::string> WithClient(const std::string& ca, const std::string& client) {
    return {"--tls-ca-cert", certs_.Pem(ca), "--tls-cert", certs_.Pem(client), "--tls-key",
            certs_.Key(client)};
  }

  // `openssl s_client` to the server with `args`; its output (the subject and the
  // negotiated protocol and cipher are in it).
  std::string SClient(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/openssl", "s_client", "-connect", server_.address()};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessResult r = RunProcess(argv, {}, "", std::chrono::seconds(10));
    return r.out + r.err;
  }

  TempDir dir_;
  TestCertificates certs_{dir_.path().string()};
  ServerProcess server_{TOCK_SERVER_BIN};
};

// With TLS on the frontend, the HTTP port (Temporal's HTTP API) serves HTTPS with the same
// files, asked by curl as a user would; plaintext HTTP gets no answer there.
TEST_F(TlsCliTest, TheHttpPortServesHttpsWithTheFrontendsFiles) {
  ASSERT_TRUE(server_.Start({"--config", Config(""), "--http-port", "0"})) << server_.error();
  std::smatch match;
  const std::string banner = server_.banner();
  ASSERT_TRUE(std::regex_search(banner, match, std::regex(R"(\n  http api:   https://127\.0\.0\.1:(\d+)/api/v1\n)")))
      << banner;
  const std::string port = match[1];
  ProcessResult ok = RunProcess({"/usr/bin/curl", "-sS", "--cacert", certs_.Pem("ca"),
                                 "https://localhost:" + port + "/api/v1/namespaces/default"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(absl::StrContains(ok.out, "\"name\":\"default\"")) << ok.out;
  ProcessResult untrusted = RunProcess({"/usr/bin/curl", "-sS", "--cacert", certs_.Pem("wrongca"),
                                        "https://localhost:" + port + "/api/v1/namespaces/default"});
  EXPECT_NE(untrusted.exit_code, 0) << untrusted.out;
  ProcessResult plaintext = RunProcess({"/usr/bin/curl", "-sS", "--max-time", "10",
                                        "http://127.0.0.1:" + port + "/api/v1/namespaces/default"});
  EXPECT_NE(plaintext.exit_code, 0) << plaintext.out;
  EXPECT_FALSE(absl::StrContains(plaintext.out, "default")) << plaintext.out;
}

TEST_F(TlsCliTest, TlsOnlyTheRightClientGetsInAndTheOthersAreToldWhy) {
  ASSERT_NO_FATAL_FAILURE(Start(Config("")));
  EXPECT_TRUE(absl::StrContains(server_.banner(), "client certificates not asked for"))
      << server_.banner();

  ProcessResult ok = Describe(Trusting("ca"));
  EXPECT_EQ(ok.exit_code, kExitOk) << ok.err;
  EXPECT_TRUE(absl::StrContains(ok.out, "\"name\": \"default\"")) << ok.out;
  // A server name (localhost is in the certificate's SAN) works as well as the address.
  ProcessResult by_name = Describe({"--tls-ca-cert", certs_.Pem("ca"), "--tls-server-name", "localhost"});
  EXPECT_EQ(by_name.exit_code, kExitOk) << by_name.err;

  ProcessResult plaintext = Describe({});
  EXPECT_EQ(plaintext.exit_code, kExitUnavailable);
  EXPECT_TRUE(absl::StrContains(plaintext.err, "the server at " + server_.address() +
                                                   " answered TLS; use --tls"))
      << plaintext.err;

  ProcessResult untrusted = Describe({"--tls"});
  EXPECT_EQ(untrusted.exit_code, kExitUnavailable);
  EXPECT_TRUE(absl::StrContains(untrusted.err, "failed: the server's certificate was not accepted"))
      << untrusted.err;
  ProcessResult other_ca = Describe(Trusting("wrongca"));
  EXPECT_EQ(other_ca.exit_code, kExitUnavailable);
  EXPECT_TRUE(absl::StrContains(other_ca.err, "the server's certificate was not accepted"))
      << other_ca.err;
  ProcessResult wrong_name = Describe({"--tls-ca-cert", certs_.Pem("ca"), "--tls-server-name", "other.example"});
  EXPECT_EQ(wrong_name.exit_code, kExitUnavailable);
  EXPECT_TRUE(absl::StrContains(wrong_name.err, "hostname mismatch")) << wrong_name.err;
  // gRPC's own log lines do not come before tock's message.
  EXPECT_FALSE(absl::StrContains(other_ca.err, "ssl_transport_security")) << other_ca.err;

  // TLS 1.2 is the oldest version served: a TLS 1.1 client gets no cipher.
  EXPECT_TRUE(absl::StrContains(SClient({"-tls1_2", "-CAfile", certs_.Pem("ca")}), "Protocol  : TLSv1.2"));
  const std::string old = SClient({"-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"});
  EXPECT_TRUE(absl::StrContains(old, "Cipher is (NONE)")) << old;

  // The reverse: a TLS client against a plaintext server.
  ServerProcess plain(TOCK_SERVER_BIN);
  ASSERT_TRUE(plain.Start({})) << plain.error();
  ProcessResult reverse = Describe(Trusting("ca"), plain.address());
  EXPECT_EQ(reverse.exit_code, kExitUnavailable);
  EXPECT_TRUE(absl::StrContains(reverse.err, "the server at " + plain.address() +
                                                 " answered without TLS (plaintext); drop --tls"))
      << reverse.err;
}

TEST_F(TlsCliTest, MutualTlsRefusesNoCertificateAndAnotherCasAndTakesTheRightOne) {
  ASSERT_NO_FATAL_FAILURE(Start(Config("ca")));
  EXPECT_TRUE(absl::StrContains(server_.banner(), "client certificates required")) << server_.banner();

  ProcessResult none = Describe(Trusting("ca"));
  EXPECT_EQ(none.exit_code, kExitUnavailable);
  EXPECT_TRUE(absl::StrContains(none.err, "the server requires a client certificate; give --tls-cert"))
      << none.err;

  ProcessResult wrong = Describe(WithClient("ca", "wrongclient"));
  EXPECT_EQ(wrong.exit_code, kExitUnavailable);
  EXPECT_TRUE(absl::StrContains(wrong.err, "the server refused the client certificate " +
                                               certs_.Pem("wrongclient")))
      << wrong.err;

  ProcessResult right = Describe(WithClient("ca", "client"));
  EXPECT_EQ(right.exit_code, kExitOk) << right.err;
  // A write and a read back, over mutual TLS.
  ProcessResult registered =
      RunProcess({TOCK_CLI_BIN, "--address", server_.address(), "--tls-ca-cert", certs_.Pem("ca"),
                  "--tls-cert", certs_.Pem("client"), "--tls-key", certs_.Key("client"),
                  "namespace", "register", "orders", "--retention", "3d"});
  EXPECT_EQ(registered.exit_code, kExitOk) << registered.err;

  ProcessResult plaintext = Describe({});
  EXPECT_EQ(plaintext.exit_code, kExitUnavailable);
  EXPECT_TRUE(absl::StrContains(plaintext.err, "answered TLS; use --tls")) << plaintext.err;
}

// The server calls its own frontend (batch and schedule runners) as another host would:
// through tls.internode, with its client certificate. A batch completing proves it.
TEST_F(TlsCliTest, TheServersOwnCallsGoOverMutualTls) {
  ASSERT_NO_FATAL_FAILURE(Start(Config("ca")));
  auto tock = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {TOCK_CLI_BIN, "--address", server_.address()};
    for (const std::string& f : WithClient("ca", "client")) argv.push_back(f);
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv);
  };
  for (const std::string id : {"b-1", "b-2"}) {
    ProcessResult started = tock({"workflow", "start", "--type", "order", "--task-queue", "q",
                                  "--workflow-id", id});
    ASSERT_EQ(started.exit_code, kExitOk) << started.err;
  }
  ProcessResult batch = tock({"batch", "terminate", "--query", "WorkflowType = 'order'", "--reason",
                              "tls", "--yes", "--job-id", "tls-batch"});
  ASSERT_EQ(batch.exit_code, kExitOk) << batch.err;
  const nlohmann::json done = nlohmann::json::parse(batch.out, nullptr, false);
  ASSERT_FALSE(done.is_discarded()) << batch.out;
  EXPECT_EQ(done.value("state", ""), "BATCH_OPERATION_STATE_COMPLETED") << batch.out;
  EXPECT_EQ(done.value("completeOperationCount", ""), "2") << batch.out;
  EXPECT_EQ(done.value("failureOperationCount", ""), "0") << batch.out;
  EXPECT_FALSE(absl::StrContains(server_.stderr_text(), "Handshake failed")) << server_.stderr_text();
}

TEST_F(TlsCliTest, OptionalClientCertificatesAreCheckedWhenSent) {
  const std::string config = dir_.Write(
      "optional.yaml", "tls:\n  frontend:\n    cert_file: " + certs_.Pem("server") +
                           "\n    key_file: " + certs_.Key("server") + "\n    client_ca_file: " +
                           certs_.Pem("ca") + "\n    require_client_auth: false\n  internode:\n"
                           "    ca_file: " + certs_.Pem("ca") + "\n");
  ServerProcess optional(TOCK_SERVER_BIN);
  ASSERT_TRUE(optional.Start({"--config", config})) << optional.error();
  EXPECT_TRUE(absl::StrContains(optional.banner(), "client certificates checked when sent"))
      << optional.banner();
  EXPECT_EQ(Describe(Trusting("ca"), optional.address()).exit_code, kExitOk);
  EXPECT_EQ(Describe(WithClient("ca", "client"), optional.address()).exit_code, kExitOk);
  ProcessResult wrong = Describe(WithClient("ca", "wrongclient"), optional.address());
  EXPECT_EQ(wrong.exit_code, kExitUnavailable);
  EXPECT_TRUE(absl::StrContains(wrong.err, "the server refused the client certificate")) << wrong.err;
}

// Each refused handshake is a line gRPC writes to the server's stderr by itself: anyone
// who can connect could fill it. At most 20 such lines per 10 s get through.
TEST_F(TlsCliTest, RefusedHandshakesCannotFloodTheServersStderr) {
  ASSERT_NO_FATAL_FAILURE(Start(Config("ca")));
  const std::string address = server_.address();
  const int port = std::stoi(address.substr(address.rfind(':') + 1));
  for (int i = 0; i < 100; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0) {
      const char request[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";  // not TLS
      (void)!write(fd, request, sizeof(request) - 1);
      char buffer[256];
      while (read(fd, buffer, sizeof(buffer)) > 0) {
      }
    }
    close(fd);
  }
  // The server still serves, and wrote at most 20 of gRPC's lines.
  ProcessResult right = Describe(WithClient("ca", "client"));
  EXPECT_EQ(right.exit_code, kExitOk) << right.err;
  const std::string err = server_.stderr_text();
  int lines = 0;
  for (size_t at = err.find("grpc: "); at != std::string::npos; at = err.find("grpc: ", at + 1)) ++lines;
  EXPECT_GE(lines, 1) << err;
  EXPECT_LE(lines, 20) << err;
}

TEST_F(TlsCliTest, ARotatedCertificateIsServedWithoutARestart) {
  ASSERT_NO_FATAL_FAILURE(Start(Config("")));
  ASSERT_TRUE(certs_.MakeCa("ca2")) << certs_.error();
  ASSERT_TRUE(certs_.MakeLeaf("server2", "ca2", "IP:127.0.0.1,DNS:localhost")) << certs_.error();
  EXPECT_TRUE(absl::StrContains(SClient({"-CAfile", certs_.Pem("ca")}), "CN = server"));
  ProcessResult before = Describe(Trusting("ca2"));
  ASSERT_EQ(before.exit_code, kExitUnavailable) << "ca2 is not trusted by the old certificate";

  // Replaced as a deployment tool would: each file renamed into place (key first).
  for (const auto& [from, to] : {std::pair{certs_.Key("server2"), certs_.Key("server")},
                                 std::pair{certs_.Pem("server2"), certs_.Pem("server")}}) {
    std::filesystem::copy_file(from, to + ".new");
    std::filesystem::rename(to + ".new", to);
  }
  // reload_interval is 1s: the new certificate within 30 s at most.
  const absl::Time until = absl::Now() + absl::Seconds(30);
  ProcessResult after;
  do {
    absl::SleepFor(absl::Milliseconds(250));
    after = Describe(Trusting("ca2"));
  } while (after.exit_code != kExitOk && absl::Now() < until);
  EXPECT_EQ(after.exit_code, kExitOk) << after.err;
  const std::string served = SClient({"-CAfile", certs_.Pem("ca2")});
  EXPECT_TRUE(absl::StrContains(served, "subject=CN = server2")) << served;
  EXPECT_TRUE(absl::StrContains(served, "Verify return code: 0 (ok)")) << served;
  EXPECT_EQ(Describe(Trusting("ca")).exit_code, kExitUnavailable) << "the old CA no longer fits";
  EXPECT_TRUE(server_.running());
}

TEST_F(TlsCliTest, BadTlsSettingsStopTheStartNamingTheKey) {
  const std::string server = certs_.Pem("server"), key = certs_.Key("server");
  const std::string internode = "  internode: {ca_file: " + certs_.Pem("ca") + ", cert_file: " +
                                server + ", key_file: " + key + "}\n";
  struct Case {
    std::string yaml;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"tls:\n  frontend: {cert_file: " + server + ", key_file: /nonexistent/k.pem}\n" + internode,
       "config tls.frontend.key_file: cannot read /nonexistent/k.pem: No such file or directory"},
      {"tls:\n  frontend: {cert_file: " + server + "}\n" + internode,
       "config tls.frontend.key_file: is required"},
      {"tls:\n  frontend: {cert_file: " + server + ", key_file: " + certs_.Key("client") + "}\n" +
           internode,
       "config tls.frontend.key_file: " + certs_.Key("client") + " is not the key of the certificate"},
      {"tls:\n  frontend: {cert_file: " + key + ", key_file: " + key + "}\n" + internode,
       "config tls.frontend.cert_file: " + key + " holds no PEM certificate"},
      {"tls:\n  frontend: {cert_file: " + server + ", key_file: " + key +
           ", require_client_auth: true}\n" + internode,
       "config tls.frontend.require_client_auth: is true but tls.frontend.client_ca_file is not set"},
      {"tls:\n  frontend: {cert_file: " + server + ", key_file: " + key + "}\n",
       "config tls.internode: is required with tls.frontend"},
      {"tls:\n  frontend: {cert_file: " + server + ", key_file: " + key + ", client_ca_file: " +
           certs_.Pem("ca") + "}\n  internode: {ca_file: " + certs_.Pem("ca") + "}\n",
       "config tls.internode.cert_file: is required: tls.frontend requires client certificates"},
      {"tls:\n  frontend: {cert_file: " + server + ", key_file: " + key + ", client_ca_file: " +
           certs_.Pem("ca") + "}\n" + internode + "  reload_interval: 0s\n",
       "config tls.reload_interval: must be between 1s and 1h"},
      {"tls:\n  frontend: {cert_file: " + server + ", key_file: " + key + ", cert: x}\n",
       "config tls.frontend.cert: unknown key; allowed: cert_file, client_ca_file, key_file, "
       "require_client_auth"},
  };
  for (const Case& c : cases) {
    const std::string config = dir_.Write("bad.yaml", c.yaml);
    ProcessResult r = RunProcess({TOCK_SERVER_BIN, "--config", config, "--port", "0"}, {}, "",
                                 std::chrono::seconds(20));
    EXPECT_EQ(r.exit_code, kExitUsage) << c.yaml << r.out << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, c.message)) << "want: " << c.message << "\ngot: " << r.err;
    // The key's contents never appear in an error.
    EXPECT_FALSE(absl::StrContains(r.err, "PRIVATE KEY")) << r.err;
  }
}

// The --tls-* flags of tock-server mirror `tls:` (cmd/tock-server/server_flags.h): mutual TLS
// from flags alone (the right client in, none without a certificate, the server's own
// calls through the internode flags), a flag overriding its key in the config file, and the
// YAML's checks, naming the key the flag sets.
TEST_F(TlsCliTest, FlagsMirrorTheTlsSection) {
  const std::vector<std::string> flags = {
      "--tls-cert-file",          certs_.Pem("server"), "--tls-key-file",
      certs_.Key("server"),       "--tls-client-ca-file", certs_.Pem("ca"),
      "--tls-internode-cert-file", certs_.Pem("server"), "--tls-internode-key-file",
      certs_.Key("server"),       "--tls-internode-ca-file", certs_.Pem("ca")};
  ASSERT_TRUE(server_.Start(flags)) << server_.error();
  EXPECT_TRUE(absl::StrContains(server_.banner(), "client certificates required")) << server_.banner();
  ProcessResult in = Describe(WithClient("ca", "client"));
  EXPECT_EQ(in.exit_code, kExitOk) << in.err;
  ProcessResult none = Describe(Trusting("ca"));
  EXPECT_EQ(none.exit_code, kExitUnavailable) << none.err;
  EXPECT_TRUE(absl::StrContains(none.err, "the server requires a client certificate")) << none.err;
  ProcessResult started = RunProcess({TOCK_CLI_BIN, "--address", server_.address(), "--tls-ca-cert",
                                      certs_.Pem("ca"), "--tls-cert", certs_.Pem("client"),
                                      "--tls-key", certs_.Key("client"), "workflow", "start",
                                      "--type", "order", "--task-queue", "q", "--workflow-id", "f-1"});
  ASSERT_EQ(started.exit_code, kExitOk) << started.err;
  ProcessResult batch = RunProcess({TOCK_CLI_BIN, "--address", server_.address(), "--tls-ca-cert",
                                    certs_.Pem("ca"), "--tls-cert", certs_.Pem("client"),
                                    "--tls-key", certs_.Key("client"), "batch", "terminate",
                                    "--query", "WorkflowType = 'order'", "--reason", "flags",
                                    "--yes", "--job-id", "flags-batch", "-o", "json"});
  ASSERT_EQ(batch.exit_code, kExitOk) << batch.err;
  EXPECT_TRUE(absl::StrContains(batch.out, "BATCH_OPERATION_STATE_COMPLETED")) << batch.out;
  server_.Stop();

  // Over a config asking for client certificates, the flag makes them optional.
  ServerProcess optional(TOCK_SERVER_BIN);
  ASSERT_TRUE(optional.Start({"--config", Config("ca"), "--tls-require-client-auth", "false"}))
      << optional.error();
  EXPECT_TRUE(absl::StrContains(optional.banner(), "client certificates checked when sent"))
      << optional.banner();
  ProcessResult anonymous = Describe(Trusting("ca"), optional.address());
  EXPECT_EQ(anonymous.exit_code, kExitOk) << anonymous.err;

  // The YAML's checks, naming the key the flag sets.
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--tls-cert-file", certs_.Pem("server"), "--tls-key-file", certs_.Key("client"),
        "--tls-internode-ca-file", certs_.Pem("ca")},
       "config tls.frontend.key_file: " + certs_.Key("client") + " is not the key of the certificate"},
      {{"--tls-cert-file", certs_.Pem("server"), "--tls-key-file", certs_.Key("server")},
       "config tls.internode: is required with tls.frontend"},
      {{"--tls-internode-ca-file", certs_.Pem("ca")},
       "config tls.frontend: is required with tls.internode"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {TOCK_SERVER_BIN, "--port", "0"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    ProcessResult r = RunProcess(argv, {}, "", std::chrono::seconds(20));
    EXPECT_EQ(r.exit_code, kExitUsage) << r.out << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, c.message)) << "want: " << c.message << "\ngot: " << r.err;
    EXPECT_FALSE(absl::StrContains(r.err, "PRIVATE KEY")) << r.err;
  }
  ProcessResult not_bool = RunProcess({TOCK_SERVER_BIN, "--tls-require-client-auth", "maybe"});
  EXPECT_EQ(not_bool.exit_code, kExitUsage) << not_bool.err;
}

}  // namespace
}  // namespace tock::testing
