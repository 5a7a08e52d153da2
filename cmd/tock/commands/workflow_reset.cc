#include "cmd/tock/commands/workflow_reset.h"

#include <functional>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cmd/tock/commands/batch.h"
#include "cmd/tock/commands/batch_request.h"
#include "cmd/tock/commands/confirm.h"
#include "lib/admin/workflow_ops.h"
#include "lib/common/ids.h"

namespace tock::cli {
namespace {

namespace wf = temporal::api::workflowservice::v1;
namespace enums = temporal::api::enums::v1;
using temporal::api::history::v1::HistoryEvent;
using Stub = wf::WorkflowService::Stub;

bool Blank(const std::string& s) { return absl::StripAsciiWhitespace(s).empty(); }

enums::ResetReapplyType ReapplyType(const std::string& flag) {
  return flag == "None" ? enums::RESET_REAPPLY_TYPE_NONE : enums::RESET_REAPPLY_TYPE_SIGNAL;
}

// reset_reapply_type is deprecated in the API (for reset_reapply_exclude_types), but it is
// what the Temporal CLI and tctl send for --reapply-type and what every server reads.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
template <typename Message>
void SetReapplyType(Message& m, const std::string& flag) {
  m.set_reset_reapply_type(ReapplyType(flag));
}
#pragma GCC diagnostic pop

// ---- one workflow --------------------------------------------------------------------------

// Reads the history of run `run_id` into a scan, all pages; with `stop_at_first_completed`
// only up to the first WorkflowTaskCompleted event, with `first_event_only` only the first.
absl::StatusOr<ResetPointScan> Scan(CommandContext& ctx, client::Connection& c,
                                    const std::string& workflow_id, const std::string& run_id,
                                    bool stop_at_first_completed, bool first_event_only) {
  ResetPointScan scan;
  bool done = false;
  const absl::Status enough = absl::CancelledError("enough events read");
  absl::Status s = admin::ReadHistory(
      c, ctx.options.namespace_name, workflow_id, run_id,
      /*follow=*/false, [&](const HistoryEvent& e) {
        scan.Add(e);
        done = first_event_only || (stop_at_first_completed && scan.first_completed() != 0);
        return done ? enough : absl::OkStatus();
      });
  if (!s.ok() && !done) return s;
  return scan;
}

// The run and the event a --type reset goes to, found in the history (tctl's rules).
struct Point {
  std::string run_id;
  int64_t event_id = 0;
};

absl::StatusOr<Point> FindPoint(CommandContext& ctx, client::Connection& c, const ResetFlags& f) {
  std::string run_id = f.run_id;
  if (run_id.empty()) {
    // The run is fixed before its history is read, so the point and the run reset match
    // even when the workflow moves on meanwhile (the server refuses a run no longer current).
    auto d = admin::DescribeWorkflow(c, ctx.options.namespace_name, f.workflow_id, "");
    if (!d.ok()) return d.status();
    run_id = d->workflow_execution_info().execution().run_id();
  }
  if (f.type == kResetLastContinuedAsNew) {
    // The run that continued as new into this one, reset to its last workflow task.
    auto started = Scan(ctx, c, f.workflow_id, run_id, /*stop_at_first_completed=*/false,
                        /*first_event_only=*/true);
    if (!started.ok()) return started.status();
    if (started->continued_from().empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "run ", run_id, " of workflow ", f.workflow_id,
          " was not continued from another run: --type LastContinuedAsNew resets the run that "
          "continued as new into it"));
    }
    run_id = started->continued_from();
  }
  const bool first = f.type == kResetFirstWorkflowTask;
  auto scan = Scan(ctx, c, f.workflow_id, run_id, first, /*first_event_only=*/false);
  if (!scan.ok()) return scan.status();
  const int64_t event_id = first ? scan->first_completed() : scan->last_completed();
  if (event_id == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("run ", run_id, " of workflow ", f.workflow_id,
                     " has no completed workflow task to reset to (--type ", f.type, ")"));
  }
  return Point{run_id, event_id};
}

absl::Status RunReset(CommandContext& ctx, const ResetFlags& f) {
  auto printer = ctx.printer();
  if (!printer.ok()) return printer.status();
  auto c = ctx.connection();
  if (!c.ok()) return c.status();
  Point point{f.run_id, 0};
  if (!f.event_id.empty()) {
    absl::SimpleAtoi(f.event_id, &point.event_id);  // checked by CheckResetFlags
  } else {
    auto found = FindPoint(ctx, **c, f);
    if (!found.ok()) return found.status();
    point = *found;
  }
  const auto req = MakeResetRequest(ctx.options.namespace_name, f.workflow_id, point.run_id,
                                    point.event_id, f, (*c)->options().identity);
  auto out =
      (*c)->Call(&Stub::ResetWorkflowExecution, (*c)->workflow(), req, ctx.options.namespace_name);
  if (!out.ok()) return out.status();
  if (printer->format() == OutputFormat::kJson || printer->format() == OutputFormat::kJsonl) {
    printer->Object({{"workflowId", f.workflow_id}, {"runId", out->run_id()}}, {});
  } else {
    ctx.out << "Reset " << f.workflow_id << ": new run " << out->run_id() << "\n";
  }
  return absl::OkStatus();
}

// ---- a batch over a query ------------------------------------------------------------------

absl::Status RunResetBatch(CommandContext& ctx, const ResetFlags& f) {
  auto options = ToConnectionOptions(ctx.options);
  if (!options.ok()) return options.status();
  return StartAndFollowBatch(
      ctx, MakeResetBatchRequest(f, ctx.options.namespace_name, options->identity),
      "start batch reset", f.yes, /*no_wait=*/false);
}

}  // namespace

absl::Status CheckResetFlags(const ResetFlags& f) {
  const bool by_id = !f.workflow_id.empty();
  const bool by_query = !f.query.empty();
  if (by_id && by_query) {
    return absl::InvalidArgumentError(
        "--workflow-id and --query cannot be used together: reset one workflow, or start a "
        "batch over the workflows of a query");
  }
  if (!by_id && !by_query) {
    return absl::InvalidArgumentError(
        "give --workflow-id (reset one workflow) or --query (a batch over the workflows it "
        "matches)");
  }
  if (by_query) {
    if (Blank(f.query)) {
      return absl::InvalidArgumentError(
          "--query is empty: give the visibility query of the workflows to reset, e.g. "
          "\"WorkflowType = 'order' AND ExecutionStatus = 'Failed'\"");
    }
    if (!f.run_id.empty()) {
      return absl::InvalidArgumentError(
          "--run-id cannot be used with --query: a batch resets the run of each workflow the "
          "query matches");
    }
    if (!f.event_id.empty()) {
      return absl::InvalidArgumentError(
          "--event-id cannot be used with --query: event ids differ from run to run; give "
          "--type FirstWorkflowTask or LastWorkflowTask");
    }
    if (f.type.empty()) {
      return absl::InvalidArgumentError(
          "give --type with --query: FirstWorkflowTask or LastWorkflowTask");
    }
    if (f.type == kResetLastContinuedAsNew) {
      return absl::InvalidArgumentError(
          "--type LastContinuedAsNew cannot be used with --query: give FirstWorkflowTask or "
          "LastWorkflowTask");
    }
  } else {
    if (!f.event_id.empty() && !f.type.empty()) {
      return absl::InvalidArgumentError(
          "--event-id and --type cannot be used together: give one of them");
    }
    if (f.event_id.empty() && f.type.empty()) {
      return absl::InvalidArgumentError(
          "give --event-id or --type: the event to reset to (the id of a WorkflowTaskCompleted "
          "event), or FirstWorkflowTask, LastWorkflowTask or LastContinuedAsNew");
    }
    int64_t id = 0;
    if (!f.event_id.empty() && !absl::SimpleAtoi(f.event_id, &id)) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid --event-id \"", f.event_id,
                       "\": give the id of a WorkflowTaskCompleted event (tock workflow show "
                       "lists them)"));
    }
  }
  if (Blank(f.reason)) {
    return absl::InvalidArgumentError(
        "--reason is empty: say why (it is recorded in the new run's history)");
  }
  return absl::OkStatus();
}

void ResetPointScan::Add(const HistoryEvent& e) {
  switch (e.event_type()) {
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
      continued_from_ =
          e.workflow_execution_started_event_attributes().continued_execution_run_id();
      break;
    case enums::EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
      if (first_completed_ == 0) first_completed_ = e.event_id();
      last_completed_ = e.event_id();
      break;
    default:
      break;
  }
}

wf::ResetWorkflowExecutionRequest MakeResetRequest(const std::string& namespace_name,
                                                   const std::string& workflow_id,
                                                   const std::string& run_id, int64_t event_id,
                                                   const ResetFlags& flags,
                                                   const std::string& identity) {
  wf::ResetWorkflowExecutionRequest req;
  req.set_namespace_(namespace_name);
  req.mutable_workflow_execution()->set_workflow_id(workflow_id);
  req.mutable_workflow_execution()->set_run_id(run_id);
  req.set_reason(flags.reason);
  req.set_workflow_task_finish_event_id(event_id);
  req.set_request_id(NewUuid());
  SetReapplyType(req, flags.reapply_type);
  req.set_identity(identity);
  return req;
}

wf::StartBatchOperationRequest MakeResetBatchRequest(const ResetFlags& flags,
                                                     const std::string& namespace_name,
                                                     const std::string& identity) {
  wf::StartBatchOperationRequest req;
  req.set_namespace_(namespace_name);
  req.set_visibility_query(flags.query);
  req.set_reason(flags.reason);
  req.set_job_id(NewUuid());
  auto* op = req.mutable_reset_operation();
  op->set_identity(identity);
  auto* options = op->mutable_options();
  if (flags.type == kResetFirstWorkflowTask) {
    options->mutable_first_workflow_task();
  } else {
    options->mutable_last_workflow_task();
  }
  SetReapplyType(*options, flags.reapply_type);
  return req;
}

void AddWorkflowResetCommand(CLI::App& group, CommandContext& ctx) {
  auto f = std::make_shared<ResetFlags>();
  CLI::App* cmd = group.add_subcommand(
      "reset",
      "Reset a workflow to one of its workflow tasks: a new run replays its history up to "
      "there (the run in progress is terminated)");
  cmd->add_option("-w,--workflow-id", f->workflow_id, "Workflow id");
  cmd->add_option("-r,--run-id", f->run_id, "Run id to reset (default: the current run)");
  cmd->add_option("--query", f->query,
                  "Instead of --workflow-id: reset every workflow this visibility query "
                  "matches, as a batch job");
  cmd->add_option("-e,--event-id", f->event_id,
                  "The event to reset to: a WorkflowTaskCompleted (or WorkflowTaskStarted) "
                  "event id of the run");
  cmd->add_option("-t,--type", f->type,
                  "Instead of --event-id: reset to the first or the last completed workflow "
                  "task, or to the last one of the run that continued as new into this one")
      ->check(CLI::IsMember(
          {kResetFirstWorkflowTask, kResetLastWorkflowTask, kResetLastContinuedAsNew}));
  cmd->add_option("--reason", f->reason, "Why (recorded in the new run's history)")->required();
  cmd->add_option("--reapply-type", f->reapply_type,
                  "Signal: the signals received after the point are sent to the new run again; "
                  "None: they are not")
      ->check(CLI::IsMember({"Signal", "None"}))
      ->default_str("Signal");
  cmd->add_flag("-y,--yes", f->yes,
                "With --query: start at once, no count of the workflows and no question");
  cmd->footer(
      "The new run keeps the history up to the point, records there a WorkflowTaskFailed "
      "with cause ResetWorkflow, and gets a new workflow task; the run in progress is "
      "terminated and the new run becomes the current one. Prints the new run id ({\"workflowId\", "
      "\"runId\"} with -o json).\n"
      "\n"
      "Give exactly one of --event-id and --type. --type reads the run's history: "
      "FirstWorkflowTask is the first WorkflowTaskCompleted event, LastWorkflowTask the last "
      "one, and LastContinuedAsNew is tctl's: the last WorkflowTaskCompleted event of the run "
      "that continued as new into this one (named by this run's WorkflowExecutionStarted "
      "event), and that earlier run is the one reset. tock-server resets only a workflow's "
      "current run, so there it refuses LastContinuedAsNew (exit 1); Temporal servers accept "
      "it.\n"
      "\n"
      "With --query: a reset batch job to --type FirstWorkflowTask or LastWorkflowTask, found "
      "by the server in each run's history (no --event-id, no --run-id). As with tock batch, "
      "the command counts the matching workflows and asks on a terminal (--yes: neither; off a "
      "terminal --yes is required), then waits for the job: on a terminal with a progress bar "
      "and a summary, elsewhere printing the DescribeBatchOperationResponse at the end. Ctrl-C "
      "stops the waiting, not the job.\n"
      "\n"
      "Examples:\n"
      "  tock workflow reset --workflow-id order-7 --event-id 4 --reason \"bad deploy\"\n"
      "  tock workflow reset --workflow-id order-7 --type LastWorkflowTask --reason retry "
      "--reapply-type None\n"
      "  tock workflow reset --query \"WorkflowType = 'order' AND ExecutionStatus = 'Failed'\" "
      "--type FirstWorkflowTask --reason \"fixed bug\" --yes\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      // Bad flags are reported before connecting.
      if (absl::Status s = CheckResetFlags(*f); !s.ok()) return s;
      return f->query.empty() ? RunReset(ctx, *f) : RunResetBatch(ctx, *f);
    };
  });
}

}  // namespace tock::cli
