#include "server-core/timers/timer_json.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "lib/common/time_format.h"
#include "server-core/timers/callback_protocol.h"

namespace tock::server::timers {
namespace {

namespace tv1 = tock::timer::v1;
using Json = nlohmann::json;

// Deeper than a payload may be (64, timer_service.h) plus the body's own levels: refused at
// parse time, so that nothing recursive ever walks an unbounded nesting.
constexpr int kMaxBodyDepth = 68;
constexpr size_t kMaxNameInMessage = 64;

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

absl::StatusOr<Json> ParseObject(std::string_view body) {
  if (body.size() > kMaxTimerRequestBytes) {
    return Invalid(absl::StrCat("the request body is over ", kMaxTimerRequestBytes, " bytes"));
  }
  bool too_deep = false;
  const Json::parser_callback_t depth_guard = [&too_deep](int depth, Json::parse_event_t, Json&) {
    if (depth > kMaxBodyDepth) too_deep = true;
    return depth <= kMaxBodyDepth;  // a value deeper than that is discarded, not kept
  };
  Json parsed;
  try {
    parsed = Json::parse(body, depth_guard, /*allow_exceptions=*/true);
  } catch (const Json::parse_error& e) {
    return Invalid(absl::StrCat("the request body is not valid JSON (error at byte ", e.byte, ")"));
  }
  if (too_deep) {
    return Invalid(absl::StrCat("the request body is nested deeper than ", kMaxBodyDepth, " levels"));
  }
  if (!parsed.is_object()) return Invalid("the request body must be a JSON object");
  return parsed;
}

// The fields of one JSON object, read by name with their type checked. `prefix` names the
// object in messages ("retryPolicy."). The first error is kept (status()); every read after
// it does nothing, so a request is read straight through and checked once at the end.
class Fields {
 public:
  Fields(const Json& object, std::string prefix) : object_(object), prefix_(std::move(prefix)) {}
  const absl::Status& status() const { return error_; }

  void OnlyThese(const std::vector<std::string>& allowed) { Keep(CheckOnly(allowed)); }
  void String(const char* name, std::string* out, bool* present = nullptr) { Keep(ReadString(name, out, present)); }
  void Time(const char* name, google::protobuf::Timestamp* out, bool* present = nullptr) {
    Keep(ReadTime(name, out, present));
  }
  void Int32(const char* name, int32_t* out, bool* present = nullptr) { Keep(ReadInt32(name, out, present)); }
  void Number(const char* name, double* out) { Keep(ReadNumber(name, out)); }
  void Duration(const char* name, google::protobuf::Duration* out) { Keep(ReadDuration(name, out)); }
  // Any JSON value, kept as compact JSON text (null: absent).
  void Payload(const char* name, std::string* out, bool* present = nullptr) {
    if (!error_.ok()) return;
    const Json* v = Find(name, present);
    if (v != nullptr) *out = v->dump();
  }
  // The object `name`, or null when absent (or on an error).
  const Json* Object(const char* name) {
    if (!error_.ok()) return nullptr;
    const Json* v = Find(name, nullptr);
    if (v != nullptr && !v->is_object()) {
      error_ = Invalid(absl::StrCat(Name(name), " must be a JSON object"));
      return nullptr;
    }
    return v;
  }
  void Keep(absl::Status s) {
    if (error_.ok()) error_ = std::move(s);
  }

 private:
  absl::Status CheckOnly(const std::vector<std::string>& allowed) const {
    for (const auto& [name, value] : object_.items()) {
      bool known = false;
      for (const std::string& a : allowed) known = known || a == name;
      if (!known) {
        return Invalid(absl::StrCat("unknown field \"", prefix_, BoundedErrorText(name, kMaxNameInMessage),
                                    "\" (the fields are ", absl::StrJoin(allowed, ", "), ")"));
      }
    }
    return absl::OkStatus();
  }

  // Each reader: OK and `present` false when the field is absent or null.
  absl::Status ReadString(const char* name, std::string* out, bool* present) const {
    if (!error_.ok()) return absl::OkStatus();
    const Json* v = Find(name, present);
    if (v == nullptr) return absl::OkStatus();
    if (!v->is_string()) return Invalid(absl::StrCat(Name(name), " must be a string"));
    *out = v->get<std::string>();
    return absl::OkStatus();
  }

  absl::Status ReadTime(const char* name, google::protobuf::Timestamp* out, bool* present) const {
    if (!error_.ok()) return absl::OkStatus();
    const Json* v = Find(name, present);
    if (v == nullptr) return absl::OkStatus();
    const std::string expected = absl::StrCat(
        Name(name), " must be an RFC 3339 time such as \"2026-11-22T10:15:30Z\" or \"2026-11-22T11:15:30.5+01:00\"");
    if (!v->is_string()) return Invalid(expected);
    absl::Time t;
    std::string error;
    const std::string text = v->get<std::string>();
    // ParseTime also reads "infinite-future": only a real time is one.
    if (text.size() > 64 || !absl::ParseTime(absl::RFC3339_full, text, &t, &error) ||
        t == absl::InfiniteFuture() || t == absl::InfinitePast() ||
        t < absl::FromCivil(absl::CivilSecond(1, 1, 1), absl::UTCTimeZone()) ||
        t >= absl::FromCivil(absl::CivilSecond(10000, 1, 1), absl::UTCTimeZone())) {
      return Invalid(expected);
    }
    *out = ToProtoTime(t);
    return absl::OkStatus();
  }

  absl::Status ReadInt32(const char* name, int32_t* out, bool* present) const {
    if (!error_.ok()) return absl::OkStatus();
    const Json* v = Find(name, present);
    if (v == nullptr) return absl::OkStatus();
    const bool fits =
        (v->is_number_unsigned() && v->get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) ||
        (v->is_number_integer() && !v->is_number_unsigned() &&
         v->get<int64_t>() >= std::numeric_limits<int32_t>::min() &&
         v->get<int64_t>() <= std::numeric_limits<int32_t>::max());
    if (!fits) return Invalid(absl::StrCat(Name(name), " must be a whole number (32 bits)"));
    *out = static_cast<int32_t>(v->get<int64_t>());
    return absl::OkStatus();
  }

  absl::Status ReadNumber(const char* name, double* out) const {
    if (!error_.ok()) return absl::OkStatus();
    const Json* v = Find(name, nullptr);
    if (v == nullptr) return absl::OkStatus();
    if (!v->is_number()) return Invalid(absl::StrCat(Name(name), " must be a number"));
    *out = v->get<double>();
    return absl::OkStatus();
  }

  absl::Status ReadDuration(const char* name, google::protobuf::Duration* out) const {
    if (!error_.ok()) return absl::OkStatus();
    const Json* v = Find(name, nullptr);
    if (v == nullptr) return absl::OkStatus();
    const std::string expected =
        absl::StrCat(Name(name), " must be a duration such as \"500ms\", \"30s\", \"5m\" or \"1h30m\"");
    if (!v->is_string()) return Invalid(expected);
    absl::Duration d;
    const std::string text = v->get<std::string>();
    if (text.size() > 64 || !absl::ParseDuration(text, &d) || d == absl::InfiniteDuration() ||
        d == -absl::InfiniteDuration() || absl::AbsDuration(d) > absl::Hours(24 * 365 * 100)) {
      return Invalid(expected);
    }
    const int64_t seconds = absl::IDivDuration(d, absl::Seconds(1), &d);
    out->set_seconds(seconds);
    out->set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(d)));
    return absl::OkStatus();
  }

  const Json* Find(const char* name, bool* present) const {
    if (present != nullptr) *present = false;
    auto it = object_.find(name);
    if (it == object_.end() || it->is_null()) return nullptr;
    if (present != nullptr) *present = true;
    return &*it;
  }
  std::string Name(const char* name) const { return absl::StrCat(prefix_, name); }

  const Json& object_;
  std::string prefix_;
  absl::Status error_;
};

void ReadRetryPolicy(Fields& fields, tv1::RetryPolicy* out, bool* present) {
  const Json* object = fields.Object("retryPolicy");
  *present = object != nullptr;
  if (object == nullptr) return;
  Fields policy(*object, "retryPolicy.");
  policy.OnlyThese(
      {"maxAttempts", "maxAttemptsDuration", "initialInterval", "backoffMultiplier", "maxInterval"});
  int32_t max_attempts = 0;
  policy.Int32("maxAttempts", &max_attempts);
  out->set_max_attempts(max_attempts);
  policy.Duration("maxAttemptsDuration", out->mutable_max_attempts_duration());
  policy.Duration("initialInterval", out->mutable_initial_interval());
  double multiplier = 0;
  policy.Number("backoffMultiplier", &multiplier);
  out->set_backoff_multiplier(multiplier);
  policy.Duration("maxInterval", out->mutable_max_interval());
  fields.Keep(policy.status());
}

std::string FormatDurationJson(const google::protobuf::Duration& d) {
  return absl::FormatDuration(absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos()));
}

bool IsSet(const google::protobuf::Timestamp& t) { return t.seconds() != 0 || t.nanos() != 0; }
bool IsSet(const google::protobuf::Duration& d) { return d.seconds() != 0 || d.nanos() != 0; }

std::string StateName(tv1::TimerState state) {
  std::string name = tv1::TimerState_Name(state);
  if (absl::StartsWith(name, "TIMER_STATE_")) name = name.substr(sizeof("TIMER_STATE_") - 1);
  return name;
}

template <typename Request>
absl::StatusOr<Request> Done(const Fields& f, Request req) {
  if (!f.status().ok()) return f.status();
  return req;
}

}  // namespace

absl::StatusOr<tv1::CreateTimerRequest> CreateTimerFromJson(std::string_view body) {
  absl::StatusOr<Json> object = ParseObject(body);
  if (!object.ok()) return object.status();
  Fields f(*object, "");
  f.OnlyThese({"namespace", "id", "executeAt", "callbackUrl", "payload", "retryPolicy",
               "callbackTimeoutSeconds"});
  tv1::CreateTimerRequest req;
  f.String("namespace", req.mutable_namespace_());
  f.String("id", req.mutable_id());
  f.Time("executeAt", req.mutable_execute_at());
  f.String("callbackUrl", req.mutable_callback_url());
  f.Payload("payload", req.mutable_payload_json());
  bool has_policy = false;
  ReadRetryPolicy(f, req.mutable_retry_policy(), &has_policy);
  if (!has_policy) req.clear_retry_policy();
  int32_t timeout = 0;
  f.Int32("callbackTimeoutSeconds", &timeout);
  req.set_callback_timeout_seconds(timeout);
  return Done(f, std::move(req));
}

absl::StatusOr<tv1::UpdateTimerRequest> UpdateTimerFromJson(std::string_view body) {
  absl::StatusOr<Json> object = ParseObject(body);
  if (!object.ok()) return object.status();
  Fields f(*object, "");
  f.OnlyThese({"namespace", "timerId", "executeAt", "callbackUrl", "payload", "retryPolicy",
               "callbackTimeoutSeconds"});
  tv1::UpdateTimerRequest req;
  f.String("namespace", req.mutable_namespace_());
  f.String("timerId", req.mutable_id());
  bool present = false;
  f.Time("executeAt", req.mutable_execute_at(), &present);
  if (!present) req.clear_execute_at();
  std::string url;
  f.String("callbackUrl", &url, &present);
  if (present) req.set_callback_url(url);
  std::string payload;
  f.Payload("payload", &payload, &present);
  if (present) req.set_payload_json(payload);
  ReadRetryPolicy(f, req.mutable_retry_policy(), &present);
  if (!present) req.clear_retry_policy();
  int32_t timeout = 0;
  f.Int32("callbackTimeoutSeconds", &timeout, &present);
  if (present) req.set_callback_timeout_seconds(timeout);
  return Done(f, std::move(req));
}

absl::StatusOr<tv1::GetTimerRequest> GetTimerFromJson(std::string_view body) {
  absl::StatusOr<Json> object = ParseObject(body);
  if (!object.ok()) return object.status();
  Fields f(*object, "");
  f.OnlyThese({"namespace", "timerId"});
  tv1::GetTimerRequest req;
  f.String("namespace", req.mutable_namespace_());
  f.String("timerId", req.mutable_id());
  return Done(f, std::move(req));
}

absl::StatusOr<tv1::DeleteTimerRequest> DeleteTimerFromJson(std::string_view body) {
  absl::StatusOr<tv1::GetTimerRequest> selection = GetTimerFromJson(body);
  if (!selection.ok()) return selection.status();
  tv1::DeleteTimerRequest req;
  req.set_namespace_(selection->namespace_());
  req.set_id(selection->id());
  return req;
}

absl::StatusOr<tv1::ListTimersRequest> ListTimersFromJson(std::string_view body) {
  absl::StatusOr<Json> object = ParseObject(body);
  if (!object.ok()) return object.status();
  Fields f(*object, "");
  f.OnlyThese({"namespace", "state", "pageSize", "nextPageToken"});
  tv1::ListTimersRequest req;
  f.String("namespace", req.mutable_namespace_());
  std::string state;
  bool present = false;
  f.String("state", &state, &present);
  if (present && f.status().ok()) {
    std::string name = absl::AsciiStrToUpper(state);
    if (!absl::StartsWith(name, "TIMER_STATE_")) name = absl::StrCat("TIMER_STATE_", name);
    tv1::TimerState parsed;
    if (name.size() > 40 || !tv1::TimerState_Parse(name, &parsed) ||
        parsed == tv1::TIMER_STATE_UNSPECIFIED) {
      f.Keep(Invalid("state must be PENDING, FIRING, SUCCEEDED, FAILED or DELETED"));
    } else {
      req.set_state(parsed);
    }
  }
  int32_t page_size = 0;
  f.Int32("pageSize", &page_size);
  req.set_page_size(page_size);
  std::string token;
  f.String("nextPageToken", &token, &present);
  if (present && f.status().ok()) {
    std::string raw;
    if (token.size() > 4096 || !absl::WebSafeBase64Unescape(token, &raw)) {
      f.Keep(Invalid("nextPageToken is not a token of this list"));
    }
    req.set_next_page_token(raw);
  }
  return Done(f, std::move(req));
}

nlohmann::ordered_json TimerToJson(const tv1::Timer& t) {
  nlohmann::ordered_json j;
  j["id"] = t.id();
  j["namespace"] = t.namespace_();
  j["executeAt"] = FormatTimestamp(FromProtoTime(t.execute_at()));
  j["callbackUrl"] = t.callback_url();
  if (!t.payload_json().empty()) {
    nlohmann::ordered_json payload = nlohmann::ordered_json::parse(t.payload_json(), nullptr, false);
    j["payload"] = payload.is_discarded() ? nlohmann::ordered_json(t.payload_json()) : payload;
  }
  if (t.has_retry_policy()) {
    const tv1::RetryPolicy& p = t.retry_policy();
    nlohmann::ordered_json policy = nlohmann::ordered_json::object();
    if (p.max_attempts() != 0) policy["maxAttempts"] = p.max_attempts();
    if (IsSet(p.max_attempts_duration())) policy["maxAttemptsDuration"] = FormatDurationJson(p.max_attempts_duration());
    if (IsSet(p.initial_interval())) policy["initialInterval"] = FormatDurationJson(p.initial_interval());
    if (p.backoff_multiplier() != 0) policy["backoffMultiplier"] = p.backoff_multiplier();
    if (IsSet(p.max_interval())) policy["maxInterval"] = FormatDurationJson(p.max_interval());
    j["retryPolicy"] = policy;
  }
  j["callbackTimeoutSeconds"] = t.callback_timeout_seconds();
  j["createdAt"] = FormatTimestamp(FromProtoTime(t.created_at()));
  j["updatedAt"] = FormatTimestamp(FromProtoTime(t.updated_at()));
  if (IsSet(t.executed_at())) j["executedAt"] = FormatTimestamp(FromProtoTime(t.executed_at()));
  j["state"] = StateName(t.state());
  j["attempts"] = t.attempts();
  if (!t.last_error().empty()) j["lastError"] = t.last_error();
  if (IsSet(t.next_attempt_at())) j["nextAttemptAt"] = FormatTimestamp(FromProtoTime(t.next_attempt_at()));
  return j;
}

nlohmann::ordered_json TimerListToJson(const tv1::ListTimersResponse& list) {
  nlohmann::ordered_json j;
  j["timers"] = nlohmann::ordered_json::array();
  for (const tv1::Timer& t : list.timers()) j["timers"].push_back(TimerToJson(t));
  if (!list.next_page_token().empty()) {
    j["nextPageToken"] = absl::WebSafeBase64Escape(list.next_page_token());
  }
  return j;
}

}  // namespace tock::server::timers
