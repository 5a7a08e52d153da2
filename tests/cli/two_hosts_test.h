// Two tock-server hosts on the run's shared PostgreSQL (a fresh database per test), and
// what tests of calls between them need: which host owns a workflow's shard or a task queue,
// computed as the hosts do (the ring of the two addresses, the shard of a workflow id) and
// checked against the shard rows the hosts stored, so every call is known to be forwarded
// (or not) rather than hoped to be. Used by the targets that define TOCK_SERVER_BIN and
// TOCK_POSTGRES_FIXTURE_FILE.
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/common/grpc_status.h"
#include "server-core/history/shard_controller.h"
#include "server-core/membership/hash_ring.h"
#include "server-core/persistence/persistence.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"
#include "tests/support/postgres_server.h"
#include "tests/support/process.h"

namespace tock::testing {

class TwoHostsTest : public ::testing::Test {
 protected:
  static constexpr int32_t kShards = 16;
  using WorkflowStub = temporal::api::workflowservice::v1::WorkflowService::Stub;

  explicit TwoHostsTest(std::string database_prefix)
      : database_prefix_(std::move(database_prefix)) {}
  void SetUp() override {
    ASSERT_TRUE(db_.Create(TOCK_POSTGRES_FIXTURE_FILE, database_prefix_)) << db_.error();
  }
  void TearDown() override {
    a_.reset();  // the hosts stop before the database goes
    b_.reset();
    persistence_.reset();
  }

  // A host's config file: the database, `extra` keys, and `membership` lines.
  std::string Config(const std::string& name, const std::string& extra,
                     const std::string& membership = "") {
    return dir_.Write(name, "persistence:\n  engine: postgres\n  postgres:\n    url: \"" +
                                db_.url() + "\"\n    max_connections: 8\n"
                                "membership:\n  heartbeat: 200ms\n  cutoff: 1s\n" + membership +
                                "history:\n  shards: " + std::to_string(kShards) + "\n"
                                "namespaces: [orders]\n" + extra);
  }

  // Starts A then B, and waits until the shard rows are where the ring of both puts them.
  void StartHosts(const std::string& config_a, const std::string& config_b) {
    a_ = std::make_unique<ServerProcess>(TOCK_SERVER_BIN);
    ASSERT_TRUE(a_->Start({"--config", config_a})) << a_->error();
    b_ = std::make_unique<ServerProcess>(TOCK_SERVER_BIN);
    ASSERT_TRUE(b_->Start({"--config", config_b})) << b_->error();
    ring_ = std::make_unique<server::membership::HashRing>(
        std::vector<std::string>{a_->address(), b_->address()});
    std::map<int32_t, std::string> want, got;
    for (int32_t s = 1; s <= kShards; ++s) want[s] = ring_->OwnerOfShard(s);
    const absl::Time until = absl::Now() + absl::Seconds(20);
    while (absl::Now() < until) {
      got = StoredOwners();
      if (got == want) break;
      absl::SleepFor(absl::Milliseconds(100));
    }
    ASSERT_EQ(got, want) << "the shards did not settle where the ring of both hosts puts them\nA: "
                         << a_->stderr_text().substr(0, 4000)
                         << "\nB: " << b_->stderr_text().substr(0, 4000);
  }

  std::map<int32_t, std::string> StoredOwners() {
    if (!persistence_) {
      persistence::PersistenceConfig c;
      c.engine = "postgres";
      c.postgres_url = db_.url();
      c.postgres_max_connections = 1;
      auto opened = persistence::OpenPersistence(c);
      EXPECT_TRUE(opened.ok()) << opened.status();
      if (!opened.ok()) return {};
      persistence_ = std::move(*opened);
    }
    std::map<int32_t, std::string> owners;
    auto rows = persistence_->membership().ListShards();
    if (rows.ok()) {
      // The owner's address: the rows name address#process id (history::ShardOwner).
      for (const auto& r : *rows) owners[r.shard_id] = r.owner.substr(0, r.owner.rfind('#'));
    }
    return owners;
  }

  // `n` workflow ids ("<prefix>-<i>") of namespace `namespace_id` whose shards `host` owns.
  std::vector<std::string> WorkflowsOn(const ServerProcess& host, const std::string& namespace_id,
                                       const std::string& prefix, int n) const {
    std::vector<std::string> ids;
    for (int i = 0; static_cast<int>(ids.size()) < n && i < 10000; ++i) {
      std::string id = absl::StrCat(prefix, "-", i);
      if (ring_->OwnerOfShard(server::history::ShardForWorkflow(namespace_id, id, kShards)) ==
          host.address()) {
        ids.push_back(std::move(id));
      }
    }
    return ids;
  }

  // A task queue of the namespace that `host` owns.
  std::string QueueOn(const ServerProcess& host, const std::string& namespace_id) const {
    for (int i = 0; i < 10000; ++i) {
      std::string queue = absl::StrCat("queue-", i);
      if (ring_->Lookup(absl::StrCat(namespace_id, "/", queue)) == host.address()) return queue;
    }
    return "";
  }

  static std::unique_ptr<temporal::api::workflowservice::v1::WorkflowService::Stub> Stub(const ServerProcess& host) {
    return temporal::api::workflowservice::v1::WorkflowService::NewStub(
        grpc::CreateChannel(host.address(), grpc::InsecureChannelCredentials()));
  }

  // `metadata` added to a context with a 10 s deadline.
  static void Prepare(grpc::ClientContext& ctx,
                      const std::vector<std::pair<std::string, std::string>>& metadata) {
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    for (const auto& [key, value] : metadata) ctx.AddMetadata(key, value);
  }

  static absl::Status DescribeNamespace(temporal::api::workflowservice::v1::WorkflowService::Stub& stub, std::string* id,
                                        const std::vector<std::pair<std::string, std::string>>&
                                            metadata = {}) {
    grpc::ClientContext ctx;
    Prepare(ctx, metadata);
    temporal::api::workflowservice::v1::DescribeNamespaceRequest req;
    req.set_namespace_("orders");
    temporal::api::workflowservice::v1::DescribeNamespaceResponse resp;
    absl::Status s = FromGrpcStatus(stub.DescribeNamespace(&ctx, req, &resp));
    if (id != nullptr) *id = resp.namespace_info().id();
    return s;
  }

  static absl::Status StartWorkflow(temporal::api::workflowservice::v1::WorkflowService::Stub& stub, const std::string& id,
                                    const std::string& queue,
                                    const std::vector<std::pair<std::string, std::string>>&
                                        metadata = {}) {
    grpc::ClientContext ctx;
    Prepare(ctx, metadata);
    temporal::api::workflowservice::v1::StartWorkflowExecutionRequest req;
    req.set_namespace_("orders");
    req.set_workflow_id(id);
    req.mutable_workflow_type()->set_name("T");
    req.mutable_task_queue()->set_name(queue);
    req.set_request_id("start-" + id);
    temporal::api::workflowservice::v1::StartWorkflowExecutionResponse resp;
    return FromGrpcStatus(stub.StartWorkflowExecution(&ctx, req, &resp));
  }

  FreshPostgresDatabase db_;  // first: dropped after everything that uses it
  TempDir dir_;
  std::unique_ptr<persistence::Persistence> persistence_;
  std::unique_ptr<ServerProcess> a_, b_;
  std::unique_ptr<server::membership::HashRing> ring_;
  const std::string database_prefix_;
};

}  // namespace tock::testing
