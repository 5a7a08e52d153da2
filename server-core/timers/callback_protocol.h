// The seed's callback protocol on the wire (reference/scaleout.md §3.3), as pure functions:
// the JSON body a callback POSTs, and how an answer is classified into a CallbackOutcome.
// No I/O here, so every rule is testable without a server.
//
// Body: {"namespace": N, "id": ID, "payload": <the timer's JSON, or null>,
//        "executeAt": RFC 3339 UTC, "attempt": n (1 for the first)}.
// Answers:
//   200 {"ok": true}                       succeeded
//   200 {"ok": false, "nextExecuteAt": T}  rescheduled to T (RFC 3339)
//   4xx                                    stop: the receiver refused the timer, no retry
//   anything else                          retry: 1xx/3xx/5xx, any other 2xx, a body that is
//                                          not that JSON, ok:false without a valid time
#pragma once

#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "server-core/timers/callback_sender.h"

namespace tock::server::timers {

// The POST body. `payload_json` is the timer's stored payload JSON text (checked when it was
// stored); empty means no payload (null). A payload that does not parse is sent as a JSON
// string holding the text rather than making the whole body invalid.
std::string CallbackBodyJson(std::string_view namespace_name, std::string_view timer_id,
                             std::string_view payload_json, absl::Time execute_at, int attempt);

// Classifies a complete HTTP answer. `body_truncated`: the answer was longer than the
// sender reads (its beginning is in `body`). The outcome's error names the status (and its
// standard reason phrase) and what was wrong with the body, never the body's text: the
// timer's creator reads it (last_error), and the receiver may be any address the server
// reaches.
CallbackOutcome ClassifyCallbackAnswer(int http_status, std::string_view body,
                                       bool body_truncated);

// `text` made fit for last_error: at most `max_bytes` bytes (cut at a UTF-8 boundary, "..."
// appended when cut), control characters replaced by spaces.
std::string BoundedErrorText(std::string_view text,
                             size_t max_bytes = CallbackOutcome::kMaxErrorBytes);

}  // namespace tock::server::timers
