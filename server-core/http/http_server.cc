#include "server-core/http/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "lib/common/listen_backlog.h"

namespace tock::server::http {
namespace {

// cpp-httplib's own ThreadPool queues without a bound. This one holds at most `capacity`
// accepted connections: beyond that, enqueue (called by the accepting thread) waits for a
// free place, which stops accepting. Dropping a job instead is not possible: the job is what
// closes its socket.
class BoundedPool : public httplib::TaskQueue {
 public:
  BoundedPool(int threads, int capacity) : capacity_(static_cast<size_t>(capacity)) {
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { Work(); });
  }

  void enqueue(std::function<void()> fn) override {
    {
      std::unique_lock lock(mu_);
      has_room_.wait(lock, [this] { return jobs_.size() < capacity_; });
      jobs_.push_back(std::move(fn));
    }
    has_job_.notify_one();
  }

  // Runs what was queued, then joins the workers (cpp-httplib calls this once the listener
  // has stopped, so nothing is enqueued any more).
  void shutdown() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    has_job_.notify_all();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
  }

 private:
  void Work() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mu_);
        has_job_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // stopping, nothing left
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      has_room_.notify_one();
      job();
    }
  }

  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable has_job_;
  std::condition_variable has_room_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

// cpp-httplib compresses an answer with brotli whenever the client accepts it (browsers do),
// at brotli's best and slowest quality: 0.6 s for a 260 KB history page, against 15 ms with
// gzip. So answers are compressed with gzip only: the client's Accept-Encoding loses "br"
// before cpp-httplib reads it to choose (the request is cpp-httplib's own mutable object,
// handed to handlers as const).
void AcceptGzipOnly(const httplib::Request& in) {
  auto& headers = const_cast<httplib::Request&>(in).headers;
  auto it = headers.find("Accept-Encoding");
  if (it == headers.end() || it->second.find("br") == std::string::npos) return;
  it->second = it->second.find("gzip") != std::string::npos ? "gzip" : "identity";
}

// `path` without `prefix` when it starts with it as whole segments ("/tock/x" -> "/x").
std::string WithoutPrefix(const std::string& path, const std::string& prefix) {
  if (prefix.empty() || path.compare(0, prefix.size(), prefix) != 0) return path;
  if (path.size() == prefix.size()) return "/";
  return path[prefix.size()] == '/' || path[prefix.size()] == '?' ? path.substr(prefix.size()) : path;
}

// `text` as a regular expression matching it literally.
std::string RegexLiteral(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::strchr("\\^$.|?*+()[]{}", c) != nullptr) out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

httplib::Server::Handler Adapt(HttpHandler handler, const std::string& prefix) {
  return [handler = std::move(handler), prefix](const httplib::Request& in, httplib::Response& out) {
    AcceptGzipOnly(in);
    HttpRequest request;
    request.method = in.method;
    request.path = WithoutPrefix(in.path, prefix);
    request.target = WithoutPrefix(in.target, prefix);
    for (const auto& [name, value] : in.headers) {
      std::string lower = name;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      request.headers.emplace(std::move(lower), value);
    }
    request.body = in.body;
    for (const auto& [key, value] : in.params) request.query.emplace(key, value);
    for (size_t i = 1; i < in.matches.size(); ++i) request.path_groups.push_back(in.matches[i]);
    HttpResponse response = handler(request);
    out.status = response.status;
    for (const auto& [name, value] : response.headers) out.set_header(name, value);
    if (response.stream) {
      out.set_chunked_content_provider(
          response.content_type,
          [stream = std::move(response.stream)](size_t, httplib::DataSink& sink) {
            stream([&sink](std::string_view chunk) {
              return sink.is_writable() && sink.write(chunk.data(), chunk.size());
            });
            sink.done();
            return true;
          });
      return;
    }
    out.set_content(std::move(response.body), response.content_type);
  };
}

// TLS 1.2 or later with the PEM files of `tls`: the certificate chain and key, and client
// certificates asked for (and required, when `tls.require_client_certificate`) from its CAs.
bool SetUpTls(SSL_CTX& ctx, const HttpTls& tls) {
  SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(&ctx, tls.cert_file.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(&ctx, tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(&ctx) != 1) {
    return false;
  }
  if (!tls.client_ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(&ctx, tls.client_ca_file.c_str(), nullptr) != 1) return false;
    SSL_CTX_set_verify(&ctx,
                       SSL_VERIFY_PEER | (tls.require_client_certificate ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0),
                       nullptr);
  }
  return true;
}

}  // namespace

struct HttpServer::Impl {
  HttpServerOptions options;
  std::unique_ptr<httplib::Server> server;
  std::thread listener;
  std::mutex mu;  // start and stop
  bool started = false;
  bool stopped = false;
  int port = 0;
  std::vector<std::function<std::optional<HttpResponse>(int, const std::string&)>> rewrites;
};

HttpServer::HttpServer(HttpServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  if (options.tls.has_value()) {
    impl_->server = std::make_unique<httplib::SSLServer>(
        [tls = *options.tls](SSL_CTX& ctx) { return SetUpTls(ctx, tls); });
  } else {
    impl_->server = std::make_unique<httplib::Server>();
  }
  httplib::Server& s = *impl_->server;
  s.new_task_queue = [threads = options.threads, queue = options.queue] {
    return new BoundedPool(threads, queue);
  };
  s.set_keep_alive_timeout(1);
  // A kept-alive connection holds a worker, so it is closed after some requests to let
  // waiting clients in; cpp-httplib's default of 5 cost a TCP handshake every fifth request
  // (a timer client creating 10,000 timers a second opened 2,000 connections a second).
  s.set_keep_alive_max_count(100);
  s.set_read_timeout(options.io_timeout_seconds, 0);
  s.set_write_timeout(options.io_timeout_seconds, 0);
  s.set_payload_max_length(options.max_body_bytes);
  // An answer is two writes (headers, body): without TCP_NODELAY (off in cpp-httplib by
  // default) Nagle holds the body for the client's delayed ACK, 40 ms a request on a
  // kept-alive connection (the timer API's clients keep theirs). Accepted sockets inherit it.
  s.set_tcp_nodelay(true);
  // cpp-httplib's default also sets SO_REUSEPORT, which lets a second server bind the same
  // port and split the scrapes: keep only SO_REUSEADDR (a restart rebinds at once).
  s.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    res.status = 500;
    res.set_content("internal error\n", "text/plain; charset=utf-8");
  });
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Route(const std::string& method, const std::string& pattern, HttpHandler handler) {
  httplib::Server& s = *impl_->server;
  const std::string& prefix = impl_->options.path_prefix;
  // The prefix group captures nothing: the pattern's own groups keep their numbers.
  const std::string full = prefix.empty() ? pattern : "(?:" + RegexLiteral(prefix) + ")?" + pattern;
  httplib::Server::Handler adapted = Adapt(std::move(handler), prefix);
  if (method == "GET") {
    s.Get(full, std::move(adapted));
  } else if (method == "POST") {
    s.Post(full, std::move(adapted));
  } else if (method == "PUT") {
    s.Put(full, std::move(adapted));
  } else if (method == "PATCH") {
    s.Patch(full, std::move(adapted));
  } else if (method == "DELETE") {
    s.Delete(full, std::move(adapted));
  }
}

void HttpServer::RewriteRefusals(
    std::function<std::optional<HttpResponse>(int status, const std::string& path)> rewrite) {
  impl_->rewrites.push_back(std::move(rewrite));
  if (impl_->rewrites.size() > 1) return;  // the handler below asks every one
  impl_->server->set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& in, httplib::Response& out) {
        // A route's own error answer has a body: left as it is.
        if (!out.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        for (const auto& rewrite : impl_->rewrites) {
          std::optional<HttpResponse> answer =
              rewrite(out.status, WithoutPrefix(in.path, impl_->options.path_prefix));
          if (!answer.has_value()) continue;
          out.status = answer->status;
          out.set_content(std::move(answer->body), answer->content_type);
          return httplib::Server::HandlerResponse::Handled;
        }
        return httplib::Server::HandlerResponse::Unhandled;
      }));
}

absl::Status HttpServer::Start(const std::string& ip, int port) {
  std::lock_guard lock(impl_->mu);
  if (impl_->started) return absl::FailedPreconditionError("the HTTP server is already started");
  const std::string address = absl::StrCat(ip, ":", port);
  if (!impl_->server->is_valid()) {
    return absl::UnavailableError(absl::StrCat(
        "cannot serve HTTPS on ", address,
        ": the certificate, key or client CA file could not be used (PEM files, the key "
        "matching the certificate)"));
  }
  int bound = 0;
  if (port == 0) {
    bound = impl_->server->bind_to_any_port(ip);
  } else if (impl_->server->bind_to_port(ip, port)) {
    bound = port;
  }
  if (bound <= 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", address, " for HTTP: the address is in use or not available here"));
  }
  impl_->port = bound;
  impl_->started = true;
  // A failure leaves cpp-httplib's backlog of 5: slower to accept bursts, nothing worse.
  (void)RaiseListenBacklog(bound);
  impl_->listener = std::thread([this] { impl_->server->listen_after_bind(); });
  // stop() is lost if it comes before the listener marked itself running (cpp-httplib 0.11),
  // so Start returns only once it has: the first thing listen_after_bind does.
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!impl_->server->is_running() && std::chrono::steady_clock::now() < limit) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return absl::OkStatus();
}

int HttpServer::port() const {
  std::lock_guard lock(impl_->mu);
  return impl_->port;
}

void HttpServer::Stop() {
  std::lock_guard lock(impl_->mu);
  if (!impl_->started || impl_->stopped) return;
  impl_->stopped = true;
  impl_->server->stop();
  if (impl_->listener.joinable()) impl_->listener.join();
}

void RouteMetrics(HttpServer& server, const MetricsRegistry& registry) {
  RouteMetrics(server, [&registry] { return registry.TextExposition(); });
}

void RouteMetrics(HttpServer& server, std::function<std::string()> exposition) {
  server.Route("GET", "/metrics", [exposition = std::move(exposition)](const HttpRequest&) {
    HttpResponse response;
    response.content_type = kPrometheusTextContentType;
    response.body = exposition();
    return response;
  });
}

}  // namespace tock::server::http
