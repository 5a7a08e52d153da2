#include "server-core/timers/callback_protocol.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "lib/common/time_format.h"

namespace tock::server::timers {
namespace {

// No text of an answer goes into last_error, only its status and that status's standard
// reason phrase: the timer's creator reads last_error, and an answer copied there would let
// anyone who may create timers read what any address the server reaches says (review P2-2).
// The receiver's own reason phrase is not kept either: it is the receiver's text too.
const char* ReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
  }
}

// "callback answered HTTP 503 Service Unavailable" (no phrase for a status without one).
std::string Answered(int http_status) {
  const char* phrase = ReasonPhrase(http_status);
  return absl::StrCat("callback answered HTTP ", http_status, *phrase != '\0' ? " " : "", phrase);
}

std::string JsonString(std::string_view text) {
  // Most names and ids are printable ASCII with nothing to escape: quoted as they are, without
  // a json value per field at every firing.
  bool plain = true;
  for (char c : text) {
    if (c < 0x20 || c > 0x7E || c == '"' || c == '\\') {
      plain = false;
      break;
    }
  }
  if (plain) return absl::StrCat("\"", absl::string_view(text.data(), text.size()), "\"");
  // replace: a namespace or id with invalid UTF-8 must not make dump() throw.
  return nlohmann::json(std::string(text)).dump(-1, ' ', false,
                                                nlohmann::json::error_handler_t::replace);
}

// Whether `body` is exactly the JSON object {"ok": true} (any JSON whitespace between its
// tokens): the answer of nearly every callback, recognised without building a json value.
bool IsOkTrue(std::string_view body) {
  size_t i = 0;
  auto space = [&] {
    while (i < body.size() && (body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r')) ++i;
  };
  auto token = [&](std::string_view t) {
    space();
    if (body.substr(i, t.size()) != t) return false;
    i += t.size();
    return true;
  };
  if (!token("{") || !token("\"ok\"") || !token(":") || !token("true") || !token("}")) return false;
  space();
  return i == body.size();
}

CallbackOutcome Outcome(CallbackOutcome::Kind kind, int http_status, std::string error) {
  CallbackOutcome outcome;
  outcome.kind = kind;
  outcome.http_status = http_status;
  outcome.error = BoundedErrorText(error);
  return outcome;
}

CallbackOutcome ClassifyOkBody(std::string_view body) {
  constexpr CallbackOutcome::Kind kRetry = CallbackOutcome::Kind::kRetry;
  if (IsOkTrue(body)) return Outcome(CallbackOutcome::Kind::kSucceeded, 200, "");
  // The body is bounded by the sender (at most its max_response_bytes), so parsing it is.
  const nlohmann::json answer = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (answer.is_discarded() || !answer.is_object()) {
    return Outcome(kRetry, 200,
                   body.empty() ? "callback answered HTTP 200 with an empty body"
                                : "callback answered HTTP 200 with a body that is not a JSON object");
  }
  const auto ok = answer.find("ok");
  if (ok == answer.end() || !ok->is_boolean()) {
    return Outcome(kRetry, 200, "callback answered HTTP 200 without a boolean \"ok\"");
  }
  if (ok->get<bool>()) return Outcome(CallbackOutcome::Kind::kSucceeded, 200, "");
  const auto next = answer.find("nextExecuteAt");
  if (next == answer.end() || next->is_null()) {
    return Outcome(kRetry, 200, "callback answered ok:false without nextExecuteAt");
  }
  absl::Time at;
  std::string parse_error;
  if (!next->is_string() ||
      !absl::ParseTime(absl::RFC3339_full, next->get<std::string>(), &at, &parse_error)) {
    return Outcome(kRetry, 200,
                   "callback answered ok:false with a nextExecuteAt that is not an RFC 3339 "
                   "time such as 2026-12-01T10:00:00Z");
  }
  CallbackOutcome outcome = Outcome(CallbackOutcome::Kind::kReschedule, 200, "");
  outcome.next_execute_at = at;
  return outcome;
}

}  // namespace

std::string CallbackBodyJson(std::string_view namespace_name, std::string_view timer_id,
                             std::string_view payload_json, absl::Time execute_at, int attempt) {
  // Built by hand rather than through a json value so that the payload, already checked when
  // the timer was stored, is copied verbatim instead of parsed and printed again at every
  // firing. accept() is a validating scan without building anything.
  std::string payload;
  if (payload_json.empty()) {
    payload = "null";
  } else if (nlohmann::json::accept(payload_json)) {
    payload = std::string(payload_json);
  } else {
    payload = JsonString(payload_json);
  }
  return absl::StrCat("{\"namespace\":", JsonString(namespace_name), ",\"id\":",
                      JsonString(timer_id), ",\"payload\":", payload, ",\"executeAt\":",
                      JsonString(FormatTimestamp(execute_at)), ",\"attempt\":", attempt, "}");
}

CallbackOutcome ClassifyCallbackAnswer(int http_status, std::string_view body,
                                       bool body_truncated) {
  if (http_status >= 400 && http_status <= 499) {
    return Outcome(CallbackOutcome::Kind::kStop, http_status,
                   absl::StrCat(Answered(http_status), " (no retry)"));
  }
  if (http_status == 200) {
    if (body_truncated) {
      return Outcome(CallbackOutcome::Kind::kRetry, 200,
                     absl::StrCat("callback answered HTTP 200 with a body longer than the ",
                                  body.size(), " bytes read"));
    }
    return ClassifyOkBody(body);
  }
  return Outcome(CallbackOutcome::Kind::kRetry, http_status, Answered(http_status));
}

std::string BoundedErrorText(std::string_view text, size_t max_bytes) {
  const bool cut = text.size() > max_bytes;
  size_t keep = cut ? (max_bytes > 3 ? max_bytes - 3 : 0) : text.size();
  // Back off to a UTF-8 boundary: never end inside a multi-byte character.
  while (cut && keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;
  std::string out(text.substr(0, keep));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = ' ';
  }
  if (cut) out += "...";
  return out;
}

}  // namespace tock::server::timers
