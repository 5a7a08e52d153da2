#include "cmd/tock/commands/worker.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "cmd/tock/commands/worker_deployment.h"
#include "cmd/tock/output/history_format.h"
#include "lib/common/proto_json.h"

namespace tock::cli {
namespace {

namespace wf = temporal::api::workflowservice::v1;
namespace wk = temporal::api::worker::v1;
using Stub = wf::WorkflowService::Stub;

std::string StatusName(temporal::api::enums::v1::WorkerStatus s) {
  switch (s) {
    case temporal::api::enums::v1::WORKER_STATUS_RUNNING: return "Running";
    case temporal::api::enums::v1::WORKER_STATUS_SHUTTING_DOWN: return "ShuttingDown";
    case temporal::api::enums::v1::WORKER_STATUS_SHUTDOWN: return "Shutdown";
    default: return "";
  }
}

std::string Deployment(const temporal::api::deployment::v1::WorkerDeploymentVersion& v) {
  if (v.deployment_name().empty() && v.build_id().empty()) return "";
  return absl::StrCat(v.deployment_name(), ":", v.build_id());
}

std::string Sdk(const std::string& name, const std::string& version) {
  return version.empty() ? name : absl::StrCat(name, " ", version);
}

std::string Time(const google::protobuf::Timestamp& t) {
  return t.seconds() == 0 && t.nanos() == 0 ? "" : TimestampText(t);
}

std::string Pollers(const wk::WorkerPollerInfo& p) {
  return absl::StrCat(p.current_pollers(), p.is_autoscaling() ? " (autoscaling)" : "");
}

std::string Slots(const wk::WorkerSlotsInfo& s) {
  return absl::StrCat(s.current_used_slots(), " used, ", s.current_available_slots(), " free; ",
                      s.total_processed_tasks(), " done, ", s.total_failed_tasks(), " failed");
}

CardRows WorkerCard(const wk::WorkerHeartbeat& h) {
  return {{"Instance key", h.worker_instance_key()},
          {"Identity", h.worker_identity()},
          {"Task queue", h.task_queue()},
          {"Status", StatusName(h.status())},
          {"SDK", Sdk(h.sdk_name(), h.sdk_version())},
          {"Deployment", Deployment(h.deployment_version())},
          {"Host", h.host_info().host_name()},
          {"Process", h.host_info().process_id()},
          {"Started", Time(h.start_time())},
          {"Last heartbeat", Time(h.heartbeat_time())},
          {"Workflow pollers", Pollers(h.workflow_poller_info())},
          {"Activity pollers", Pollers(h.activity_poller_info())},
          {"Workflow task slots", Slots(h.workflow_task_slots_info())},
          {"Activity task slots", Slots(h.activity_task_slots_info())},
          {"Sticky cache", absl::StrCat(h.current_sticky_cache_size(), " runs; ",
                                        h.total_sticky_cache_hit(), " hits, ",
                                        h.total_sticky_cache_miss(), " misses")}};
}

void AddList(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    std::string query;
    int64_t limit = 0;
    bool include_system = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand("list", "List the workers that heartbeat to the namespace");
  cmd->add_option("-q,--query", f->query,
                  "Filter: TaskQueue, WorkerIdentity, HostName, SdkName, DeploymentName, "
                  "BuildId, WorkerStatus, StartTime, HeartbeatTime, ... "
                  "(e.g. \"TaskQueue = 'orders'\")");
  cmd->add_option("--limit", f->limit, "At most this many workers (default: all)");
  cmd->add_flag("--include-system-workers", f->include_system,
                "Also the server's own workers (task queues named temporal-sys...)");
  cmd->footer(
      "A worker is listed while its heartbeats come (SDKs send one a minute; one not heard\n"
      "from for five minutes is gone). -o json prints each WorkerListInfo.\n"
      "\n"
      "Examples:\n"
      "  tock worker list\n"
      "  tock worker list --query \"TaskQueue = 'orders' AND WorkerStatus = 'Running'\"\n"
      "  tock worker list -o jsonl | jq -r .workerInstanceKey\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      wf::ListWorkersRequest req;
      req.set_namespace_(ctx.options.namespace_name);
      req.set_query(f->query);
      req.set_include_system_workers(f->include_system);
      req.set_page_size(static_cast<int32_t>(f->limit > 0 && f->limit < 1000 ? f->limit : 1000));
      printer->BeginList({"INSTANCE KEY", "IDENTITY", "TASK QUEUE", "STATUS", "SDK", "HOST", "STARTED"});
      int64_t seen = 0;
      absl::Status status;
      do {
        auto page = (*c)->Call(&Stub::ListWorkers, (*c)->workflow(), req, ctx.options.namespace_name);
        if (!page.ok()) {
          status = page.status();
          break;
        }
        for (const wk::WorkerListInfo& w : page->workers()) {
          if (f->limit > 0 && seen >= f->limit) break;
          printer->Row(ProtoToJson(w), {w.worker_instance_key(), w.worker_identity(), w.task_queue(),
                                        StatusName(w.status()), Sdk(w.sdk_name(), w.sdk_version()),
                                        w.host_name(), Time(w.start_time())});
          ++seen;
        }
        req.set_next_page_token(page->next_page_token());
      } while (!req.next_page_token().empty() && (f->limit <= 0 || seen < f->limit));
      if (!status.ok() && printer->rows_seen() == 0) return status;
      printer->EndList();
      printer->EmptyNote("No workers heartbeat to this namespace.");
      return status;
    };
  });
}

void AddDescribe(CLI::App& group, CommandContext& ctx) {
  auto key = std::make_shared<std::string>();
  CLI::App* cmd = group.add_subcommand(
      "describe", "Show a worker's last heartbeat: host, SDK, pollers, slots, sticky cache");
  cmd->add_option("--worker-instance-key", *key, "The worker's instance key (tock worker list)")
      ->required();
  cmd->footer(
      "-o json prints the WorkerInfo (its whole last heartbeat).\n"
      "\n"
      "Examples:\n"
      "  tock worker describe --worker-instance-key 5f0c2b8e-0d6a-4c1e-9f7a-3b2d1e0c9a88\n");
  cmd->callback([&ctx, key] {
    ctx.action = [&ctx, key]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      wf::DescribeWorkerRequest req;
      req.set_namespace_(ctx.options.namespace_name);
      req.set_worker_instance_key(*key);
      auto out = (*c)->Call(&Stub::DescribeWorker, (*c)->workflow(), req, ctx.options.namespace_name);
      if (!out.ok()) return out.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->Object(ProtoToJson(out->worker_info()), WorkerCard(out->worker_info().worker_heartbeat()));
      return absl::OkStatus();
    };
  });
}

void AddCount(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    std::string query;
    bool include_system = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand("count", "Count the workers that heartbeat to the namespace");
  cmd->add_option("-q,--query", f->query, "Filter, as tock worker list takes it");
  cmd->add_flag("--include-system-workers", f->include_system,
                "Also the server's own workers (task queues named temporal-sys...)");
  cmd->footer(
      "Examples:\n"
      "  tock worker count\n"
      "  tock worker count --query \"SdkName = 'temporal-typescript'\" -o json\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      wf::CountWorkersRequest req;
      req.set_namespace_(ctx.options.namespace_name);
      req.set_query(f->query);
      req.set_include_system_workers(f->include_system);
      auto out = (*c)->Call(&Stub::CountWorkers, (*c)->workflow(), req, ctx.options.namespace_name);
      if (!out.ok()) return out.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->Object({{"count", out->count()}}, {{"Workers", absl::StrCat(out->count())}});
      return absl::OkStatus();
    };
  });
}

}  // namespace

void AddWorkerCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* group = app.add_subcommand(
      "worker", "Workers that heartbeat to the namespace (list, describe, count) and Worker Deployments");
  group->require_subcommand(1);
  group->footer(
      "Examples:\n"
      "  tock worker list --query \"TaskQueue = 'orders'\"\n"
      "  tock worker describe --worker-instance-key KEY\n"
      "  tock worker count\n"
      "  tock worker deployment describe --name billing\n");
  AddList(*group, ctx);
  AddDescribe(*group, ctx);
  AddCount(*group, ctx);
  AddWorkerDeploymentCommands(*group, ctx);
}

}  // namespace tock::cli
