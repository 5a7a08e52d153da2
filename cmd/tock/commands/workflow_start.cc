#include "cmd/tock/commands/workflow_start.h"

#include "absl/strings/str_cat.h"
#include "cmd/tock/commands/search_attributes.h"
#include "lib/admin/payloads.h"
#include "lib/common/duration.h"
#include "lib/common/ids.h"
#include "lib/common/proto_time.h"

namespace tock::cli {
namespace {

namespace wf = temporal::api::workflowservice::v1;

// Sets the duration `field()` returns from `text` as typed; nothing when `text` is empty.
template <typename Field>
absl::Status SetDuration(const std::string& text, const char* flag, Field field) {
  if (text.empty()) return absl::OkStatus();
  auto d = ParseHumanDuration(text, BareNumberUnit::kSeconds);
  if (!d.ok() || *d <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid ", flag, " \"", text, "\": use a positive duration such as 30s or 1h"));
  }
  *field() = ToProtoDuration(*d);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<wf::StartWorkflowExecutionRequest> MakeStartWorkflowRequest(
    const StartFlags& flags) {
  const admin::StartWorkflowOptions& o = flags.options;
  if (o.workflow_type.empty()) return absl::InvalidArgumentError("--type is required");
  if (o.task_queue.empty()) return absl::InvalidArgumentError("--task-queue is required");
  wf::StartWorkflowExecutionRequest req;
  req.set_namespace_(o.namespace_name);
  req.set_workflow_id(o.workflow_id.empty() ? NewUuid() : o.workflow_id);
  req.mutable_workflow_type()->set_name(o.workflow_type);
  req.mutable_task_queue()->set_name(o.task_queue);
  for (const std::string& input : o.inputs) {
    auto payload = admin::JsonPayload(input);
    if (!payload.ok()) return payload.status();
    *req.mutable_input()->add_payloads() = *std::move(payload);
  }
  if (auto st = SetDuration(o.execution_timeout, "--execution-timeout",
                            [&] { return req.mutable_workflow_execution_timeout(); });
      !st.ok()) {
    return st;
  }
  if (auto st = SetDuration(o.run_timeout, "--run-timeout",
                            [&] { return req.mutable_workflow_run_timeout(); });
      !st.ok()) {
    return st;
  }
  if (auto st = SetDuration(o.task_timeout, "--task-timeout",
                            [&] { return req.mutable_workflow_task_timeout(); });
      !st.ok()) {
    return st;
  }
  req.set_cron_schedule(o.cron_schedule);
  if (auto st = SetDuration(o.start_delay, "--start-delay",
                            [&] { return req.mutable_workflow_start_delay(); });
      !st.ok()) {
    return st;
  }
  if (!flags.search_attributes.empty()) {
    auto attributes = ParseSearchAttributeFlags(flags.search_attributes);
    if (!attributes.ok()) return attributes.status();
    *req.mutable_search_attributes() = *std::move(attributes);
  }
  req.set_identity(o.identity);
  req.set_request_id(NewUuid());
  return req;
}

absl::StatusOr<admin::StartedWorkflow> StartWorkflow(
    client::Connection& connection, const wf::StartWorkflowExecutionRequest& request) {
  auto out = connection.Call(&wf::WorkflowService::Stub::StartWorkflowExecution,
                             connection.workflow(), request, request.namespace_());
  if (!out.ok()) return out.status();
  return admin::StartedWorkflow{request.workflow_id(), out->run_id()};
}

}  // namespace tock::cli
