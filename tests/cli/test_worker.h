// A worker made of raw WorkflowService calls, for the CLI tests that need one side of the
// conversation a real SDK worker would hold: take a workflow task and answer it with chosen
// commands, take an activity task (so the activity is started), answer a query task, answer
// the update requests a workflow task carries with protocol messages (accept, reject, respond).
// Every call has a deadline; a failed call fails the test (and returns an empty response).
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "temporal/api/protocol/v1/message.pb.h"
#include "temporal/api/update/v1/message.pb.h"
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

  // `messages`: protocol messages (update acceptances, rejections, responses) sent with the
  // commands; an acceptance or response also needs its ProtocolMessage command among them.
  void CompleteWorkflowTask(const std::string& token,
                            std::vector<temporal::api::command::v1::Command> commands = {},
                            std::vector<temporal::api::protocol::v1::Message> messages = {}) {
    temporal::api::workflowservice::v1::RespondWorkflowTaskCompletedRequest req;
    req.set_namespace_(namespace_);
    req.set_task_token(token);
    req.set_identity("test-worker");
    for (auto& c : commands) *req.add_commands() = std::move(c);
    for (auto& m : messages) *req.add_messages() = std::move(m);
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

  // ---- updates (protocol messages) ----------------------------------------------------------

  // The update requests ("<update id>/request" messages) a workflow task carries, in order.
  static std::vector<temporal::api::protocol::v1::Message> UpdateRequests(
      const temporal::api::workflowservice::v1::PollWorkflowTaskQueueResponse& task) {
    std::vector<temporal::api::protocol::v1::Message> out;
    for (const auto& m : task.messages()) {
      if (m.body().Is<temporal::api::update::v1::Request>()) out.push_back(m);
    }
    return out;
  }

  // The update's input as carried by its request message: name and first argument (JSON).
  static temporal::api::update::v1::Request UpdateRequestBody(
      const temporal::api::protocol::v1::Message& request) {
    temporal::api::update::v1::Request body;
    EXPECT_TRUE(request.body().UnpackTo(&body)) << request.body().type_url();
    return body;
  }

  // "<update id>/accept": the workflow accepted the update (its validator passed).
  static temporal::api::protocol::v1::Message AcceptUpdate(
      const temporal::api::protocol::v1::Message& request) {
    temporal::api::update::v1::Acceptance acceptance;
    acceptance.set_accepted_request_message_id(request.id());
    acceptance.set_accepted_request_sequencing_event_id(request.event_id());
    *acceptance.mutable_accepted_request() = UpdateRequestBody(request);
    return UpdateMessage(request, "/accept", acceptance);
  }

  // "<update id>/reject": the workflow's validator refused the update with `message`.
  static temporal::api::protocol::v1::Message RejectUpdate(
      const temporal::api::protocol::v1::Message& request, const std::string& message) {
    temporal::api::update::v1::Rejection rejection;
    rejection.set_rejected_request_message_id(request.id());
    rejection.set_rejected_request_sequencing_event_id(request.event_id());
    *rejection.mutable_rejected_request() = UpdateRequestBody(request);
    *rejection.mutable_failure() = ApplicationFailure(message);
    return UpdateMessage(request, "/reject", rejection);
  }

  // "<update id>/complete": the handler returned one "json/plain" payload holding `json`.
  static temporal::api::protocol::v1::Message CompleteUpdate(
      const temporal::api::protocol::v1::Message& request, const std::string& json) {
    temporal::api::update::v1::Response response;
    response.mutable_meta()->set_update_id(request.protocol_instance_id());
    auto* payload = response.mutable_outcome()->mutable_success()->add_payloads();
    (*payload->mutable_metadata())["encoding"] = "json/plain";
    payload->set_data(json);
    return UpdateMessage(request, "/complete", response);
  }

  // "<update id>/complete": the handler failed with `message`.
  static temporal::api::protocol::v1::Message FailUpdate(
      const temporal::api::protocol::v1::Message& request, const std::string& message) {
    temporal::api::update::v1::Response response;
    response.mutable_meta()->set_update_id(request.protocol_instance_id());
    *response.mutable_outcome()->mutable_failure() = ApplicationFailure(message);
    return UpdateMessage(request, "/complete", response);
  }

  // The ProtocolMessage command that places `message` (an acceptance or a response) among the
  // commands.
  static temporal::api::command::v1::Command ProtocolMessageCommand(
      const temporal::api::protocol::v1::Message& message) {
    temporal::api::command::v1::Command command;
    command.set_command_type(temporal::api::enums::v1::COMMAND_TYPE_PROTOCOL_MESSAGE);
    command.mutable_protocol_message_command_attributes()->set_message_id(message.id());
    return command;
  }

  // A CompleteWorkflowExecution command with one "json/plain" result payload holding `json`.
  static temporal::api::command::v1::Command CompleteWorkflowCommand(const std::string& json) {
    temporal::api::command::v1::Command command;
    command.set_command_type(temporal::api::enums::v1::COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION);
    auto* payload = command.mutable_complete_workflow_execution_command_attributes()
                        ->mutable_result()
                        ->add_payloads();
    (*payload->mutable_metadata())["encoding"] = "json/plain";
    payload->set_data(json);
    return command;
  }

 private:
  static temporal::api::failure::v1::Failure ApplicationFailure(const std::string& message) {
    temporal::api::failure::v1::Failure failure;
    failure.set_message(message);
    failure.set_source("test-worker");
    failure.mutable_application_failure_info()->set_type("Error");
    return failure;
  }

  template <typename Body>
  static temporal::api::protocol::v1::Message UpdateMessage(
      const temporal::api::protocol::v1::Message& request, const char* suffix, const Body& body) {
    temporal::api::protocol::v1::Message m;
    m.set_id(request.protocol_instance_id() + suffix);
    m.set_protocol_instance_id(request.protocol_instance_id());
    m.mutable_body()->PackFrom(body);
    return m;
  }

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
