// Task-queue partitions across two hosts (server-core/routing/call_router.h): a worker's
// poll on host B for a queue host A owns either goes to A (one at a time) or waits on B's own
// partition of the queue, where the tasks B's shards make are offered first. So a workflow
// whose shard is B's has its task taken by the poll waiting on B, and B calls A for none of
// it; with `membership.partition_wait: 0s` every poll goes to A and the task with it, to the
// poll that waited there first, unless a poll B forwarded waits too: that one prefers the
// tasks of B's runs.
//
// Which host owns the queue and the workflow's shard is computed as the hosts do
// (two_hosts_test.h); when a poll waits where is read from each host's pending_polls gauge,
// so nothing here depends on timing.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "tests/cli/two_hosts_test.h"
#include "tests/support/http_get.h"
#include "tests/support/metrics_scrape.h"

namespace tock::testing {
namespace {

namespace wf = temporal::api::workflowservice::v1;

class PartitionTest : public TwoHostsTest {
 protected:
  PartitionTest() : TwoHostsTest("tock_partitions") {}

  // Both hosts with metrics and `partition_wait`.
  void StartWith(const std::string& partition_wait) {
    const std::string metrics = "metrics: {ip: 127.0.0.1, port: 0}\n";
    const std::string membership = "  partition_wait: " + partition_wait + "\n";
    ASSERT_NO_FATAL_FAILURE(StartHosts(Config("a.yaml", metrics, membership),
                                       Config("b.yaml", metrics, membership)));
    stub_a_ = Stub(*a_);
    stub_b_ = Stub(*b_);
    ASSERT_TRUE(DescribeNamespace(*stub_b_, &namespace_id_).ok());
    queue_ = QueueOn(*a_, namespace_id_);
    ASSERT_FALSE(queue_.empty());
    // The shard rows are settled; each host's own view of the ring follows within a
    // heartbeat or so: wait until each sends a call about the other's workflow there.
    ASSERT_TRUE(RoutesToTheOther(*a_, *stub_a_, *b_));
    ASSERT_TRUE(RoutesToTheOther(*b_, *stub_b_, *a_));
  }

  // Waits (at most 10 s) until `host` forwards a call about a workflow of `other`'s shard.
  ::testing::AssertionResult RoutesToTheOther(const ServerProcess& host, WorkflowStub& stub,
                                              const ServerProcess& other) {
    const std::string id = WorkflowsOn(other, namespace_id_, "routed", 1).at(0);
    for (const absl::Time until = absl::Now() + absl::Seconds(10); absl::Now() < until;
         absl::SleepFor(absl::Milliseconds(50))) {
      const double before = Metric(host, "host_calls_total");
      grpc::ClientContext ctx;
      Prepare(ctx, {});
      wf::DescribeWorkflowExecutionRequest req;
      req.set_namespace_("orders");
      req.mutable_execution()->set_workflow_id(id);
      wf::DescribeWorkflowExecutionResponse resp;
      stub.DescribeWorkflowExecution(&ctx, req, &resp);  // NOT_FOUND either way
      if (Metric(host, "host_calls_total") > before) return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << host.address() << " keeps workflow " << id
                                         << " of " << other.address() << "'s shard";
  }

  // A family's sum on `host`'s /metrics (-1 when it cannot be read).
  static double Metric(const ServerProcess& host, const std::string& family,
                       const std::string& label = "") {
    HttpResult r = HttpGet(MetricsUrl(host));
    if (!r.error.empty() || r.status != 200) return -1;
    return FamilySum(r.body, family, label);
  }

  // Waits (at most 10 s) until `host` holds `n` waiting workflow-task polls.
  static ::testing::AssertionResult PollsWaitOn(const ServerProcess& host, double n) {
    double seen = -1;
    for (const absl::Time until = absl::Now() + absl::Seconds(10); absl::Now() < until;
         absl::SleepFor(absl::Milliseconds(20))) {
      seen = Metric(host, "pending_polls", "task_type=\"Workflow\"");
      if (seen == n) return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << host.address() << " holds " << seen << " polls, not "
                                         << n;
  }

  // A workflow-task poll of the queue through `stub` (B's unless told), on a thread of its
  // own (up to 30 s); cancelled, if still waiting, when it goes.
  struct Poll {
    grpc::ClientContext context;
    wf::PollWorkflowTaskQueueResponse response;
    grpc::Status status;
    std::thread thread;
    ~Poll() {
      context.TryCancel();
      if (thread.joinable()) thread.join();
    }
  };
  std::unique_ptr<Poll> StartPoll(const std::string& identity, WorkflowStub* stub = nullptr) {
    auto poll = std::make_unique<Poll>();
    poll->context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    if (stub == nullptr) stub = stub_b_.get();
    poll->thread = std::thread([this, identity, stub, p = poll.get()] {
      wf::PollWorkflowTaskQueueRequest req;
      req.set_namespace_("orders");
      req.mutable_task_queue()->set_name(queue_);
      req.set_identity(identity);
      p->status = stub->PollWorkflowTaskQueue(&p->context, req, &p->response);
    });
    return poll;
  }

  // A poll through B that goes on to A ("first"), then another ("second") once the first
  // waits on A, which waits on `second_waits_on`, then a workflow of B's shard started
  // through B.
  void StartTwoPollsAndAWorkflow(const ServerProcess& second_waits_on,
                                 std::unique_ptr<Poll>& first, std::unique_ptr<Poll>& second) {
    first = StartPoll("first");
    ASSERT_TRUE(PollsWaitOn(*a_, 1));
    second = StartPoll("second");
    ASSERT_TRUE(PollsWaitOn(second_waits_on, second_waits_on.address() == a_->address() ? 2 : 1));
    host_calls_before_ = Metric(*b_, "host_calls_total");
    const std::string id = WorkflowsOn(*b_, namespace_id_, "partition", 1).at(0);
    ASSERT_TRUE(StartWorkflow(*stub_b_, id, queue_).ok());
  }

  // One workflow-task poll of the queue through `stub`, waiting at most `wait`.
  wf::PollWorkflowTaskQueueResponse PollOnce(WorkflowStub& stub, absl::Duration wait) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + wait));
    wf::PollWorkflowTaskQueueRequest req;
    req.set_namespace_("orders");
    req.mutable_task_queue()->set_name(queue_);
    req.set_identity("poller");
    wf::PollWorkflowTaskQueueResponse resp;
    grpc::Status s = stub.PollWorkflowTaskQueue(&ctx, req, &resp);
    EXPECT_TRUE(s.ok() || s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)
        << s.error_message();
    return resp;
  }

  // Polls through `stub` until `n` workflow tasks came (each poll up to 20 s, 60 s in all)
  // and returns their workflow ids, in the order they came.
  std::vector<std::string> TakeTasks(WorkflowStub& stub, size_t n) {
    std::vector<std::string> ids;
    for (const absl::Time until = absl::Now() + absl::Seconds(60);
         ids.size() < n && absl::Now() < until;) {
      wf::PollWorkflowTaskQueueResponse resp = PollOnce(stub, absl::Seconds(20));
      if (!resp.task_token().empty()) ids.push_back(resp.workflow_execution().workflow_id());
    }
    return ids;
  }

  // Waits (at most 20 s) until `host` counted at least `n` offers with `result`.
  static ::testing::AssertionResult OffersReach(const ServerProcess& host,
                                                const std::string& result, double n) {
    double seen = -1;
    for (const absl::Time until = absl::Now() + absl::Seconds(20); absl::Now() < until;
         absl::SleepFor(absl::Milliseconds(20))) {
      seen = Metric(host, "partition_offers_total", "result=\"" + result + "\"");
      if (seen >= n) return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << host.address() << " made " << seen << " offers "
                                         << result << ", not " << n;
  }

  std::unique_ptr<WorkflowStub> stub_a_, stub_b_;
  std::string namespace_id_, queue_;
  double host_calls_before_ = 0;
};

TEST_F(PartitionTest, ATaskOfThisHostsShardGoesToThePollWaitingHere) {
  ASSERT_NO_FATAL_FAILURE(StartWith("30s"));
  std::unique_ptr<Poll> first, second;
  ASSERT_NO_FATAL_FAILURE(StartTwoPollsAndAWorkflow(*b_, first, second));
  second->thread.join();
  ASSERT_TRUE(second->status.ok()) << second->status.error_message();
  EXPECT_FALSE(second->response.task_token().empty()) << "the poll waiting on B took the task";
  // B started its own run's task for its own poll: no call to A for any of it.
  EXPECT_EQ(Metric(*b_, "host_calls_total"), host_calls_before_);
}

// ListTaskQueuePartitions names the queue's root (the ring's owner) first, under the queue's
// name, then each other alive host's partition under Temporal's /_sys/QUEUE/N keys; every
// host answers the same.
TEST_F(PartitionTest, ThePartitionsListNameTheRootAndEveryOtherHost) {
  ASSERT_NO_FATAL_FAILURE(StartWith("200ms"));
  for (WorkflowStub* stub : {stub_a_.get(), stub_b_.get()}) {
    grpc::ClientContext ctx;
    Prepare(ctx, {});
    wf::ListTaskQueuePartitionsRequest req;
    req.set_namespace_("orders");
    req.mutable_task_queue()->set_name(queue_);
    wf::ListTaskQueuePartitionsResponse resp;
    const grpc::Status status = stub->ListTaskQueuePartitions(&ctx, req, &resp);
    ASSERT_TRUE(status.ok()) << status.error_message();
    for (const auto& list : {resp.workflow_task_queue_partitions(), resp.activity_task_queue_partitions()}) {
      ASSERT_EQ(list.size(), 2) << resp.DebugString();
      EXPECT_EQ(list[0].key(), queue_);
      EXPECT_EQ(list[0].owner_host_name(), a_->address());  // queue_ is a's (QueueOn)
      EXPECT_EQ(list[1].key(), "/_sys/" + queue_ + "/1");
      EXPECT_EQ(list[1].owner_host_name(), b_->address());
    }
  }
  grpc::ClientContext ctx;
  Prepare(ctx, {});
  wf::ListTaskQueuePartitionsRequest req;
  req.set_namespace_("orders");
  wf::ListTaskQueuePartitionsResponse resp;
  const grpc::Status status = stub_a_->ListTaskQueuePartitions(&ctx, req, &resp);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "TaskQueue is not set on request.");
}

// A namespace's worker heartbeats live on one host (the owner of its registry's pseudo
// queue): one sent through either host is listed, counted and described through both.
TEST_F(PartitionTest, WorkerHeartbeatsSentToEitherHostAreSeenThroughBoth) {
  ASSERT_NO_FATAL_FAILURE(StartWith("200ms"));
  int key = 0;
  for (WorkflowStub* stub : {stub_a_.get(), stub_b_.get()}) {
    grpc::ClientContext ctx;
    Prepare(ctx, {});
    wf::RecordWorkerHeartbeatRequest req;
    req.set_namespace_("orders");
    auto* h = req.add_worker_heartbeat();
    h->set_worker_instance_key(absl::StrCat("worker-", key++));
    h->set_task_queue(queue_);
    wf::RecordWorkerHeartbeatResponse resp;
    const grpc::Status status = stub->RecordWorkerHeartbeat(&ctx, req, &resp);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  for (WorkflowStub* stub : {stub_a_.get(), stub_b_.get()}) {
    grpc::ClientContext ctx;
    Prepare(ctx, {});
    wf::ListWorkersRequest req;
    req.set_namespace_("orders");
    wf::ListWorkersResponse resp;
    const grpc::Status status = stub->ListWorkers(&ctx, req, &resp);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_EQ(resp.workers_size(), 2) << resp.DebugString();
    EXPECT_EQ(resp.workers(0).worker_instance_key(), "worker-0");
    EXPECT_EQ(resp.workers(1).worker_instance_key(), "worker-1");
    grpc::ClientContext describe_ctx;
    Prepare(describe_ctx, {});
    wf::DescribeWorkerRequest describe;
    describe.set_namespace_("orders");
    describe.set_worker_instance_key("worker-1");
    wf::DescribeWorkerResponse described;
    EXPECT_TRUE(stub->DescribeWorker(&describe_ctx, describe, &described).ok());
    EXPECT_EQ(described.worker_info().worker_heartbeat().task_queue(), queue_);
  }
}

TEST_F(PartitionTest, WithoutPartitionsEveryPollAndTaskGoesToTheQueuesOwner) {
  ASSERT_NO_FATAL_FAILURE(StartWith("0s"));
  std::unique_ptr<Poll> first, second;
  ASSERT_NO_FATAL_FAILURE(StartTwoPollsAndAWorkflow(*a_, first, second));
  first->thread.join();
  ASSERT_TRUE(first->status.ok()) << first->status.error_message();
  EXPECT_FALSE(first->response.task_token().empty()) << "A gave the task to its first poll";
  EXPECT_GT(Metric(*b_, "host_calls_total"), host_calls_before_);
  EXPECT_EQ(Metric(*a_, "pending_polls", "task_type=\"Workflow\""), 1) << "the second poll waits";
}

// On A, the queue's owner: a client's poll to A waits first, then one B forwarded. The task
// of a run on B's shard goes to B's poll, so that its worker's answers stay on B.
TEST_F(PartitionTest, APollAnotherHostForwardedPrefersTheTasksOfThatHostsRuns) {
  ASSERT_NO_FATAL_FAILURE(StartWith("0s"));
  std::unique_ptr<Poll> on_a = StartPoll("on-a", stub_a_.get());
  ASSERT_TRUE(PollsWaitOn(*a_, 1));
  std::unique_ptr<Poll> from_b = StartPoll("from-b");
  ASSERT_TRUE(PollsWaitOn(*a_, 2));
  const std::string id = WorkflowsOn(*b_, namespace_id_, "preferred", 1).at(0);
  ASSERT_TRUE(StartWorkflow(*stub_b_, id, queue_).ok());
  from_b->thread.join();
  ASSERT_TRUE(from_b->status.ok()) << from_b->status.error_message();
  EXPECT_FALSE(from_b->response.task_token().empty()) << "B's poll took the task of B's run";
  EXPECT_EQ(Metric(*a_, "pending_polls", "task_type=\"Workflow\""), 1) << "A's own poll waits";
}

// A task of B's shard that no poll waits for stays in B's partition (queue_partitions.h):
// B offers it to A, the queue's root, which refuses it while no poll waits there, then hands
// it to the poll that comes.
TEST_F(PartitionTest, ATaskNoPollWaitsForStaysOnItsHostUntilAPollWaitsAtTheRoot) {
  ASSERT_NO_FATAL_FAILURE(StartWith("30s"));
  const std::string id = WorkflowsOn(*b_, namespace_id_, "kept", 1).at(0);
  ASSERT_TRUE(StartWorkflow(*stub_b_, id, queue_).ok());
  ASSERT_TRUE(OffersReach(*b_, "refused", 1)) << "B offered the task to A and kept it";
  EXPECT_EQ(Metric(*b_, "partition_offers_total", "result=\"taken\""), 0);
  std::vector<std::string> got = TakeTasks(*stub_a_, 1);
  EXPECT_EQ(got, std::vector<std::string>{id});
  // (B counts the offer once A's answer reaches it, which may be after the poll's.)
  EXPECT_TRUE(OffersReach(*b_, "taken", 1)) << "the poll waiting at A took B's offer";
}

// B dies (kill -9) holding tasks of its shards no poll took: A takes B's shards, reads
// their tasks from the database and hands each to a poll once.
TEST_F(PartitionTest, TheTasksOfAHostKilledAreEachDeliveredOnceByTheHostTakingItsShards) {
  ASSERT_NO_FATAL_FAILURE(StartWith("30s"));
  const std::vector<std::string> ids = WorkflowsOn(*b_, namespace_id_, "orphan", 6);
  for (const std::string& id : ids) ASSERT_TRUE(StartWorkflow(*stub_b_, id, queue_).ok());
  ASSERT_TRUE(OffersReach(*b_, "refused", 1));
  b_->Kill();
  std::vector<std::string> got = TakeTasks(*stub_a_, ids.size());
  std::sort(got.begin(), got.end());
  std::vector<std::string> want = ids;
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
  // And nothing twice: the next poll waits out its time.
  EXPECT_TRUE(PollOnce(*stub_a_, absl::Seconds(3)).task_token().empty());
}

// A host that joins takes shards whose tasks were stored before it came, for a queue
// another host owns and polls only there: it finds those queues itself (no poll touches its
// partition) and offers their tasks to the root.
class PartitionJoinTest : public PartitionTest {
 protected:
  // Waits (at most 20 s) until `host` logged that it owns its shards of a ring of two.
  static bool AppliedTheRingOfTwo(const ServerProcess& host) {
    for (const absl::Time until = absl::Now() + absl::Seconds(20); absl::Now() < until;
         absl::SleepFor(absl::Milliseconds(50))) {
      for (absl::string_view line : absl::StrSplit(host.stderr_text(), '\n')) {
        if (absl::StrContains(line, "history shards owned") &&
            absl::StrContains(line, "hosts=2")) {
          return true;
        }
      }
    }
    return false;
  }
};

TEST_F(PartitionJoinTest, AHostTakingShardsFindsTheirStoredTasksAndOffersThemToTheRoot) {
  const std::string metrics = "metrics: {ip: 127.0.0.1, port: 0}\n";
  a_ = std::make_unique<ServerProcess>(TOCK_SERVER_BIN);
  ASSERT_TRUE(a_->Start({"--config", Config("a.yaml", metrics)})) << a_->error();
  stub_a_ = Stub(*a_);
  ASSERT_TRUE(DescribeNamespace(*stub_a_, &namespace_id_).ok());
  // B's address, chosen before it starts, places the shards and the queue beforehand.
  const std::string b_address = absl::StrCat("127.0.0.1:", ClosedLocalPort());
  ring_ = std::make_unique<server::membership::HashRing>(
      std::vector<std::string>{a_->address(), b_address});
  queue_ = QueueOn(*a_, namespace_id_);
  std::vector<std::string> ids;
  for (int i = 0; ids.size() < 4 && i < 10000; ++i) {
    std::string id = absl::StrCat("early-", i);
    if (ring_->OwnerOfShard(server::history::ShardForWorkflow(namespace_id_, id, kShards)) ==
        b_address) {
      ids.push_back(std::move(id));
    }
  }
  ASSERT_EQ(ids.size(), 4u);
  // A alone: A's shards, A's queue; nobody polls.
  for (const std::string& id : ids) ASSERT_TRUE(StartWorkflow(*stub_a_, id, queue_).ok());

  b_ = std::make_unique<ServerProcess>(TOCK_SERVER_BIN, "listening on (\\S+)");
  ASSERT_TRUE(b_->Start({"--config", Config("b.yaml", metrics), "--port",
                         b_address.substr(b_address.rfind(':') + 1)}))
      << b_->error();
  ASSERT_EQ(b_->address(), b_address);
  std::map<int32_t, std::string> want;
  for (int32_t s = 1; s <= kShards; ++s) want[s] = ring_->OwnerOfShard(s);
  for (const absl::Time until = absl::Now() + absl::Seconds(20);
       StoredOwners() != want && absl::Now() < until;) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_EQ(StoredOwners(), want);
  // A has applied the ring of both (its queues forgotten, so it reads only its own shards'
  // tasks from now on): it logs so once done.
  ASSERT_TRUE(AppliedTheRingOfTwo(*a_)) << a_->stderr_text().substr(0, 4000);

  std::vector<std::string> got = TakeTasks(*stub_a_, ids.size());
  std::sort(got.begin(), got.end());
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(got, ids);
  EXPECT_TRUE(OffersReach(*b_, "taken", ids.size())) << "B offered the tasks of its new shards";
}

}  // namespace
}  // namespace tock::testing
