#include "cmd/tock/commands/workflow_state.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "cmd/tock/output/branch_format.h"
#include "lib/admin/mutable_state_ops.h"
#include "lib/common/proto_json.h"

namespace tock::cli {
namespace {

namespace adm = tock::admin::v1;
namespace enums = temporal::api::enums::v1;

std::string YesNo(bool b) { return b ? "yes" : "no"; }

std::string WorkflowTaskText(const adm::DescribeMutableStateResponse& s) {
  if (!s.has_workflow_task()) return "none";
  const adm::PendingWorkflowTaskSummary& t = s.workflow_task();
  return absl::StrCat(t.started_event_id() > 0 ? "started (event " : "scheduled (event ",
                      t.started_event_id() > 0 ? t.started_event_id() : t.scheduled_event_id(),
                      "), attempt ", t.attempt(), ", task queue ", t.task_queue());
}

}  // namespace

CardRows MutableStateCard(const adm::DescribeMutableStateResponse& s) {
  int current = -1;
  for (int i = 0; i < s.branches_size(); ++i) {
    if (s.branches(i).is_current()) current = i;
  }
  return {
      {"Workflow id", s.workflow_id()},
      {"Run id", s.run_id()},
      {"Current run", YesNo(s.is_current_run())},
      {"Status", EnumLabel(enums::WorkflowExecutionStatus_Name(s.status()),
                           "WORKFLOW_EXECUTION_STATUS_")},
      {"State", s.state()},
      {"Zombie", YesNo(s.zombie())},
      {"Last write version", std::to_string(s.last_write_version())},
      {"Next event id", std::to_string(s.next_event_id())},
      {"Last event task id", std::to_string(s.last_event_task_id())},
      {"DB version", std::to_string(s.db_version())},
      {"Workflow task", WorkflowTaskText(s)},
      {"Pending", absl::StrCat(s.pending_activities(), " activities, ", s.pending_timers(),
                               " timers, ", s.pending_children(), " children, ",
                               s.buffered_events(), " buffered events")},
      {"Branches", current < 0 ? std::to_string(s.branches_size())
                               : absl::StrCat(s.branches_size(), " (current: ", current, ")")},
  };
}

void AddWorkflowDescribeStateCommand(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    std::string workflow_id;
    std::string run_id;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand(
      "describe-state",
      "Show a run's internal state: branches, current branch, zombie, last write version");
  cmd->add_option("-w,--workflow-id", f->workflow_id, "Workflow id")->required();
  cmd->add_option("-r,--run-id", f->run_id, "Run id (default: the current run)");
  cmd->footer(
      "Reads the run's mutable state as this cluster stores it (Tock's AdminService\n"
      "DescribeMutableState; a Temporal frontend does not have it). A standby cluster answers\n"
      "with its own copy, so two clusters' answers can be compared. Each branch is a version\n"
      "history: EVENTS were written at VERSION (the failover version of the cluster active\n"
      "then); the last write version is that of the current branch's last item.\n"
      "\n"
      "Examples:\n"
      "  tock workflow describe-state --workflow-id order-7\n"
      "  tock workflow describe-state --workflow-id order-7 -o json | jq '.branches'\n"
      "  tock workflow describe-state --workflow-id order-7 -o json | jq '.mutableStateJson | fromjson'\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto s = admin::DescribeMutableState(**c, ctx.options.namespace_name, f->workflow_id,
                                           f->run_id);
      if (s.status().code() == absl::StatusCode::kUnimplemented) {
        return absl::UnimplementedError(absl::StrCat(
            "this server does not describe mutable state (a Temporal frontend has no "
            "tock.admin.v1.AdminService): `tock workflow describe` shows what the Temporal API "
            "gives; server said: ",
            s.status().message()));
      }
      if (!s.ok()) return s.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      if (printer->format() == OutputFormat::kJson || printer->format() == OutputFormat::kJsonl) {
        printer->Object(ProtoToJson(*s), {});
        return absl::OkStatus();
      }
      printer->Object({}, MutableStateCard(*s));
      ctx.out << "\n";
      printer->BeginList(BranchColumns());
      for (int i = 0; i < s->branches_size(); ++i) {
        for (auto& row : BranchRows(s->branches(i), i)) {
          printer->Row(ProtoToJson(s->branches(i)), std::move(row));
        }
      }
      printer->EndList();
      return absl::OkStatus();
    };
  });
}

}  // namespace tock::cli
