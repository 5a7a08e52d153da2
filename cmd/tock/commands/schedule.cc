#include "cmd/tock/commands/schedule.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "cmd/tock/commands/schedule_request.h"
#include "cmd/tock/output/history_format.h"
#include "lib/common/ids.h"
#include "lib/common/proto_json.h"
#include "lib/common/time_format.h"

namespace tock::cli {
namespace {

namespace wf = temporal::api::workflowservice::v1;
using Stub = wf::WorkflowService::Stub;

// --schedule-id / -s, as the Temporal CLI names it.
void AddScheduleId(CLI::App* cmd, std::string& id) {
  cmd->add_option("-s,--schedule-id", id, "Schedule id")->required();
}

// The flags shared by create and update (update replaces the whole schedule, as Temporal's
// UpdateSchedule does).
void AddScheduleFlags(CLI::App* cmd, ScheduleFlags& f) {
  cmd->add_option("--cron", f.cron,
                  "Cron string (repeatable): 5-7 fields, @daily, @every 1h/15m, CRON_TZ=zone prefix");
  cmd->add_option("--interval", f.intervals, "Every duration, with an optional phase (repeatable): 1h, 1h/15m");
  cmd->add_option("--calendar", f.calendars,
                  "CalendarSpec as JSON (repeatable): {\"hour\":\"9\",\"dayOfWeek\":\"MON-FRI\"}");
  cmd->add_option("--time-zone", f.time_zone, "IANA time zone of the calendars (default UTC)");
  cmd->add_option("--jitter", f.jitter, "Delay each action by a random amount up to this");
  cmd->add_option("--start-time", f.start_time, "No action before this time (RFC 3339)");
  cmd->add_option("--end-time", f.end_time, "No action after this time (RFC 3339)");
  cmd->add_option("-w,--workflow-id", f.workflow_id,
                  "Workflow id of the runs (each gets -<time> appended)")
      ->required();
  cmd->add_option("--type", f.workflow_type, "Workflow type")->required();
  cmd->add_option("-t,--task-queue", f.task_queue, "Task queue")->required();
  cmd->add_option("-i,--input", f.inputs, "An argument of the workflow as JSON (repeatable)");
  cmd->add_option("--execution-timeout", f.execution_timeout, "Workflow execution timeout");
  cmd->add_option("--run-timeout", f.run_timeout, "Workflow run timeout");
  cmd->add_option("--task-timeout", f.task_timeout, "Workflow task timeout");
  cmd->add_option("--memo", f.memo, "Memo of the runs, KEY=JSON (repeatable)");
  cmd->add_option("--overlap-policy", f.overlap_policy,
                  "Skip (default), BufferOne, BufferAll, CancelOther, TerminateOther or AllowAll");
  cmd->add_option("--catchup-window", f.catchup_window,
                  "How late a missed action may still be taken (default 1 year, at least 10s)");
  cmd->add_flag("--pause-on-failure", f.pause_on_failure, "Pause the schedule when a run fails");
  cmd->add_option("--remaining-actions", f.remaining_actions, "Take this many actions, then stop");
  cmd->add_flag("--paused", f.paused, "Create it paused");
  cmd->add_option("--notes", f.notes, "Notes on the schedule's state");
}

absl::StatusOr<wf::DescribeScheduleResponse> DescribeOne(client::Connection& c, const std::string& ns,
                                                         const std::string& id) {
  wf::DescribeScheduleRequest req;
  req.set_namespace_(ns);
  req.set_schedule_id(id);
  return c.Call(&Stub::DescribeSchedule, c.workflow(), req, ns);
}

absl::Status Done(CommandContext& ctx, const std::string& id, const std::string& result) {
  auto printer = ctx.printer();
  if (!printer.ok()) return printer.status();
  printer->Object({{"scheduleId", id}, {"result", result}}, {{"Schedule id", id}, {"Result", result}});
  return absl::OkStatus();
}

absl::Status Patch(CommandContext& ctx, const std::string& id,
                   const temporal::api::schedule::v1::SchedulePatch& patch, const std::string& result) {
  auto c = ctx.connection();
  if (!c.ok()) return c.status();
  wf::PatchScheduleRequest req;
  req.set_namespace_(ctx.options.namespace_name);
  req.set_schedule_id(id);
  *req.mutable_patch() = patch;
  req.set_identity((*c)->options().identity);
  req.set_request_id(NewUuid());
  auto out = (*c)->Call(&Stub::PatchSchedule, (*c)->workflow(), req, ctx.options.namespace_name);
  if (!out.ok()) return out.status();
  return Done(ctx, id, result);
}

void AddCreateOrUpdate(CLI::App& group, CommandContext& ctx, bool create) {
  auto f = std::make_shared<ScheduleFlags>();
  CLI::App* cmd = group.add_subcommand(
      create ? "create" : "update",
      create ? "Create a schedule that starts a workflow on a calendar, cron string or interval"
             : "Replace a schedule's spec, action, policies and state (give them all again)");
  AddScheduleId(cmd, f->schedule_id);
  AddScheduleFlags(cmd, *f);
  cmd->footer(std::string(
      create ? "Each action starts a workflow whose id is --workflow-id followed by the action's\n"
               "time (\"report-2026-11-25T12:00:00Z\"). A bad spec is refused by the server\n"
               "(\"Invalid schedule spec: ...\", exit 2); an existing id exits 5.\n"
             : "The whole schedule is replaced, as with Temporal's UpdateSchedule; a concurrent\n"
               "change in between is refused (\"mismatched conflict token\", exit 5).\n") +
      "\n"
      "Examples:\n"
      "  tock schedule " + (create ? "create" : "update") +
      " -s nightly --cron \"0 2 * * *\" --time-zone Europe/Paris \\\n"
      "      -w nightly-report --type report -t reports --input '{\"full\": true}'\n"
      "  tock schedule " + (create ? "create" : "update") +
      " -s poll --interval 5m/1m -w poll --type poll -t ops --overlap-policy BufferOne\n");
  cmd->callback([&ctx, f, create] {
    ctx.action = [&ctx, f, create]() -> absl::Status {
      auto schedule = MakeSchedule(*f, absl::Now());
      if (!schedule.ok()) return schedule.status();
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      const std::string& ns = ctx.options.namespace_name;
      if (create) {
        wf::CreateScheduleRequest req;
        req.set_namespace_(ns);
        req.set_schedule_id(f->schedule_id);
        *req.mutable_schedule() = *std::move(schedule);
        req.set_identity((*c)->options().identity);
        req.set_request_id(NewUuid());
        auto out = (*c)->Call(&Stub::CreateSchedule, (*c)->workflow(), req, ns);
        if (!out.ok()) return out.status();
        return Done(ctx, f->schedule_id, "created");
      }
      // The conflict token read now: a change by someone else before ours is refused.
      auto current = DescribeOne(**c, ns, f->schedule_id);
      if (!current.ok()) return current.status();
      wf::UpdateScheduleRequest req;
      req.set_namespace_(ns);
      req.set_schedule_id(f->schedule_id);
      *req.mutable_schedule() = *std::move(schedule);
      req.set_conflict_token(current->conflict_token());
      req.set_identity((*c)->options().identity);
      req.set_request_id(NewUuid());
      auto out = (*c)->Call(&Stub::UpdateSchedule, (*c)->workflow(), req, ns);
      if (out.status().code() == absl::StatusCode::kFailedPrecondition &&
          out.status().message() == "mismatched conflict token") {
        // Changed by someone else since it was read: a conflict (exit 5), not a failure.
        return absl::AbortedError(out.status().message());
      }
      if (!out.ok()) return out.status();
      return Done(ctx, f->schedule_id, "updated");
    };
  });
}

void AddDescribe(CLI::App& group, CommandContext& ctx) {
  auto id = std::make_shared<std::string>();
  CLI::App* cmd = group.add_subcommand(
      "describe", "Show a schedule: spec, action, policies, state, recent and next actions");
  AddScheduleId(cmd, *id);
  cmd->footer(
      "-o json prints the DescribeScheduleResponse (payloads decoded).\n"
      "\n"
      "Examples:\n"
      "  tock schedule describe -s nightly\n"
      "  tock schedule describe -s nightly -o json | jq '.info.futureActionTimes[0]'\n");
  cmd->callback([&ctx, id] {
    ctx.action = [&ctx, id]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto d = DescribeOne(**c, ctx.options.namespace_name, *id);
      if (!d.ok()) return d.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->Object(DecodedJson(*d), ScheduleCard(*id, *d));
      return absl::OkStatus();
    };
  });
}

void AddList(CLI::App& group, CommandContext& ctx) {
  auto limit = std::make_shared<int64_t>(0);
  auto query = std::make_shared<std::string>();
  CLI::App* cmd = group.add_subcommand("list", "List the namespace's schedules by id (streams)");
  cmd->add_option("--limit", *limit, "At most this many schedules (default: all)");
  cmd->add_option("-q,--query", *query,
                  "Only these: ScheduleId, WorkflowType (=, !=, STARTS_WITH 'x') and "
                  "TemporalSchedulePaused (= true|false), joined by AND");
  cmd->footer(
      "-o json prints each ScheduleListEntry (scheduleId, info with spec, workflowType, paused,\n"
      "recentActions and futureActionTimes).\n"
      "\n"
      "Examples:\n"
      "  tock schedule list\n"
      "  tock schedule list --query \"TemporalSchedulePaused = true\"\n"
      "  tock schedule list -o jsonl | jq -r 'select(.info.paused) | .scheduleId'\n");
  cmd->callback([&ctx, limit, query] {
    ctx.action = [&ctx, limit, query]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      wf::ListSchedulesRequest req;
      req.set_namespace_(ctx.options.namespace_name);
      req.set_query(*query);
      req.set_maximum_page_size(static_cast<int32_t>(*limit > 0 && *limit < 100 ? *limit : 100));
      printer->BeginList(ScheduleColumns());
      int64_t seen = 0;
      absl::Status status;
      do {
        auto page = (*c)->Call(&Stub::ListSchedules, (*c)->workflow(), req, ctx.options.namespace_name);
        if (!page.ok()) {
          status = page.status();
          break;
        }
        for (const auto& e : page->schedules()) {
          if (*limit > 0 && seen >= *limit) break;
          printer->Row(DecodedJson(e), ScheduleRow(e));
          ++seen;
        }
        req.set_next_page_token(page->next_page_token());
      } while (!req.next_page_token().empty() && (*limit <= 0 || seen < *limit));
      if (!status.ok() && printer->rows_seen() == 0) return status;
      printer->EndList();
      printer->EmptyNote("No schedules.");
      return status;
    };
  });
}

void AddToggle(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    std::string id, reason;
    bool pause = false, unpause = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand("toggle", "Pause or unpause a schedule");
  AddScheduleId(cmd, f->id);
  auto* pause = cmd->add_flag("--pause", f->pause, "Pause it");
  auto* unpause = cmd->add_flag("--unpause", f->unpause, "Unpause it");
  pause->excludes(unpause);
  cmd->add_option("--reason", f->reason, "Why (kept as the schedule's notes)");
  cmd->footer(
      "Actions due while paused are skipped, not taken at unpause.\n"
      "\n"
      "Examples:\n"
      "  tock schedule toggle -s nightly --pause --reason \"db maintenance\"\n"
      "  tock schedule toggle -s nightly --unpause\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      if (f->pause == f->unpause) {
        return absl::InvalidArgumentError("give --pause or --unpause");
      }
      temporal::api::schedule::v1::SchedulePatch patch;
      const std::string reason = f->reason.empty()
                                     ? (f->pause ? "Paused via tock" : "Unpaused via tock")
                                     : f->reason;
      if (f->pause) patch.set_pause(reason);
      else patch.set_unpause(reason);
      return Patch(ctx, f->id, patch, f->pause ? "paused" : "unpaused");
    };
  });
}

void AddTrigger(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    std::string id, overlap;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand("trigger", "Take the schedule's action now (also when paused)");
  AddScheduleId(cmd, f->id);
  cmd->add_option("--overlap-policy", f->overlap, "Overlap policy of this action (default: the schedule's)");
  cmd->footer(
      "Examples:\n"
      "  tock schedule trigger -s nightly\n"
      "  tock schedule trigger -s nightly --overlap-policy AllowAll\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      auto policy = ParseOverlapPolicy(f->overlap);
      if (!policy.ok()) return policy.status();
      temporal::api::schedule::v1::SchedulePatch patch;
      patch.mutable_trigger_immediately()->set_overlap_policy(*policy);
      return Patch(ctx, f->id, patch, "triggered");
    };
  });
}

void AddBackfill(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    std::string id, start, end, overlap;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand(
      "backfill", "Take the actions the schedule would have taken in a time range");
  AddScheduleId(cmd, f->id);
  cmd->add_option("--start-time", f->start, "Start of the range, inclusive (RFC 3339)")->required();
  cmd->add_option("--end-time", f->end, "End of the range, inclusive (RFC 3339 or now)")->required();
  cmd->add_option("--overlap-policy", f->overlap, "Overlap policy of these actions (default: the schedule's)");
  cmd->footer(
      "Backfilled actions are taken also when the schedule is paused.\n"
      "\n"
      "Examples:\n"
      "  tock schedule backfill -s nightly --start-time 2026-11-01T00:00:00Z \\\n"
      "      --end-time 2026-11-07T00:00:00Z --overlap-policy AllowAll\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      auto backfill = MakeBackfill(f->start, f->end, f->overlap, absl::Now());
      if (!backfill.ok()) return backfill.status();
      temporal::api::schedule::v1::SchedulePatch patch;
      *patch.add_backfill_request() = *backfill;
      return Patch(ctx, f->id, patch, "backfilling");
    };
  });
}

void AddDelete(CLI::App& group, CommandContext& ctx) {
  auto id = std::make_shared<std::string>();
  CLI::App* cmd = group.add_subcommand(
      "delete", "Delete a schedule (the workflows it started are left as they are)");
  AddScheduleId(cmd, *id);
  cmd->footer(
      "Examples:\n"
      "  tock schedule delete -s nightly\n");
  cmd->callback([&ctx, id] {
    ctx.action = [&ctx, id]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      wf::DeleteScheduleRequest req;
      req.set_namespace_(ctx.options.namespace_name);
      req.set_schedule_id(*id);
      req.set_identity((*c)->options().identity);
      auto out = (*c)->Call(&Stub::DeleteSchedule, (*c)->workflow(), req, ctx.options.namespace_name);
      if (!out.ok()) return out.status();
      return Done(ctx, *id, "deleted");
    };
  });
}

}  // namespace

void AddScheduleCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* group = app.add_subcommand(
      "schedule", "Start workflows on a calendar, cron string or interval (Temporal schedules)");
  group->require_subcommand(1);
  group->footer(
      "Examples:\n"
      "  tock schedule create -s nightly --cron \"0 2 * * *\" -w nightly --type report -t reports\n"
      "  tock schedule list\n"
      "  tock schedule describe -s nightly\n"
      "  tock schedule toggle -s nightly --pause --reason maintenance\n"
      "  tock schedule trigger -s nightly\n"
      "  tock schedule delete -s nightly\n");
  AddCreateOrUpdate(*group, ctx, true);
  AddDescribe(*group, ctx);
  AddList(*group, ctx);
  AddCreateOrUpdate(*group, ctx, false);
  AddToggle(*group, ctx);
  AddTrigger(*group, ctx);
  AddBackfill(*group, ctx);
  AddDelete(*group, ctx);
}

}  // namespace tock::cli
