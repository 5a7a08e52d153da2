// What a new run inherits of the version of the run it follows (history/versioning.h,
// Temporal's rules on inherited_pinned_version and inherited_auto_upgrade_info), for each
// kind of successor, with and without the version polling the new run's task queue.
#include <gtest/gtest.h>

#include <string>

#include "server-core/history/versioning.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using tock::persistence::v1::ExecutionInfo;

ExecutionInfo RunOn(const std::string& build, enums::VersioningBehavior behavior) {
  ExecutionInfo exec;
  auto* info = exec.mutable_versioning_info();
  info->set_behavior(behavior);
  info->mutable_deployment_version()->set_deployment_name("billing");
  info->mutable_deployment_version()->set_build_id(build);
  return exec;
}

// v1 polls "billing-q" only.
bool Polls(const std::string& version, const std::string& task_queue) {
  return version == "billing:v1" && task_queue == "billing-q";
}

TEST(VersionInheritanceTest, APinnedRunsChildAndContinuationStayOnItsVersion) {
  const ExecutionInfo pinned = RunOn("v1", enums::VERSIONING_BEHAVIOR_PINNED);
  for (Successor how : {Successor::kChild, Successor::kContinueAsNew}) {
    InheritedVersion got = InheritVersion(pinned, nullptr, how, "billing-q", Polls);
    ASSERT_TRUE(got.pinned.has_value());
    EXPECT_EQ(got.pinned->build_id(), "v1");
    EXPECT_FALSE(got.auto_upgrade.has_value());
    // On a queue the version does not poll: nothing.
    got = InheritVersion(pinned, nullptr, how, "other-q", Polls);
    EXPECT_FALSE(got.pinned.has_value() || got.auto_upgrade.has_value());
  }
  // Cron runs never inherit; without routing nothing is known to poll.
  InheritedVersion cron = InheritVersion(pinned, nullptr, Successor::kCron, "billing-q", Polls);
  EXPECT_FALSE(cron.pinned.has_value() || cron.auto_upgrade.has_value());
  InheritedVersion blind = InheritVersion(pinned, nullptr, Successor::kChild, "billing-q", nullptr);
  EXPECT_FALSE(blind.pinned.has_value());
}

TEST(VersionInheritanceTest, UpgradeOnContinueAsNewStartsAutoUpgrade) {
  const ExecutionInfo pinned = RunOn("v1", enums::VERSIONING_BEHAVIOR_PINNED);
  InheritedVersion got =
      InheritVersion(pinned, nullptr, Successor::kContinueAsNew, "billing-q", Polls,
                     enums::CONTINUE_AS_NEW_VERSIONING_BEHAVIOR_AUTO_UPGRADE);
  EXPECT_FALSE(got.pinned.has_value());
  ASSERT_TRUE(got.auto_upgrade.has_value());
  EXPECT_EQ(got.auto_upgrade->source_deployment_version().build_id(), "v1");
  EXPECT_EQ(got.auto_upgrade->continue_as_new_initial_versioning_behavior(),
            enums::CONTINUE_AS_NEW_VERSIONING_BEHAVIOR_AUTO_UPGRADE);
  // An auto-upgrade run's child starts auto-upgrade from its version.
  got = InheritVersion(RunOn("v1", enums::VERSIONING_BEHAVIOR_AUTO_UPGRADE), nullptr,
                       Successor::kChild, "billing-q", Polls);
  ASSERT_TRUE(got.auto_upgrade.has_value());
  EXPECT_EQ(got.auto_upgrade->continue_as_new_initial_versioning_behavior(),
            enums::CONTINUE_AS_NEW_VERSIONING_BEHAVIOR_UNSPECIFIED);
}

TEST(VersionInheritanceTest, ARetryInheritsOnlyWhatItsRunInherited) {
  const ExecutionInfo pinned = RunOn("v1", enums::VERSIONING_BEHAVIOR_PINNED);
  temporal::api::history::v1::WorkflowExecutionStartedEventAttributes own_start;
  EXPECT_FALSE(InheritVersion(pinned, &own_start, Successor::kRetry, "billing-q", Polls)
                   .pinned.has_value())
      << "pinned by its own worker, not by inheritance";
  temporal::api::history::v1::WorkflowExecutionStartedEventAttributes inherited_start;
  *inherited_start.mutable_inherited_pinned_version() = pinned.versioning_info().deployment_version();
  EXPECT_TRUE(InheritVersion(pinned, &inherited_start, Successor::kRetry, "billing-q", Polls)
                  .pinned.has_value());
  // Inherited pinned at start, auto-upgrade since: the retry inherits nothing.
  const ExecutionInfo moved = RunOn("v1", enums::VERSIONING_BEHAVIOR_AUTO_UPGRADE);
  InheritedVersion got = InheritVersion(moved, &inherited_start, Successor::kRetry, "billing-q", Polls);
  EXPECT_FALSE(got.pinned.has_value() || got.auto_upgrade.has_value());
}

TEST(VersionInheritanceTest, APinnedOverrideIsInheritedWhereItsVersionPolls) {
  ExecutionInfo exec;
  auto* pinned = exec.mutable_versioning_info()->mutable_versioning_override()->mutable_pinned();
  pinned->set_behavior(temporal::api::workflow::v1::VersioningOverride::PINNED_OVERRIDE_BEHAVIOR_PINNED);
  pinned->mutable_version()->set_deployment_name("billing");
  pinned->mutable_version()->set_build_id("v1");
  EXPECT_TRUE(InheritOverride(exec, "billing-q", Polls).has_value());
  EXPECT_FALSE(InheritOverride(exec, "other-q", Polls).has_value());
  exec.mutable_versioning_info()->mutable_versioning_override()->set_auto_upgrade(true);
  EXPECT_FALSE(InheritOverride(exec, "billing-q", Polls).has_value())
      << "only pinned overrides pass on";
}

}  // namespace
}  // namespace tock::server::history
