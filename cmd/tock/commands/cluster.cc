#include "cmd/tock/commands/cluster.h"

#include "absl/strings/str_cat.h"
#include "lib/common/proto_json.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "temporal/api/operatorservice/v1/service.grpc.pb.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"

namespace tock::cli {
namespace {

namespace wf = temporal::api::workflowservice::v1;
namespace op = temporal::api::operatorservice::v1;

void AddDescribe(CLI::App& group, CommandContext& ctx) {
  CLI::App* cmd = group.add_subcommand("describe", "Show the cluster the server belongs to");
  cmd->footer("Examples:\n  tock cluster describe\n  tock cluster describe -o json\n");
  cmd->callback([&ctx] {
    ctx.action = [&ctx]() -> absl::Status {
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      client::Connection& c = **connection;
      auto info = c.Call(&wf::WorkflowService::Stub::GetClusterInfo, c.workflow(),
                         wf::GetClusterInfoRequest());
      if (!info.ok()) return info.status();
      // Tock's own view adds the cluster metadata; other Temporal servers lack it.
      auto tock = c.Call(&tock::admin::v1::AdminService::Stub::DescribeCluster, c.admin(),
                         tock::admin::v1::DescribeClusterRequest());
      if (!tock.ok() && tock.status().code() != absl::StatusCode::kUnimplemented) {
        return tock.status();
      }
      nlohmann::json json = ProtoToJson(*info);
      CardRows card = {
          {"Cluster", info->cluster_name()},
          {"Cluster id", info->cluster_id()},
          {"Server version", info->server_version()},
          {"History shards", std::to_string(info->history_shard_count())},
          {"Persistence", info->persistence_store()},
          {"Initial failover version", std::to_string(info->initial_failover_version())},
          {"Failover version increment", std::to_string(info->failover_version_increment())},
      };
      if (tock.ok()) {
        json["tock"] = ProtoToJson(*tock);
        card.emplace_back("Master cluster", tock->master_cluster_name());
        card.emplace_back("Global namespaces", tock->enable_global_namespace() ? "enabled" : "disabled");
        card.emplace_back("Database", absl::StrCat(tock->persistence_engine(), " ",
                                                   tock->persistence_location()));
        card.emplace_back("Started", FormatTimestamp(FromProtoTime(tock->server_start_time())));
      }
      absl::StatusOr<Printer> printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->Object(json, card);
      return absl::OkStatus();
    };
  });
}

void AddList(CLI::App& group, CommandContext& ctx) {
  CLI::App* cmd = group.add_subcommand("list", "List the clusters the server knows");
  cmd->footer("Examples:\n  tock cluster list\n  tock cluster list -o jsonl\n");
  cmd->callback([&ctx] {
    ctx.action = [&ctx]() -> absl::Status {
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      client::Connection& c = **connection;
      auto clusters = c.Call(&op::OperatorService::Stub::ListClusters, c.operator_service(),
                             op::ListClustersRequest());
      if (!clusters.ok()) return clusters.status();
      absl::StatusOr<Printer> printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->BeginList({"NAME", "ADDRESS", "INITIAL FAILOVER VERSION", "ENABLED", "REPLICATION"});
      for (const auto& m : clusters->clusters()) {
        printer->Row(ProtoToJson(m), {m.cluster_name(), m.address(),
                                      std::to_string(m.initial_failover_version()),
                                      m.is_connection_enabled() ? "yes" : "no",
                                      m.is_replication_enabled() ? "yes" : "no"});
      }
      printer->EndList();
      return absl::OkStatus();
    };
  });
}

}  // namespace

void AddClusterCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* group = app.add_subcommand("cluster", "Inspect the cluster and its peers");
  group->require_subcommand(1);
  group->footer("Examples:\n  tock cluster describe\n  tock cluster list\n");
  AddDescribe(*group, ctx);
  AddList(*group, ctx);
}

}  // namespace tock::cli
