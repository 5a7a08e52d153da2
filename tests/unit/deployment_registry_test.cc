// DeploymentRegistry (deployments/deployment_registry.h) on an in-memory SQLite store and a
// manual clock: a version that leaves current drains, is counted after the grace period and
// then every refresh, and becomes DRAINED once no pinned run is open; a version polled within
// the poller TTL cannot be deleted, and can after it; a deployment full of versions makes
// room by deleting its oldest unused one (Temporal's TestVersionScavenger_DeleteOnAdd).
#include "server-core/deployments/deployment_registry.h"

#include <gtest/gtest.h>

#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "lib/common/timer_thread.h"
#include "server-core/persistence/persistence.h"

namespace tock::server::deployments {
namespace {

namespace enums = temporal::api::enums::v1;
constexpr persistence::TaskKind kWf = persistence::TaskKind::kWorkflow;

class DeploymentRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = persistence::OpenPersistence({});  // SQLite in memory
    ASSERT_TRUE(opened.ok()) << opened.status();
    p_ = std::move(*opened);
    DeploymentLimits limits;
    limits.max_versions_in_deployment = 3;
    registry_ = std::make_unique<DeploymentRegistry>(p_->deployments(), clock_, timers_, logger_,
                                                     limits);
  }

  enums::WorkerDeploymentVersionStatus Status(const std::string& build) {
    wf::DescribeWorkerDeploymentVersionRequest req;
    req.mutable_deployment_version()->set_deployment_name("billing");
    req.mutable_deployment_version()->set_build_id(build);
    auto out = registry_->DescribeVersion("ns", req);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? out->worker_deployment_version_info().status()
                    : enums::WORKER_DEPLOYMENT_VERSION_STATUS_UNSPECIFIED;
  }

  absl::Status SetCurrent(const std::string& build) {
    wf::SetWorkerDeploymentCurrentVersionRequest req;
    req.set_deployment_name("billing");
    req.set_build_id(build);
    req.set_identity("op");
    req.set_ignore_missing_task_queues(true);
    return registry_->SetCurrent("ns", req).status();
  }

  ManualClock clock_;
  TimerThread timers_{clock_};
  Logger& logger_ = NullLogger();
  std::unique_ptr<persistence::Persistence> p_;
  std::unique_ptr<DeploymentRegistry> registry_;
};

TEST_F(DeploymentRegistryTest, AVersionLeavingCurrentDrainsThenIsDrained) {
  ASSERT_TRUE(registry_->RegisterPoller("ns", "q", kWf, "billing", "v1").ok());
  ASSERT_TRUE(registry_->RegisterPoller("ns", "q", kWf, "billing", "v2").ok());
  ASSERT_TRUE(SetCurrent("v1").ok());
  ASSERT_TRUE(SetCurrent("v2").ok());
  EXPECT_EQ(Status("v1"), enums::WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING);

  int64_t open_pinned = 2;
  std::vector<std::string> counted;
  const DeploymentRegistry::CountPinned count =
      [&](const std::string& ns, const std::string& version) -> absl::StatusOr<int64_t> {
    counted.push_back(ns + "/" + version);
    return open_pinned;
  };
  registry_->CheckDrainage(count);
  EXPECT_TRUE(counted.empty()) << "nothing is counted within the grace period";
  clock_.Advance(absl::Minutes(3));
  registry_->CheckDrainage(count);
  ASSERT_EQ(counted, std::vector<std::string>{"ns/billing:v1"});
  EXPECT_EQ(Status("v1"), enums::WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING) << "two pinned runs open";
  registry_->CheckDrainage(count);
  EXPECT_EQ(counted.size(), 1u) << "the next count waits for the refresh interval";
  open_pinned = 0;
  clock_.Advance(absl::Minutes(3));
  registry_->CheckDrainage(count);
  EXPECT_EQ(counted.size(), 2u);
  EXPECT_EQ(Status("v1"), enums::WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED);
}

TEST_F(DeploymentRegistryTest, AVersionPolledLatelyIsNotDeletedAndOneFullMakesRoom) {
  ASSERT_TRUE(registry_->RegisterPoller("ns", "q", kWf, "billing", "v1").ok());
  wf::DeleteWorkerDeploymentVersionRequest del;
  del.mutable_deployment_version()->set_deployment_name("billing");
  del.mutable_deployment_version()->set_build_id("v1");
  EXPECT_EQ(registry_->DeleteVersion("ns", del).message(),
            "version 'billing:v1' cannot be deleted since it has active pollers");
  clock_.Advance(absl::Minutes(5));
  ASSERT_TRUE(registry_->RegisterPoller("ns", "q", kWf, "billing", "v2").ok());
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(registry_->RegisterPoller("ns", "q", kWf, "billing", "v3").ok());
  clock_.Advance(absl::Seconds(1));
  // The deployment holds 3 (its limit here): v1, unused for five minutes, makes room for v4.
  ASSERT_TRUE(registry_->RegisterPoller("ns", "q", kWf, "billing", "v4").ok());
  wf::DescribeWorkerDeploymentRequest describe;
  describe.set_deployment_name("billing");
  auto d = registry_->Describe("ns", describe);
  ASSERT_TRUE(d.ok());
  std::vector<std::string> builds;
  for (const auto& v : d->worker_deployment_info().version_summaries()) {
    builds.push_back(v.deployment_version().build_id());
  }
  EXPECT_EQ(builds, (std::vector<std::string>{"v4", "v3", "v2"}));
  // None is unused now: a fifth is refused.
  const absl::Status full = registry_->RegisterPoller("ns", "q", kWf, "billing", "v5");
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(full.message(),
            "exceeding maximum number of Deployment Versions in this deployment (limit = 3)");
}

}  // namespace
}  // namespace tock::server::deployments
