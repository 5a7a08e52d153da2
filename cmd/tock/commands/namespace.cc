#include "cmd/tock/commands/namespace.h"

#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cmd/tock/interrupt.h"
#include "lib/admin/graceful_failover.h"
#include "lib/admin/namespace_ops.h"
#include "lib/admin/retention.h"
#include "lib/common/duration.h"
#include "lib/common/proto_json.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"

namespace tock::cli {
namespace {

namespace wf = temporal::api::workflowservice::v1;

std::string Retention(const wf::DescribeNamespaceResponse& ns) {
  return FormatHumanDuration(FromProtoDuration(ns.config().workflow_execution_retention_ttl()));
}

std::string Clusters(const wf::DescribeNamespaceResponse& ns) {
  std::vector<std::string> names;
  for (const auto& c : ns.replication_config().clusters()) names.push_back(c.cluster_name());
  return absl::StrJoin(names, ", ");
}

std::string State(const wf::DescribeNamespaceResponse& ns) {
  return EnumLabel(temporal::api::enums::v1::NamespaceState_Name(ns.namespace_info().state()),
                   "NAMESPACE_STATE_");
}

// "Enabled (file:///archive)", or the state alone when no URI is set.
std::string Archival(temporal::api::enums::v1::ArchivalState state, const std::string& uri) {
  std::string label = EnumLabel(temporal::api::enums::v1::ArchivalState_Name(state), "ARCHIVAL_STATE_");
  return uri.empty() ? label : absl::StrCat(label, " (", uri, ")");
}

CardRows NamespaceCard(const wf::DescribeNamespaceResponse& ns) {
  const auto& info = ns.namespace_info();
  std::vector<std::string> data;
  std::map<std::string, std::string> sorted(info.data().begin(), info.data().end());
  for (const auto& [k, v] : sorted) data.push_back(k + "=" + v);
  CardRows card = {
      {"Name", info.name()},
      {"Id", info.id()},
      {"State", State(ns)},
      {"Description", info.description()},
      {"Owner email", info.owner_email()},
      {"Retention", Retention(ns)},
      {"Global", ns.is_global_namespace() ? "yes" : "no"},
      {"Active cluster", ns.replication_config().active_cluster_name()},
      {"Clusters", Clusters(ns)},
      {"Failover version", std::to_string(ns.failover_version())},
      {"Data", absl::StrJoin(data, ", ")},
      {"History archival",
       Archival(ns.config().history_archival_state(), ns.config().history_archival_uri())},
      {"Visibility archival",
       Archival(ns.config().visibility_archival_state(), ns.config().visibility_archival_uri())},
  };
  if (ns.failover_history_size() > 0) {
    std::vector<std::string> failovers;
    for (const auto& f : ns.failover_history()) {
      failovers.push_back(absl::StrCat(f.failover_version(), " at ",
                                       FormatTimestamp(FromProtoTime(f.failover_time()))));
    }
    card.emplace_back("Failover history", absl::StrJoin(failovers, ", "));
  }
  return card;
}

absl::Status PrintNamespace(CommandContext& ctx, const wf::DescribeNamespaceResponse& ns) {
  absl::StatusOr<Printer> printer = ctx.printer();
  if (!printer.ok()) return printer.status();
  printer->Object(ProtoToJson(ns), NamespaceCard(ns));
  return absl::OkStatus();
}

std::string NameOrDefault(const CommandContext& ctx, const std::string& name) {
  return name.empty() ? ctx.options.namespace_name : name;
}

// The archival flags of register and update (SPEC §3).
void AddArchivalFlags(CLI::App* cmd, admin::ArchivalOptions& a) {
  cmd->add_option("--history-archival-state", a.history_state,
                  "History archival: enabled or disabled (the server needs archival configured)")
      ->check(CLI::IsMember({"enabled", "disabled"}));
  cmd->add_option(
      "--history-uri", a.history_uri,
      "Where histories are archived: file:///DIR or s3://BUCKET[/PREFIX] (never changes once set)");
  cmd->add_option("--visibility-archival-state", a.visibility_state,
                  "Visibility archival: enabled or disabled")
      ->check(CLI::IsMember({"enabled", "disabled"}));
  cmd->add_option("--visibility-uri", a.visibility_uri,
                  "Where visibility records are archived: file:///DIR or s3://BUCKET[/PREFIX]");
}

struct RegisterFlags {
  admin::RegisterNamespaceOptions options;
  std::string retention;
  bool retention_given = false;
  std::vector<std::string> data;
};

void AddRegister(CLI::App& group, CommandContext& ctx) {
  auto flags = std::make_shared<RegisterFlags>();
  CLI::App* cmd = group.add_subcommand("register", "Register a new namespace");
  cmd->add_option("name", flags->options.name, "Namespace name")->required();
  cmd->add_option("--retention", flags->retention,
                  "How long closed workflows are kept: 1d to 30d (default 2d); 3d, 36h, or bare days")
      ->each([flags](const std::string&) { flags->retention_given = true; });
  cmd->add_option("--description", flags->options.description, "Free-text description");
  cmd->add_option("--owner-email", flags->options.owner_email, "Owner's e-mail address");
  cmd->add_option("--data", flags->data, "Data KEY=VALUE (repeatable)");
  cmd->add_flag("--global", flags->options.global, "Register a global (multi-cluster) namespace");
  cmd->add_option("--clusters", flags->options.clusters, "Clusters of a global namespace: A,B")
      ->delimiter(',');
  cmd->add_option("--active-cluster", flags->options.active_cluster,
                  "Active cluster (default: the server's current cluster)");
  AddArchivalFlags(cmd, flags->options.archival);
  cmd->footer(
      "Examples:\n"
      "  tock namespace register orders --retention 3d --description \"Order processing\"\n"
      "  tock namespace register payments --global --clusters a,b --active-cluster a\n"
      "  tock namespace register audit --history-archival-state enabled --history-uri "
      "file:///var/tock/archive\n");
  cmd->callback([&ctx, flags] {
    ctx.action = [&ctx, flags]() -> absl::Status {
      admin::RegisterNamespaceOptions options = flags->options;
      if (flags->retention_given) options.retention = flags->retention;
      absl::StatusOr<std::map<std::string, std::string>> data = admin::ParseKeyValues(flags->data);
      if (!data.ok()) return data.status();
      options.data = *data;
      // Validate before connecting: a bad retention never reaches the server.
      if (auto req = admin::MakeRegisterNamespaceRequest(options); !req.ok()) return req.status();
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      auto ns = admin::RegisterNamespace(**connection, options);
      if (!ns.ok()) return ns.status();
      return PrintNamespace(ctx, *ns);
    };
  });
}

void AddDescribe(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    std::string name;
    std::string as_of;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand("describe", "Show a namespace (now, or as it was)");
  cmd->add_option("name", flags->name, "Namespace name (default: --namespace)");
  cmd->add_option("--as-of", flags->as_of,
                  "Show the version valid at this time: RFC 3339, a date, or now");
  cmd->footer(
      "Examples:\n"
      "  tock namespace describe orders\n"
      "  tock namespace describe orders --as-of 2026-11-22T10:00:00Z -o json\n");
  cmd->callback([&ctx, flags] {
    ctx.action = [&ctx, flags]() -> absl::Status {
      const std::string name = NameOrDefault(ctx, flags->name);
      std::optional<absl::Time> as_of;
      if (!flags->as_of.empty()) {
        absl::StatusOr<absl::Time> t = ParseTimestamp(flags->as_of, absl::Now());
        if (!t.ok()) return t.status();
        as_of = *t;
      }
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      auto ns = admin::DescribeNamespace(**connection, name, as_of);
      if (!ns.ok()) return ns.status();
      return PrintNamespace(ctx, *ns);
    };
  });
}

void AddList(CLI::App& group, CommandContext& ctx) {
  auto include_deleted = std::make_shared<bool>(false);
  CLI::App* cmd = group.add_subcommand("list", "List namespaces");
  cmd->add_flag("--include-deleted", *include_deleted, "Also list deleted namespaces");
  cmd->footer(
      "Examples:\n"
      "  tock namespace list\n"
      "  tock namespace list --include-deleted -o jsonl | jq -r .namespaceInfo.name\n");
  cmd->callback([&ctx, include_deleted] {
    ctx.action = [&ctx, include_deleted]() -> absl::Status {
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      absl::StatusOr<Printer> printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->BeginList(
          {"NAME", "STATE", "RETENTION", "GLOBAL", "ACTIVE CLUSTER", "FAILOVER VERSION"});
      absl::Status s = admin::ListNamespaces(
          **connection, *include_deleted, [&](const wf::DescribeNamespaceResponse& ns) {
            printer->Row(ProtoToJson(ns),
                         {ns.namespace_info().name(), State(ns), Retention(ns),
                          ns.is_global_namespace() ? "yes" : "no",
                          ns.replication_config().active_cluster_name(),
                          std::to_string(ns.failover_version())});
            return absl::OkStatus();
          });
      // A list that failed before its first row prints nothing, only the error.
      if (!s.ok() && printer->rows_seen() == 0) return s;
      printer->EndList();
      printer->EmptyNote("No namespaces.");
      return s;
    };
  });
}

void AddUpdate(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    admin::UpdateNamespaceOptions options;
    std::string retention;
    bool retention_given = false;
    std::vector<std::string> data;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand("update", "Change a namespace (every change is a version)");
  cmd->add_option("name", flags->options.name, "Namespace name")->required();
  cmd->add_option("--retention", flags->retention, "New retention: 1d to 30d (3d, 36h, or bare days)")
      ->each([flags](const std::string&) { flags->retention_given = true; });
  cmd->add_option("--description", flags->options.description, "New description");
  cmd->add_option("--owner-email", flags->options.owner_email, "New owner e-mail");
  cmd->add_option("--data", flags->data, "Data KEY=VALUE to add or change (repeatable)");
  cmd->add_flag("--promote-global", flags->options.promote_global,
                "Promote a local namespace to global");
  cmd->add_option("--clusters", flags->options.clusters, "New cluster list: A,B")->delimiter(',');
  cmd->add_option("--replication-state", flags->options.replication_state,
                  "Replication state of a global namespace: normal, or handover (on its active "
                  "cluster: calls wait, then fail, until it is normal again or failed over)")
      ->check(CLI::IsMember({"normal", "handover"}));
  AddArchivalFlags(cmd, flags->options.archival);
  cmd->footer(
      "Examples:\n"
      "  tock namespace update orders --retention 7d --data tier=gold\n"
      "  tock namespace update orders --promote-global\n"
      "  tock namespace update orders --visibility-archival-state enabled\n"
      "  tock namespace update payments --replication-state handover\n");
  cmd->callback([&ctx, flags] {
    ctx.action = [&ctx, flags]() -> absl::Status {
      admin::UpdateNamespaceOptions options = flags->options;
      if (flags->retention_given) options.retention = flags->retention;
      absl::StatusOr<std::map<std::string, std::string>> data = admin::ParseKeyValues(flags->data);
      if (!data.ok()) return data.status();
      options.data = *data;
      // Validate before connecting: a bad retention never reaches the server.
      if (auto req = admin::MakeUpdateNamespaceRequest(options); !req.ok()) return req.status();
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      auto updated = admin::UpdateNamespace(**connection, options);
      if (!updated.ok()) return updated.status();
      return PrintNamespace(ctx, *updated);
    };
  });
}

void AddFailover(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    std::string name;
    std::string to;
    bool graceful = false;
    std::string handover_timeout = "30s";
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd =
      group.add_subcommand("failover", "Make another cluster active for a global namespace");
  cmd->add_option("name", flags->name, "Namespace name")->required();
  cmd->add_option("--to", flags->to, "Cluster to make active")->required();
  cmd->add_flag("--graceful", flags->graceful,
                "Hand over without losing events: on the active cluster, hold writes "
                "(replication state HANDOVER) until the target acknowledged every replication "
                "task, then switch");
  CLI::Option* timeout =
      cmd->add_option("--handover-timeout", flags->handover_timeout,
                      "With --graceful: how long writes may be held waiting for the target "
                      "(then the namespace goes back to NORMAL, still active where it was)")
          ->type_name("DURATION")
          ->default_str(flags->handover_timeout);
  timeout->needs(cmd->get_option("--graceful"));
  cmd->footer(
      "Without --graceful the failover is immediate (forced): events the target has not "
      "received yet are reconciled by version once it does. --graceful must be run against "
      "the namespace's active cluster; it prints where the target is while waiting (to "
      "standard error) and exits 4 when the target does not catch up in time.\n"
      "\n"
      "Examples:\n"
      "  tock namespace failover payments --to b\n"
      "  tock namespace failover payments --to a -o json | jq .failoverVersion\n"
      "  tock --address a.example:7233 namespace failover payments --to b --graceful "
      "--handover-timeout 20s\n");
  cmd->callback([&ctx, flags] {
    ctx.action = [&ctx, flags]() -> absl::Status {
      std::optional<absl::Duration> handover_timeout;
      if (flags->graceful) {
        absl::StatusOr<absl::Duration> d = ParseHumanDuration(flags->handover_timeout);
        if (!d.ok() || *d <= absl::ZeroDuration()) {
          return absl::InvalidArgumentError(
              absl::StrCat("invalid --handover-timeout \"", flags->handover_timeout,
                           "\": use a positive duration such as 30s or 2m"));
        }
        handover_timeout = *d;
      }
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      absl::StatusOr<wf::DescribeNamespaceResponse> updated;
      if (handover_timeout.has_value()) {
        std::optional<InterruptWatcher> watcher;
        if (!InterruptWatcher::active()) watcher.emplace([&ctx] { ctx.Interrupt(); });
        admin::GracefulFailoverOptions options;
        options.name = flags->name;
        options.to_cluster = flags->to;
        options.timeout = *handover_timeout;
        std::string last;
        options.progress = [&ctx, &last](const std::string& line) {
          if (line != last) ctx.err << line << "\n" << std::flush;
          last = line;
        };
        // Ctrl-C: the calls after it (setting the state back) must not be cancelled too.
        options.stop = [&ctx] {
          if (!ctx.interrupted()) return false;
          ctx.ClearInterrupt();
          return true;
        };
        updated = admin::GracefulFailoverNamespace(**connection, options);
      } else {
        updated = admin::FailoverNamespace(**connection, flags->name, flags->to);
      }
      if (!updated.ok()) return updated.status();
      return PrintNamespace(ctx, *updated);
    };
  });
}

void AddDeprecate(CLI::App& group, CommandContext& ctx) {
  auto name = std::make_shared<std::string>();
  CLI::App* cmd = group.add_subcommand(
      "deprecate", "Deprecate a namespace: no new workflows, running ones go on");
  cmd->add_option("name", *name, "Namespace name")->required();
  cmd->footer("Example:\n  tock namespace deprecate orders\n");
  cmd->callback([&ctx, name] {
    ctx.action = [&ctx, name]() -> absl::Status {
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      if (absl::Status s = admin::DeprecateNamespace(**connection, *name); !s.ok()) return s;
      auto ns = admin::DescribeNamespace(**connection, *name);
      if (!ns.ok()) return ns.status();
      return PrintNamespace(ctx, *ns);
    };
  });
}

void AddDelete(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    std::string name;
    bool yes = false;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand(
      "delete", "Delete a namespace (soft: it becomes DELETED, nothing is removed)");
  cmd->add_option("name", flags->name, "Namespace name")->required();
  cmd->add_flag("-y,--yes", flags->yes, "Do not ask for confirmation");
  cmd->footer("Examples:\n  tock namespace delete orders\n  tock namespace delete orders --yes\n");
  cmd->callback([&ctx, flags] {
    ctx.action = [&ctx, flags]() -> absl::Status {
      if (!flags->yes) {
        if (!ctx.stdin_is_terminal) {
          return absl::InvalidArgumentError(absl::StrCat(
              "refusing to delete namespace ", flags->name,
              " without confirmation: pass --yes (standard input is not a terminal)"));
        }
        ctx.err << "Delete namespace " << flags->name << "? [y/N] " << std::flush;
        std::string answer;
        std::getline(ctx.in, answer);
        if (answer != "y" && answer != "Y" && answer != "yes" && answer != "YES") {
          return absl::CancelledError(
              absl::StrCat("namespace ", flags->name, " not deleted (answer y to delete)"));
        }
      }
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      auto deleted = admin::DeleteNamespace(**connection, flags->name);
      if (!deleted.ok()) return deleted.status();
      auto ns = admin::DescribeNamespace(**connection, *deleted);
      if (!ns.ok()) return ns.status();
      return PrintNamespace(ctx, *ns);
    };
  });
}

void AddHistory(CLI::App& group, CommandContext& ctx) {
  auto name = std::make_shared<std::string>();
  CLI::App* cmd = group.add_subcommand(
      "history", "Every version of a namespace: when, failover version, what changed");
  cmd->add_option("name", *name, "Namespace name (default: --namespace)");
  cmd->footer(
      "Examples:\n"
      "  tock namespace history payments\n"
      "  tock namespace history payments -o json | jq '.[].record.failoverVersion'\n");
  cmd->callback([&ctx, name] {
    ctx.action = [&ctx, name]() -> absl::Status {
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      auto history = admin::NamespaceHistory(**connection, NameOrDefault(ctx, *name));
      if (!history.ok()) return history.status();
      absl::StatusOr<Printer> printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->BeginList({"VERSION", "VALID FROM", "FAILOVER VERSION", "OPERATION", "CHANGES"});
      for (const admin::NamespaceHistoryEntry& entry : *history) {
        const auto& v = entry.version;
        nlohmann::json json = ProtoToJson(v);
        nlohmann::json changes = nlohmann::json::array();
        for (const auto& c : entry.changes) {
          changes.push_back({{"field", c.field}, {"before", c.before}, {"after", c.after}});
        }
        json["changes"] = changes;
        std::string summary = v.version() == 1 ? "registered" : admin::SummarizeChanges(entry.changes);
        printer->Row(json, {std::to_string(v.version()), FormatTimestamp(FromProtoTime(v.valid_from())),
                            std::to_string(v.record().failover_version()), v.operation(),
                            summary});
      }
      printer->EndList();
      return absl::OkStatus();
    };
  });
}

}  // namespace

void AddNamespaceCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* group = app.add_subcommand("namespace", "Register, change, fail over and inspect namespaces");
  group->alias("ns");
  group->require_subcommand(1);
  group->footer(
      "Examples:\n"
      "  tock namespace register orders --retention 3d\n"
      "  tock namespace describe orders\n"
      "  tock namespace history orders\n");
  AddRegister(*group, ctx);
  AddDescribe(*group, ctx);
  AddList(*group, ctx);
  AddUpdate(*group, ctx);
  AddFailover(*group, ctx);
  AddDeprecate(*group, ctx);
  AddDelete(*group, ctx);
  AddHistory(*group, ctx);
}

}  // namespace tock::cli
