#include "cmd/tock/commands/worker_deployment.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cmd/tock/commands/act.h"
#include "cmd/tock/commands/confirm.h"
#include "cmd/tock/output/history_format.h"
#include "lib/admin/payloads.h"
#include "lib/common/proto_json.h"

namespace tock::cli {
namespace {

namespace wf = temporal::api::workflowservice::v1;
namespace dep = temporal::api::deployment::v1;
namespace enums = temporal::api::enums::v1;
using Stub = wf::WorkflowService::Stub;

std::string VersionText(const dep::WorkerDeploymentVersion& v) {
  return v.build_id().empty() ? "(unversioned)" : absl::StrCat(v.deployment_name(), ":", v.build_id());
}

std::string StatusName(enums::WorkerDeploymentVersionStatus s) {
  switch (s) {
    case enums::WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE: return "Inactive";
    case enums::WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT: return "Current";
    case enums::WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING: return "Ramping";
    case enums::WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING: return "Draining";
    case enums::WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED: return "Drained";
    case enums::WORKER_DEPLOYMENT_VERSION_STATUS_CREATED: return "Created";
    default: return "";
  }
}

std::string TypeName(enums::TaskQueueType t) {
  switch (t) {
    case enums::TASK_QUEUE_TYPE_WORKFLOW: return "workflow";
    case enums::TASK_QUEUE_TYPE_ACTIVITY: return "activity";
    case enums::TASK_QUEUE_TYPE_NEXUS: return "nexus";
    default: return "";
  }
}

std::string Ramping(const dep::RoutingConfig& rc) {
  if (rc.ramping_version().empty()) return "";
  return absl::StrCat(VersionText(rc.ramping_deployment_version()), " (",
                      rc.ramping_version_percentage(), "%)");
}

// The flags every command naming a version takes.
struct VersionFlags {
  std::string deployment;
  std::string build_id;
};

void AddVersionFlags(CLI::App* cmd, VersionFlags& f) {
  cmd->add_option("--deployment-name", f.deployment, "The Worker Deployment")->required();
  cmd->add_option("--build-id", f.build_id, "The version's build id")->required();
}

dep::WorkerDeploymentVersion VersionOf(const VersionFlags& f) {
  dep::WorkerDeploymentVersion v;
  v.set_deployment_name(f.deployment);
  v.set_build_id(f.build_id);
  return v;
}

// The deployment's conflict token (temporal CLI: a describe before each routing change, so
// that a change made meanwhile by someone else is not overwritten). With `allow_missing`, a
// deployment not found yet gives an empty token.
absl::StatusOr<std::string> ConflictToken(CommandContext& ctx, client::Connection& c,
                                          const std::string& deployment, bool allow_missing) {
  wf::DescribeWorkerDeploymentRequest req;
  req.set_namespace_(ctx.options.namespace_name);
  req.set_deployment_name(deployment);
  auto out = c.Call(&Stub::DescribeWorkerDeployment, c.workflow(), req, ctx.options.namespace_name);
  if (out.ok()) return out->conflict_token();
  if (allow_missing && out.status().code() == absl::StatusCode::kNotFound) return std::string();
  return out.status();
}

void AddList(CLI::App& group, CommandContext& ctx) {
  CLI::App* cmd = group.add_subcommand("list", "List the namespace's Worker Deployments");
  cmd->footer("-o json prints each WorkerDeploymentSummary.\n\nExamples:\n"
              "  tock worker deployment list\n");
  Act(cmd, ctx, [&ctx](client::Connection& c, Printer& printer) -> absl::Status {
    wf::ListWorkerDeploymentsRequest req;
    req.set_namespace_(ctx.options.namespace_name);
    printer.BeginList({"NAME", "CURRENT", "RAMPING", "LATEST", "CREATED"});
    absl::Status status;
    do {
      auto page = c.Call(&Stub::ListWorkerDeployments, c.workflow(), req, ctx.options.namespace_name);
      if (!page.ok()) {
        status = page.status();
        break;
      }
      for (const auto& d : page->worker_deployments()) {
        const auto& rc = d.routing_config();
        printer.Row(ProtoToJson(d),
                    {d.name(), rc.current_version().empty() ? "" : VersionText(rc.current_deployment_version()),
                     Ramping(rc), d.latest_version_summary().deployment_version().build_id(),
                     TimestampText(d.create_time())});
      }
      req.set_next_page_token(page->next_page_token());
    } while (!req.next_page_token().empty());
    if (!status.ok() && printer.rows_seen() == 0) return status;
    printer.EndList();
    printer.EmptyNote("No Worker Deployments: a versioned worker's first poll makes one.");
    return status;
  });
}

void AddDescribe(CLI::App& group, CommandContext& ctx) {
  auto name = std::make_shared<std::string>();
  CLI::App* cmd = group.add_subcommand("describe", "Show a Worker Deployment: routing and versions");
  cmd->add_option("--name", *name, "The Worker Deployment")->required();
  cmd->footer("-o json prints the DescribeWorkerDeploymentResponse.\n\nExamples:\n"
              "  tock worker deployment describe --name billing\n");
  Act(cmd, ctx, [&ctx, name](client::Connection& c, Printer& printer) -> absl::Status {
    wf::DescribeWorkerDeploymentRequest req;
    req.set_namespace_(ctx.options.namespace_name);
    req.set_deployment_name(*name);
    auto out = c.Call(&Stub::DescribeWorkerDeployment, c.workflow(), req, ctx.options.namespace_name);
    if (!out.ok()) return out.status();
    const auto& info = out->worker_deployment_info();
    const auto& rc = info.routing_config();
    CardRows card{{"Name", info.name()},
                  {"Created", TimestampText(info.create_time())},
                  {"Current version", rc.current_version().empty() ? "" : VersionText(rc.current_deployment_version())},
                  {"Ramping version", Ramping(rc)},
                  {"Routing changed", TimestampText(rc.current_version_changed_time())},
                  {"Manager identity", info.manager_identity()},
                  {"Last modified by", info.last_modifier_identity()}};
    for (const auto& v : info.version_summaries()) {
      card.push_back({absl::StrCat("Version ", v.deployment_version().build_id()),
                      absl::StrCat(StatusName(v.status()), ", created ", TimestampText(v.create_time()))});
    }
    printer.Object(ProtoToJson(*out), card);
    return absl::OkStatus();
  });
}

void AddCreate(CLI::App& group, CommandContext& ctx) {
  auto name = std::make_shared<std::string>();
  CLI::App* cmd = group.add_subcommand("create", "Create a Worker Deployment before its workers poll");
  cmd->add_option("--name", *name, "The Worker Deployment")->required();
  cmd->footer("Examples:\n  tock worker deployment create --name billing\n");
  Act(cmd, ctx, [&ctx, name](client::Connection& c, Printer& printer) -> absl::Status {
    wf::CreateWorkerDeploymentRequest req;
    req.set_namespace_(ctx.options.namespace_name);
    req.set_deployment_name(*name);
    req.set_identity(c.options().identity);
    auto out = c.Call(&Stub::CreateWorkerDeployment, c.workflow(), req, ctx.options.namespace_name);
    if (!out.ok()) return out.status();
    printer.Object({{"name", *name}}, {{"Created", *name}});
    return absl::OkStatus();
  });
}

void AddDelete(CLI::App& group, CommandContext& ctx) {
  auto name = std::make_shared<std::string>();
  CLI::App* cmd = group.add_subcommand("delete", "Delete a Worker Deployment that has no versions");
  cmd->add_option("--name", *name, "The Worker Deployment")->required();
  cmd->footer("Examples:\n  tock worker deployment delete --name billing\n");
  Act(cmd, ctx, [&ctx, name](client::Connection& c, Printer& printer) -> absl::Status {
    wf::DeleteWorkerDeploymentRequest req;
    req.set_namespace_(ctx.options.namespace_name);
    req.set_deployment_name(*name);
    req.set_identity(c.options().identity);
    auto out = c.Call(&Stub::DeleteWorkerDeployment, c.workflow(), req, ctx.options.namespace_name);
    if (!out.ok()) return out.status();
    printer.Object({{"name", *name}}, {{"Deleted", *name}});
    return absl::OkStatus();
  });
}

void AddCreateVersion(CLI::App& group, CommandContext& ctx) {
  auto f = std::make_shared<VersionFlags>();
  CLI::App* cmd = group.add_subcommand("create-version", "Create a version before its workers poll");
  AddVersionFlags(cmd, *f);
  cmd->footer("Examples:\n  tock worker deployment create-version --deployment-name billing --build-id v3\n");
  Act(cmd, ctx, [&ctx, f](client::Connection& c, Printer& printer) -> absl::Status {
    wf::CreateWorkerDeploymentVersionRequest req;
    req.set_namespace_(ctx.options.namespace_name);
    *req.mutable_deployment_version() = VersionOf(*f);
    req.set_identity(c.options().identity);
    auto out = c.Call(&Stub::CreateWorkerDeploymentVersion, c.workflow(), req, ctx.options.namespace_name);
    if (!out.ok()) return out.status();
    printer.Object({{"deploymentName", f->deployment}, {"buildId", f->build_id}},
                   {{"Created", VersionText(req.deployment_version())}});
    return absl::OkStatus();
  });
}

void AddDescribeVersion(CLI::App& group, CommandContext& ctx) {
  struct Flags : VersionFlags {
    bool stats = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand(
      "describe-version", "Show a version: status, routing times, task queues, drainage, metadata");
  AddVersionFlags(cmd, *f);
  cmd->add_flag("--report-task-queue-stats", f->stats, "Ask for each task queue's statistics");
  cmd->footer("-o json prints the DescribeWorkerDeploymentVersionResponse.\n\nExamples:\n"
              "  tock worker deployment describe-version --deployment-name billing --build-id v2\n");
  Act(cmd, ctx, [&ctx, f](client::Connection& c, Printer& printer) -> absl::Status {
    wf::DescribeWorkerDeploymentVersionRequest req;
    req.set_namespace_(ctx.options.namespace_name);
    *req.mutable_deployment_version() = VersionOf(*f);
    req.set_report_task_queue_stats(f->stats);
    auto out = c.Call(&Stub::DescribeWorkerDeploymentVersion, c.workflow(), req, ctx.options.namespace_name);
    if (!out.ok()) return out.status();
    const auto& info = out->worker_deployment_version_info();
    CardRows card{{"Version", VersionText(info.deployment_version())},
                  {"Status", StatusName(info.status())},
                  {"Created", TimestampText(info.create_time())},
                  {"Current since", TimestampText(info.current_since_time())},
                  {"Ramping since", TimestampText(info.ramping_since_time())},
                  {"Ramp", info.ramp_percentage() > 0 ? absl::StrCat(info.ramp_percentage(), "%") : ""},
                  {"Routing changed", TimestampText(info.routing_changed_time())},
                  {"Last modified by", info.last_modifier_identity()}};
    for (const auto& tq : info.task_queue_infos()) {
      card.push_back({absl::StrCat("Task queue (", TypeName(tq.type()), ")"), tq.name()});
    }
    for (const auto& [key, value] : info.metadata().entries()) {
      card.push_back({absl::StrCat("Metadata ", key), value.data()});
    }
    printer.Object(DecodedJson(*out), card);
    return absl::OkStatus();
  });
}

void AddDeleteVersion(CLI::App& group, CommandContext& ctx) {
  struct Flags : VersionFlags {
    bool skip_drainage = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand(
      "delete-version", "Delete a version no longer current, ramping or polled");
  AddVersionFlags(cmd, *f);
  cmd->add_flag("--skip-drainage", f->skip_drainage, "Delete it even while pinned runs use it");
  cmd->footer("Examples:\n  tock worker deployment delete-version --deployment-name billing --build-id v1\n");
  Act(cmd, ctx, [&ctx, f](client::Connection& c, Printer& printer) -> absl::Status {
    wf::DeleteWorkerDeploymentVersionRequest req;
    req.set_namespace_(ctx.options.namespace_name);
    *req.mutable_deployment_version() = VersionOf(*f);
    req.set_skip_drainage(f->skip_drainage);
    req.set_identity(c.options().identity);
    auto out = c.Call(&Stub::DeleteWorkerDeploymentVersion, c.workflow(), req, ctx.options.namespace_name);
    if (!out.ok()) return out.status();
    printer.Object({{"deploymentName", f->deployment}, {"buildId", f->build_id}},
                   {{"Deleted", VersionText(req.deployment_version())}});
    return absl::OkStatus();
  });
}

// The flags of set-current-version and set-ramping-version.
struct RoutingFlags {
  std::string deployment;
  std::string build_id;
  bool unversioned = false;
  bool ignore_missing = false;
  bool allow_no_pollers = false;
  bool yes = false;
};

void AddRoutingFlags(CLI::App* cmd, RoutingFlags& f) {
  cmd->add_option("--deployment-name", f.deployment, "The Worker Deployment")->required();
  auto* build = cmd->add_option("--build-id", f.build_id, "The version's build id");
  auto* unversioned = cmd->add_flag("--unversioned", f.unversioned, "The unversioned workers instead");
  build->excludes(unversioned);
  cmd->add_flag("--ignore-missing-task-queues", f.ignore_missing,
                "Even if the version does not poll every task queue the current one polls");
  cmd->add_flag("--allow-no-pollers", f.allow_no_pollers,
                "Even if no worker of the version has polled yet (the version is created)");
  cmd->add_flag("-y,--yes", f.yes, "Do not ask for confirmation");
}

absl::Status CheckVersionChoice(const RoutingFlags& f, bool allow_none) {
  if (f.build_id.empty() && !f.unversioned && !allow_none) {
    return absl::InvalidArgumentError("give --build-id BUILD, or --unversioned for the unversioned workers");
  }
  return absl::OkStatus();
}

void AddSetCurrent(CLI::App& group, CommandContext& ctx) {
  auto f = std::make_shared<RoutingFlags>();
  CLI::App* cmd = group.add_subcommand(
      "set-current-version", "Send new runs (and auto-upgrade runs) to a version");
  AddRoutingFlags(cmd, *f);
  cmd->footer("Examples:\n"
              "  tock worker deployment set-current-version --deployment-name billing --build-id v2 --yes\n"
              "  tock worker deployment set-current-version --deployment-name billing --unversioned --yes\n");
  Act(cmd, ctx, [&ctx, f](client::Connection& c, Printer& printer) -> absl::Status {
    if (absl::Status s = CheckVersionChoice(*f, false); !s.ok()) return s;
    const std::string target = f->unversioned ? "the unversioned workers" : f->build_id;
    if (absl::Status s = Confirm(ctx, f->yes, absl::StrCat("make ", target, " the current version of ", f->deployment));
        !s.ok()) {
      return s;
    }
    absl::StatusOr<std::string> token = ConflictToken(ctx, c, f->deployment, f->allow_no_pollers);
    if (!token.ok()) return token.status();
    wf::SetWorkerDeploymentCurrentVersionRequest req;
    req.set_namespace_(ctx.options.namespace_name);
    req.set_deployment_name(f->deployment);
    req.set_build_id(f->build_id);
    req.set_conflict_token(*token);
    req.set_identity(c.options().identity);
    req.set_ignore_missing_task_queues(f->ignore_missing);
    req.set_allow_no_pollers(f->allow_no_pollers);
    auto out = c.Call(&Stub::SetWorkerDeploymentCurrentVersion, c.workflow(), req, ctx.options.namespace_name);
    if (!out.ok()) return out.status();
    printer.Object(ProtoToJson(*out),
                   {{"Current version", f->unversioned ? "(unversioned)" : absl::StrCat(f->deployment, ":", f->build_id)},
                    {"Previous", VersionText(out->previous_deployment_version())}});
    return absl::OkStatus();
  });
}

void AddSetRamping(CLI::App& group, CommandContext& ctx) {
  struct Flags : RoutingFlags {
    float percentage = 0;
    bool remove = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand(
      "set-ramping-version", "Send a share of new runs (by workflow id) to a version");
  AddRoutingFlags(cmd, *f);
  cmd->add_option("--percentage", f->percentage, "Share of workflow ids, 0 to 100");
  cmd->add_flag("--delete", f->remove, "Stop ramping (percentage 0)");
  cmd->footer("Examples:\n"
              "  tock worker deployment set-ramping-version --deployment-name billing --build-id v3 --percentage 10 --yes\n"
              "  tock worker deployment set-ramping-version --deployment-name billing --delete --yes\n");
  Act(cmd, ctx, [&ctx, f](client::Connection& c, Printer& printer) -> absl::Status {
    if (absl::Status s = CheckVersionChoice(*f, f->remove); !s.ok()) return s;
    if (!(f->percentage >= 0 && f->percentage <= 100)) {
      return absl::InvalidArgumentError("--percentage must be between 0 and 100");
    }
    const std::string what = f->remove ? absl::StrCat("stop ramping ", f->deployment)
                                       : absl::StrCat("ramp ", f->percentage, "% of ", f->deployment, " to ",
                                                      f->unversioned ? "the unversioned workers" : f->build_id);
    if (absl::Status s = Confirm(ctx, f->yes, what); !s.ok()) return s;
    absl::StatusOr<std::string> token = ConflictToken(ctx, c, f->deployment, f->allow_no_pollers);
    if (!token.ok()) return token.status();
    wf::SetWorkerDeploymentRampingVersionRequest req;
    req.set_namespace_(ctx.options.namespace_name);
    req.set_deployment_name(f->deployment);
    req.set_build_id(f->remove ? "" : f->build_id);
    req.set_percentage(f->remove ? 0 : f->percentage);
    req.set_conflict_token(*token);
    req.set_identity(c.options().identity);
    req.set_ignore_missing_task_queues(f->ignore_missing);
    req.set_allow_no_pollers(f->allow_no_pollers);
    auto out = c.Call(&Stub::SetWorkerDeploymentRampingVersion, c.workflow(), req, ctx.options.namespace_name);
    if (!out.ok()) return out.status();
    printer.Object(ProtoToJson(*out),
                   {{"Ramping version", f->remove ? "(none)" : absl::StrCat(f->unversioned ? "(unversioned)" : f->build_id,
                                                                            " at ", f->percentage, "%")},
                    {"Previous", out->previous_version()}});
    return absl::OkStatus();
  });
}

void AddUpdateMetadata(CLI::App& group, CommandContext& ctx) {
  struct Flags : VersionFlags {
    std::vector<std::string> metadata;
    std::vector<std::string> remove;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand("update-version-metadata", "Set or remove a version's metadata entries");
  AddVersionFlags(cmd, *f);
  cmd->add_option("--metadata", f->metadata, "KEY=JSON to set (repeatable)");
  cmd->add_option("--remove-entries", f->remove, "KEY to remove (repeatable)");
  cmd->footer("Examples:\n"
              "  tock worker deployment update-version-metadata --deployment-name billing --build-id v2 "
              "--metadata 'ticket=\"OPS-12\"'\n");
  Act(cmd, ctx, [&ctx, f](client::Connection& c, Printer& printer) -> absl::Status {
    wf::UpdateWorkerDeploymentVersionMetadataRequest req;
    req.set_namespace_(ctx.options.namespace_name);
    *req.mutable_deployment_version() = VersionOf(*f);
    req.set_identity(c.options().identity);
    for (const std::string& kv : f->metadata) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--metadata \"", kv.substr(0, 64), "\": write KEY=JSON (e.g. ticket='\"OPS-12\"')"));
      }
      absl::StatusOr<temporal::api::common::v1::Payload> p = admin::JsonPayload(kv.substr(eq + 1));
      if (!p.ok()) return p.status();
      (*req.mutable_upsert_entries())[kv.substr(0, eq)] = *std::move(p);
    }
    for (const std::string& key : f->remove) req.add_remove_entries(key);
    auto out = c.Call(&Stub::UpdateWorkerDeploymentVersionMetadata, c.workflow(), req, ctx.options.namespace_name);
    if (!out.ok()) return out.status();
    CardRows card;
    for (const auto& [key, value] : out->metadata().entries()) card.push_back({key, value.data()});
    printer.Object(DecodedJson(*out), card);
    return absl::OkStatus();
  });
}

void AddManagerIdentity(CLI::App& group, CommandContext& ctx) {
  CLI::App* manager = group.add_subcommand(
      "manager-identity", "Who may change the deployment's routing: set or unset");
  manager->require_subcommand(1);
  manager->footer(
      "Examples:\n"
      "  tock worker deployment manager-identity set --deployment-name billing --self --yes\n"
      "  tock worker deployment manager-identity unset --deployment-name billing --yes\n");
  for (const bool set : {true, false}) {
    struct Flags {
      std::string deployment;
      std::string identity;
      bool self = false;
      bool yes = false;
    };
    auto f = std::make_shared<Flags>();
    CLI::App* cmd = manager->add_subcommand(set ? "set" : "unset",
                                            set ? "Only this identity may change the routing"
                                                : "Anyone may change the routing again");
    cmd->add_option("--deployment-name", f->deployment, "The Worker Deployment")->required();
    if (set) {
      auto* id = cmd->add_option("--manager-identity", f->identity, "The identity");
      auto* self = cmd->add_flag("--self", f->self, "This client's identity (--identity)");
      id->excludes(self);
    }
    cmd->add_flag("-y,--yes", f->yes, "Do not ask for confirmation");
    cmd->footer(set ? "Examples:\n  tock worker deployment manager-identity set --deployment-name billing --self --yes\n"
                    : "Examples:\n  tock worker deployment manager-identity unset --deployment-name billing --yes\n");
    Act(cmd, ctx, [&ctx, f, set](client::Connection& c, Printer& printer) -> absl::Status {
      if (set && f->identity.empty() && !f->self) {
        return absl::InvalidArgumentError("give --manager-identity IDENTITY or --self");
      }
      if (absl::Status s = Confirm(ctx, f->yes, absl::StrCat(set ? "set" : "unset", " the manager identity of ", f->deployment));
          !s.ok()) {
        return s;
      }
      absl::StatusOr<std::string> token = ConflictToken(ctx, c, f->deployment, false);
      if (!token.ok()) return token.status();
      wf::SetWorkerDeploymentManagerRequest req;
      req.set_namespace_(ctx.options.namespace_name);
      req.set_deployment_name(f->deployment);
      if (f->self) {
        req.set_self(true);
      } else {
        req.set_manager_identity(f->identity);  // empty: unset
      }
      req.set_conflict_token(*token);
      req.set_identity(c.options().identity);
      auto out = c.Call(&Stub::SetWorkerDeploymentManager, c.workflow(), req, ctx.options.namespace_name);
      if (!out.ok()) return out.status();
      const std::string now = f->self ? c.options().identity : f->identity;
      printer.Object(ProtoToJson(*out), {{"Manager identity", now.empty() ? "(none)" : now},
                                         {"Previous", out->previous_manager_identity()}});
      return absl::OkStatus();
    });
  }
}

}  // namespace

void AddWorkerDeploymentCommands(CLI::App& worker, CommandContext& ctx) {
  CLI::App* group = worker.add_subcommand(
      "deployment", "Worker Deployments: versions, current and ramping version, manager identity");
  group->require_subcommand(1);
  group->footer(
      "A versioned worker (deployment name, build id) joins its version by polling; its tasks\n"
      "come once its version is current (or ramping), or for runs pinned to it.\n"
      "\n"
      "Examples:\n"
      "  tock worker deployment list\n"
      "  tock worker deployment describe --name billing\n"
      "  tock worker deployment set-current-version --deployment-name billing --build-id v2 --yes\n");
  AddList(*group, ctx);
  AddDescribe(*group, ctx);
  AddCreate(*group, ctx);
  AddDelete(*group, ctx);
  AddCreateVersion(*group, ctx);
  AddDescribeVersion(*group, ctx);
  AddDeleteVersion(*group, ctx);
  AddSetCurrent(*group, ctx);
  AddSetRamping(*group, ctx);
  AddUpdateMetadata(*group, ctx);
  AddManagerIdentity(*group, ctx);
}

}  // namespace tock::cli
