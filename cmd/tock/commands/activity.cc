#include "cmd/tock/commands/activity.h"

#include <memory>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace tock::cli {
namespace {

namespace wf = temporal::api::workflowservice::v1;
using Stub = wf::WorkflowService::Stub;

// Flags every activity command shares: which activity of which run.
struct ActivityTarget {
  std::string workflow_id;
  std::string run_id;
  std::string activity_id;
};

void AddTarget(CLI::App* cmd, ActivityTarget& t) {
  cmd->add_option("-w,--workflow-id", t.workflow_id, "Workflow id")->required();
  cmd->add_option("-r,--run-id", t.run_id, "Run id (default: the current run)");
  cmd->add_option("--activity-id", t.activity_id, "Activity id (as the workflow scheduled it)")
      ->required();
}

// `text` as a "json/plain" payload; INVALID_ARGUMENT naming `flag` when it is not JSON.
absl::StatusOr<temporal::api::common::v1::Payloads> JsonPayloads(const std::string& flag,
                                                                 const std::string& text) {
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_discarded()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid ", flag, " \"", text,
                     "\": give one JSON value, for example '\"done\"', 42 or '{\"k\": 1}'"));
  }
  temporal::api::common::v1::Payloads payloads;
  auto* payload = payloads.add_payloads();
  (*payload->mutable_metadata())["encoding"] = "json/plain";
  payload->set_data(parsed.dump());
  return payloads;
}

absl::Status PrintDone(CommandContext& ctx, const ActivityTarget& t, const char* result) {
  auto printer = ctx.printer();
  if (!printer.ok()) return printer.status();
  printer->Object(
      {{"workflowId", t.workflow_id}, {"activityId", t.activity_id}, {"result", result}},
      {{"Workflow id", t.workflow_id}, {"Activity id", t.activity_id}, {"Result", result}});
  return absl::OkStatus();
}

void AddComplete(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    ActivityTarget target;
    std::string result;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand(
      "complete", "Complete a running activity with a result, as its worker would");
  AddTarget(cmd, f->target);
  cmd->add_option("--result", f->result, "The activity's result as JSON")->required();
  cmd->footer(
      "Examples:\n"
      "  tock activity complete --workflow-id order-7 --activity-id 5 --result '{\"ok\": true}'\n"
      "  tock activity complete --workflow-id order-7 --activity-id charge --result '\"paid\"'\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      auto result = JsonPayloads("--result", f->result);
      if (!result.ok()) return result.status();
      wf::RespondActivityTaskCompletedByIdRequest req;
      req.set_namespace_(ctx.options.namespace_name);
      req.set_workflow_id(f->target.workflow_id);
      req.set_run_id(f->target.run_id);
      req.set_activity_id(f->target.activity_id);
      *req.mutable_result() = *result;
      req.set_identity("tock");
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto out = (*c)->Call(&Stub::RespondActivityTaskCompletedById, (*c)->workflow(), req,
                            ctx.options.namespace_name);
      if (!out.ok()) return out.status();
      return PrintDone(ctx, f->target, "completed");
    };
  });
}

void AddFail(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    ActivityTarget target;
    std::string reason;
    std::string detail;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand(
      "fail", "Fail a running activity (non-retryable: the workflow sees the failure now)");
  AddTarget(cmd, f->target);
  cmd->add_option("--reason", f->reason, "The failure's message")->required();
  cmd->add_option("--detail", f->detail, "Details of the failure as JSON");
  cmd->footer(
      "Examples:\n"
      "  tock activity fail --workflow-id order-7 --activity-id 5 --reason \"card declined\"\n"
      "  tock activity fail --workflow-id order-7 --activity-id 5 --reason timeout --detail "
      "'{\"after\": \"30s\"}'\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      wf::RespondActivityTaskFailedByIdRequest req;
      req.set_namespace_(ctx.options.namespace_name);
      req.set_workflow_id(f->target.workflow_id);
      req.set_run_id(f->target.run_id);
      req.set_activity_id(f->target.activity_id);
      // As the Temporal CLI fails one: an application failure that is not retried.
      auto* failure = req.mutable_failure();
      failure->set_message(f->reason);
      failure->set_source("tock");
      auto* info = failure->mutable_application_failure_info();
      info->set_non_retryable(true);
      if (!f->detail.empty()) {
        auto detail = JsonPayloads("--detail", f->detail);
        if (!detail.ok()) return detail.status();
        *info->mutable_details() = *detail;
      }
      req.set_identity("tock");
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto out = (*c)->Call(&Stub::RespondActivityTaskFailedById, (*c)->workflow(), req,
                            ctx.options.namespace_name);
      if (!out.ok()) return out.status();
      return PrintDone(ctx, f->target, "failed");
    };
  });
}

}  // namespace

void AddActivityCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* group = app.add_subcommand(
      "activity", "Complete or fail a workflow's activity from outside its worker");
  group->require_subcommand(1);
  group->footer(
      "Examples:\n"
      "  tock activity complete --workflow-id order-7 --activity-id 5 --result '\"done\"'\n"
      "  tock activity fail --workflow-id order-7 --activity-id 5 --reason \"card declined\"\n");
  AddComplete(*group, ctx);
  AddFail(*group, ctx);
}

}  // namespace tock::cli
