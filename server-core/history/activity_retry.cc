#include "server-core/history/activity_retry.h"

#include <algorithm>
#include <cmath>

#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"

namespace tock::server::history {

namespace enums = temporal::api::enums::v1;

absl::StatusOr<absl::Duration> NextActivityRetry(const tock::persistence::v1::ActivityInfo& activity,
                                                 const temporal::api::failure::v1::Failure& failure,
                                                 absl::Time now, enums::RetryState* retry_state) {
  const auto& policy = activity.retry_policy();
  auto refuse = [&](enums::RetryState state) {
    *retry_state = state;
    return absl::FailedPreconditionError("no retry");
  };
  if (failure.has_application_failure_info()) {
    const auto& info = failure.application_failure_info();
    if (info.non_retryable()) return refuse(enums::RETRY_STATE_NON_RETRYABLE_FAILURE);
    for (const auto& type : policy.non_retryable_error_types()) {
      if (type == info.type()) return refuse(enums::RETRY_STATE_NON_RETRYABLE_FAILURE);
    }
  }
  if (failure.has_timeout_failure_info()) {
    auto type = failure.timeout_failure_info().timeout_type();
    if (type == enums::TIMEOUT_TYPE_SCHEDULE_TO_CLOSE || type == enums::TIMEOUT_TYPE_SCHEDULE_TO_START) {
      return refuse(enums::RETRY_STATE_TIMEOUT);
    }
  }
  if (policy.maximum_attempts() > 0 && activity.attempt() >= policy.maximum_attempts()) {
    return refuse(enums::RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED);
  }
  absl::Duration initial = FromProtoDuration(policy.initial_interval());
  if (initial <= absl::ZeroDuration()) initial = absl::Seconds(1);
  double coefficient = policy.backoff_coefficient() >= 1 ? policy.backoff_coefficient() : 2.0;
  absl::Duration maximum = FromProtoDuration(policy.maximum_interval());
  if (maximum <= absl::ZeroDuration()) maximum = 100 * initial;
  absl::Duration backoff = initial * std::pow(coefficient, activity.attempt() - 1);
  backoff = std::min(backoff, maximum);
  absl::Duration s2c = FromProtoDuration(activity.schedule_to_close_timeout());
  if (s2c > absl::ZeroDuration() && now + backoff >= FromProtoTime(activity.scheduled_time()) + s2c) {
    return refuse(enums::RETRY_STATE_TIMEOUT);
  }
  *retry_state = enums::RETRY_STATE_IN_PROGRESS;
  return backoff;
}

}  // namespace tock::server::history
