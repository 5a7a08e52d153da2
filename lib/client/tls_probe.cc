#include "lib/client/tls_probe.h"

#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace tock::client {
namespace {

struct SslCtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
struct SslFree {
  void operator()(SSL* s) const { SSL_free(s); }
};

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

// HOST and PORT of "HOST:PORT", "[V6]:PORT" or gRPC's "dns:///HOST:PORT"; false otherwise.
bool SplitAddress(absl::string_view address, std::string& host, std::string& port) {
  absl::ConsumePrefix(&address, "dns:///");
  absl::ConsumePrefix(&address, "ipv4:");
  absl::ConsumePrefix(&address, "ipv6:");
  if (address.empty() || address.size() > 300) return false;
  if (address.front() == '[') {
    const size_t close = address.find(']');
    if (close == absl::string_view::npos || close + 1 >= address.size() || address[close + 1] != ':') {
      return false;
    }
    host = std::string(address.substr(1, close - 1));
    port = std::string(address.substr(close + 2));
  } else {
    const size_t colon = address.rfind(':');
    if (colon == absl::string_view::npos) return false;
    host = std::string(address.substr(0, colon));
    port = std::string(address.substr(colon + 1));
  }
  return !host.empty() && !port.empty();
}

// A connected blocking socket whose reads and writes time out, or -1.
int Connect(const std::string& host, const std::string& port, absl::Duration timeout) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) continue;
    bool ok = connect(fd, a->ai_addr, a->ai_addrlen) == 0;
    if (!ok && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int err = 0;
      socklen_t len = sizeof(err);
      ok = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout))) == 1 &&
           getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
    }
    if (!ok) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) return -1;
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  timeval tv = absl::ToTimeval(timeout);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  return fd;
}

// OpenSSL's reason for the last error ("certificate verify failed", "tlsv13 alert
// certificate required"), or "".
std::string LastReason() {
  unsigned long e = 0, last = 0;
  while ((e = ERR_get_error()) != 0) last = e;
  const char* reason = last == 0 ? nullptr : ERR_reason_error_string(last);
  return reason == nullptr ? "" : reason;
}

bool ServerSpokeTls(const std::string& reason) {
  // An alert is the server speaking TLS; so is a certificate we had no reason to check.
  return absl::StrContains(reason, "alert") || absl::StrContains(reason, "certificate");
}

bool ServerSpokePlaintext(const std::string& reason) {
  // What OpenSSL says when the bytes answering its ClientHello are not a TLS record (an
  // HTTP/2 server's SETTINGS frame).
  return absl::StrContains(reason, "wrong version number") ||
         absl::StrContains(reason, "packet length too long") ||
         absl::StrContains(reason, "record layer failure") ||
         absl::StrContains(reason, "http request");
}

// The server sent its certificate, then ended the handshake with an alert or by closing
// the connection (gRPC closes without an alert): it judged the client's certificate.
std::string AboutRefusedClient(const std::string& address, const TlsOptions& tls) {
  if (tls.cert_path.empty()) {
    return absl::StrCat("TLS handshake with ", address,
                        " failed: the server requires a client certificate; give --tls-cert and "
                        "--tls-key");
  }
  return absl::StrCat("TLS handshake with ", address, " failed: the server refused the client "
                      "certificate ", tls.cert_path, " (is it signed by a CA the server trusts?)");
}

bool ClosedOrAlerted(const std::string& reason) {
  return absl::StrContains(reason, "alert") || absl::StrContains(reason, "unexpected eof");
}

}  // namespace

std::optional<std::string> ExplainTransportFailure(const std::string& address,
                                                   const TlsOptions& tls, absl::Duration timeout) {
  std::string host, port;
  if (!SplitAddress(address, host, port)) return std::nullopt;
  Socket socket(Connect(host, port, timeout));
  if (socket.fd() < 0) return std::nullopt;  // not a TLS matter: gRPC's message says enough

  std::unique_ptr<SSL_CTX, SslCtxFree> ctx(SSL_CTX_new(TLS_client_method()));
  if (ctx == nullptr) return std::nullopt;
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  static constexpr unsigned char kAlpn[] = {2, 'h', '2'};
  SSL_CTX_set_alpn_protos(ctx.get(), kAlpn, sizeof(kAlpn));
  if (tls.enabled) {
    const bool roots = tls.ca_cert_path.empty()
                           ? SSL_CTX_set_default_verify_paths(ctx.get()) == 1
                           : SSL_CTX_load_verify_locations(ctx.get(), tls.ca_cert_path.c_str(), nullptr) == 1;
    if (!roots) return std::nullopt;  // Connection::Open reported unreadable files already
    if (!tls.cert_path.empty() &&
        (SSL_CTX_use_certificate_chain_file(ctx.get(), tls.cert_path.c_str()) != 1 ||
         SSL_CTX_use_PrivateKey_file(ctx.get(), tls.key_path.c_str(), SSL_FILETYPE_PEM) != 1)) {
      ERR_clear_error();
      return absl::StrCat("the TLS client certificate ", tls.cert_path, " or its key ", tls.key_path,
                          " cannot be used (not PEM, or the key is not the certificate's)");
    }
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  } else {
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
  }
  std::unique_ptr<SSL, SslFree> ssl(SSL_new(ctx.get()));
  if (ssl == nullptr) return std::nullopt;
  SSL_set_fd(ssl.get(), socket.fd());
  const std::string name = tls.server_name.empty() ? host : tls.server_name;
  if (tls.enabled) SSL_set1_host(ssl.get(), name.c_str());
  // SNI carries host names only, not addresses.
  if (name.find_first_not_of("0123456789.:") != std::string::npos) {
    SSL_set_tlsext_host_name(ssl.get(), name.c_str());
  }
  ERR_clear_error();
  int rc = SSL_connect(ssl.get());
  std::string reason = rc == 1 ? "" : LastReason();
  if (rc == 1) {
    // With TLS 1.3 the server judges the client's certificate after the client finished: a
    // refusal arrives as an alert on the first read.
    char byte;
    if (SSL_read(ssl.get(), &byte, 1) <= 0) reason = LastReason();
  }
  if (!tls.enabled) {
    if (rc == 1 || ServerSpokeTls(reason)) {
      return absl::StrCat("the server at ", address,
                          " answered TLS; use --tls (with --tls-ca-cert CA.pem unless its "
                          "certificate is signed by a system CA, and --tls-cert/--tls-key if it "
                          "asks for a client certificate)");
    }
    return std::nullopt;
  }
  if (rc != 1) {
    if (ServerSpokePlaintext(reason)) {
      return absl::StrCat("the server at ", address,
                          " answered without TLS (plaintext); drop --tls and the --tls-* options");
    }
    if (absl::StrContains(reason, "certificate verify failed")) {
      const long verify = SSL_get_verify_result(ssl.get());
      return absl::StrCat("TLS handshake with ", address,
                          " failed: the server's certificate was not accepted: ",
                          X509_verify_cert_error_string(verify),
                          tls.ca_cert_path.empty() ? " (give its CA with --tls-ca-cert)"
                                                   : " (check --tls-ca-cert and --tls-server-name)");
    }
    if (SSL_get0_peer_certificate(ssl.get()) != nullptr && ClosedOrAlerted(reason)) {
      return AboutRefusedClient(address, tls);
    }
    if (reason.empty()) {
      return absl::StrCat("TLS handshake with ", address,
                          " failed: the server closed the connection (does it serve TLS?)");
    }
    return absl::StrCat("TLS handshake with ", address, " failed: ", reason);
  }
  if (ClosedOrAlerted(reason)) return AboutRefusedClient(address, tls);
  return std::nullopt;
}

}  // namespace tock::client
