#include "lib/admin/retention.h"

#include "absl/strings/str_cat.h"
#include "lib/common/duration.h"

namespace tock::admin {
namespace {

absl::Status RetentionError(absl::string_view received) {
  return absl::InvalidArgumentError(absl::StrCat(kInvalidRetentionMessage,
                                                 " Retention must be between ",
                                                 FormatHumanDuration(kMinRetention), " and ",
                                                 FormatHumanDuration(kMaxRetention),
                                                 " inclusive; got ", received, "."));
}

}  // namespace

absl::Status ValidateRetention(absl::Duration retention) {
  if (retention < kMinRetention || retention > kMaxRetention) {
    return RetentionError(FormatHumanDuration(retention));
  }
  return absl::OkStatus();
}

absl::StatusOr<absl::Duration> ResolveRetention(std::optional<absl::Duration> requested) {
  if (!requested.has_value()) return kDefaultRetention;
  if (absl::Status s = ValidateRetention(*requested); !s.ok()) return s;
  return *requested;
}

absl::StatusOr<absl::Duration> ParseRetention(absl::string_view text) {
  absl::StatusOr<absl::Duration> parsed = ParseHumanDuration(text, BareNumberUnit::kDays);
  if (!parsed.ok()) return RetentionError(absl::StrCat("\"", text, "\""));
  if (absl::Status s = ValidateRetention(*parsed); !s.ok()) return s;
  return *parsed;
}

}  // namespace tock::admin
