// A real HTTP receiver of timer callbacks for tests and benchmarks (cpp-httplib on
// 127.0.0.1, a free port): it answers each callback as the test scripted for its timer id
// (success, reschedule to T, any status, N failures then success, slow beyond a timeout, a
// bad body) and records every request with its arrival time and the client's port (so a
// test can count connections: a kept-alive connection keeps its port).
//
// Answers per timer id are a list used in order, the last one repeated; an id with no
// script is answered 200 {"ok": true}. The id is read from the callback's JSON body
// ({namespace, id, payload, executeAt, attempt}); a body that is not that JSON is recorded
// with parsed = false and answered with the default script.
//
// Thread safety: every method may be called from any thread while requests arrive.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace tock::testing {

// The server config that lets timer callbacks reach a receiver of this file: it listens on
// 127.0.0.1, a loopback address callbacks reach only when timers.callbacks.allow has it. A
// `timers:` section to which more `callbacks:` keys may be appended.
inline constexpr char kAllowLoopbackCallbacksYaml[] =
    "timers:\n  callbacks:\n    allow: [127.0.0.0/8]\n";

struct CallbackAnswer {
  int status = 200;
  std::string body = R"({"ok":true})";
  absl::Duration delay = absl::ZeroDuration();  // wait before answering (a slow receiver)

  static CallbackAnswer Ok() { return {}; }
  static CallbackAnswer RescheduleTo(absl::Time at);  // 200 {"ok":false,"nextExecuteAt":at}
  static CallbackAnswer Status(int status, std::string body = R"({"error":"scripted"})") {
    return {status, std::move(body), absl::ZeroDuration()};
  }
  static CallbackAnswer Body(std::string body) { return {200, std::move(body), absl::ZeroDuration()}; }
  static CallbackAnswer Slow(absl::Duration delay) { return {200, R"({"ok":true})", delay}; }
};

struct ReceivedCallback {
  std::string path;
  std::string body;  // empty when Options::keep_bodies is false
  std::string signature;  // the Tock-Signature header; "" when unsigned
  bool parsed = false;  // the body was the callback JSON; the fields below are from it
  std::string namespace_name;
  std::string id;
  std::string payload_json;  // the "payload" value as compact JSON ("null" when none)
  absl::Time execute_at;
  int attempt = 0;
  absl::Time arrived_at;  // the receiver's clock (the real one) when the request was read
  int remote_port = 0;    // the client's port: one per TCP connection
  int answered_status = 0;
};

class CallbackReceiver {
 public:
  struct Options {
    int threads = 64;  // cpp-httplib keeps a thread per kept-alive connection
    bool keep_bodies = true;
  };
  CallbackReceiver();
  explicit CallbackReceiver(Options options);
  ~CallbackReceiver();  // Stop()
  CallbackReceiver(const CallbackReceiver&) = delete;
  CallbackReceiver& operator=(const CallbackReceiver&) = delete;

  // Listens on 127.0.0.1, a free port; any POST path is a callback.
  absl::Status Start();
  // Stops listening, cuts slow answers short, waits for the handlers. Idempotent.
  void Stop();

  int port() const;
  std::string Url(std::string_view path = "/callback") const;  // http://127.0.0.1:PORT/path

  void Script(const std::string& id, std::vector<CallbackAnswer> answers);
  // `failures` answers of `status`, then 200 {"ok": true}.
  void FailThenSucceed(const std::string& id, int failures, int status = 500);
  // The answer for ids with no script (initially Ok()).
  void SetDefault(CallbackAnswer answer);

  std::vector<ReceivedCallback> Received() const;
  // What arrived from the `first`-th request on (0-based, in arrival order): a reader that
  // polls copies only what is new, and holds the lock the handlers need that much less.
  std::vector<ReceivedCallback> ReceivedFrom(size_t first) const;
  std::vector<ReceivedCallback> ReceivedFor(std::string_view id) const;
  size_t count() const;
  // Waits (a condition variable, bounded by `timeout`) until at least `n` requests arrived
  // in all, or for `id`. False on timeout.
  bool WaitForCount(size_t n, absl::Duration timeout) const;
  bool WaitFor(std::string_view id, size_t n, absl::Duration timeout) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tock::testing
