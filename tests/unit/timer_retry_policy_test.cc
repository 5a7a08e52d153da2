// The timer service's retry policy (server-core/timers/retry_policy.h): the seed's backoff
// (initial * multiplier^n capped by max_interval and by what is left of the duration; no
// retry past max_attempts, past the duration, or when less than initial_interval is left),
// jitter within [0.8 d, d), defaults, and checks naming the field and its limit.
#include "server-core/timers/retry_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tock::server::timers {
namespace {

using ::testing::HasSubstr;

google::protobuf::Duration Proto(absl::Duration d) {
  google::protobuf::Duration out;
  out.set_seconds(absl::ToInt64Seconds(d));
  out.set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(d % absl::Seconds(1))));
  return out;
}

const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);

TEST(TimerRetryPolicy, DefaultsWhenUnset) {
  const RetrySettings s = EffectiveRetry(tock::timer::v1::RetryPolicy());
  EXPECT_EQ(s.max_attempts, 0);
  EXPECT_EQ(s.max_attempts_duration, absl::Hours(1));
  EXPECT_EQ(s.initial_interval, absl::Seconds(1));
  EXPECT_EQ(s.backoff_multiplier, 2.0);
  EXPECT_EQ(s.max_interval, absl::Minutes(5));
  tock::timer::v1::RetryPolicy long_initial;
  *long_initial.mutable_initial_interval() = Proto(absl::Minutes(10));
  EXPECT_EQ(EffectiveRetry(long_initial).max_interval, absl::Minutes(10))
      << "the default maximum never cuts below the initial interval";
}

TEST(TimerRetryPolicy, ExponentialCappedByMaxInterval) {
  RetrySettings s;
  s.initial_interval = absl::Seconds(1);
  s.backoff_multiplier = 2;
  s.max_interval = absl::Seconds(10);
  s.max_attempts_duration = absl::Hours(1);
  // jitter 1.0 is clamped to the top of [0.8 d, d]: the undisturbed delay.
  std::vector<absl::Duration> delays;
  for (int attempts = 1; attempts <= 6; ++attempts) {
    auto d = NextRetryDelay(s, attempts, kStart, kStart, 1.0);
    ASSERT_TRUE(d.has_value());
    delays.push_back(*d);
  }
  EXPECT_EQ(delays, (std::vector<absl::Duration>{absl::Seconds(1), absl::Seconds(2),
                                                 absl::Seconds(4), absl::Seconds(8),
                                                 absl::Seconds(10), absl::Seconds(10)}));
}

TEST(TimerRetryPolicy, JitterStaysWithinEightyToHundredPercent) {
  RetrySettings s;
  s.initial_interval = absl::Seconds(10);
  EXPECT_EQ(*NextRetryDelay(s, 1, kStart, kStart, 0.0), absl::Seconds(8));
  EXPECT_EQ(*NextRetryDelay(s, 1, kStart, kStart, 0.5), absl::Seconds(9));
  for (double j : {0.0, 0.25, 0.5, 0.75, 0.999}) {
    const absl::Duration d = *NextRetryDelay(s, 2, kStart, kStart, j);  // base 20 s
    EXPECT_GE(d, absl::Seconds(16));
    EXPECT_LT(d, absl::Seconds(20));
  }
}

TEST(TimerRetryPolicy, StopsAtMaxAttemptsIncludingTheFirst) {
  RetrySettings s;
  s.max_attempts = 3;
  EXPECT_TRUE(NextRetryDelay(s, 1, kStart, kStart, 0).has_value());
  EXPECT_TRUE(NextRetryDelay(s, 2, kStart, kStart, 0).has_value());
  EXPECT_FALSE(NextRetryDelay(s, 3, kStart, kStart, 0).has_value());
  s.max_attempts = 1;
  EXPECT_FALSE(NextRetryDelay(s, 1, kStart, kStart, 0).has_value()) << "no retry at all";
}

TEST(TimerRetryPolicy, DurationCapsTheDelayAndEndsTheRetries) {
  RetrySettings s;
  s.initial_interval = absl::Seconds(1);
  s.max_interval = absl::Minutes(5);
  s.max_attempts_duration = absl::Seconds(60);
  // 50 s after the first attempt, 10 s are left: 2^6 = 64 s is cut to 10 s.
  EXPECT_EQ(*NextRetryDelay(s, 7, kStart, kStart + absl::Seconds(50), 1.0), absl::Seconds(10));
  // Less than the initial interval left: stop (the seed's rule).
  EXPECT_FALSE(NextRetryDelay(s, 2, kStart, kStart + absl::Milliseconds(59500), 1.0).has_value());
  EXPECT_FALSE(NextRetryDelay(s, 2, kStart, kStart + absl::Seconds(61), 1.0).has_value());
}

TEST(TimerRetryPolicy, HugeExponentsDoNotOverflow) {
  RetrySettings s;
  s.backoff_multiplier = 100;
  s.max_interval = absl::Hours(24);
  s.max_attempts_duration = absl::Hours(24 * 7);
  EXPECT_EQ(*NextRetryDelay(s, 900, kStart, kStart, 1.0), absl::Hours(24));
}

TEST(TimerRetryPolicy, ChecksNameTheFieldAndItsLimit) {
  tock::timer::v1::RetryPolicy p;
  p.set_max_attempts(1001);
  absl::Status s = ValidateRetryPolicy(p);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("retry_policy.max_attempts must be between 0 and 1000"));
  EXPECT_THAT(ValidateRetryPolicy(p, FieldNaming::kJson).message(),
              HasSubstr("retryPolicy.maxAttempts must be between 0 and 1000"));
  p.set_max_attempts(-1);
  EXPECT_THAT(ValidateRetryPolicy(p).message(), HasSubstr("got -1"));

  p = {};
  *p.mutable_initial_interval() = Proto(absl::Milliseconds(1));
  EXPECT_THAT(ValidateRetryPolicy(p).message(),
              HasSubstr("retry_policy.initial_interval must be between 10ms and 1h"));
  p = {};
  *p.mutable_max_attempts_duration() = Proto(absl::Hours(24 * 8));
  EXPECT_THAT(ValidateRetryPolicy(p, FieldNaming::kJson).message(),
              HasSubstr("retryPolicy.maxAttemptsDuration must be between 1ms and 168h"));
  p = {};
  p.set_backoff_multiplier(0.5);
  EXPECT_THAT(ValidateRetryPolicy(p).message(),
              HasSubstr("retry_policy.backoff_multiplier must be between 1 and 100"));
  p.set_backoff_multiplier(std::nan(""));
  EXPECT_EQ(ValidateRetryPolicy(p).code(), absl::StatusCode::kInvalidArgument);
  p = {};
  *p.mutable_initial_interval() = Proto(absl::Seconds(30));
  *p.mutable_max_interval() = Proto(absl::Seconds(10));
  EXPECT_THAT(ValidateRetryPolicy(p).message(),
              HasSubstr("retry_policy.max_interval must not be shorter than "
                        "retry_policy.initial_interval (30s), got 10s"));
  p = {};
  p.mutable_max_interval()->set_seconds(1);
  p.mutable_max_interval()->set_nanos(-5);
  EXPECT_THAT(ValidateRetryPolicy(p).message(),
              HasSubstr("retry_policy.max_interval is not a valid duration"));

  p = {};
  p.set_max_attempts(5);
  *p.mutable_max_attempts_duration() = Proto(absl::Hours(1));
  *p.mutable_initial_interval() = Proto(absl::Seconds(30));
  p.set_backoff_multiplier(2.0);
  *p.mutable_max_interval() = Proto(absl::Minutes(5));
  EXPECT_TRUE(ValidateRetryPolicy(p).ok());
  EXPECT_TRUE(ValidateRetryPolicy(tock::timer::v1::RetryPolicy()).ok()) << "all defaults";
}

}  // namespace
}  // namespace tock::server::timers
