// The CallbackSender of tock-server: the libcurl sender (http_callback_sender.h) made when
// the timer engine first holds a timer (Prepare), or at the first callback, rather than at
// every start. Most servers never fire a timer of the timer service; they should not load
// libcurl and run its thread for nothing. Made ahead of the first callback because making it
// (loading libcurl and its TLS library, about 5 ms) would otherwise delay the first timers
// fired after a start.
//
// When the sender cannot be made (libcurl missing, say), every callback is answered kRetry
// with that reason, so it is the timer's last_error (`tock timer get` shows it) and the retry
// policy applies; it is logged once. Making it is tried again at most once a minute.
//
// Thread safety: Send from any thread. Stop() before the owner of `done` goes.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "lib/common/log.h"
#include "server-core/timers/http_callback_sender.h"

namespace tock::server::timers {

class LazyCallbackSender final : public CallbackSender {
 public:
  using Factory = std::function<absl::StatusOr<std::unique_ptr<CallbackSender>>()>;

  // The libcurl sender with its default options (the default factory).
  static absl::StatusOr<std::unique_ptr<CallbackSender>> MakeHttpSender() {
    return MakeHttpSenderWith(HttpCallbackSenderOptions());
  }
  // The libcurl sender with `options` (tock-server's: its address policy and signing secrets).
  static absl::StatusOr<std::unique_ptr<CallbackSender>> MakeHttpSenderWith(
      HttpCallbackSenderOptions options) {
    absl::StatusOr<std::unique_ptr<HttpCallbackSender>> s =
        HttpCallbackSender::Create(std::move(options));
    if (!s.ok()) return s.status();
    return std::unique_ptr<CallbackSender>(std::move(*s));
  }

  LazyCallbackSender(Factory make, Logger& logger) : make_(std::move(make)), logger_(logger) {}
  explicit LazyCallbackSender(Logger& logger) : LazyCallbackSender(&MakeHttpSender, logger) {}

  void Send(CallbackRequest request, std::function<void(CallbackOutcome)> done) override {
    CallbackSender* sender = nullptr;
    std::string error;
    {
      std::lock_guard lock(mu_);
      MakeLocked();
      sender = stopped_ ? nullptr : sender_.get();
      error = stopped_ ? "the callback sender stopped" : error_;
    }
    if (sender != nullptr) {
      sender->Send(std::move(request), std::move(done));
      return;
    }
    CallbackOutcome refused;
    refused.kind = CallbackOutcome::Kind::kRetry;
    refused.error = error.substr(0, CallbackOutcome::kMaxErrorBytes);
    done(std::move(refused));
  }

  void Prepare() override {
    std::lock_guard lock(mu_);
    MakeLocked();
  }

  // Stops the sender if it was made (answering what is unfinished, see
  // HttpCallbackSender::Stop); later callbacks are answered "stopped". Idempotent.
  void Stop() {
    std::unique_ptr<CallbackSender> sender;
    {
      std::lock_guard lock(mu_);
      stopped_ = true;
      sender = std::move(sender_);
    }
    sender.reset();  // its destructor stops it (outside the lock: its callbacks may Send)
  }

  ~LazyCallbackSender() override { Stop(); }

 private:
  void MakeLocked() {
    if (stopped_ || sender_ != nullptr || absl::Now() < next_try_) return;
    absl::StatusOr<std::unique_ptr<CallbackSender>> made = make_();
    if (made.ok()) {
      sender_ = std::move(*made);
      return;
    }
    error_ = std::string(made.status().message());
    next_try_ = absl::Now() + absl::Minutes(1);
    logger_.Error("timer callbacks cannot be sent; timers are retried by their policy",
                  {{"error", made.status().ToString()}});
  }

  Factory make_;
  Logger& logger_;
  std::mutex mu_;
  std::unique_ptr<CallbackSender> sender_;
  bool stopped_ = false;
  std::string error_;  // why the last try to make the sender failed
  absl::Time next_try_ = absl::InfinitePast();
};

}  // namespace tock::server::timers
