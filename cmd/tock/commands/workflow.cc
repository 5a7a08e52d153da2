#include "cmd/tock/commands/workflow.h"

#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cmd/tock/commands/search_attributes.h"
#include "cmd/tock/commands/workflow_reset.h"
#include "cmd/tock/commands/workflow_start.h"
#include "cmd/tock/commands/workflow_state.h"
#include "cmd/tock/commands/workflow_update.h"
#include "cmd/tock/interrupt.h"
#include "cmd/tock/output/history_format.h"
#include "lib/admin/archival_ops.h"
#include "lib/admin/payloads.h"
#include "lib/admin/workflow_ops.h"
#include "lib/common/duration.h"
#include "lib/common/json_flatten.h"
#include "lib/common/proto_json.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"

namespace tock::cli {
namespace {

namespace enums = temporal::api::enums::v1;
using temporal::api::history::v1::HistoryEvent;

// Flags every command that addresses one workflow shares.
struct Target {
  std::string workflow_id;
  std::string run_id;
};

void AddTarget(CLI::App* cmd, Target& t) {
  cmd->add_option("-w,--workflow-id", t.workflow_id, "Workflow id")->required();
  cmd->add_option("-r,--run-id", t.run_id, "Run id (default: the current run)");
}

nlohmann::json Decoded(const google::protobuf::Message& m) { return DecodedJson(m); }

std::string Status(enums::WorkflowExecutionStatus s) {
  return EnumLabel(enums::WorkflowExecutionStatus_Name(s), "WORKFLOW_EXECUTION_STATUS_");
}

std::string Time(const google::protobuf::Timestamp& t) { return TimestampText(t); }

std::string EventType(const HistoryEvent& e) { return EventTypeLabel(e); }

// What a close event means for `result` and `execute`: the value, or the failure as an error.
absl::Status PrintOutcome(CommandContext& ctx, const std::string& workflow_id,
                          const HistoryEvent& close) {
  absl::StatusOr<Printer> printer = ctx.printer();
  if (!printer.ok()) return printer.status();
  nlohmann::json out = {{"workflowId", workflow_id}, {"status", EventType(close)}};
  switch (close.event_type()) {
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED: {
      const auto& payloads = close.workflow_execution_completed_event_attributes().result().payloads();
      nlohmann::json result = payloads.empty() ? nlohmann::json() : admin::DecodePayload(payloads[0]);
      out["result"] = result;
      printer->Object(out, {{"Workflow id", workflow_id}, {"Status", "Completed"},
                            {"Result", result.dump()}});
      return absl::OkStatus();
    }
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_FAILED: {
      const auto& failure = close.workflow_execution_failed_event_attributes().failure();
      return absl::AbortedError(absl::StrCat("workflow ", workflow_id, " failed: ", failure.message()));
    }
    default:
      return absl::AbortedError(absl::StrCat("workflow ", workflow_id, " closed as ",
                                             EventType(close)));
  }
}

void AddStartOptions(CLI::App* cmd, StartFlags& f) {
  admin::StartWorkflowOptions& o = f.options;
  cmd->add_option("-t,--type", o.workflow_type, "Workflow type")->required();
  cmd->add_option("-q,--task-queue", o.task_queue, "Task queue")->required();
  cmd->add_option("-w,--workflow-id,--id", o.workflow_id, "Workflow id (default: a new UUID)");
  cmd->add_option("-i,--input", o.inputs, "An argument as JSON (repeatable)");
  cmd->add_option("--execution-timeout", o.execution_timeout, "Timeout of the whole execution");
  cmd->add_option("--run-timeout", o.run_timeout, "Timeout of one run");
  cmd->add_option("--task-timeout", o.task_timeout, "Workflow task timeout (default 10s)");
  cmd->add_option("--start-delay", o.start_delay,
                  "Wait this long before the first workflow task (a signal ends the wait)");
  cmd->add_option("--cron", o.cron_schedule,
                  "Run on a cron schedule: \"*/15 * * * *\", \"@hourly\", \"@every 90m\", "
                  "\"CRON_TZ=Europe/Paris 0 9 * * MON-FRI\" (each run gets the last one's result)");
  cmd->add_option("--search-attribute", f.search_attributes,
                  "Search attribute NAME=VALUE, the value as JSON or plain text (repeatable): "
                  "CustomerId=c-42, Amount=42, Tags='[\"a\",\"b\"]'");
}

// `workflow stack`: the built-in __stack_trace query, its text printed as it is.
void AddStack(CLI::App& group, CommandContext& ctx) {
  auto t = std::make_shared<Target>();
  CLI::App* cmd = group.add_subcommand(
      "stack", "Show where a running workflow's code is waiting (the __stack_trace query)");
  AddTarget(cmd, *t);
  cmd->footer(
      "A worker of the workflow's task queue answers the query; without one it times out "
      "(--timeout).\n"
      "\n"
      "Examples:\n"
      "  tock workflow stack --workflow-id order-7\n"
      "  tock workflow stack --workflow-id order-7 -o json | jq -r .stackTrace\n");
  cmd->callback([&ctx, t] {
    ctx.action = [&ctx, t]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto r = admin::QueryWorkflow(**c, ctx.options.namespace_name, t->workflow_id, t->run_id,
                                    "__stack_trace", {});
      if (!r.ok()) return r.status();
      if (r->has_query_rejected()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the query was rejected: the workflow is ", Status(r->query_rejected().status())));
      }
      const auto& payloads = r->query_result().payloads();
      nlohmann::json value = payloads.empty() ? nlohmann::json("") : admin::DecodePayload(payloads[0]);
      const std::string text = value.is_string() ? value.get<std::string>() : value.dump(2);
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      if (printer->format() == OutputFormat::kJson || printer->format() == OutputFormat::kJsonl) {
        printer->Object({{"workflowId", t->workflow_id}, {"stackTrace", text}}, {});
      } else {
        ctx.out << text << (text.empty() || text.back() == '\n' ? "" : "\n");
      }
      return absl::OkStatus();
    };
  });
}

// `workflow start`: starts a run and prints its ids.
void AddStart(CLI::App& group, CommandContext& ctx) {
  auto f = std::make_shared<StartFlags>();
  CLI::App* cmd = group.add_subcommand("start", "Start a workflow and print its ids");
  AddStartOptions(cmd, *f);
  cmd->footer(
      "Examples:\n"
      "  tock workflow start --type order --task-queue orders --id order-7 --input 7\n"
      "  tock workflow start --type order --task-queue orders --search-attribute CustomerId=c-42\n"
      "  tock workflow start --type report --task-queue nightly --id nightly --cron \"0 2 * * *\"\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      const admin::StartWorkflowOptions* o = &f->options;
      f->options.namespace_name = ctx.options.namespace_name;
      // Bad input is reported before connecting.
      auto req = MakeStartWorkflowRequest(*f);
      if (!req.ok()) return req.status();
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto started = StartWorkflow(**c, *req);
      if (!started.ok()) return started.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->Object({{"workflowId", started->workflow_id}, {"runId", started->run_id}},
                      {{"Workflow id", started->workflow_id}, {"Run id", started->run_id},
                       {"Type", o->workflow_type}, {"Task queue", o->task_queue},
                       {"Namespace", o->namespace_name}});
      return absl::OkStatus();
    };
  });
}

// `workflow execute`: starts a run and waits for its outcome.
void AddExecute(CLI::App& group, CommandContext& ctx) {
  auto f = std::make_shared<StartFlags>();
  auto timeout = std::make_shared<std::string>();
  CLI::App* cmd = group.add_subcommand("execute", "Start a workflow and wait for its result");
  AddStartOptions(cmd, *f);
  cmd->add_option("--wait", *timeout, "Give up waiting after this long (default: no limit)");
  cmd->footer("Example:\n  tock workflow execute --type greet --task-queue hello --input '\"Tock\"'\n");
  cmd->callback([&ctx, f, timeout] {
    ctx.action = [&ctx, f, timeout]() -> absl::Status {
      const admin::StartWorkflowOptions* o = &f->options;
      f->options.namespace_name = ctx.options.namespace_name;
      absl::Duration wait = absl::ZeroDuration();
      if (!timeout->empty()) {
        auto d = ParseHumanDuration(*timeout, BareNumberUnit::kSeconds);
        if (!d.ok()) return d.status();
        wait = *d;
      }
      auto req = MakeStartWorkflowRequest(*f);
      if (!req.ok()) return req.status();
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto started = StartWorkflow(**c, *req);
      if (!started.ok()) return started.status();
      auto close = admin::WaitForResult(**c, o->namespace_name, started->workflow_id,
                                        started->run_id, wait);
      if (!close.ok()) return close.status();
      return PrintOutcome(ctx, started->workflow_id, *close);
    };
  });
}

// `workflow result`: waits for an existing run's outcome.
void AddResult(CLI::App& group, CommandContext& ctx) {
  auto t = std::make_shared<Target>();
  CLI::App* cmd = group.add_subcommand("result", "Wait for a workflow's result");
  AddTarget(cmd, *t);
  cmd->footer("Example:\n  tock workflow result --workflow-id order-7 -o json | jq .result\n");
  cmd->callback([&ctx, t] {
    ctx.action = [&ctx, t]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto close = admin::WaitForResult(**c, ctx.options.namespace_name, t->workflow_id,
                                        t->run_id, absl::ZeroDuration());
      if (!close.ok()) return close.status();
      return PrintOutcome(ctx, t->workflow_id, *close);
    };
  });
}

// `workflow describe`: a run's card, falling back to its archived record.
void AddDescribe(CLI::App& group, CommandContext& ctx) {
  auto t = std::make_shared<Target>();
  CLI::App* cmd = group.add_subcommand("describe", "Show a workflow run: status, timing, pending work");
  AddTarget(cmd, *t);
  cmd->footer("Example:\n  tock workflow describe --workflow-id order-7\n");
  cmd->callback([&ctx, t] {
    ctx.action = [&ctx, t]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto d = admin::DescribeWorkflow(**c, ctx.options.namespace_name, t->workflow_id, t->run_id);
      bool archived = false;
      if (d.status().code() == absl::StatusCode::kNotFound) {
        // A run deleted after its retention: its archived record, when there is one.
        auto found = admin::FindArchivedRun(**c, ctx.options.namespace_name, t->workflow_id,
                                            t->run_id);
        if (found.ok()) {
          d = temporal::api::workflowservice::v1::DescribeWorkflowExecutionResponse();
          *d->mutable_workflow_execution_info() = *found;
          archived = true;
        }
      }
      if (!d.ok()) return d.status();
      const auto& info = d->workflow_execution_info();
      CardRows card = {
          {"Workflow id", info.execution().workflow_id()},
          {"Run id", info.execution().run_id()},
          {"Type", info.type().name()},
          {"Status", Status(info.status())},
          {"Task queue", info.task_queue()},
          {"Start time", Time(info.start_time())},
          {"Close time", Time(info.close_time())},
          {"History length", std::to_string(info.history_length())},
          {"Pending activities", std::to_string(d->pending_activities_size())},
          {"Pending children", std::to_string(d->pending_children_size())},
      };
      if (info.search_attributes().indexed_fields_size() > 0) {
        card.emplace_back("Search attributes", SearchAttributesText(info.search_attributes()));
      }
      for (const auto& a : d->pending_activities()) {
        card.emplace_back(absl::StrCat("Activity ", a.activity_id()),
                          absl::StrCat(a.activity_type().name(), ", attempt ", a.attempt(),
                                       a.has_last_failure() ? ", last failure: " : "",
                                       a.last_failure().message()));
      }
      nlohmann::json json = Decoded(*d);
      if (archived) {
        card.emplace_back("Archived", "yes: deleted after its retention; `tock workflow show` "
                                      "reads its history from the archive");
        json["archived"] = true;
      }
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->Object(json, card);
      return absl::OkStatus();
    };
  });
}

// `workflow show`: a run's history as a table, or the replayable History (-o json).
void AddShow(CLI::App& group, CommandContext& ctx) {
  auto t = std::make_shared<Target>();
  auto follow = std::make_shared<bool>(false);
  CLI::App* cmd = group.add_subcommand(
      "show", "Show a run's history (-o json gives the History the SDK replayer accepts)");
  AddTarget(cmd, *t);
  cmd->add_flag("-f,--follow", *follow, "Keep printing new events until the run closes");
  cmd->footer(
      "Examples:\n"
      "  tock workflow show --workflow-id order-7\n"
      "  tock workflow show --workflow-id order-7 -o json > history.json   # for the replayer\n");
  cmd->callback([&ctx, t, follow] {
    ctx.action = [&ctx, t, follow]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      if (printer->format() == OutputFormat::kJson) {
        // The History message itself, payloads untouched, so replayers read it back.
        temporal::api::history::v1::History history;
        absl::Status s = admin::ReadHistory(**c, ctx.options.namespace_name, t->workflow_id,
                                            t->run_id, *follow, [&](const HistoryEvent& e) {
                                              *history.add_events() = e;
                                              return absl::OkStatus();
                                            });
        if (!s.ok()) return s;
        ctx.out << ProtoToJson(history).dump(2) << "\n";
        return absl::OkStatus();
      }
      // Ctrl-C ends a follow cleanly (the list is closed), also inside the REPL, whose
      // own watcher is already active.
      std::optional<InterruptWatcher> watcher;
      if (*follow && !InterruptWatcher::active()) watcher.emplace([&ctx] { ctx.Interrupt(); });
      printer->BeginList({"ID", "TIME", "TYPE", "DETAILS"});
      absl::Status s = admin::ReadHistory(
          **c, ctx.options.namespace_name, t->workflow_id, t->run_id, *follow,
          [&](const HistoryEvent& e) {
            printer->Row(Decoded(e), EventRow(e));
            if (*follow && printer->format() == OutputFormat::kTable) printer->EndList();
            ctx.out << std::flush;
            return absl::OkStatus();
          },
          [&ctx] { return ctx.interrupted(); });
      if (s.code() == absl::StatusCode::kCancelled && ctx.interrupted()) s = absl::OkStatus();
      if (!s.ok() && printer->rows_seen() == 0) return s;
      printer->EndList();
      return s;
    };
  });
}

// `workflow signal`: sends a signal to a run.
void AddSignal(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    Target target;
    std::string name;
    std::vector<std::string> inputs;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand("signal", "Send a signal to a workflow");
  AddTarget(cmd, f->target);
  cmd->add_option("--name", f->name, "Signal name")->required();
  cmd->add_option("-i,--input", f->inputs, "An argument as JSON (repeatable)");
  cmd->footer("Example:\n  tock workflow signal --workflow-id order-7 --name approve --input true\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      absl::Status s = admin::SignalWorkflow(**c, ctx.options.namespace_name, f->target.workflow_id,
                                             f->target.run_id, f->name, f->inputs);
      if (!s.ok()) return s;
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->Object({{"workflowId", f->target.workflow_id}, {"signal", f->name}},
                      {{"Signaled", absl::StrCat(f->target.workflow_id, " with ", f->name)}});
      return absl::OkStatus();
    };
  });
}

// `workflow query`: asks a run a query and prints the answer.
void AddQuery(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    Target target;
    std::string type;
    std::vector<std::string> inputs;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand("query", "Ask a running or closed workflow a query");
  AddTarget(cmd, f->target);
  cmd->add_option("--type,--name", f->type, "Query type")->required();
  cmd->add_option("-i,--input", f->inputs, "An argument as JSON (repeatable)");
  cmd->footer("Example:\n  tock workflow query --workflow-id order-7 --type status\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto r = admin::QueryWorkflow(**c, ctx.options.namespace_name, f->target.workflow_id,
                                    f->target.run_id, f->type, f->inputs);
      if (!r.ok()) return r.status();
      if (r->has_query_rejected()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the query was rejected: the workflow is ", Status(r->query_rejected().status())));
      }
      const auto& payloads = r->query_result().payloads();
      nlohmann::json result = payloads.empty() ? nlohmann::json() : admin::DecodePayload(payloads[0]);
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->Object({{"workflowId", f->target.workflow_id}, {"result", result}},
                      {{"Result", result.dump()}});
      return absl::OkStatus();
    };
  });
}

// `workflow cancel` and `workflow terminate`: the same flags, different calls.
void AddCancelAndTerminate(CLI::App& group, CommandContext& ctx) {
  for (const bool terminate : {false, true}) {
    struct Flags {
      Target target;
      std::string reason;
    };
    auto f = std::make_shared<Flags>();
    CLI::App* cmd = group.add_subcommand(
        terminate ? "terminate" : "cancel",
        terminate ? "Terminate a workflow now (its code gets no say)"
                  : "Ask a workflow to cancel (its code decides how)");
    AddTarget(cmd, f->target);
    cmd->add_option("--reason", f->reason, "Why (recorded in the history)");
    cmd->footer(terminate ? "Example:\n  tock workflow terminate --workflow-id order-7 --reason stuck\n"
                          : "Example:\n  tock workflow cancel --workflow-id order-7\n");
    cmd->callback([&ctx, f, terminate] {
      ctx.action = [&ctx, f, terminate]() -> absl::Status {
        auto c = ctx.connection();
        if (!c.ok()) return c.status();
        absl::Status s =
            terminate ? admin::TerminateWorkflow(**c, ctx.options.namespace_name, f->target.workflow_id,
                                                 f->target.run_id, f->reason)
                      : admin::CancelWorkflow(**c, ctx.options.namespace_name, f->target.workflow_id,
                                              f->target.run_id, f->reason);
        if (!s.ok()) return s;
        auto printer = ctx.printer();
        if (!printer.ok()) return printer.status();
        const char* done = terminate ? "terminated" : "cancel requested";
        printer->Object({{"workflowId", f->target.workflow_id}, {"result", done}},
                        {{"Workflow id", f->target.workflow_id}, {"Result", done}});
        return absl::OkStatus();
      };
    });
  }
}

// `workflow delete`: deletes a run after a confirmation (or --yes).
void AddDelete(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    Target target;
    bool yes = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand(
      "delete", "Delete a run and its history (a running one is terminated first)");
  AddTarget(cmd, f->target);
  cmd->add_flag("-y,--yes", f->yes, "Do not ask for confirmation");
  cmd->footer("Example:\n  tock workflow delete --workflow-id order-7 --yes\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      if (!f->yes) {
        if (!ctx.stdin_is_terminal) {
          return absl::InvalidArgumentError(absl::StrCat(
              "refusing to delete workflow ", f->target.workflow_id,
              " without confirmation: pass --yes (standard input is not a terminal)"));
        }
        ctx.err << "Delete workflow " << f->target.workflow_id << " and its history? [y/N] "
                << std::flush;
        std::string answer;
        std::getline(ctx.in, answer);
        if (answer != "y" && answer != "Y" && answer != "yes") {
          return absl::CancelledError("not deleted");
        }
      }
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      absl::Status s = admin::DeleteWorkflow(**c, ctx.options.namespace_name,
                                             f->target.workflow_id, f->target.run_id);
      if (!s.ok()) return s;
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->Object({{"workflowId", f->target.workflow_id}, {"result", "deleted"}},
                      {{"Workflow id", f->target.workflow_id}, {"Result", "deleted"}});
      return absl::OkStatus();
    };
  });
}

// `workflow list`: streams runs (or archived runs) matching a query.
void AddList(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    std::string query;
    int64_t limit = 0;
    bool archived = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand("list", "List workflow runs, newest first (streams)");
  cmd->add_option("--query", f->query,
                  "Visibility query, e.g. \"WorkflowType = 'order' AND ExecutionStatus = 'Failed'\"");
  cmd->add_option("--limit", f->limit, "At most this many runs (default: all)");
  cmd->add_flag("--archived", f->archived,
                "List archived runs (ListArchivedWorkflowExecutions; the query language is the "
                "archive's: WorkflowId, WorkflowType, ExecutionStatus, CloseTime, ...)");
  cmd->footer(
      "Examples:\n"
      "  tock workflow list --query \"ExecutionStatus = 'Running'\" --limit 20\n"
      "  tock workflow list -o jsonl | jq -r .execution.workflowId\n"
      "  tock workflow list --archived --query \"WorkflowType = 'order' AND ExecutionStatus = 'Failed'\"\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->BeginList(ExecutionColumns());
      auto row = [&](const temporal::api::workflow::v1::WorkflowExecutionInfo& e) {
        printer->Row(Decoded(e), ExecutionRow(e));
        return absl::OkStatus();
      };
      absl::Status s =
          f->archived
              ? admin::ListArchivedWorkflows(**c, ctx.options.namespace_name, f->query, f->limit, row)
              : admin::ListWorkflows(**c, ctx.options.namespace_name, f->query, f->limit, row);
      if (!s.ok() && printer->rows_seen() == 0) return s;
      printer->EndList();
      printer->EmptyNote("No workflows.");
      return s;
    };
  });
}

// `workflow count`: the number of runs matching a query.
void AddCount(CLI::App& group, CommandContext& ctx) {
  auto query = std::make_shared<std::string>();
  CLI::App* cmd = group.add_subcommand("count", "Count workflow runs matching a query");
  cmd->add_option("--query", *query, "Visibility query (default: every run)");
  cmd->footer("Example:\n  tock workflow count --query \"ExecutionStatus = 'Running'\"\n");
  cmd->callback([&ctx, query] {
    ctx.action = [&ctx, query]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto n = admin::CountWorkflows(**c, ctx.options.namespace_name, *query);
      if (!n.ok()) return n.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->Object({{"count", *n}}, {{"Count", std::to_string(*n)}});
      return absl::OkStatus();
    };
  });
}

}  // namespace

void AddWorkflowCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* group = app.add_subcommand("workflow", "Start, inspect and control workflows");
  group->alias("wf");
  group->require_subcommand(1);
  group->footer(
      "Examples:\n"
      "  tock workflow start --type order --task-queue orders --input '{\"id\": 7}'\n"
      "  tock workflow show --workflow-id order-7\n"
      "  tock workflow list --query \"ExecutionStatus = 'Running'\"\n");

  AddStart(*group, ctx);
  AddExecute(*group, ctx);
  AddResult(*group, ctx);
  AddDescribe(*group, ctx);
  AddShow(*group, ctx);
  AddSignal(*group, ctx);
  AddQuery(*group, ctx);
  AddStack(*group, ctx);
  AddWorkflowResetCommand(*group, ctx);
  AddWorkflowUpdateCommand(*group, ctx);
  AddWorkflowDescribeStateCommand(*group, ctx);
  AddCancelAndTerminate(*group, ctx);
  AddDelete(*group, ctx);
  AddList(*group, ctx);
  AddCount(*group, ctx);
}

void AddTaskQueueCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* group = app.add_subcommand("task-queue", "Inspect task queues");
  group->require_subcommand(1);
  group->footer("Example:\n  tock task-queue describe --task-queue orders\n");
  struct Flags {
    std::string name;
    std::string type = "workflow";
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group->add_subcommand("describe", "Show who polls a task queue");
  cmd->add_option("-q,--task-queue", f->name, "Task queue")->required();
  cmd->add_option("--type", f->type, "workflow or activity")
      ->check(CLI::IsMember({"workflow", "activity"}));
  cmd->footer("Example:\n  tock task-queue describe --task-queue orders --type activity\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      temporal::api::workflowservice::v1::DescribeTaskQueueRequest req;
      req.set_namespace_(ctx.options.namespace_name);
      req.mutable_task_queue()->set_name(f->name);
      req.set_task_queue_type(f->type == "activity" ? enums::TASK_QUEUE_TYPE_ACTIVITY
                                                    : enums::TASK_QUEUE_TYPE_WORKFLOW);
      auto out = (*c)->Call(&temporal::api::workflowservice::v1::WorkflowService::Stub::DescribeTaskQueue,
                            (*c)->workflow(), req, ctx.options.namespace_name);
      if (!out.ok()) return out.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->BeginList({"POLLER", "LAST ACCESS"});
      for (const auto& p : out->pollers()) {
        printer->Row(ProtoToJson(p), {p.identity(), Time(p.last_access_time())});
      }
      printer->EndList();
      printer->EmptyNote("No pollers in the last 5 minutes.");
      return absl::OkStatus();
    };
  });
}

}  // namespace tock::cli
