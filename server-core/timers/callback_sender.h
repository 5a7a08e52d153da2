// The interface the timer engine fires callbacks through (issue 14). The engine hands a
// request over and is told once how the callback went, classified by the seed's protocol
// (reference/scaleout.md §3):
//   200 {"ok": true}                         -> kSucceeded
//   200 {"ok": false, "nextExecuteAt": T}    -> kReschedule at T
//   4xx                                      -> kStop (the receiver refused it: no retry)
//   an address the policy refuses            -> kStop (callback_address_policy.h: no retry)
//   anything else (5xx, timeout, refused connection, bad body, {"ok": false} without a
//   time)                                    -> kRetry (by the timer's retry policy)
// The production sender is HttpCallbackSender (libcurl multi, one thread); engine unit
// tests may script their own as a fault/time fake.
#pragma once

#include <functional>
#include <string>

#include "absl/time/time.h"

namespace tock::server::timers {

struct CallbackRequest {
  std::string url;        // http:// or https://, checked by the timer service when stored
  std::string body_json;  // the POST body: {namespace, id, payload, executeAt, attempt}
  absl::Duration timeout; // whole-request deadline (connect + send + answer)
  std::string namespace_name;  // the timer's: which signing secret applies (if any)
};

struct CallbackOutcome {
  enum class Kind {
    kSucceeded,
    kReschedule,
    kStop,   // 4xx: no retry
    kRetry,  // 5xx, timeout, refused, bad body, ok:false without time
  };
  Kind kind = Kind::kRetry;
  absl::Time next_execute_at;  // kReschedule only
  int http_status = 0;         // 0 when no HTTP answer arrived
  std::string error;           // bounded (at most kMaxErrorBytes), for the timer's last_error
  static constexpr size_t kMaxErrorBytes = 1024;
};

class CallbackSender {
 public:
  virtual ~CallbackSender() = default;
  // Sends asynchronously; `done` is called exactly once, on the sender's thread (keep it
  // short: every other callback in flight waits while it runs).
  virtual void Send(CallbackRequest request, std::function<void(CallbackOutcome)> done) = 0;
  // Gets ready to send (what the first Send would otherwise do first), so that the first
  // callback does not wait for it. The engine calls it once it holds a timer.
  virtual void Prepare() {}
};

}  // namespace tock::server::timers
