// The server's HTTP endpoints (cpp-httplib from Debian underneath): `GET /metrics`, and the
// timer API with Temporal's HTTP API on the HTTP port. Routes are registered before Start; each
// request runs on the server's own small pool of threads, never on gRPC's.
//
// Bounded: `threads` workers and at most `queue` accepted connections waiting for one; when
// both are full the listener stops accepting until a worker is free (the kernel's backlog
// then holds or refuses new connections), so a flood of scrapers costs a fixed number of
// threads and sockets. Idle keep-alive connections are closed after a second and busy ones
// after 100 requests (so that waiting clients get a worker), reads and writes time out after
// io_timeout_seconds (one by default), so Stop returns within about that.
//
// Thread safety: Route before Start, from one thread. Start, Stop and port() may then be
// called from any thread; handlers run concurrently on the workers.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "lib/common/metrics.h"

namespace tock::server::http {

struct HttpRequest {
  std::string method;  // "GET"
  std::string path;    // "/metrics" (percent-decoded)
  std::string target;  // the request target as sent: the path still percent-encoded, the query
  std::multimap<std::string, std::string> query;
  std::vector<std::string> path_groups;  // the route pattern's capture groups, in order
  std::string body;
  std::multimap<std::string, std::string> headers;  // names in lower case
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type
  // A streamed answer instead of `body` (server-sent events): `stream` writes the body in
  // chunks as it goes, and `write` returns false once the client is gone (then `stream`
  // should return). The request holds its worker thread until `stream` returns.
  using Write = std::function<bool(std::string_view)>;
  std::function<void(const Write& write)> stream;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

// Files of an HTTPS server (PEM).
struct HttpTls {
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;  // "": no client certificate asked for
  bool require_client_certificate = false;
};

struct HttpServerOptions {
  int threads = 2;
  int queue = 8;
  size_t max_body_bytes = 1 << 20;
  // Reads and writes of a connection time out after this long.
  int io_timeout_seconds = 1;
  // HTTPS (TLS 1.2+) with these files, read once at start; unset: plaintext.
  std::optional<HttpTls> tls;
  // A public path ("/tock", no trailing '/'; "": none): every route also answers under it,
  // its handler seeing the path without it (a console served at http://host/tock/ calls its
  // API relative to itself, and clients of the API at the root still find it there).
  std::string path_prefix;
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options = {});
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // `method` "GET", "POST", "PUT", "PATCH" or "DELETE"; `pattern` is an ECMAScript regular expression
  // matched against the whole path ("/metrics", "/timers/([^/]+)"), with or without the
  // options' path_prefix before it. A handler that throws
  // answers 500 without the exception's text. Unknown paths answer 404, known paths with
  // another method 404 as well (cpp-httplib routes by method first).
  void Route(const std::string& method, const std::string& pattern, HttpHandler handler);

  // The answers cpp-httplib gives by itself, without a route's handler (413 for a body over
  // max_body_bytes, 404 for an unknown path, 400 for a request it cannot read), are passed to
  // `rewrite` with the request's path: an API answers them with its own error body instead
  // of an empty one. nullopt keeps the answer (or leaves it to the next rewrite given). Call
  // before Start.
  void RewriteRefusals(
      std::function<std::optional<HttpResponse>(int status, const std::string& path)> rewrite);

  // Binds `ip`:`port` (0: a free port) and starts serving. UNAVAILABLE naming the address
  // when it cannot be bound, or the TLS files when they cannot be used; FAILED_PRECONDITION
  // when already started.
  absl::Status Start(const std::string& ip, int port);

  // The bound port (0 before Start).
  int port() const;

  // Stops accepting, closes idle connections, waits for the requests in flight (each bounded
  // by the timeouts above) and joins the workers. Idempotent.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Adds `GET /metrics`: `registry`'s text exposition (format 0.0.4). `registry` must outlive
// the server.
void RouteMetrics(HttpServer& server, const MetricsRegistry& registry);
// The same with the text from `exposition` (a server that sets gauges read on demand first).
void RouteMetrics(HttpServer& server, std::function<std::string()> exposition);

}  // namespace tock::server::http
