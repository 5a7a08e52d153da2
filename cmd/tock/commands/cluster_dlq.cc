#include "cmd/tock/commands/cluster_dlq.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "cmd/tock/commands/confirm.h"
#include "lib/admin/dlq_ops.h"
#include "lib/common/proto_json.h"
#include "lib/common/time_format.h"

namespace tock::cli {
namespace {

namespace adm = tock::admin::v1;

void AddSelectionFlags(CLI::App& cmd, admin::DlqSelection& selection) {
  cmd.add_option("--type", selection.type,
                 "Which DLQ: history (replication tasks of workflows, by remote shard) or "
                 "namespace (namespace changes)")
      ->check(CLI::IsMember({"history", "namespace"}))
      ->default_str("history");
  cmd.add_option("--remote", selection.remote,
                 "Only the tasks from this remote cluster (as tock cluster list shows it; "
                 "default: every remote)");
  cmd.add_option("--shard", selection.shard, "Only the tasks from this shard of the remote (default: every shard)");
  cmd.add_option("--last-message-id", selection.last_message_id,
                 "Only the tasks up to this task id (default: all)");
}

// What a history task carried: its events, or the activity whose state it was.
std::string EventsCell(const adm::DLQReplicationTask& t) {
  if (t.kind() == adm::DLQ_TASK_KIND_SYNC_ACTIVITY) {
    return absl::StrCat("activity ", t.scheduled_event_id());
  }
  if (t.first_event_id() <= 0) return "-";
  return absl::StrCat(t.first_event_id(), "-", t.next_event_id() - 1);
}

std::string KindCell(const adm::DLQReplicationTask& t) {
  switch (t.kind()) {
    case adm::DLQ_TASK_KIND_SYNC_ACTIVITY:
      return "activity";
    case adm::DLQ_TASK_KIND_NAMESPACE:
      return "namespace";
    default:
      return "history";
  }
}

std::vector<std::string> Cells(const adm::DLQReplicationTask& t) {
  if (t.kind() == adm::DLQ_TASK_KIND_NAMESPACE) {
    return {t.source_cluster(), std::to_string(t.task_id()), t.namespace_name(), t.operation(),
            std::to_string(t.config_version()), std::to_string(t.version()),
            FormatTimestamp(FromProtoTime(t.added_time())), t.last_error()};
  }
  return {t.source_cluster(), std::to_string(t.source_shard_id()), std::to_string(t.task_id()),
          KindCell(t), t.workflow_id(), t.run_id(), EventsCell(t), std::to_string(t.version()),
          FormatTimestamp(FromProtoTime(t.added_time())), t.last_error()};
}

const std::vector<std::string>& Headers(const admin::DlqSelection& selection) {
  static const std::vector<std::string> history = {"REMOTE", "SHARD",   "TASK ID", "KIND",
                                                   "WORKFLOW ID", "RUN ID", "EVENTS", "VERSION",
                                                   "ADDED", "ERROR"};
  static const std::vector<std::string> namespaces = {
      "REMOTE", "TASK ID", "NAMESPACE", "OPERATION", "CONFIG VERSION", "FAILOVER VERSION",
      "ADDED", "ERROR"};
  return selection.type == "namespace" ? namespaces : history;
}

void AddRead(CLI::App& group, CommandContext& ctx) {
  auto selection = std::make_shared<admin::DlqSelection>();
  auto limit = std::make_shared<int64_t>(0);
  CLI::App* cmd = group.add_subcommand("read", "List the tasks in the replication DLQ");
  AddSelectionFlags(*cmd, *selection);
  cmd->add_option("--limit", *limit, "At most this many tasks (default: all)");
  cmd->footer(
      "One row per task, by remote, shard and task id: what it was (history: events; "
      "activity: the state of a pending activity), the workflow and run, the events it "
      "carried (first-last) or the activity's scheduled event id, their version, when it was "
      "set aside and why (its last error, or that an earlier task of its workflow is in the "
      "DLQ). With --type namespace: the namespace DLQ, by remote and task id, with the "
      "namespace, the source's operation and the change's config and failover versions.\n"
      "\n"
      "Examples:\n"
      "  tock cluster dlq read\n"
      "  tock cluster dlq read --remote a --shard 1 -o json\n"
      "  tock cluster dlq read --type namespace\n");
  cmd->callback([&ctx, selection, limit] {
    ctx.action = [&ctx, selection, limit]() -> absl::Status {
      if (absl::Status s = admin::CheckDlqSelection(*selection); !s.ok()) return s;
      if (*limit < 0) return absl::InvalidArgumentError("--limit must be 0 (all) or more");
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      absl::StatusOr<Printer> printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->BeginList(Headers(*selection));
      absl::Status read = admin::ReadDlq(
          **connection, *selection,
          [&](const adm::DLQReplicationTask& t) {
            printer->Row(ProtoToJson(t), Cells(t));
            return absl::OkStatus();
          },
          *limit);
      printer->EndList();
      if (!read.ok()) return read;
      if (printer->rows_seen() == 0) printer->EmptyNote("The replication DLQ is empty.");
      return absl::OkStatus();
    };
  });
}

void AddPurge(CLI::App& group, CommandContext& ctx) {
  auto selection = std::make_shared<admin::DlqSelection>();
  auto yes = std::make_shared<bool>(false);
  CLI::App* cmd = group.add_subcommand(
      "purge", "Delete tasks from a replication DLQ (they are never applied here)");
  AddSelectionFlags(*cmd, *selection);
  cmd->add_flag("-y,--yes", *yes, "Do not ask (required off a terminal)");
  cmd->footer(
      "The workflows of the deleted tasks miss their events here until the source sends "
      "later ones (the gap is then fetched again) or an operator fails the namespace over.\n"
      "\n"
      "Examples:\n"
      "  tock cluster dlq purge --remote a --yes\n"
      "  tock cluster dlq purge --remote a --shard 1 --last-message-id 1042 --yes\n"
      "  tock cluster dlq purge --type namespace --remote a --yes\n");
  cmd->callback([&ctx, selection, yes] {
    ctx.action = [&ctx, selection, yes]() -> absl::Status {
      if (absl::Status s = admin::CheckDlqSelection(*selection); !s.ok()) return s;
      if (absl::Status s = Confirm(ctx, *yes, "purge the replication DLQ"); !s.ok()) return s;
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      auto purged = admin::PurgeDlq(**connection, *selection);
      if (!purged.ok()) return purged.status();
      absl::StatusOr<Printer> printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      if (printer->format() == OutputFormat::kJson || printer->format() == OutputFormat::kJsonl) {
        printer->Object(ProtoToJson(*purged), {});
      } else {
        ctx.out << "Purged " << purged->purged_tasks() << " tasks from the replication DLQ\n";
      }
      return absl::OkStatus();
    };
  });
}

void AddMerge(CLI::App& group, CommandContext& ctx) {
  auto selection = std::make_shared<admin::DlqSelection>();
  CLI::App* cmd = group.add_subcommand(
      "merge", "Apply the tasks of a replication DLQ again, as the remote has them now");
  AddSelectionFlags(*cmd, *selection);
  cmd->footer(
      "Tasks are applied in order per remote shard, each rebuilt by the remote as it is now "
      "(a history task's events, an activity's current state; nothing when the run is gone "
      "there). A task applied (or found applied already) leaves the DLQ; one that fails again "
      "stays with its new error, and so do the later tasks of its workflow. With several "
      "hosts on one database, each shard's tasks are merged by the host that owns it, "
      "whichever host the command reaches. Namespace tasks (--type namespace) are applied "
      "again as stored (the newest version of a namespace wins). Exit status 1 when some "
      "failed again (they are listed).\n"
      "\n"
      "Examples:\n"
      "  tock cluster dlq merge --remote a\n"
      "  tock cluster dlq merge --remote a --shard 1 --last-message-id 1042 -o json\n"
      "  tock cluster dlq merge --type namespace --remote a\n");
  cmd->callback([&ctx, selection] {
    ctx.action = [&ctx, selection]() -> absl::Status {
      if (absl::Status s = admin::CheckDlqSelection(*selection); !s.ok()) return s;
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      auto merged = admin::MergeDlq(**connection, *selection);
      if (!merged.ok()) return merged.status();
      absl::StatusOr<Printer> printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      if (printer->format() == OutputFormat::kJson || printer->format() == OutputFormat::kJsonl) {
        printer->Object(ProtoToJson(*merged), {});
      } else {
        ctx.out << "Merged " << merged->merged_tasks() << " tasks; " << merged->remaining_tasks()
                << " remain in the replication DLQ\n";
        if (merged->failed_size() > 0) {
          printer->BeginList(Headers(*selection));
          for (const adm::DLQReplicationTask& t : merged->failed()) {
            printer->Row(ProtoToJson(t), Cells(t));
          }
          printer->EndList();
        }
      }
      if (merged->remaining_tasks() > 0) {
        return absl::FailedPreconditionError(
            absl::StrCat(merged->remaining_tasks(), " tasks remain in the replication DLQ",
                         merged->failed_size() > 0
                             ? absl::StrCat(" (task ", merged->failed(0).task_id(),
                                            merged->failed(0).kind() == adm::DLQ_TASK_KIND_NAMESPACE
                                                ? " of namespace "
                                                : " of workflow ",
                                            merged->failed(0).kind() == adm::DLQ_TASK_KIND_NAMESPACE
                                                ? merged->failed(0).namespace_name()
                                                : merged->failed(0).workflow_id(),
                                            ": ", merged->failed(0).last_error(), ")")
                             : ""));
      }
      return absl::OkStatus();
    };
  });
}

}  // namespace

void AddClusterDlqCommands(CLI::App& cluster_group, CommandContext& ctx) {
  CLI::App* group = cluster_group.add_subcommand(
      "dlq", "The replication DLQ: tasks from remote clusters that kept failing here");
  group->require_subcommand(1);
  group->footer(
      "A history replication task that fails 3 times in a row (about 30 s of tries for "
      "errors that say this cluster cannot write now) is set aside in the DLQ, so that the "
      "other workflows of its shard go on; the later tasks of its workflow are set aside too. "
      "A namespace replication task that fails 30 times in a row (about 30 s; a malformed "
      "one at once) is set aside in the namespace DLQ (--type namespace), so that the other "
      "namespace changes go on. tock cluster replication-status shows the DLQ sizes.\n"
      "\n"
      "Examples:\n"
      "  tock cluster dlq read --remote a\n"
      "  tock cluster dlq merge --remote a\n"
      "  tock cluster dlq purge --remote a --yes\n"
      "  tock cluster dlq read --type namespace\n");
  AddRead(*group, ctx);
  AddPurge(*group, ctx);
  AddMerge(*group, ctx);
}

}  // namespace tock::cli
