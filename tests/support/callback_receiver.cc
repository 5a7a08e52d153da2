#include "tests/support/callback_receiver.h"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "lib/common/clock.h"
#include "lib/common/listen_backlog.h"
#include "lib/common/time_format.h"

namespace tock::testing {

CallbackAnswer CallbackAnswer::RescheduleTo(absl::Time at) {
  return {200, absl::StrCat(R"({"ok":false,"nextExecuteAt":")", FormatTimestamp(at), "\"}"),
          absl::ZeroDuration()};
}

struct CallbackReceiver::Impl {
  Options options;
  httplib::Server server;
  std::thread listener;
  int port = 0;
  bool started = false;
  bool stopped = false;

  mutable std::mutex mu;
  mutable std::condition_variable changed;  // a request arrived, or stopping
  bool stopping = false;
  std::map<std::string, std::vector<CallbackAnswer>, std::less<>> scripts;
  // A hash map: it holds every id answered (200,000 in timer_bench), and a tree's lookup, under
  // the lock every handler takes, grew with them, so the receiver slowed down as a run went on
  // and whatever ran later was measured against a slower receiver than what ran first.
  absl::flat_hash_map<std::string, size_t> answered_per_id;
  CallbackAnswer default_answer;
  // A deque: growing it never moves what is recorded while the lock is held (300,000
  // callbacks in timer_bench).
  std::deque<ReceivedCallback> received;

  void Handle(const httplib::Request& in, httplib::Response& out);
};

namespace {

ReceivedCallback Parse(const httplib::Request& in, bool keep_body) {
  ReceivedCallback r;
  r.arrived_at = RealClock().Now();
  r.path = in.path;
  r.remote_port = in.remote_port;
  if (keep_body) r.body = in.body;
  r.signature = in.get_header_value("Tock-Signature");
  const nlohmann::json body = nlohmann::json::parse(in.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) return r;
  const auto ns = body.find("namespace");
  const auto id = body.find("id");
  const auto at = body.find("executeAt");
  const auto attempt = body.find("attempt");
  if (ns == body.end() || !ns->is_string() || id == body.end() || !id->is_string() ||
      at == body.end() || !at->is_string() || attempt == body.end() ||
      !attempt->is_number_integer()) {
    return r;
  }
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, at->get<std::string>(), &r.execute_at, &error)) {
    return r;
  }
  r.namespace_name = ns->get<std::string>();
  r.id = id->get<std::string>();
  r.attempt = attempt->get<int>();
  const auto payload = body.find("payload");
  r.payload_json = payload == body.end() ? "null" : payload->dump();
  r.parsed = true;
  return r;
}

}  // namespace

void CallbackReceiver::Impl::Handle(const httplib::Request& in, httplib::Response& out) {
  ReceivedCallback r = Parse(in, options.keep_bodies);
  CallbackAnswer answer;
  {
    std::lock_guard lock(mu);
    answer = default_answer;
    if (r.parsed) {
      const size_t n = answered_per_id[r.id]++;
      if (auto it = scripts.find(r.id); it != scripts.end() && !it->second.empty()) {
        answer = it->second[std::min(n, it->second.size() - 1)];
      }
    }
    r.answered_status = answer.status;
    received.push_back(std::move(r));
  }
  changed.notify_all();
  if (answer.delay > absl::ZeroDuration()) {
    // Slow: wait the scripted time, or until Stop (so a test ends promptly).
    std::unique_lock lock(mu);
    changed.wait_for(lock, absl::ToChronoMilliseconds(answer.delay), [this] { return stopping; });
  }
  out.status = answer.status;
  out.set_content(answer.body, "application/json");
}

CallbackReceiver::CallbackReceiver() : CallbackReceiver(Options{}) {}

CallbackReceiver::CallbackReceiver(Options options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  httplib::Server& s = impl_->server;
  const int threads = options.threads;
  s.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  // A sender keeps its connections: serve them as long as it sends.
  s.set_keep_alive_max_count(1'000'000);
  s.set_keep_alive_timeout(2);
  s.set_read_timeout(5, 0);
  s.set_write_timeout(5, 0);
  s.set_payload_max_length(1 << 20);
  // An answer goes out in two writes (headers, body): without TCP_NODELAY (cpp-httplib's
  // default is off) Nagle holds the second until the client's delayed ACK, 40 ms a request
  // on a kept-alive connection. Set on the listening socket; accepted ones inherit it.
  s.set_tcp_nodelay(true);
  // Not cpp-httplib's default SO_REUSEPORT: no other process may share this port.
  s.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  s.Post(".*", [impl = impl_.get()](const httplib::Request& in, httplib::Response& out) {
    impl->Handle(in, out);
  });
}

CallbackReceiver::~CallbackReceiver() { Stop(); }

absl::Status CallbackReceiver::Start() {
  if (impl_->started) return absl::FailedPreconditionError("callback receiver already started");
  const int port = impl_->server.bind_to_any_port("127.0.0.1");
  if (port <= 0) return absl::UnavailableError("callback receiver: cannot bind 127.0.0.1");
  impl_->port = port;
  impl_->started = true;
  // A sender that opens its 64 connections at once must not wait for SYNs resent after 1 s.
  if (absl::Status s = RaiseListenBacklog(port); !s.ok()) return s;
  impl_->listener = std::thread([this] { impl_->server.listen_after_bind(); });
  // stop() is lost if it comes before the listener marked itself running (cpp-httplib 0.11).
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!impl_->server.is_running() && std::chrono::steady_clock::now() < limit) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return absl::OkStatus();
}

void CallbackReceiver::Stop() {
  if (!impl_->started || impl_->stopped) return;
  impl_->stopped = true;
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->changed.notify_all();
  impl_->server.stop();
  if (impl_->listener.joinable()) impl_->listener.join();
}

int CallbackReceiver::port() const { return impl_->port; }

std::string CallbackReceiver::Url(std::string_view path) const {
  return absl::StrCat("http://127.0.0.1:", impl_->port, std::string(path));
}

void CallbackReceiver::Script(const std::string& id, std::vector<CallbackAnswer> answers) {
  std::lock_guard lock(impl_->mu);
  impl_->scripts[id] = std::move(answers);
  impl_->answered_per_id.erase(id);
}

void CallbackReceiver::FailThenSucceed(const std::string& id, int failures, int status) {
  std::vector<CallbackAnswer> answers(static_cast<size_t>(failures), CallbackAnswer::Status(status));
  answers.push_back(CallbackAnswer::Ok());
  Script(id, std::move(answers));
}

void CallbackReceiver::SetDefault(CallbackAnswer answer) {
  std::lock_guard lock(impl_->mu);
  impl_->default_answer = std::move(answer);
}

std::vector<ReceivedCallback> CallbackReceiver::Received() const { return ReceivedFrom(0); }

std::vector<ReceivedCallback> CallbackReceiver::ReceivedFrom(size_t first) const {
  std::lock_guard lock(impl_->mu);
  if (first >= impl_->received.size()) return {};
  return std::vector<ReceivedCallback>(impl_->received.begin() + static_cast<std::ptrdiff_t>(first),
                                       impl_->received.end());
}

std::vector<ReceivedCallback> CallbackReceiver::ReceivedFor(std::string_view id) const {
  std::lock_guard lock(impl_->mu);
  std::vector<ReceivedCallback> out;
  for (const ReceivedCallback& r : impl_->received) {
    if (r.parsed && r.id == id) out.push_back(r);
  }
  return out;
}

size_t CallbackReceiver::count() const {
  std::lock_guard lock(impl_->mu);
  return impl_->received.size();
}

bool CallbackReceiver::WaitForCount(size_t n, absl::Duration timeout) const {
  std::unique_lock lock(impl_->mu);
  return impl_->changed.wait_for(lock, absl::ToChronoMilliseconds(timeout),
                                 [&] { return impl_->received.size() >= n; });
}

bool CallbackReceiver::WaitFor(std::string_view id, size_t n, absl::Duration timeout) const {
  std::unique_lock lock(impl_->mu);
  return impl_->changed.wait_for(lock, absl::ToChronoMilliseconds(timeout), [&] {
    auto it = impl_->answered_per_id.find(absl::string_view(id.data(), id.size()));
    return it != impl_->answered_per_id.end() && it->second >= n;
  });
}

}  // namespace tock::testing
