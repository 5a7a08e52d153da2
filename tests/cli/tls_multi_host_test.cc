// Two tock-server hosts on one PostgreSQL database with mutual TLS on the frontend and
// between the hosts (`tls.internode`): a call about a workflow whose shard the other host
// owns is routed there over mutual TLS. Certificates are made by the test with openssl.
//
// Routing is certain, not hoped for: each start goes to one host, each describe to the
// other, and the shards are split between the two (checked); with 16 workflows over 16
// shards both directions are exercised (every start landing on its own host's shards has a
// chance of 2^-16).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "tests/support/postgres_server.h"
#include "tests/support/process.h"
#include "tests/support/test_certificates.h"

namespace tock::testing {
namespace {

TEST(TlsMultiHostTest, HostsRouteCallsToEachOtherOverMutualTls) {
  FreshPostgresDatabase db;
  ASSERT_TRUE(db.Create(TOCK_POSTGRES_FIXTURE_FILE, "tock_tls_hosts")) << db.error();
  TempDir dir;
  TestCertificates certs(dir.path().string());
  ASSERT_TRUE(certs.MakeStandardSet()) << certs.error();
  const std::string config = dir.Write(
      "hosts.yaml",
      "persistence:\n  engine: postgres\n  postgres:\n    url: \"" + db.url() +
          "\"\n    max_connections: 8\n"
          "membership:\n  heartbeat: 200ms\n  cutoff: 1s\n"
          "history:\n  shards: 16\n"
          "tls:\n"
          "  frontend:\n    cert_file: " + certs.Pem("server") + "\n    key_file: " +
          certs.Key("server") + "\n    client_ca_file: " + certs.Pem("ca") +
          "\n    require_client_auth: true\n"
          "  internode:\n    cert_file: " + certs.Pem("server") + "\n    key_file: " +
          certs.Key("server") + "\n    ca_file: " + certs.Pem("ca") + "\n");
  ServerProcess a(TOCK_SERVER_BIN), b(TOCK_SERVER_BIN);
  ASSERT_TRUE(a.Start({"--config", config})) << a.error();
  ASSERT_TRUE(b.Start({"--config", config})) << b.error();
  const std::vector<std::string> tls = {"--tls-ca-cert", certs.Pem("ca"), "--tls-cert",
                                        certs.Pem("client"), "--tls-key", certs.Key("client")};
  auto tock = [&](const std::string& address, std::vector<std::string> args) {
    std::vector<std::string> argv = {TOCK_CLI_BIN, "--address", address};
    argv.insert(argv.end(), tls.begin(), tls.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv);
  };

  // Both hosts own shards (membership goes over the database; the ring splits them).
  const absl::Time until = absl::Now() + absl::Seconds(20);
  bool split = false;
  while (!split && absl::Now() < until) {
    ProcessResult members = tock(a.address(), {"cluster", "members", "-o", "json"});
    const nlohmann::json listed = nlohmann::json::parse(members.out, nullptr, false);
    split = members.exit_code == 0 && listed.is_array() && listed.size() == 2;
    if (!split) absl::SleepFor(absl::Milliseconds(200));
  }
  ASSERT_TRUE(split) << "the two hosts did not both join";

  for (int i = 0; i < 16; ++i) {
    const std::string id = "tls-wf-" + std::to_string(i);
    ServerProcess& first = i % 2 == 0 ? a : b;
    ServerProcess& second = i % 2 == 0 ? b : a;
    ProcessResult started = tock(first.address(), {"workflow", "start", "--type", "t",
                                                   "--task-queue", "q", "--workflow-id", id});
    ASSERT_EQ(started.exit_code, 0) << id << ": " << started.err;
    ProcessResult described =
        tock(second.address(), {"workflow", "describe", "--workflow-id", id, "-o", "json"});
    ASSERT_EQ(described.exit_code, 0) << id << ": " << described.err;
    EXPECT_TRUE(absl::StrContains(described.out, id)) << described.out;
  }
  // No host refused another's handshake (gRPC logs each refusal on the server's stderr).
  for (ServerProcess* host : {&a, &b}) {
    EXPECT_FALSE(absl::StrContains(host->stderr_text(), "Handshake failed")) << host->stderr_text();
  }

  // A client without a certificate is refused by either host.
  ProcessResult anonymous = RunProcess({TOCK_CLI_BIN, "--address", b.address(), "--tls-ca-cert",
                                        certs.Pem("ca"), "namespace", "describe", "default"});
  EXPECT_EQ(anonymous.exit_code, 4);
  EXPECT_TRUE(absl::StrContains(anonymous.err, "requires a client certificate")) << anonymous.err;
}

}  // namespace
}  // namespace tock::testing
