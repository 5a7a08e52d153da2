// The handler side's task RPCs over real gRPC (reference/api_2026.md §4.3): a
// PollNexusTaskQueue with nothing dispatched answers empty before its caller's deadline (and
// its poller is listed by DescribeTaskQueue of type NEXUS), and the worker's answers are
// checked as Temporal checks them. The dispatch and the round trip
// are covered on a manual clock in tests/unit/nexus_task_queues_test.cc.
#include <gtest/gtest.h>

#include "lib/client/connection.h"
#include "server-core/server.h"

namespace tock::server {
namespace {

namespace wf = temporal::api::workflowservice::v1;
using W = wf::WorkflowService::Stub;

TEST(NexusTaskTest, PollsAnswerEmptyAndAnswersAreChecked) {
  ServerConfig config;
  config.port = 0;
  auto server = TockServer::Start(config, RealClock());
  ASSERT_TRUE(server.ok()) << server.status();
  client::ConnectionOptions options;
  options.address = (*server)->address();
  options.timeout = absl::Milliseconds(2500);  // the poll waits until a second before it
  auto c = client::Connection::Open(options);
  ASSERT_TRUE(c.ok());

  wf::PollNexusTaskQueueRequest poll;
  poll.set_namespace_("default");
  poll.set_identity("handler");
  auto polled = (*c)->Call(&W::PollNexusTaskQueue, (*c)->workflow(), poll);
  EXPECT_EQ(polled.status().message(), "TaskQueue is not set on request.");
  poll.mutable_task_queue()->set_name("payments-handlers");
  const absl::Time before = absl::Now();
  polled = (*c)->Call(&W::PollNexusTaskQueue, (*c)->workflow(), poll);
  ASSERT_TRUE(polled.ok()) << polled.status();
  EXPECT_TRUE(polled->task_token().empty()) << "nothing was dispatched";
  EXPECT_GE(absl::Now() - before, absl::Milliseconds(1000)) << "it waited";

  // The queue's pollers and backlog, as DescribeTaskQueue shows a Nexus queue.
  wf::DescribeTaskQueueRequest describe;
  describe.set_namespace_("default");
  describe.mutable_task_queue()->set_name("payments-handlers");
  describe.set_task_queue_type(temporal::api::enums::v1::TASK_QUEUE_TYPE_NEXUS);
  describe.set_report_stats(true);
  auto described = (*c)->Call(&W::DescribeTaskQueue, (*c)->workflow(), describe);
  ASSERT_TRUE(described.ok()) << described.status();
  ASSERT_EQ(described->pollers_size(), 1);
  EXPECT_EQ(described->pollers(0).identity(), "handler");
  EXPECT_EQ(described->stats().approximate_backlog_count(), 0);
  describe.set_task_queue_type(temporal::api::enums::v1::TASK_QUEUE_TYPE_WORKFLOW);
  described = (*c)->Call(&W::DescribeTaskQueue, (*c)->workflow(), describe);
  ASSERT_TRUE(described.ok());
  EXPECT_EQ(described->pollers_size(), 0) << "no workflow poller";

  wf::RespondNexusTaskCompletedRequest done;
  done.set_namespace_("default");
  done.set_task_token("not-a-task");
  done.mutable_response()->mutable_start_operation()->mutable_sync_success();
  auto completed = (*c)->Call(&W::RespondNexusTaskCompleted, (*c)->workflow(), done);
  EXPECT_EQ(completed.status().code(), absl::StatusCode::kInvalidArgument);
  done.set_task_token("x/00000000-0000-4000-8000-000000000001/payments-handlers");
  completed = (*c)->Call(&W::RespondNexusTaskCompleted, (*c)->workflow(), done);
  EXPECT_EQ(completed.status().code(), absl::StatusCode::kInvalidArgument)
      << "a token of another namespace";

  wf::RespondNexusTaskFailedRequest failed;
  failed.set_namespace_("default");
  failed.set_task_token("any");
  auto refused = (*c)->Call(&W::RespondNexusTaskFailed, (*c)->workflow(), failed);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(), "request must contain error or failure");
  failed.mutable_failure()->set_message("not a handler error");
  refused = (*c)->Call(&W::RespondNexusTaskFailed, (*c)->workflow(), failed);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  (*server)->Shutdown();
}

}  // namespace
}  // namespace tock::server
