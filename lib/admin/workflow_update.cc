#include "lib/admin/workflow_update.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/admin/payloads.h"
#include "lib/common/ids.h"

namespace tock::admin {
namespace {

namespace enums = temporal::api::enums::v1;
namespace wf = temporal::api::workflowservice::v1;
using Stub = wf::WorkflowService::Stub;

constexpr UpdateStage kAccepted = enums::UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ACCEPTED;
constexpr UpdateStage kCompleted = enums::UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED;
constexpr UpdateStage kUnspecified = enums::UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_UNSPECIFIED;

// A long poll's own deadline: beyond the server's 20 s wait (tock-server and Temporal both
// answer with the stage reached so far when their wait ends before the caller's deadline).
constexpr absl::Duration kLongPollDeadline = absl::Seconds(30);

// Runs one long-polling call with kLongPollDeadline instead of the connection's --timeout.
template <typename Request, typename Response>
absl::StatusOr<Response> LongPoll(client::Connection& connection,
                                  grpc::Status (Stub::*method)(grpc::ClientContext*,
                                                               const Request&, Response*),
                                  const Request& request) {
  auto context = connection.NewContext(request.namespace_());
  context->set_deadline(absl::ToChronoTime(absl::Now() + kLongPollDeadline));
  Response response;
  grpc::Status status = (connection.workflow().*method)(context.get(), request, &response);
  if (!status.ok()) return connection.Translate(status);
  return response;
}

// The stage an answer stands for: an outcome means completed whatever the stage field says.
UpdateStage Reached(UpdateStage stage, bool has_outcome) { return has_outcome ? kCompleted : stage; }

// The answer as an UpdateStatus; `asked` fills what a server left out of the update ref.
template <typename Response>
UpdateStatus StatusOf(const Response& r, const temporal::api::update::v1::UpdateRef& asked) {
  const auto& ref = r.has_update_ref() ? r.update_ref() : asked;
  UpdateStatus out;
  out.workflow_id = ref.workflow_execution().workflow_id().empty()
                        ? asked.workflow_execution().workflow_id()
                        : ref.workflow_execution().workflow_id();
  out.run_id = ref.workflow_execution().run_id();
  out.update_id = ref.update_id().empty() ? asked.update_id() : ref.update_id();
  out.stage = Reached(r.stage(), r.has_outcome());
  if (r.has_outcome()) out.outcome = r.outcome();
  return out;
}

// Our own deadline passed before the server answered (a slow server, a paused process): the
// wait goes on with a new call, as the SDKs retry.
bool OwnDeadlinePassed(const absl::Status& s) {
  return s.code() == absl::StatusCode::kDeadlineExceeded;
}

}  // namespace

absl::StatusOr<wf::UpdateWorkflowExecutionRequest> MakeUpdateRequest(
    const UpdateWorkflowOptions& o, UpdateStage wait) {
  if (o.workflow_id.empty()) return absl::InvalidArgumentError("--workflow-id is required");
  if (absl::StripAsciiWhitespace(o.name).empty()) {
    return absl::InvalidArgumentError(
        "--name is empty: give the name of the workflow's update handler");
  }
  wf::UpdateWorkflowExecutionRequest req;
  req.set_namespace_(o.namespace_name);
  req.mutable_workflow_execution()->set_workflow_id(o.workflow_id);
  req.mutable_workflow_execution()->set_run_id(o.run_id);
  req.set_first_execution_run_id(o.first_execution_run_id);
  req.mutable_wait_policy()->set_lifecycle_stage(wait);
  auto* request = req.mutable_request();
  request->mutable_meta()->set_update_id(o.update_id.empty() ? NewUuid() : o.update_id);
  request->mutable_meta()->set_identity(o.identity);
  request->mutable_input()->set_name(o.name);
  auto* args = request->mutable_input()->mutable_args();
  for (const std::string& input : o.inputs) {
    auto payload = JsonPayload(input);
    if (!payload.ok()) return payload.status();
    *args->add_payloads() = *std::move(payload);
  }
  request->set_request_id(NewUuid());
  return req;
}

absl::StatusOr<UpdateStatus> UpdateWorkflow(client::Connection& connection,
                                            const wf::UpdateWorkflowExecutionRequest& request) {
  const UpdateStage wanted = request.wait_policy().lifecycle_stage();
  temporal::api::update::v1::UpdateRef asked;
  *asked.mutable_workflow_execution() = request.workflow_execution();
  asked.set_update_id(request.request().meta().update_id());
  UpdateStatus status;
  while (true) {
    auto r = LongPoll(connection, &Stub::UpdateWorkflowExecution, request);
    if (!r.ok()) {
      if (OwnDeadlinePassed(r.status())) continue;
      return r.status();
    }
    status = StatusOf(*r, asked);
    if (status.stage >= wanted) return status;
    // ACCEPTED while waiting for COMPLETED: the update is durable, poll for its outcome.
    if (status.stage == kAccepted) break;
    // ADMITTED (or nothing): no worker took it yet; the same update again.
  }
  return PollUpdate(connection, request.namespace_(), status.workflow_id, status.run_id,
                    status.update_id, wanted);
}

absl::StatusOr<UpdateStatus> PollUpdate(client::Connection& connection,
                                        const std::string& namespace_name,
                                        const std::string& workflow_id, const std::string& run_id,
                                        const std::string& update_id, UpdateStage wait) {
  wf::PollWorkflowExecutionUpdateRequest req;
  req.set_namespace_(namespace_name);
  auto* ref = req.mutable_update_ref();
  ref->mutable_workflow_execution()->set_workflow_id(workflow_id);
  ref->mutable_workflow_execution()->set_run_id(run_id);
  ref->set_update_id(update_id);
  req.set_identity(connection.options().identity);
  if (wait == kUnspecified) {
    // No wait policy: the server answers at once with where the update stands.
    auto r = connection.Call(&Stub::PollWorkflowExecutionUpdate, connection.workflow(), req,
                             namespace_name);
    if (!r.ok()) return r.status();
    return StatusOf(*r, req.update_ref());
  }
  req.mutable_wait_policy()->set_lifecycle_stage(wait);
  while (true) {
    auto r = LongPoll(connection, &Stub::PollWorkflowExecutionUpdate, req);
    if (!r.ok()) {
      if (OwnDeadlinePassed(r.status())) continue;
      return r.status();
    }
    UpdateStatus status = StatusOf(*r, req.update_ref());
    if (status.stage >= wait) return status;
    // The long poll ended first; follow the update into the run the server named.
    if (!status.run_id.empty()) {
      req.mutable_update_ref()->mutable_workflow_execution()->set_run_id(status.run_id);
    }
  }
}

}  // namespace tock::admin
