#include "lib/admin/timer_ops.h"

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "lib/common/duration.h"
#include "lib/common/time_format.h"

namespace tock::admin {
namespace {

namespace tv1 = tock::timer::v1;
using Stub = tv1::TimerService::Stub;

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

// --at or --in to a time; nullopt when neither is given.
absl::StatusOr<std::optional<absl::Time>> When(const TimerFlags& f, absl::Time now) {
  if (!f.at.empty() && !f.in.empty()) return Invalid("give --at or --in, not both");
  if (!f.at.empty()) {
    absl::StatusOr<absl::Time> t = ParseTimestamp(f.at, now);
    if (!t.ok()) return Invalid(absl::StrCat("--at: ", t.status().message()));
    return std::optional<absl::Time>(*t);
  }
  if (!f.in.empty()) {
    absl::StatusOr<absl::Duration> d = ParseHumanDuration(f.in);
    if (!d.ok()) return Invalid(absl::StrCat("--in: ", d.status().message()));
    if (*d < absl::ZeroDuration()) return Invalid("--in must not be negative (use --at for a past time)");
    return std::optional<absl::Time>(now + *d);
  }
  return std::optional<absl::Time>();
}

absl::Status SetDuration(const std::optional<std::string>& text, const char* flag,
                         google::protobuf::Duration* out) {
  if (!text.has_value()) return absl::OkStatus();
  absl::StatusOr<absl::Duration> d = ParseHumanDuration(*text);
  if (!d.ok()) return Invalid(absl::StrCat(flag, ": ", d.status().message()));
  out->set_seconds(absl::ToInt64Seconds(*d));
  out->set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(*d - absl::Seconds(out->seconds()))));
  return absl::OkStatus();
}

// The retry flags into `policy`; whether any was given.
absl::StatusOr<bool> RetryPolicy(const TimerFlags& f, tv1::RetryPolicy* policy) {
  if (f.max_attempts.has_value()) policy->set_max_attempts(*f.max_attempts);
  if (absl::Status s = SetDuration(f.max_attempts_duration, "--max-attempts-duration",
                                   policy->mutable_max_attempts_duration());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = SetDuration(f.initial_interval, "--initial-interval", policy->mutable_initial_interval());
      !s.ok()) {
    return s;
  }
  if (f.backoff_multiplier.has_value()) policy->set_backoff_multiplier(*f.backoff_multiplier);
  if (absl::Status s = SetDuration(f.max_interval, "--max-interval", policy->mutable_max_interval()); !s.ok()) {
    return s;
  }
  return f.max_attempts.has_value() || f.max_attempts_duration.has_value() || f.initial_interval.has_value() ||
         f.backoff_multiplier.has_value() || f.max_interval.has_value();
}

absl::StatusOr<std::optional<int32_t>> CallbackTimeout(const TimerFlags& f) {
  if (!f.callback_timeout.has_value()) return std::optional<int32_t>();
  absl::StatusOr<absl::Duration> d = ParseHumanDuration(*f.callback_timeout, BareNumberUnit::kSeconds);
  if (!d.ok()) return Invalid(absl::StrCat("--callback-timeout: ", d.status().message()));
  if (*d % absl::Seconds(1) != absl::ZeroDuration() || *d < absl::Seconds(1) || *d > absl::Seconds(60)) {
    return Invalid("--callback-timeout must be whole seconds from 1s to 60s");
  }
  return std::optional<int32_t>(static_cast<int32_t>(absl::ToInt64Seconds(*d)));
}

absl::Status CheckPayload(const std::optional<std::string>& payload) {
  if (payload.has_value() && !nlohmann::json::accept(*payload)) {
    return Invalid("--payload must be JSON (a string needs its quotes: '\"text\"')");
  }
  return absl::OkStatus();
}

// The fields create and update share, when given: payload, retry policy, callback timeout.
template <typename Request>
absl::Status SetOptionalFields(const TimerFlags& f, Request& req) {
  if (absl::Status s = CheckPayload(f.payload_json); !s.ok()) return s;
  if (f.payload_json.has_value()) req.set_payload_json(*f.payload_json);
  absl::StatusOr<bool> policy = RetryPolicy(f, req.mutable_retry_policy());
  if (!policy.ok()) return policy.status();
  if (!*policy) req.clear_retry_policy();
  absl::StatusOr<std::optional<int32_t>> timeout = CallbackTimeout(f);
  if (!timeout.ok()) return timeout.status();
  if (timeout->has_value()) req.set_callback_timeout_seconds(**timeout);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<tv1::CreateTimerRequest> MakeCreateTimerRequest(const std::string& namespace_name,
                                                               const TimerFlags& f, absl::Time now) {
  tv1::CreateTimerRequest req;
  req.set_namespace_(namespace_name);
  req.set_id(f.id);
  absl::StatusOr<std::optional<absl::Time>> when = When(f, now);
  if (!when.ok()) return when.status();
  if (!when->has_value()) return Invalid("give the time to fire: --at TIME or --in DURATION");
  *req.mutable_execute_at() = ToProtoTime(**when);
  if (!f.callback_url.has_value() || f.callback_url->empty()) {
    return Invalid("--callback-url is required (http:// or https://)");
  }
  req.set_callback_url(*f.callback_url);
  if (absl::Status s = SetOptionalFields(f, req); !s.ok()) return s;
  return req;
}

absl::StatusOr<tv1::UpdateTimerRequest> MakeUpdateTimerRequest(const std::string& namespace_name,
                                                               const TimerFlags& f, absl::Time now) {
  tv1::UpdateTimerRequest req;
  req.set_namespace_(namespace_name);
  req.set_id(f.id);
  absl::StatusOr<std::optional<absl::Time>> when = When(f, now);
  if (!when.ok()) return when.status();
  if (when->has_value()) *req.mutable_execute_at() = ToProtoTime(**when);
  if (f.callback_url.has_value()) req.set_callback_url(*f.callback_url);
  if (absl::Status s = SetOptionalFields(f, req); !s.ok()) return s;
  if (!req.has_execute_at() && !req.has_callback_url() && !req.has_payload_json() && !req.has_retry_policy() &&
      !req.has_callback_timeout_seconds()) {
    return Invalid(
        "nothing to change: give --at/--in, --callback-url, --payload/--payload-file, a retry flag or "
        "--callback-timeout");
  }
  return req;
}

absl::StatusOr<tv1::TimerState> ParseTimerState(const std::string& text) {
  if (text.empty()) return tv1::TIMER_STATE_UNSPECIFIED;
  std::string name = absl::AsciiStrToUpper(text);
  if (!absl::StartsWith(name, "TIMER_STATE_")) name = absl::StrCat("TIMER_STATE_", name);
  tv1::TimerState state;
  if (name.size() > 40 || !tv1::TimerState_Parse(name, &state) || state == tv1::TIMER_STATE_UNSPECIFIED) {
    return Invalid("--state must be pending, firing, succeeded, failed or deleted");
  }
  return state;
}

std::string TimerStateLabel(tv1::TimerState state) {
  std::string name = tv1::TimerState_Name(state);
  if (absl::StartsWith(name, "TIMER_STATE_")) name = name.substr(sizeof("TIMER_STATE_") - 1);
  if (name.empty()) return "-";
  std::string label = absl::AsciiStrToLower(name);
  label[0] = absl::ascii_toupper(label[0]);
  return label;
}

absl::StatusOr<tv1::CreateTimerResponse> CreateTimer(client::Connection& c, const tv1::CreateTimerRequest& req) {
  return c.Call(&Stub::CreateTimer, c.timer(), req, req.namespace_());
}

absl::StatusOr<tv1::Timer> GetTimer(client::Connection& c, const std::string& namespace_name,
                                    const std::string& id) {
  tv1::GetTimerRequest req;
  req.set_namespace_(namespace_name);
  req.set_id(id);
  absl::StatusOr<tv1::GetTimerResponse> got = c.Call(&Stub::GetTimer, c.timer(), req, namespace_name);
  if (!got.ok()) return got.status();
  return got->timer();
}

absl::StatusOr<tv1::Timer> UpdateTimer(client::Connection& c, const tv1::UpdateTimerRequest& req) {
  absl::StatusOr<tv1::UpdateTimerResponse> got = c.Call(&Stub::UpdateTimer, c.timer(), req, req.namespace_());
  if (!got.ok()) return got.status();
  return got->timer();
}

absl::StatusOr<tv1::Timer> DeleteTimer(client::Connection& c, const std::string& namespace_name,
                                       const std::string& id) {
  tv1::DeleteTimerRequest req;
  req.set_namespace_(namespace_name);
  req.set_id(id);
  absl::StatusOr<tv1::DeleteTimerResponse> got = c.Call(&Stub::DeleteTimer, c.timer(), req, namespace_name);
  if (!got.ok()) return got.status();
  return got->timer();
}

absl::Status ListTimers(client::Connection& c, const std::string& namespace_name, tv1::TimerState state,
                        const std::function<absl::Status(const tv1::Timer&)>& each, int64_t limit,
                        int32_t page_size) {
  tv1::ListTimersRequest req;
  req.set_namespace_(namespace_name);
  req.set_state(state);
  req.set_page_size(page_size);
  int64_t sent = 0;
  // Bounded: a page per call, and every page starts after the last id of the one before.
  for (int page = 0; page < 10'000'000; ++page) {
    absl::StatusOr<tv1::ListTimersResponse> got = c.Call(&Stub::ListTimers, c.timer(), req, namespace_name);
    if (!got.ok()) return got.status();
    for (const tv1::Timer& t : got->timers()) {
      if (limit > 0 && sent >= limit) return absl::OkStatus();
      if (absl::Status s = each(t); !s.ok()) return s;
      ++sent;
    }
    if (got->next_page_token().empty()) return absl::OkStatus();
    req.set_next_page_token(got->next_page_token());
  }
  return absl::OkStatus();
}

}  // namespace tock::admin
