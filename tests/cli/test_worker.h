// A worker made of raw WorkflowService calls, for the CLI tests that need one side of the
// conversation a real SDK worker would hold: take a workflow task and answer it with chosen
// commands, take an activity task (so the activity is started), answer a query task.
// Every call has a deadline; a failed call fails the test (and returns an empty response).
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "temporal/api/workflowservice/v1/service.grpc.pb.h"

namespace tock::testing {

class TestWorker {
 public:
  TestWorker(const std::string& address, std::string task_queue,
             std::string namespace_name = "default")
      : stub_(temporal::api::workflowservice::v1::WorkflowService::NewStub(
            grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))),
        task_queue_(std::move(task_queue)),
        namespace_(std::move(namespace_name)) {}

  // The next workflow task (or query task) of the queue; empty task_token when none came.
  temporal::api::workflowservice::v1::PollWorkflowTaskQueueResponse PollWorkflowTask() {
    temporal::api::workflowservice::v1::PollWorkflowTaskQueueRequest req;
    req.set_namespace_(namespace_);
    req.mutable_task_queue()->set_name(task_queue_);
    req.set_identity("test-worker");
    temporal::api::workflowservice::v1::PollWorkflowTaskQueueResponse out;
    Expect(stub_->PollWorkflowTaskQueue(Context(30).get(), req, &out), "PollWorkflowTaskQueue");
    return out;
  }

  void CompleteWorkflowTask(const std::string& token,
                            std::vector<temporal::api::command::v1::Command> commands = {}) {
    temporal::api::workflowservice::v1::RespondWorkflowTaskCompletedRequest req;
    req.set_namespace_(namespace_);
    req.set_task_token(token);
    req.set_identity("test-worker");
    for (auto& c : commands) *req.add_commands() = std::move(c);
    temporal::api::workflowservice::v1::RespondWorkflowTaskCompletedResponse out;
    Expect(stub_->RespondWorkflowTaskCompleted(Context(10).get(), req, &out),
           "RespondWorkflowTaskCompleted");
  }

  // A ScheduleActivityTask command for this queue, one minute to run.
  temporal::api::command::v1::Command ScheduleActivity(const std::string& activity_id) const {
    temporal::api::command::v1::Command command;
    command.set_command_type(temporal::api::enums::v1::COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK);
    auto* a = command.mutable_schedule_activity_task_command_attributes();
    a->set_activity_id(activity_id);
    a->mutable_activity_type()->set_name(activity_id);
    a->mutable_task_queue()->set_name(task_queue_);
    a->mutable_start_to_close_timeout()->set_seconds(60);
    return command;
  }

  // Takes the next activity task: the activity is started from then on.
  temporal::api::workflowservice::v1::PollActivityTaskQueueResponse PollActivityTask() {
    temporal::api::workflowservice::v1::PollActivityTaskQueueRequest req;
    req.set_namespace_(namespace_);
    req.mutable_task_queue()->set_name(task_queue_);
    req.set_identity("test-worker");
    temporal::api::workflowservice::v1::PollActivityTaskQueueResponse out;
    Expect(stub_->PollActivityTaskQueue(Context(30).get(), req, &out), "PollActivityTaskQueue");
    return out;
  }

  // Answers a query task with one "json/plain" payload holding `json`.
  void AnswerQuery(const std::string& token, const std::string& json) {
    temporal::api::workflowservice::v1::RespondQueryTaskCompletedRequest req;
    req.set_namespace_(namespace_);
    req.set_task_token(token);
    req.set_completed_type(temporal::api::enums::v1::QUERY_RESULT_TYPE_ANSWERED);
    auto* payload = req.mutable_query_result()->add_payloads();
    (*payload->mutable_metadata())["encoding"] = "json/plain";
    payload->set_data(json);
    temporal::api::workflowservice::v1::RespondQueryTaskCompletedResponse out;
    Expect(stub_->RespondQueryTaskCompleted(Context(10).get(), req, &out),
           "RespondQueryTaskCompleted");
  }

 private:
  static std::unique_ptr<grpc::ClientContext> Context(int seconds) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
    return context;
  }

  static void Expect(const grpc::Status& status, const char* call) {
    EXPECT_TRUE(status.ok()) << call << ": " << status.error_code() << " "
                             << status.error_message();
  }

  std::unique_ptr<temporal::api::workflowservice::v1::WorkflowService::Stub> stub_;
  std::string task_queue_;
  std::string namespace_;
};

}  // namespace tock::testing
