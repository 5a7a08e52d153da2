// The production CallbackSender: every timer callback of this host goes out through one
// libcurl multi handle driven by one thread, so thousands of callbacks can be in flight
// without a thread each, and connections to a receiver are kept alive and reused (the multi
// handle's connection cache) instead of a TCP handshake per firing.
//
// Per request: POST url with request.body_json (Content-Type: application/json), the whole
// request bounded by request.timeout (at least 1 ms; connecting by the smaller of it and
// options.connect_timeout); only http and https; redirects are not followed (a 3xx is "any
// other answer": retry); no proxy (not even one named by the environment: the address
// checked must be the receiver's). At most options.max_response_bytes of the answer are read,
// then the transfer is cut; the outcome is classified by callback_protocol.h.
//
// Addresses: every connection is checked against options.address_policy on the address it
// is about to open, after the host name was resolved (curl's open-socket callback), so a
// name that resolves to a refused address (DNS rebinding included) reaches nothing. When
// every address of the host is refused the callback is answered kStop (no retry) with
// CallbackAddressPolicy::NotSentError.
//
// Signing: a request whose namespace has a secret in options.signing_secrets carries the
// Tock-Signature header (callback_signature.h), made with this host's real clock.
//
// Bounded: at most options.max_in_flight transfers on the wire; further requests wait in a
// queue of at most options.max_queued, beyond which Send answers kRetry ("queue full") at
// once, on the sender's thread like every other answer.
//
// Thread safety: Send from any thread. `done` runs on the sender's thread, exactly once per
// Send: with the outcome, or with kRetry "the callback sender stopped" for every request
// not finished when Stop is called (in flight or queued). A Send after Stop is answered that
// way at once on the caller's thread (there is no sender thread any more).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server-core/timers/callback_address_policy.h"
#include "server-core/timers/callback_sender.h"

namespace tock::server::timers {

// The headers of every callback request besides its Host and Content-Length (timer_bench's
// baseline sends the very same requests). "Expect:" turns off curl's 100-continue round trip.
inline constexpr const char* kCallbackHeaders[] = {"Content-Type: application/json",
                                                   "Accept: application/json", "Expect:"};
inline constexpr char kCallbackUserAgent[] = "tock-timer/1";

struct HttpCallbackSenderOptions {
  // 64: enough to keep a receiver busy (each transfer is one kept connection to it), few
  // enough not to swamp one: thread-per-connection servers such as cpp-httplib's poll every
  // idle kept connection, and 512 of them spent the benchmark's two cores doing that.
  int max_in_flight = 64;
  size_t max_queued = 200'000;
  size_t max_response_bytes = 64 * 1024;
  absl::Duration connect_timeout = absl::Seconds(5);
  // Idle connections kept for reuse (curl's connection cache); 0: max_in_flight.
  int max_idle_connections = 0;
  // Which addresses callbacks may reach (the default refuses loopback, private, link-local
  // and the other restricted ranges).
  CallbackAddressPolicy address_policy;
  // Namespace name (or "*") -> secret: those requests are signed.
  std::map<std::string, std::string> signing_secrets;
};

class HttpCallbackSender final : public CallbackSender {
 public:
  // Opens libcurl (lazily loaded: FAILED_PRECONDITION naming the Debian package when it is
  // missing) and starts the sender's thread. INVALID_ARGUMENT for options out of range
  // (max_in_flight 1..100000, max_response_bytes 1..16 MiB).
  static absl::StatusOr<std::unique_ptr<HttpCallbackSender>> Create(
      HttpCallbackSenderOptions options = {});
  ~HttpCallbackSender() override;  // Stop()

  void Send(CallbackRequest request, std::function<void(CallbackOutcome)> done) override;

  // Answers everything unfinished (see above), closes the connections, joins the thread.
  // Idempotent; must not be called from a `done` callback.
  void Stop();

  // Counters for tests and the bench (monotonic, any thread).
  struct Stats {
    uint64_t sent = 0;      // transfers started
    uint64_t answered = 0;  // done callbacks run
    uint64_t connections_opened = 0;  // new TCP connections (the rest reused a kept one)
  };
  Stats stats() const;

  struct Impl;  // public for the .cc's helpers only

 private:
  explicit HttpCallbackSender(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tock::server::timers
