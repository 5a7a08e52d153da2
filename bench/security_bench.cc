// Security benchmark (issue 15): DescribeNamespace requests per second with 16 concurrent
// callers on one channel against
//   1. tock-server over plaintext without authorization (the baseline),
//   2. the same over mutual TLS (client certificate required),
//   3. the same over mutual TLS with a JWT on every call, verified against a JWKS
//      (`authorization:`; the token's permissions give read on the namespace);
//   4. plaintext with rate limits on (`limits:` at 1,000,000 a second: never reached), the
//      cost of taking the tokens.
// Four servers on this machine, each on its own database file, measured in alternating
// rounds (medians of ROUNDS rounds of SECONDS each). The certificates (a CA, the server's
// for 127.0.0.1, a client's), the RS256 signing key, its JWKS and the token are made here
// with the openssl command. Target: mTLS + JWT >= 0.6x the baseline.
// Usage: security_bench TOCK_SERVER [SECONDS] [ROUNDS]
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_server.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"

namespace {

namespace wf = temporal::api::workflowservice::v1;
using Clock = std::chrono::steady_clock;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

std::string Base64Url(const std::string& bytes) {
  static const char* kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int s : {18, 12, 6, 0}) out += kAlphabet[(v >> s) & 63];
  }
  if (i + 1 == bytes.size()) {
    const uint32_t v = uint8_t(bytes[i]) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
  } else if (i + 2 == bytes.size()) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    for (int s : {18, 12, 6}) out += kAlphabet[(v >> s) & 63];
  }
  return out;
}

std::string HexToBytes(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

// Runs a shell command in `dir`; false (with its output on stderr) when it fails.
bool Sh(const std::string& dir, const std::string& command) {
  const std::string full = "cd '" + dir + "' && (" + command + ") >/dev/null 2>'" + dir + "/sh.err'";
  if (std::system(full.c_str()) == 0) return true;
  std::cerr << "failed: " << command << "\n" << ReadFile(dir + "/sh.err");
  return false;
}

// The CA, the server's certificate for 127.0.0.1, a client certificate, and an RS256 key with
// its JWKS and a token for `default:read` valid for an hour. Returns the token ("" on error).
std::string MakeCredentials(const std::string& dir) {
  const char* leaf_ext = "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth\n";
  if (!WriteFile(dir + "/server.ext", std::string(leaf_ext) + "subjectAltName=IP:127.0.0.1\n") ||
      !WriteFile(dir + "/client.ext", leaf_ext)) {
    return "";
  }
  if (!Sh(dir, "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 "
               "-subj /CN=bench-ca") ||
      !Sh(dir, "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr "
               "-subj /CN=server && openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key "
               "-set_serial 1 -out server.pem -days 2 -extfile server.ext") ||
      !Sh(dir, "openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr "
               "-subj /CN=client && openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key "
               "-set_serial 2 -out client.pem -days 2 -extfile client.ext") ||
      !Sh(dir, "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out jwt.key && "
               "openssl rsa -in jwt.key -noout -modulus > jwt.modulus")) {
    return "";
  }
  std::string modulus = ReadFile(dir + "/jwt.modulus");  // "Modulus=HEX\n"
  modulus = modulus.substr(modulus.find('=') + 1);
  modulus.erase(std::remove_if(modulus.begin(), modulus.end(), ::isspace), modulus.end());
  const std::string jwks = R"({"keys": [{"kty": "RSA", "kid": "bench", "use": "sig", "alg": "RS256", "n": ")" +
                           Base64Url(HexToBytes(modulus)) + R"(", "e": "AQAB"}]})";
  const long now = static_cast<long>(std::time(nullptr));
  const std::string header = Base64Url(R"({"alg":"RS256","typ":"JWT","kid":"bench"})");
  const std::string claims = Base64Url(
      R"({"iss":"tock-bench","aud":"tock","sub":"bench","iat":)" + std::to_string(now) +
      R"(,"nbf":)" + std::to_string(now - 60) + R"(,"exp":)" + std::to_string(now + 3600) +
      R"(,"permissions":["default:read"]})");
  const std::string signing_input = header + "." + claims;
  if (!WriteFile(dir + "/jwks.json", jwks) || !WriteFile(dir + "/signing_input", signing_input) ||
      !Sh(dir, "openssl dgst -sha256 -sign jwt.key -out jwt.sig signing_input")) {
    return "";
  }
  return signing_input + "." + Base64Url(ReadFile(dir + "/jwt.sig"));
}

struct Target {
  std::string name;
  std::shared_ptr<grpc::Channel> channel;
  std::string token;  // "": no authorization header
};

// DescribeNamespace calls per second from `callers` threads on one channel.
double DescribeRps(const Target& target, int callers, double seconds) {
  auto stub = wf::WorkflowService::NewStub(target.channel);
  std::atomic<long> done{0};
  std::atomic<long> failed{0};
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  const std::string bearer = "Bearer " + target.token;
  std::vector<std::thread> threads;
  for (int i = 0; i < callers; ++i) {
    threads.emplace_back([&] {
      wf::DescribeNamespaceRequest request;
      request.set_namespace_("default");
      while (Clock::now() < deadline) {
        grpc::ClientContext context;
        if (!target.token.empty()) context.AddMetadata("authorization", bearer);
        wf::DescribeNamespaceResponse response;
        if (stub->DescribeNamespace(&context, request, &response).ok()) {
          done.fetch_add(1, std::memory_order_relaxed);
        } else {
          failed.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  if (failed.load() > 0) std::cerr << "warning: " << target.name << ": " << failed.load() << " calls failed\n";
  return done.load() / seconds;
}

grpc::Status DescribeOnce(const Target& target, const std::string& token) {
  auto stub = wf::WorkflowService::NewStub(target.channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
  wf::DescribeNamespaceRequest request;
  request.set_namespace_("default");
  wf::DescribeNamespaceResponse response;
  return stub->DescribeNamespace(&context, request, &response);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: security_bench TOCK_SERVER [SECONDS] [ROUNDS]\n";
    return 2;
  }
  const std::string server_bin = argv[1];
  const double seconds = argc > 2 ? std::atof(argv[2]) : 5.0;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  char dir_template[] = "/tmp/tock-security-bench-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return 1;
  const std::string dir = dir_template;
  const std::string token = MakeCredentials(dir);
  if (token.empty()) return 1;
  const std::string tls =
      "tls:\n"
      "  frontend: {cert_file: " + dir + "/server.pem, key_file: " + dir + "/server.key, "
      "client_ca_file: " + dir + "/ca.pem, require_client_auth: true}\n"
      "  internode: {cert_file: " + dir + "/server.pem, key_file: " + dir + "/server.key, "
      "ca_file: " + dir + "/ca.pem}\n";
  // The internode certificate's subject must hold temporal-system:admin (tock-server refuses
  // to start otherwise); the bench's clients (CN=client) are authorized by their token alone.
  const std::string authz = "authorization:\n  jwks: " + dir + "/jwks.json\n"
                            "  issuer: tock-bench\n  audience: tock\n"
                            "  subjects: {\"CN=server\": [\"temporal-system:admin\"]}\n";
  WriteFile(dir + "/mtls.yaml", tls);
  WriteFile(dir + "/mtls-jwt.yaml", tls + authz);
  WriteFile(dir + "/limits.yaml", "limits: {frontend_rps: 1000000, namespace_rps: 1000000}\n");

  std::vector<tock::bench::Server> servers = {
      tock::bench::StartServer(server_bin, {"--db-file", dir + "/plain.db"}),
      tock::bench::StartServer(server_bin, {"--db-file", dir + "/mtls.db", "--config", dir + "/mtls.yaml"}),
      tock::bench::StartServer(server_bin, {"--db-file", dir + "/jwt.db", "--config", dir + "/mtls-jwt.yaml"}),
      tock::bench::StartServer(server_bin, {"--db-file", dir + "/limits.db", "--config", dir + "/limits.yaml"}),
  };
  auto stop_all = [&] {
    for (auto& s : servers) {
      if (s.pid > 0) {
        kill(s.pid, SIGTERM);
        waitpid(s.pid, nullptr, 0);
      }
    }
    std::system(("rm -rf '" + dir + "'").c_str());
  };
  for (const auto& s : servers) {
    if (s.pid == 0) {
      std::cerr << "a server did not start (BENCH_STDERR=FILE keeps their stderr)\n";
      stop_all();
      return 1;
    }
  }
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = ReadFile(dir + "/ca.pem");
  ssl.pem_private_key = ReadFile(dir + "/client.key");
  ssl.pem_cert_chain = ReadFile(dir + "/client.pem");
  auto secure = grpc::SslCredentials(ssl);
  std::vector<Target> targets = {
      {"plaintext, no authorization", grpc::CreateChannel(servers[0].address, grpc::InsecureChannelCredentials()), ""},
      {"mTLS, no authorization", grpc::CreateChannel(servers[1].address, secure), ""},
      {"mTLS + JWT", grpc::CreateChannel(servers[2].address, secure), token},
      {"plaintext, rate limits on", grpc::CreateChannel(servers[3].address, grpc::InsecureChannelCredentials()), ""},
  };
  // Each works, and the third one really checks tokens (a call without one is refused).
  for (const Target& t : targets) {
    grpc::Status s = DescribeOnce(t, t.token);
    if (!s.ok()) {
      std::cerr << t.name << ": DescribeNamespace failed: " << s.error_message() << "\n";
      stop_all();
      return 1;
    }
  }
  grpc::Status anonymous = DescribeOnce(targets[2], "");
  std::printf("mTLS + JWT server, a call without a token: %s (%s)\n",
              anonymous.ok() ? "ANSWERED" : "refused", anonymous.error_message().c_str());

  std::vector<std::vector<double>> rps(targets.size());
  for (size_t t = 0; t < targets.size(); ++t) DescribeRps(targets[t], 16, 1.0);  // warm up
  for (int r = 0; r < rounds; ++r) {
    for (size_t t = 0; t < targets.size(); ++t) rps[t].push_back(DescribeRps(targets[t], 16, seconds));
  }
  const double base = Median(rps[0]);
  std::printf("DescribeNamespace, 16 callers on one channel, medians of %d rounds of %.0f s:\n",
              rounds, seconds);
  for (size_t t = 0; t < targets.size(); ++t) {
    std::printf("  %-30s %8.0f requests/s  %.2fx\n", targets[t].name.c_str(), Median(rps[t]),
                Median(rps[t]) / base);
  }
  const double ratio = Median(rps[2]) / base;
  std::printf("mTLS + JWT / plaintext without authorization: %.2fx (target >= 0.6x): %s\n", ratio,
              ratio >= 0.6 ? "met" : "NOT met");
  stop_all();
  return 0;
}
