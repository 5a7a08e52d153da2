// Exit codes of the CLI contract (DESIGN.md, `man tock` EXIT STATUS), and the status code each
// error maps to. Header-only: tock-server uses the same mapping when it runs as `tock server
// start-dev` (see cmd/tock/commands/server.cc).
#pragma once

#include "absl/status/status.h"
#include "lib/common/status.h"
#include "temporal/api/errordetails/v1/message.pb.h"

namespace tock::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNotFound = 3;
inline constexpr int kExitUnavailable = 4;
inline constexpr int kExitConflict = 5;

inline int ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return kExitUsage;
    case absl::StatusCode::kNotFound:
      return kExitNotFound;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return kExitUnavailable;
    case absl::StatusCode::kResourceExhausted: {
      // Over a rate limit (the server's `limits:`): the server is there but will not take
      // more calls now, like an unavailable one; other exhaustion stays an error.
      auto detail = GetDetail<temporal::api::errordetails::v1::ResourceExhaustedFailure>(status);
      return detail.has_value() &&
                     detail->cause() == temporal::api::enums::v1::RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT
                 ? kExitUnavailable
                 : kExitError;
    }
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
      return kExitConflict;
    default:
      return kExitError;
  }
}

}  // namespace tock::cli
