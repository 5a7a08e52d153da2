// The namespace archival state machine (SPEC §3, Temporal's archival config state machine).
#include "lib/admin/archival_state.h"

#include <gtest/gtest.h>

namespace tock::admin {
namespace {

namespace enums = temporal::api::enums::v1;
constexpr auto kOn = enums::ARCHIVAL_STATE_ENABLED;
constexpr auto kOff = enums::ARCHIVAL_STATE_DISABLED;
constexpr auto kKeep = enums::ARCHIVAL_STATE_UNSPECIFIED;
const std::string kDefault = "file:///var/tock/default";
const std::string kUri = "s3://bucket/prefix";

ArchivalSetting Next(ArchivalSetting current, ArchivalStateEnum state, std::string uri) {
  auto next = NextArchivalSetting(current, {state, uri, kDefault});
  EXPECT_TRUE(next.ok()) << next.status();
  return next.ok() ? *next : ArchivalSetting{};
}

TEST(ArchivalStateTest, NeverEnabled) {
  const ArchivalSetting never{kOff, ""};
  EXPECT_EQ(Next(never, kOn, kUri), (ArchivalSetting{kOn, kUri}));
  EXPECT_EQ(Next(never, kOn, ""), (ArchivalSetting{kOn, kDefault})) << "the cluster default";
  EXPECT_EQ(Next(never, kOff, kUri), (ArchivalSetting{kOff, kUri}));
  EXPECT_EQ(Next(never, kKeep, kUri), (ArchivalSetting{kOff, kUri}));
  EXPECT_EQ(Next(never, kOff, ""), never);
  EXPECT_EQ(Next(never, kKeep, ""), never);
}

TEST(ArchivalStateTest, EnabledAndDisabledWithAUri) {
  const ArchivalSetting on{kOn, kUri}, off{kOff, kUri};
  EXPECT_EQ(Next(on, kOn, ""), on);
  EXPECT_EQ(Next(on, kKeep, kUri), on);
  EXPECT_EQ(Next(on, kOff, ""), off);
  EXPECT_EQ(Next(off, kOn, ""), on) << "re-enabling keeps the URI, not the default";
  EXPECT_EQ(Next(off, kOff, kUri), off);
  EXPECT_EQ(Next(off, kKeep, ""), off);
}

TEST(ArchivalStateTest, ExactMessages) {
  auto changed = NextArchivalSetting({kOn, kUri}, {kKeep, "s3://other", kDefault});
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(changed.status().message(), "Cannot update existing archival URI");
  auto no_uri = NextArchivalSetting({kOff, ""}, {kOn, "", ""});
  ASSERT_FALSE(no_uri.ok());
  EXPECT_EQ(no_uri.status().message(), "Invalid to enable archival without specifying a uri.");
}

TEST(ArchivalStateTest, UriSchemes) {
  EXPECT_TRUE(ValidateArchivalUri("file:///var/tock").ok());
  EXPECT_TRUE(ValidateArchivalUri("s3://bucket").ok());
  EXPECT_TRUE(ValidateArchivalUri("s3://bucket/a/b").ok());
  EXPECT_EQ(ValidateArchivalUri("gs://bucket").message(),
            "invalid archival URI \"gs://bucket\": unknown archiver scheme \"gs\"; use "
            "file:///DIR or s3://BUCKET[/PREFIX]");
  EXPECT_EQ(ValidateArchivalUri("s3:///prefix").message(),
            "invalid archival URI \"s3:///prefix\": the bucket is empty; use s3://BUCKET[/PREFIX]");
  EXPECT_FALSE(ValidateArchivalUri("file://relative/dir").ok());
  EXPECT_FALSE(ValidateArchivalUri("/no/scheme").ok());
  auto bad = NextArchivalSetting({kOff, ""}, {kOn, "gs://b", kDefault});
  EXPECT_FALSE(bad.ok()) << "a new URI is checked";
}

}  // namespace
}  // namespace tock::admin
