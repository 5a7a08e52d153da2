#include "lib/admin/workflow_ops.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/admin/archival_ops.h"
#include "lib/admin/payloads.h"
#include "lib/common/duration.h"
#include "lib/common/ids.h"
#include "lib/common/proto_time.h"

namespace tock::admin {
namespace {

namespace enums = temporal::api::enums::v1;
using Stub = temporal::api::workflowservice::v1::WorkflowService::Stub;
using temporal::api::history::v1::HistoryEvent;

absl::StatusOr<temporal::api::common::v1::Payloads> Inputs(const std::vector<std::string>& inputs) {
  temporal::api::common::v1::Payloads payloads;
  for (const std::string& input : inputs) {
    auto payload = JsonPayload(input);
    if (!payload.ok()) return payload.status();
    *payloads.add_payloads() = *payload;
  }
  return payloads;
}

absl::Status SetDuration(const std::string& text, const char* flag,
                         google::protobuf::Duration* out) {
  if (text.empty()) return absl::OkStatus();
  auto d = ParseHumanDuration(text, BareNumberUnit::kSeconds);
  if (!d.ok() || *d <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid ", flag, " \"", text, "\": use a positive duration such as 30s or 1h"));
  }
  *out = ToProtoDuration(*d);
  return absl::OkStatus();
}

// The run that follows a closed one (continue-as-new, retry, cron), if any.
std::string NextRun(const HistoryEvent& close) {
  switch (close.event_type()) {
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
      return close.workflow_execution_continued_as_new_event_attributes().new_execution_run_id();
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
      return close.workflow_execution_completed_event_attributes().new_execution_run_id();
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
      return close.workflow_execution_failed_event_attributes().new_execution_run_id();
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
      return close.workflow_execution_timed_out_event_attributes().new_execution_run_id();
    default:
      return "";
  }
}

absl::Status FromGrpcStatusNamed(const client::Connection& connection, const grpc::Status& status) {
  return status.ok() ? absl::OkStatus() : connection.Translate(status);
}

}  // namespace

absl::StatusOr<StartedWorkflow> StartWorkflow(client::Connection& connection,
                                              const StartWorkflowOptions& o) {
  if (o.workflow_type.empty()) return absl::InvalidArgumentError("--type is required");
  if (o.task_queue.empty()) return absl::InvalidArgumentError("--task-queue is required");
  wf::StartWorkflowExecutionRequest req;
  req.set_namespace_(o.namespace_name);
  req.set_workflow_id(o.workflow_id.empty() ? NewUuid() : o.workflow_id);
  req.mutable_workflow_type()->set_name(o.workflow_type);
  req.mutable_task_queue()->set_name(o.task_queue);
  auto inputs = Inputs(o.inputs);
  if (!inputs.ok()) return inputs.status();
  if (inputs->payloads_size() > 0) *req.mutable_input() = *inputs;
  if (auto s = SetDuration(o.execution_timeout, "--execution-timeout",
                           req.mutable_workflow_execution_timeout());
      !s.ok()) {
    return s;
  }
  if (auto s = SetDuration(o.run_timeout, "--run-timeout", req.mutable_workflow_run_timeout()); !s.ok()) {
    return s;
  }
  if (auto s = SetDuration(o.task_timeout, "--task-timeout", req.mutable_workflow_task_timeout()); !s.ok()) {
    return s;
  }
  req.set_cron_schedule(o.cron_schedule);
  if (auto s = SetDuration(o.start_delay, "--start-delay", req.mutable_workflow_start_delay());
      !s.ok()) {
    return s;
  }
  req.set_identity(o.identity);
  req.set_request_id(NewUuid());
  auto out = connection.Call(&Stub::StartWorkflowExecution, connection.workflow(), req, o.namespace_name);
  if (!out.ok()) return out.status();
  return StartedWorkflow{req.workflow_id(), out->run_id()};
}

absl::StatusOr<HistoryEvent> WaitForResult(client::Connection& connection,
                                           const std::string& ns, const std::string& workflow_id,
                                           const std::string& run_id, absl::Duration timeout) {
  const absl::Time deadline =
      timeout > absl::ZeroDuration() ? absl::Now() + timeout : absl::InfiniteFuture();
  std::string run = run_id;
  while (true) {
    wf::GetWorkflowExecutionHistoryRequest req;
    req.set_namespace_(ns);
    req.mutable_execution()->set_workflow_id(workflow_id);
    req.mutable_execution()->set_run_id(run);
    req.set_wait_new_event(true);
    req.set_history_event_filter_type(enums::HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT);
    // A long poll: the call's own deadline must outlast the server's 20 s wait.
    auto context = connection.NewContext(ns);
    context->set_deadline(absl::ToChronoTime(std::min(deadline, absl::Now() + absl::Seconds(30))));
    wf::GetWorkflowExecutionHistoryResponse resp;
    absl::Status s = FromGrpcStatusNamed(
        connection, connection.workflow().GetWorkflowExecutionHistory(context.get(), req, &resp));
    if (!s.ok()) {
      if (s.code() != absl::StatusCode::kDeadlineExceeded || absl::Now() >= deadline) return s;
      continue;
    }
    if (resp.history().events_size() == 0) {
      if (absl::Now() >= deadline) {
        return absl::DeadlineExceededError(absl::StrCat("workflow ", workflow_id,
                                                        " did not close within the timeout"));
      }
      continue;
    }
    const HistoryEvent& close = resp.history().events(resp.history().events_size() - 1);
    std::string next = NextRun(close);
    if (next.empty()) return close;
    run = next;
  }
}

absl::StatusOr<wf::DescribeWorkflowExecutionResponse> DescribeWorkflow(
    client::Connection& connection, const std::string& ns, const std::string& workflow_id,
    const std::string& run_id) {
  wf::DescribeWorkflowExecutionRequest req;
  req.set_namespace_(ns);
  req.mutable_execution()->set_workflow_id(workflow_id);
  req.mutable_execution()->set_run_id(run_id);
  return connection.Call(&Stub::DescribeWorkflowExecution, connection.workflow(), req, ns);
}

absl::Status ReadHistory(client::Connection& connection, const std::string& ns,
                         const std::string& workflow_id, const std::string& run_id, bool follow,
                         const std::function<absl::Status(const HistoryEvent&)>& each,
                         const std::function<bool()>& stop) {
  wf::GetWorkflowExecutionHistoryRequest req;
  req.set_namespace_(ns);
  req.mutable_execution()->set_workflow_id(workflow_id);
  req.mutable_execution()->set_run_id(run_id);
  req.set_wait_new_event(follow);
  while (!stop()) {
    auto context = connection.NewContext(ns);
    if (follow) context->set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    wf::GetWorkflowExecutionHistoryResponse resp;
    absl::Status s = FromGrpcStatusNamed(
        connection, connection.workflow().GetWorkflowExecutionHistory(context.get(), req, &resp));
    if (!s.ok()) {
      if (follow && s.code() == absl::StatusCode::kDeadlineExceeded) continue;
      // A workflow whose runs are all gone (deleted after their retention): its latest
      // archived run, which the server reads from the archive.
      if (s.code() == absl::StatusCode::kNotFound && req.execution().run_id().empty()) {
        auto archived = FindArchivedRun(connection, ns, workflow_id, "");
        if (archived.ok()) {
          req.mutable_execution()->set_run_id(archived->execution().run_id());
          continue;
        }
      }
      return s;
    }
    bool closed = false;
    for (const HistoryEvent& e : resp.history().events()) {
      if (absl::Status s2 = each(e); !s2.ok()) return s2;
      closed |= e.event_type() >= enums::EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED &&
                e.event_type() <= enums::EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT;
      closed |= e.event_type() == enums::EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED ||
                e.event_type() == enums::EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED ||
                e.event_type() == enums::EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW;
    }
    if (resp.next_page_token().empty() || (follow && closed)) return absl::OkStatus();
    req.set_next_page_token(resp.next_page_token());
  }
  return absl::OkStatus();
}

absl::Status SignalWorkflow(client::Connection& connection, const std::string& ns,
                            const std::string& workflow_id, const std::string& run_id,
                            const std::string& signal_name, const std::vector<std::string>& inputs) {
  wf::SignalWorkflowExecutionRequest req;
  req.set_namespace_(ns);
  req.mutable_workflow_execution()->set_workflow_id(workflow_id);
  req.mutable_workflow_execution()->set_run_id(run_id);
  req.set_signal_name(signal_name);
  auto payloads = Inputs(inputs);
  if (!payloads.ok()) return payloads.status();
  if (payloads->payloads_size() > 0) *req.mutable_input() = *payloads;
  req.set_identity("tock");
  req.set_request_id(NewUuid());
  return connection.Call(&Stub::SignalWorkflowExecution, connection.workflow(), req, ns).status();
}

absl::StatusOr<wf::QueryWorkflowResponse> QueryWorkflow(
    client::Connection& connection, const std::string& ns, const std::string& workflow_id,
    const std::string& run_id, const std::string& query_type, const std::vector<std::string>& inputs) {
  wf::QueryWorkflowRequest req;
  req.set_namespace_(ns);
  req.mutable_execution()->set_workflow_id(workflow_id);
  req.mutable_execution()->set_run_id(run_id);
  req.mutable_query()->set_query_type(query_type);
  auto payloads = Inputs(inputs);
  if (!payloads.ok()) return payloads.status();
  if (payloads->payloads_size() > 0) *req.mutable_query()->mutable_query_args() = *payloads;
  return connection.Call(&Stub::QueryWorkflow, connection.workflow(), req, ns);
}

absl::Status CancelWorkflow(client::Connection& connection, const std::string& ns,
                            const std::string& workflow_id, const std::string& run_id,
                            const std::string& reason) {
  wf::RequestCancelWorkflowExecutionRequest req;
  req.set_namespace_(ns);
  req.mutable_workflow_execution()->set_workflow_id(workflow_id);
  req.mutable_workflow_execution()->set_run_id(run_id);
  req.set_identity("tock");
  req.set_request_id(NewUuid());
  req.set_reason(reason);
  return connection.Call(&Stub::RequestCancelWorkflowExecution, connection.workflow(), req, ns).status();
}

absl::Status TerminateWorkflow(client::Connection& connection, const std::string& ns,
                               const std::string& workflow_id, const std::string& run_id,
                               const std::string& reason) {
  wf::TerminateWorkflowExecutionRequest req;
  req.set_namespace_(ns);
  req.mutable_workflow_execution()->set_workflow_id(workflow_id);
  req.mutable_workflow_execution()->set_run_id(run_id);
  req.set_reason(reason);
  req.set_identity("tock");
  return connection.Call(&Stub::TerminateWorkflowExecution, connection.workflow(), req, ns).status();
}

absl::Status DeleteWorkflow(client::Connection& connection, const std::string& ns,
                            const std::string& workflow_id, const std::string& run_id) {
  wf::DeleteWorkflowExecutionRequest req;
  req.set_namespace_(ns);
  req.mutable_workflow_execution()->set_workflow_id(workflow_id);
  req.mutable_workflow_execution()->set_run_id(run_id);
  return connection.Call(&Stub::DeleteWorkflowExecution, connection.workflow(), req, ns).status();
}

absl::Status ListWorkflows(client::Connection& connection, const std::string& ns,
                           const std::string& query, int64_t limit,
                           const std::function<absl::Status(const temporal::api::workflow::v1::WorkflowExecutionInfo&)>& each) {
  wf::ListWorkflowExecutionsRequest req;
  req.set_namespace_(ns);
  req.set_query(query);
  req.set_page_size(limit > 0 && limit < 1000 ? static_cast<int32_t>(limit) : 1000);
  int64_t seen = 0;
  while (true) {
    auto page = connection.Call(&Stub::ListWorkflowExecutions, connection.workflow(), req, ns);
    if (!page.ok()) return page.status();
    for (const auto& e : page->executions()) {
      if (limit > 0 && seen >= limit) return absl::OkStatus();
      if (absl::Status s = each(e); !s.ok()) return s;
      ++seen;
    }
    if (page->next_page_token().empty() || (limit > 0 && seen >= limit)) return absl::OkStatus();
    req.set_next_page_token(page->next_page_token());
  }
}

absl::StatusOr<int64_t> CountWorkflows(client::Connection& connection, const std::string& ns,
                                       const std::string& query) {
  wf::CountWorkflowExecutionsRequest req;
  req.set_namespace_(ns);
  req.set_query(query);
  auto out = connection.Call(&Stub::CountWorkflowExecutions, connection.workflow(), req, ns);
  if (!out.ok()) return out.status();
  return out->count();
}

}  // namespace tock::admin
