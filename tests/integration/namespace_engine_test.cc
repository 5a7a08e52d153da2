// The namespace rules of SPEC §1–§2 through the engine, on an in-memory database and a
// manual clock.
#include "server-core/namespaces/namespace_engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "absl/strings/match.h"
#include "lib/common/proto_time.h"
#include "lib/common/status.h"
#include "lib/common/time_format.h"
#include "server-core/persistence/persistence.h"
#include "temporal/api/errordetails/v1/message.pb.h"
#include "tests/support/fixtures.h"

namespace tock::server::namespaces {
namespace {

using temporal::api::enums::v1::NAMESPACE_STATE_DELETED;
using temporal::api::enums::v1::NAMESPACE_STATE_DEPRECATED;
using temporal::api::enums::v1::NAMESPACE_STATE_REGISTERED;

class NamespaceEngineTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(admin::ClusterMetadata::SingleCluster("active", "127.0.0.1:7233")); }

  void Open(admin::ClusterMetadata cluster) {
    engine_.reset();
    auto opened = persistence::OpenPersistence({});
    ASSERT_TRUE(opened.ok()) << opened.status();
    persistence_ = std::move(*opened);
    engine_ = std::make_unique<NamespaceEngine>(persistence_->namespaces(), std::move(cluster),
                                                clock_);
  }

  absl::Status Register(const std::string& name, std::optional<absl::Duration> retention = {},
                        bool global = false, std::vector<std::string> clusters = {},
                        std::string active = "") {
    wf::RegisterNamespaceRequest req;
    req.set_namespace_(name);
    if (retention) *req.mutable_workflow_execution_retention_period() = ToProtoDuration(*retention);
    req.set_is_global_namespace(global);
    for (const auto& c : clusters) req.add_clusters()->set_cluster_name(c);
    req.set_active_cluster_name(active);
    return engine_->Register(req).status();
  }

  wf::DescribeNamespaceResponse Describe(const std::string& name) {
    wf::DescribeNamespaceRequest req;
    req.set_namespace_(name);
    auto out = engine_->Describe(req);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : wf::DescribeNamespaceResponse();
  }

  absl::StatusOr<wf::UpdateNamespaceResponse> Failover(const std::string& name,
                                                       const std::string& to) {
    wf::UpdateNamespaceRequest req;
    req.set_namespace_(name);
    req.mutable_replication_config()->set_active_cluster_name(to);
    clock_.Advance(absl::Seconds(1));
    return engine_->Update(req);
  }

  ManualClock clock_;
  std::unique_ptr<persistence::Persistence> persistence_;
  std::unique_ptr<NamespaceEngine> engine_;
};

TEST_F(NamespaceEngineTest, AbsentRetentionIsTwoDays) {
  ASSERT_TRUE(Register("orders").ok());
  auto d = Describe("orders");
  EXPECT_EQ(d.config().workflow_execution_retention_ttl().seconds(), 2 * 86400);
  EXPECT_EQ(d.namespace_info().state(), NAMESPACE_STATE_REGISTERED);
  EXPECT_EQ(d.namespace_info().id().size(), 36u);
  EXPECT_EQ(d.failover_version(), 0);
  EXPECT_FALSE(d.is_global_namespace());
  EXPECT_EQ(d.replication_config().active_cluster_name(), "active");
}

TEST_F(NamespaceEngineTest, RetentionOutsideOneToThirtyDaysIsRejected) {
  for (absl::Duration bad : {absl::ZeroDuration(), absl::Hours(-24), absl::Hours(23),
                             absl::Hours(24 * 30) + absl::Seconds(1), absl::Hours(24 * 31)}) {
    absl::Status s = Register("bad", bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(s.message(), "A valid retention period is not set on request."))
        << s.message();
  }
  wf::DescribeNamespaceRequest bad_req;
  bad_req.set_namespace_("bad");
  EXPECT_EQ(engine_->Describe(bad_req).status().code(), absl::StatusCode::kNotFound);
  for (absl::Duration good : {absl::Hours(24), absl::Hours(36), absl::Hours(24 * 30)}) {
    std::string name = "ok" + std::to_string(absl::ToInt64Hours(good));
    ASSERT_TRUE(Register(name, good).ok());
    EXPECT_EQ(Describe(name).config().workflow_execution_retention_ttl().seconds(),
              absl::ToInt64Seconds(good));
  }
}

TEST_F(NamespaceEngineTest, DuplicateNameIsAlreadyExistsWithDetail) {
  ASSERT_TRUE(Register("dup").ok());
  absl::Status s = Register("dup");
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(s.message(), "Namespace already exists.");
  EXPECT_TRUE(GetDetail<temporal::api::errordetails::v1::NamespaceAlreadyExistsFailure>(s));
}

TEST_F(NamespaceEngineTest, NameRules) {
  EXPECT_EQ(Register("").message(), "Namespace not set on request.");
  EXPECT_EQ(Register(std::string(1001, 'x')).message(), "Namespace length exceeds limit.");
  EXPECT_TRUE(Register(std::string(1000, 'x')).ok());
  absl::Status space = Register("two words");
  EXPECT_EQ(space.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(space.message().find("whitespace"), std::string::npos) << space.message();
}

TEST_F(NamespaceEngineTest, UnknownNamespaceIsNotFoundWithDetail) {
  wf::DescribeNamespaceRequest req;
  req.set_namespace_("nope");
  absl::Status s = engine_->Describe(req).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "Namespace nope is not found.");
  auto detail = GetDetail<temporal::api::errordetails::v1::NamespaceNotFoundFailure>(s);
  ASSERT_TRUE(detail.has_value());
  EXPECT_EQ(detail->namespace_(), "nope");
}

TEST_F(NamespaceEngineTest, DescribeById) {
  ASSERT_TRUE(Register("byid").ok());
  std::string id = Describe("byid").namespace_info().id();
  wf::DescribeNamespaceRequest req;
  req.set_id(id);
  auto out = engine_->Describe(req);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->namespace_info().name(), "byid");
  req.set_namespace_("byid");
  EXPECT_EQ(engine_->Describe(req).status().message(),
            "GetNamespace operation failed. Both ID and Name specified in request.");
}

TEST_F(NamespaceEngineTest, UpdateMergesDataAndKeepsNonEmptyFields) {
  wf::RegisterNamespaceRequest reg;
  reg.set_namespace_("u");
  reg.set_description("first");
  reg.set_owner_email("ops@example.com");
  (*reg.mutable_data())["team"] = "payments";
  ASSERT_TRUE(engine_->Register(reg).ok());

  wf::UpdateNamespaceRequest req;
  req.set_namespace_("u");
  (*req.mutable_update_info()->mutable_data())["tier"] = "gold";
  *req.mutable_config()->mutable_workflow_execution_retention_ttl() =
      ToProtoDuration(absl::Hours(72));
  auto out = engine_->Update(req);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->namespace_info().description(), "first");
  EXPECT_EQ(out->namespace_info().owner_email(), "ops@example.com");
  EXPECT_EQ(out->namespace_info().data().at("team"), "payments");
  EXPECT_EQ(out->namespace_info().data().at("tier"), "gold");
  EXPECT_EQ(out->config().workflow_execution_retention_ttl().seconds(), 3 * 86400);

  *req.mutable_config()->mutable_workflow_execution_retention_ttl() =
      ToProtoDuration(absl::Hours(24 * 31));
  absl::Status bad = engine_->Update(req).status();
  EXPECT_TRUE(absl::StartsWith(bad.message(), "A valid retention period is not set on request."));
  EXPECT_EQ(Describe("u").config().workflow_execution_retention_ttl().seconds(), 3 * 86400);
}

TEST_F(NamespaceEngineTest, ConcurrentUpdatesAreAllApplied) {
  ASSERT_TRUE(Register("busy").ok());
  // Threads updating the same namespace at once lose races on the stored version; each
  // losing update is applied again on top of the winner, so every one lands.
  constexpr int kThreads = 4;
  constexpr int kEach = 25;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        wf::UpdateNamespaceRequest req;
        req.set_namespace_("busy");
        (*req.mutable_update_info()->mutable_data())[absl::StrCat("k", t, "-", i)] = "v";
        if (!engine_->Update(req).ok()) failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(Describe("busy").namespace_info().data().size(), static_cast<size_t>(kThreads * kEach));
}

TEST_F(NamespaceEngineTest, StateMachine) {
  ASSERT_TRUE(Register("s").ok());
  wf::DeprecateNamespaceRequest dep;
  dep.set_namespace_("s");
  ASSERT_TRUE(engine_->Deprecate(dep).ok());
  EXPECT_EQ(Describe("s").namespace_info().state(), NAMESPACE_STATE_DEPRECATED);
  EXPECT_EQ(engine_->Deprecate(dep).status().message(), "Invalid namespace state update.");

  op::DeleteNamespaceRequest del;
  del.set_namespace_("s");
  auto deleted = engine_->Delete(del);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(deleted->deleted_namespace(), "s");
  EXPECT_EQ(Describe("s").namespace_info().state(), NAMESPACE_STATE_DELETED);
  EXPECT_EQ(engine_->Delete(del).status().message(), "Invalid namespace state update.");

  wf::UpdateNamespaceRequest back;
  back.set_namespace_("s");
  back.mutable_update_info()->set_state(NAMESPACE_STATE_REGISTERED);
  EXPECT_EQ(engine_->Update(back).status().message(), "Invalid namespace state update.");

  wf::ListNamespacesRequest list;
  auto visible = engine_->List(list);
  ASSERT_TRUE(visible.ok());
  for (const auto& ns : visible->namespaces()) EXPECT_NE(ns.namespace_info().name(), "s");
  list.mutable_namespace_filter()->set_include_deleted(true);
  auto all = engine_->List(list);
  ASSERT_TRUE(all.ok());
  bool found = false;
  for (const auto& ns : all->namespaces()) found |= ns.namespace_info().name() == "s";
  EXPECT_TRUE(found);
}

TEST_F(NamespaceEngineTest, GlobalNamespaceNeedsGlobalEnabled) {
  EXPECT_EQ(Register("g", {}, true).message(), "Cannot register global namespace when not enabled");
}

TEST_F(NamespaceEngineTest, LocalNamespaceReplicationRules) {
  Open(testing::SeedClusterMetadata());
  EXPECT_EQ(Register("l", {}, false, {}, "b").message(), "Invalid local namespace active cluster");
  EXPECT_EQ(Register("l", {}, false, {"a", "b"}, "a").message(), "Invalid local namespace clusters");
  EXPECT_EQ(Register("l", {}, false, {}, "zz").message(), "Invalid cluster name: zz");
}

TEST_F(NamespaceEngineTest, SeedFailoverExample) {
  Open(testing::SeedClusterMetadata());
  ASSERT_TRUE(Register("alpha", {}, true, {"a", "b"}, "a").ok());
  EXPECT_EQ(Describe("alpha").failover_version(), 1);
  auto to_b = Failover("alpha", "b");
  ASSERT_TRUE(to_b.ok()) << to_b.status();
  EXPECT_EQ(to_b->failover_version(), 2);

  ASSERT_TRUE(Register("beta", {}, true, {"a", "b"}, "b").ok());
  EXPECT_EQ(Describe("beta").failover_version(), 2);
  auto to_a = Failover("beta", "a");
  ASSERT_TRUE(to_a.ok());
  EXPECT_EQ(to_a->failover_version(), 11);
  auto again = Failover("beta", "b");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->failover_version(), 12);

  auto d = Describe("beta");
  ASSERT_EQ(d.failover_history_size(), 3);
  EXPECT_EQ(d.failover_history(0).failover_version(), 2);
  EXPECT_EQ(d.failover_history(2).failover_version(), 12);

  EXPECT_EQ(Register("x", {}, true, {"a"}, "b").message(),
            "Active cluster is not contained in all clusters.");
}

TEST_F(NamespaceEngineTest, FailoverWithOtherChangesIsRefused) {
  Open(testing::SeedClusterMetadata());
  ASSERT_TRUE(Register("f", {}, true, {"a", "b"}, "a").ok());
  wf::UpdateNamespaceRequest req;
  req.set_namespace_("f");
  req.mutable_replication_config()->set_active_cluster_name("b");
  req.mutable_update_info()->set_description("changed");
  EXPECT_EQ(engine_->Update(req).status().message(),
            "Cannot set active cluster to current cluster when other parameters are set.");
  EXPECT_EQ(Describe("f").failover_version(), 1);
}

TEST_F(NamespaceEngineTest, FailoverHistoryKeepsTheLastTen) {
  Open(testing::SeedClusterMetadata());
  ASSERT_TRUE(Register("h", {}, true, {"a", "b"}, "a").ok());
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(Failover("h", i % 2 == 0 ? "b" : "a").ok());
  auto d = Describe("h");
  EXPECT_EQ(d.failover_history_size(), 10);
  EXPECT_EQ(d.failover_history(9).failover_version(), d.failover_version());
}

TEST_F(NamespaceEngineTest, PromoteLocalToGlobal) {
  Open(testing::SeedClusterMetadata());
  ASSERT_TRUE(Register("p").ok());
  wf::UpdateNamespaceRequest req;
  req.set_namespace_("p");
  req.set_promote_namespace(true);
  auto out = engine_->Update(req);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->is_global_namespace());
  EXPECT_EQ(out->failover_version(), 1);
}

TEST_F(NamespaceEngineTest, EveryChangeIsAVersionAndAsOfReadsThePast) {
  ASSERT_TRUE(Register("v", absl::Hours(24)).ok());
  absl::Time registered = clock_.Now();
  clock_.Advance(absl::Minutes(5));
  wf::UpdateNamespaceRequest req;
  req.set_namespace_("v");
  *req.mutable_config()->mutable_workflow_execution_retention_ttl() =
      ToProtoDuration(absl::Hours(48));
  ASSERT_TRUE(engine_->Update(req).ok());
  // Same millisecond: the next version still starts strictly later.
  req.mutable_update_info()->set_description("same ms");
  ASSERT_TRUE(engine_->Update(req).ok());

  tock::admin::v1::GetNamespaceHistoryRequest h;
  h.set_namespace_("v");
  auto history = engine_->History(h);
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->versions_size(), 3);
  EXPECT_EQ(history->versions(0).operation(), "register");
  EXPECT_EQ(history->versions(0).valid_to().seconds(), history->versions(1).valid_from().seconds());
  EXPECT_EQ(FromProtoTime(history->versions(2).valid_from()) -
                FromProtoTime(history->versions(1).valid_from()),
            absl::Milliseconds(1));
  EXPECT_FALSE(history->versions(2).has_valid_to());

  tock::admin::v1::DescribeNamespaceAsOfRequest asof;
  asof.set_namespace_("v");
  *asof.mutable_as_of() = ToProtoTime(registered + absl::Minutes(1));
  auto past = engine_->DescribeAsOf(asof);
  ASSERT_TRUE(past.ok()) << past.status();
  EXPECT_EQ(past->namespace_().config().workflow_execution_retention_ttl().seconds(), 86400);
  EXPECT_EQ(past->version().version(), 1);

  // An update that changes nothing writes no version.
  wf::UpdateNamespaceRequest noop;
  noop.set_namespace_("v");
  ASSERT_TRUE(engine_->Update(noop).ok());
  EXPECT_EQ(engine_->History(h)->versions_size(), 3);
}

}  // namespace
}  // namespace tock::server::namespaces

namespace tock::server::namespaces {
namespace {

namespace enums = temporal::api::enums::v1;

class NamespaceArchivalTest : public NamespaceEngineTest {
 protected:
  // History archival configured (file provider, default disabled, default URI);
  // visibility archival not configured.
  void Configure() {
    NamespaceArchivalPolicy policy;
    policy.history.cluster_enabled = true;
    policy.history.default_uri = "file:///var/tock/history";
    policy.history.schemes = {"file"};
    engine_->SetArchivalPolicy(policy);
  }
  absl::Status RegisterWith(const std::string& name, enums::ArchivalState history_state,
                            const std::string& history_uri,
                            enums::ArchivalState visibility_state = enums::ARCHIVAL_STATE_UNSPECIFIED,
                            const std::string& visibility_uri = "") {
    wf::RegisterNamespaceRequest req;
    req.set_namespace_(name);
    req.set_history_archival_state(history_state);
    req.set_history_archival_uri(history_uri);
    req.set_visibility_archival_state(visibility_state);
    req.set_visibility_archival_uri(visibility_uri);
    return engine_->Register(req).status();
  }
  absl::Status UpdateHistory(const std::string& name, enums::ArchivalState state,
                             const std::string& uri) {
    wf::UpdateNamespaceRequest req;
    req.set_namespace_(name);
    req.mutable_config()->set_history_archival_state(state);
    req.mutable_config()->set_history_archival_uri(uri);
    return engine_->Update(req).status();
  }
};

TEST_F(NamespaceArchivalTest, ANotConfiguredClusterIgnoresTheFields) {
  ASSERT_TRUE(RegisterWith("plain", enums::ARCHIVAL_STATE_ENABLED, "file:///x").ok());
  const auto config = Describe("plain").config();
  EXPECT_EQ(config.history_archival_state(), enums::ARCHIVAL_STATE_DISABLED);
  EXPECT_EQ(config.history_archival_uri(), "");
}

TEST_F(NamespaceArchivalTest, DefaultsUrisAndTheExactMessages) {
  Configure();
  ASSERT_TRUE(RegisterWith("defaulted", enums::ARCHIVAL_STATE_ENABLED, "").ok());
  EXPECT_EQ(Describe("defaulted").config().history_archival_uri(), "file:///var/tock/history");
  EXPECT_EQ(Describe("defaulted").config().history_archival_state(), enums::ARCHIVAL_STATE_ENABLED);
  // Visibility is not configured: the request's fields are ignored for it.
  ASSERT_TRUE(RegisterWith("vis", enums::ARCHIVAL_STATE_UNSPECIFIED, "", enums::ARCHIVAL_STATE_ENABLED,
                           "file:///v").ok());
  EXPECT_EQ(Describe("vis").config().visibility_archival_state(), enums::ARCHIVAL_STATE_DISABLED);
  EXPECT_EQ(Describe("vis").config().history_archival_state(), enums::ARCHIVAL_STATE_DISABLED)
      << "the cluster's default state";

  absl::Status changed = UpdateHistory("defaulted", enums::ARCHIVAL_STATE_UNSPECIFIED, "file:///other");
  EXPECT_EQ(changed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(changed.message(), "Cannot update existing archival URI");
  ASSERT_TRUE(UpdateHistory("defaulted", enums::ARCHIVAL_STATE_DISABLED, "").ok());
  EXPECT_EQ(Describe("defaulted").config().history_archival_uri(), "file:///var/tock/history");
  EXPECT_EQ(Describe("defaulted").config().history_archival_state(), enums::ARCHIVAL_STATE_DISABLED);

  absl::Status scheme = RegisterWith("s3", enums::ARCHIVAL_STATE_ENABLED, "s3://bucket");
  EXPECT_EQ(scheme.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(scheme.message(), "unable to find archiver config for the given scheme"))
      << scheme.message();
  absl::Status unknown = RegisterWith("ftp", enums::ARCHIVAL_STATE_ENABLED, "ftp://host/x");
  EXPECT_NE(unknown.message().find("unknown archiver scheme \"ftp\""), std::string::npos) << unknown;
  EXPECT_FALSE(engine_->Describe([] {
                 wf::DescribeNamespaceRequest r;
                 r.set_namespace_("s3");
                 return r;
               }()).ok())
      << "a refused register stores nothing";

  NamespaceArchivalPolicy no_default;
  no_default.history.cluster_enabled = true;
  no_default.history.schemes = {"file"};
  engine_->SetArchivalPolicy(no_default);
  absl::Status no_uri = RegisterWith("nouri", enums::ARCHIVAL_STATE_ENABLED, "");
  EXPECT_EQ(no_uri.message(), "Invalid to enable archival without specifying a uri.");
}

// Namespace replication's receiver (ApplyReplicated, reference/replication.md §2.3): cluster
// b applies what a registered and changed.
class NamespaceReplicationTest : public NamespaceEngineTest {
 protected:
  void SetUp() override { Open(testing::SeedClusterMetadata("b")); }

  // What cluster a stored for global namespace `name` of clusters a and b.
  static persistence::NamespaceRecord FromA(const std::string& name, int64_t config_version,
                                            int64_t failover_version, const std::string& active) {
    persistence::NamespaceRecord r;
    r.mutable_info()->set_id("5f0c2d7e-0000-4000-8000-00000000000a");
    r.mutable_info()->set_name(name);
    r.mutable_info()->set_state(NAMESPACE_STATE_REGISTERED);
    r.mutable_info()->set_description(absl::StrCat("config ", config_version));
    *r.mutable_config()->mutable_workflow_execution_retention_ttl() = ToProtoDuration(absl::Hours(48));
    r.mutable_replication_config()->set_active_cluster_name(active);
    r.mutable_replication_config()->add_clusters()->set_cluster_name("a");
    r.mutable_replication_config()->add_clusters()->set_cluster_name("b");
    r.set_is_global_namespace(true);
    r.set_config_version(config_version);
    r.set_failover_version(failover_version);
    r.add_failover_history()->set_failover_version(failover_version);
    return r;
  }

  int64_t StoredVersions(const std::string& name) {
    auto h = persistence_->namespaces().GetNamespaceHistory(name);
    return h.ok() ? static_cast<int64_t>(h->size()) : -1;
  }
};

TEST_F(NamespaceReplicationTest, CreatesThenAppliesOnlyNewerVersionsSoRepeatsAndLateTasksChangeNothing) {
  auto applied = engine_->ApplyReplicated(FromA("orders", 1, 1, "a"), "register");
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_TRUE(*applied);
  wf::DescribeNamespaceResponse d = Describe("orders");
  EXPECT_EQ(d.namespace_info().id(), "5f0c2d7e-0000-4000-8000-00000000000a");
  EXPECT_TRUE(d.is_global_namespace());
  EXPECT_EQ(d.failover_version(), 1);
  EXPECT_EQ(d.replication_config().active_cluster_name(), "a");

  // The same task again, then an update, then the update again and the registration late.
  applied = engine_->ApplyReplicated(FromA("orders", 1, 1, "a"), "register");
  ASSERT_TRUE(applied.ok());
  EXPECT_FALSE(*applied);
  applied = engine_->ApplyReplicated(FromA("orders", 2, 1, "a"), "update");
  ASSERT_TRUE(applied.ok());
  EXPECT_TRUE(*applied);
  EXPECT_EQ(Describe("orders").namespace_info().description(), "config 2");
  for (auto late : {FromA("orders", 2, 1, "a"), FromA("orders", 1, 1, "a")}) {
    applied = engine_->ApplyReplicated(late, "update");
    ASSERT_TRUE(applied.ok());
    EXPECT_FALSE(*applied);
  }
  EXPECT_EQ(Describe("orders").namespace_info().description(), "config 2");
  EXPECT_EQ(StoredVersions("orders"), 2);

  // A failover (a higher failover version) with an older config: only the failover applies.
  applied = engine_->ApplyReplicated(FromA("orders", 1, 2, "b"), "failover");
  ASSERT_TRUE(applied.ok());
  EXPECT_TRUE(*applied);
  d = Describe("orders");
  EXPECT_EQ(d.failover_version(), 2);
  EXPECT_EQ(d.replication_config().active_cluster_name(), "b");
  EXPECT_EQ(d.namespace_info().description(), "config 2");
  auto history = persistence_->namespaces().GetNamespaceHistory("orders");
  ASSERT_TRUE(history.ok());
  EXPECT_EQ(history->back().operation, "replicate-failover");
}

TEST_F(NamespaceReplicationTest, ANamespaceNotListingThisClusterIsNotCreated) {
  persistence::NamespaceRecord r = FromA("elsewhere", 1, 1, "a");
  r.mutable_replication_config()->clear_clusters();
  r.mutable_replication_config()->add_clusters()->set_cluster_name("a");
  r.mutable_replication_config()->add_clusters()->set_cluster_name("c");
  auto applied = engine_->ApplyReplicated(r, "register");
  ASSERT_TRUE(applied.ok());
  EXPECT_FALSE(*applied);
  EXPECT_EQ(persistence_->namespaces().GetNamespaceByName("elsewhere").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(NamespaceReplicationTest, MalformedTasksAndNameCollisionsAreInvalidArgument) {
  ASSERT_TRUE(Register("taken").ok());
  auto applied = engine_->ApplyReplicated(FromA("taken", 1, 1, "a"), "register");
  EXPECT_EQ(applied.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(applied.status().message(), "namespace replication encountered name / UUID collision");

  persistence::NamespaceRecord no_id = FromA("x", 1, 1, "a");
  no_id.mutable_info()->clear_id();
  EXPECT_EQ(engine_->ApplyReplicated(no_id, "register").status().message(),
            "invalid namespace ID attribute");
  persistence::NamespaceRecord no_config = FromA("x", 1, 1, "a");
  no_config.clear_config();
  EXPECT_EQ(engine_->ApplyReplicated(no_config, "register").status().message(),
            "invalid namespace config attribute");
  persistence::NamespaceRecord deleted = FromA("x", 1, 1, "a");
  deleted.mutable_info()->set_state(NAMESPACE_STATE_DELETED);
  EXPECT_EQ(engine_->ApplyReplicated(deleted, "register").status().message(),
            "invalid namespace state attribute");
  persistence::NamespaceRecord bad_name = FromA(std::string(2000, 'n'), 1, 1, "a");
  EXPECT_EQ(engine_->ApplyReplicated(bad_name, "register").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(persistence_->namespaces().GetNamespaceByName("x").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tock::server::namespaces
