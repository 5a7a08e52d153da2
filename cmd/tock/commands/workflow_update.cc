#include "cmd/tock/commands/workflow_update.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cmd/tock/output/history_format.h"
#include "lib/admin/payloads.h"

namespace tock::cli {
namespace {

namespace enums = temporal::api::enums::v1;
using admin::UpdateStage;
using admin::UpdateStatus;

constexpr char kStagePrefix[] = "UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_";

// The flags of the four commands, as typed (each command uses its part).
struct UpdateFlags {
  std::string workflow_id;
  std::string run_id;
  std::string first_execution_run_id;
  std::string name;
  std::string update_id;
  std::string wait_for_stage;
  std::vector<std::string> inputs;
};

void AddTarget(CLI::App* cmd, UpdateFlags& f, const char* run_help) {
  cmd->add_option("-w,--workflow-id", f.workflow_id, "Workflow id")->required();
  cmd->add_option("-r,--run-id", f.run_id, run_help);
}

// The flags of the commands that send an update (execute, start).
void AddSendOptions(CLI::App* cmd, UpdateFlags& f) {
  AddTarget(cmd, f, "Run id (default: the current run)");
  cmd->add_option("--name", f.name, "Name of the workflow's update handler")->required();
  cmd->add_option("-i,--input", f.inputs, "An argument as JSON (repeatable: one per argument)");
  cmd->add_option("--update-id", f.update_id,
                  "Update id (default: a new UUID); sending an id again joins the update that "
                  "has it");
  cmd->add_option("--first-execution-run-id", f.first_execution_run_id,
                  "Send to the last run of the chain of runs that this run started (continue-as-"
                  "new, retries, cron)");
}

admin::UpdateWorkflowOptions SendOptions(const CommandContext& ctx, const UpdateFlags& f,
                                         const std::string& identity) {
  admin::UpdateWorkflowOptions o;
  o.namespace_name = ctx.options.namespace_name;
  o.workflow_id = f.workflow_id;
  o.run_id = f.run_id;
  o.first_execution_run_id = f.first_execution_run_id;
  o.name = f.name;
  o.update_id = f.update_id;
  o.inputs = f.inputs;
  o.identity = identity;
  return o;
}

nlohmann::json ResultValue(const temporal::api::common::v1::Payloads& payloads) {
  if (payloads.payloads_size() == 0) return nullptr;
  if (payloads.payloads_size() == 1) return admin::DecodePayload(payloads.payloads(0));
  nlohmann::json values = nlohmann::json::array();
  for (const auto& p : payloads.payloads()) values.push_back(admin::DecodePayload(p));
  return values;
}

// Prints where the update stands: its ids, the stage, and the result or failure when it is
// completed. JSON: {name?, updateId, workflowId, runId, stage, result? | failure?}, the field
// names of the Temporal CLI's output, the stage as the API's enum name.
absl::Status PrintStatus(CommandContext& ctx, const UpdateStatus& s, const std::string& name) {
  auto printer = ctx.printer();
  if (!printer.ok()) return printer.status();
  nlohmann::json json = nlohmann::json::object();
  CardRows card;
  if (!name.empty()) {
    json["name"] = name;
  }
  json["updateId"] = s.update_id;
  json["workflowId"] = s.workflow_id;
  json["runId"] = s.run_id;
  json["stage"] = enums::UpdateWorkflowExecutionLifecycleStage_Name(s.stage);
  card.emplace_back("Update id", s.update_id);
  if (!name.empty()) card.emplace_back("Name", name);
  card.emplace_back("Workflow id", s.workflow_id);
  card.emplace_back("Run id", s.run_id);
  card.emplace_back("Stage", EnumLabel(enums::UpdateWorkflowExecutionLifecycleStage_Name(s.stage),
                                       kStagePrefix));
  if (s.outcome && s.outcome->has_success()) {
    nlohmann::json result = ResultValue(s.outcome->success());
    json["result"] = result;
    card.emplace_back("Result", result.dump());
  } else if (s.outcome && s.outcome->has_failure()) {
    json["failure"] = DecodedJson(s.outcome->failure());
    card.emplace_back("Failure", s.outcome->failure().message());
  }
  printer->Object(json, card);
  return absl::OkStatus();
}

// `--wait-for-stage`: only "accepted" (in any case), as the Temporal CLI allows; "{accepted}"
// is the set completion and the man page read from the description.
CLI::Validator StageCheck() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (absl::AsciiStrToLower(value) == "accepted") {
          value = "accepted";
          return "";
        }
        return "the only stage to wait for is accepted (update execute waits for the update "
               "to complete)";
      },
      "{accepted}", "STAGE");
}

// ---- the commands ------------------------------------------------------------------------

// execute and start: send the update (bad input reported before connecting), wait for
// `stage`, print where it stands; a rejected or failed update is an error.
void SendOnRun(CLI::App* cmd, CommandContext& ctx, std::shared_ptr<UpdateFlags> f,
               enums::UpdateWorkflowExecutionLifecycleStage stage) {
  cmd->callback([&ctx, f, stage] {
    ctx.action = [&ctx, f, stage]() -> absl::Status {
      auto options = ToConnectionOptions(ctx.options);
      if (!options.ok()) return options.status();
      auto req = admin::MakeUpdateRequest(SendOptions(ctx, *f, options->identity), stage);
      if (!req.ok()) return req.status();
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto status = admin::UpdateWorkflow(**c, *req);
      if (!status.ok()) return status.status();
      if (absl::Status failed = UpdateFailure(*status); !failed.ok()) return failed;
      return PrintStatus(ctx, *status, f->name);
    };
  });
}

void AddExecute(CLI::App& update, CommandContext& ctx) {
  auto f = std::make_shared<UpdateFlags>();
  CLI::App* cmd = update.add_subcommand(
      "execute", "Send an update to a workflow and wait for its result");
  AddSendOptions(cmd, *f);
  cmd->footer(
      "The workflow's update handler runs in a workflow task, so a worker of the workflow's "
      "task queue must be polling; the command waits until the update completed (no limit: "
      "Ctrl-C stops the waiting, not the update). Prints the result, payloads that hold JSON "
      "or text decoded ({\"name\", \"updateId\", \"workflowId\", \"runId\", \"stage\", "
      "\"result\"} with -o json). When the workflow rejected the update (its validator) or the "
      "handler failed, prints the failure's message on stderr and exits 1. With an --update-id "
      "that was sent before, waits for that update instead of sending a second one.\n"
      "\n"
      "Examples:\n"
      "  tock workflow update execute --workflow-id order-7 --name set-address --input "
      "'{\"city\": \"Lyon\"}'\n"
      "  tock workflow update execute -w order-7 --name add-item --input 42 --input '\"gift\"' "
      "-o json | jq .result\n");
  SendOnRun(cmd, ctx, f, enums::UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED);
}

void AddStart(CLI::App& update, CommandContext& ctx) {
  auto f = std::make_shared<UpdateFlags>();
  CLI::App* cmd = update.add_subcommand(
      "start", "Send an update to a workflow and wait until the workflow accepted it");
  AddSendOptions(cmd, *f);
  cmd->add_option("--wait-for-stage", f->wait_for_stage,
                  "The stage to wait for: accepted (the only one, as in the Temporal CLI)")
      ->required()
      ->check(StageCheck());
  cmd->footer(
      "Returns once the workflow accepted the update (its validator passed), printing the "
      "update id and the run id ({\"name\", \"updateId\", \"workflowId\", \"runId\", "
      "\"stage\"} with -o json); the handler may still be running. Its outcome: tock workflow "
      "update result --update-id ID. When the workflow rejected the update, prints the "
      "rejection's message on stderr and exits 1.\n"
      "\n"
      "Examples:\n"
      "  tock workflow update start --workflow-id order-7 --name ship --wait-for-stage "
      "accepted\n"
      "  tock workflow update start -w order-7 --name ship --update-id ship-1 "
      "--wait-for-stage accepted -o json | jq -r .updateId\n");
  SendOnRun(cmd, ctx, f, enums::UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ACCEPTED);
}

void AddResult(CLI::App& update, CommandContext& ctx) {
  auto f = std::make_shared<UpdateFlags>();
  CLI::App* cmd =
      update.add_subcommand("result", "Wait for the result of an update sent before");
  AddTarget(cmd, *f, "Run id (default: the current run)");
  cmd->add_option("--update-id", f->update_id, "Update id")->required();
  cmd->footer(
      "Waits until the update completed (no limit: Ctrl-C stops the waiting), then prints "
      "its result as update execute does; a rejected or failed update prints the failure's "
      "message on stderr and exits 1. An update id the server does not know is exit 3.\n"
      "\n"
      "Example:\n"
      "  tock workflow update result --workflow-id order-7 --update-id ship-1\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto status = admin::PollUpdate(**c, ctx.options.namespace_name, f->workflow_id,
                                      f->run_id, f->update_id,
                                      enums::UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED);
      if (!status.ok()) return status.status();
      if (absl::Status failed = UpdateFailure(*status); !failed.ok()) return failed;
      return PrintStatus(ctx, *status, "");
    };
  });
}

void AddDescribe(CLI::App& update, CommandContext& ctx) {
  auto f = std::make_shared<UpdateFlags>();
  CLI::App* cmd = update.add_subcommand(
      "describe", "Show where an update stands: its stage, and its outcome once completed");
  AddTarget(cmd, *f, "Run id (default: the current run)");
  cmd->add_option("--update-id", f->update_id, "Update id")->required();
  cmd->footer(
      "Answers at once (no waiting): the stage (Admitted: sent, no worker took it yet; "
      "Accepted: the workflow accepted it, the handler runs; Completed) and, once completed, "
      "the result or the failure (a rejection is a failure). A failed update is described "
      "(exit 0), not an error; an update id the server does not know is exit 3.\n"
      "\n"
      "Example:\n"
      "  tock workflow update describe --workflow-id order-7 --update-id ship-1 -o json | jq "
      "-r .stage\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto status = admin::PollUpdate(**c, ctx.options.namespace_name, f->workflow_id,
                                      f->run_id, f->update_id,
                                      enums::UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_UNSPECIFIED);
      if (!status.ok()) return status.status();
      return PrintStatus(ctx, *status, "");
    };
  });
}

}  // namespace

absl::Status UpdateFailure(const UpdateStatus& status) {
  if (!status.outcome || !status.outcome->has_failure()) return absl::OkStatus();
  const std::string& message = status.outcome->failure().message();
  return absl::UnknownError(absl::StrCat("update ", admin::EchoQuoted(status.update_id),
                                         " of workflow ", admin::EchoQuoted(status.workflow_id),
                                         " failed: ", message.empty() ? "(no message)" : message));
}

void AddWorkflowUpdateCommand(CLI::App& group, CommandContext& ctx) {
  CLI::App* update = group.add_subcommand(
      "update", "Send updates to a workflow and read their results (execute, start, result, "
                "describe)");
  update->footer(
      "Examples:\n"
      "  tock workflow update execute --workflow-id order-7 --name set-address --input "
      "'{\"city\": \"Lyon\"}'\n"
      "  tock workflow update describe --workflow-id order-7 --update-id ship-1\n");
  AddExecute(*update, ctx);
  AddStart(*update, ctx);
  AddResult(*update, ctx);
  AddDescribe(*update, ctx);
}

}  // namespace tock::cli
