#include "cmd/tock/commands/cluster.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/admin/cluster_ops.h"
#include "lib/common/duration.h"
#include "lib/common/proto_json.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"

namespace tock::cli {
namespace {

namespace op = temporal::api::operatorservice::v1;

void AddDescribe(CLI::App& group, CommandContext& ctx) {
  CLI::App* cmd = group.add_subcommand("describe", "Show the cluster the server belongs to");
  cmd->footer("Examples:\n  tock cluster describe\n  tock cluster describe -o json\n");
  cmd->callback([&ctx] {
    ctx.action = [&ctx]() -> absl::Status {
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      auto cluster = admin::DescribeCluster(**connection);
      if (!cluster.ok()) return cluster.status();
      const auto* info = &cluster->info;
      const auto& tock = cluster->tock;
      // GetClusterInfo's canonical JSON, with Tock's own view under "tock" when the server
      // has it (a Temporal server has not).
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
      if (tock.has_value()) {
        json["tock"] = ProtoToJson(*tock);
        card.emplace_back("Master cluster", tock->master_cluster_name());
        card.emplace_back("Global namespaces", tock->enable_global_namespace() ? "enabled" : "disabled");
        card.emplace_back("Database", absl::StrCat(tock->persistence_engine(), " ",
                                                   tock->persistence_location()));
        std::vector<std::string> members;
        for (const auto& m : tock->clusters()) {
          members.push_back(absl::StrCat(m.cluster_name(), " (initial version ",
                                         m.initial_failover_version(), ", ", m.rpc_address(),
                                         m.enabled() ? "" : ", disabled", ")"));
        }
        card.emplace_back("Clusters", absl::StrJoin(members, "; "));
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
      absl::StatusOr<Printer> printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->BeginList({"NAME", "ADDRESS", "INITIAL FAILOVER VERSION", "ENABLED", "REPLICATION"});
      absl::Status s = admin::ListClusters(**connection, [&](const op::ClusterMetadata& m) {
        printer->Row(ProtoToJson(m), {m.cluster_name(), m.address(),
                                      std::to_string(m.initial_failover_version()),
                                      m.is_connection_enabled() ? "yes" : "no",
                                      m.is_replication_enabled() ? "yes" : "no"});
        return absl::OkStatus();
      });
      // A list that failed before its first row prints nothing, only the error.
      if (!s.ok() && printer->rows_seen() == 0) return s;
      printer->EndList();
      return s;
    };
  });
}

void AddMembers(CLI::App& group, CommandContext& ctx) {
  CLI::App* cmd = group.add_subcommand(
      "members", "List the tock-server hosts of the cluster's database and the shards each owns");
  cmd->footer("Examples:\n  tock cluster members\n  tock cluster members -o json\n");
  cmd->callback([&ctx] {
    ctx.action = [&ctx]() -> absl::Status {
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      auto members = admin::ListClusterMembers(**connection);
      if (!members.ok()) return members.status();
      absl::StatusOr<Printer> printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->BeginList({"ADDRESS", "ALIVE", "SHARDS", "HEARTBEAT AGE", "STARTED", "HOST ID"});
      for (const auto& m : members->members()) {
        printer->Row(ProtoToJson(m),
                     {m.address(), m.alive() ? "yes" : "no", std::to_string(m.shards_owned()),
                      FormatHumanDuration(absl::Milliseconds(
                          absl::ToInt64Milliseconds(FromProtoDuration(m.heartbeat_age())))),
                      FormatTimestamp(FromProtoTime(m.session_start())), m.host_id()});
      }
      printer->EndList();
      return absl::OkStatus();
    };
  });
}

void AddShards(CLI::App& group, CommandContext& ctx) {
  CLI::App* cmd = group.add_subcommand("shards", "List the history shards, their owners and range ids");
  cmd->footer("Examples:\n  tock cluster shards\n  tock cluster shards -o jsonl\n");
  cmd->callback([&ctx] {
    ctx.action = [&ctx]() -> absl::Status {
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      auto shards = admin::ListShards(**connection);
      if (!shards.ok()) return shards.status();
      absl::StatusOr<Printer> printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->BeginList({"SHARD", "OWNER", "RANGE ID", "CLAIMED"});
      for (const auto& s : shards->shards()) {
        printer->Row(ProtoToJson(s), {std::to_string(s.shard_id()), s.owner(),
                                      std::to_string(s.range_id()),
                                      FormatTimestamp(FromProtoTime(s.claimed()))});
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
  group->footer(
      "Examples:\n  tock cluster describe\n  tock cluster list\n  tock cluster members\n"
      "  tock cluster shards\n");
  AddDescribe(*group, ctx);
  AddList(*group, ctx);
  AddMembers(*group, ctx);
  AddShards(*group, ctx);
}

}  // namespace tock::cli
