#include "cmd/tock/commands/cluster.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cmd/tock/commands/cluster_dlq.h"
#include "lib/admin/cluster_ops.h"
#include "lib/common/duration.h"
#include "lib/common/proto_json.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"

namespace tock::cli {
namespace {

namespace op = temporal::api::operatorservice::v1;

std::string EnabledLabel(bool enabled) { return enabled ? "enabled" : "disabled"; }

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
  cmd->footer(
      "The current cluster and its remote clusters, with the Temporal CLI's columns; -o json "
      "and -o jsonl print each ClusterMetadata of ListClusters.\n"
      "\n"
      "Examples:\n"
      "  tock cluster list\n"
      "  tock cluster list -o jsonl\n");
  cmd->callback([&ctx] {
    ctx.action = [&ctx]() -> absl::Status {
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      absl::StatusOr<Printer> printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->BeginList({"NAME", "CLUSTER ID", "ADDRESS", "HISTORY SHARDS",
                          "INITIAL FAILOVER VERSION", "CONNECTION", "REPLICATION"});
      absl::Status s = admin::ListClusters(**connection, [&](const op::ClusterMetadata& m) {
        printer->Row(
            ProtoToJson(m),
            {m.cluster_name(), m.cluster_id(), m.address(), std::to_string(m.history_shard_count()),
             std::to_string(m.initial_failover_version()), EnabledLabel(m.is_connection_enabled()),
             EnabledLabel(m.is_replication_enabled())});
        return absl::OkStatus();
      });
      // A list that failed before its first row prints nothing, only the error.
      if (!s.ok() && printer->rows_seen() == 0) return s;
      printer->EndList();
      return s;
    };
  });
}

// A bool flag that also takes a value: --enable-connection, --enable-connection=false and
// --enable-connection false all work (true or false, any case).
CLI::Option* AddBoolValue(CLI::App& cmd, const std::string& name, bool& value,
                          const std::string& description) {
  return cmd.add_option(name, value, description)
      ->expected(0, 1)
      ->default_str(value ? "true" : "false")
      ->check(CLI::IsMember({"true", "false"}, CLI::ignore_case));
}

void AddUpsert(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    std::string frontend_address;
    bool enable_connection = true;
    bool enable_replication = true;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand(
      "upsert", "Add a remote cluster by its frontend address, or update one already added");
  cmd->add_option("--frontend-address", f->frontend_address,
                  "The remote cluster's frontend, HOST:PORT, reachable from the server")
      ->required();
  AddBoolValue(*cmd, "--enable-connection", f->enable_connection,
               "Connect to the remote cluster (false keeps it known but disconnected)");
  AddBoolValue(*cmd, "--enable-replication", f->enable_replication,
               "Replicate to and from the remote cluster");
  cmd->footer(
      "The server connects to the frontend and takes the cluster's name, id, shard count and "
      "initial failover version from its answer, so the same address upserted again updates "
      "that cluster. The server's own address is refused (\"Cannot update current cluster "
      "metadata from rpc calls.\", exit 2), as is a frontend it cannot reach (exit 4). Prints "
      "\"Upserted cluster HOST:PORT\"; -o json prints the AddOrUpdateRemoteClusterRequest "
      "sent.\n"
      "\n"
      "Examples:\n"
      "  tock cluster upsert --frontend-address 10.0.1.5:7233\n"
      "  tock cluster upsert --frontend-address 10.0.1.5:7233 --enable-connection=false\n"
      "  tock cluster upsert --frontend-address b.internal:7233 --enable-replication false\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      // Checked before connecting: a bad address needs no server to be refused.
      if (absl::Status s = admin::CheckClusterAddress(f->frontend_address); !s.ok()) return s;
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      if (absl::Status s = admin::UpsertRemoteCluster(**connection, f->frontend_address,
                                                      f->enable_connection, f->enable_replication);
          !s.ok()) {
        return s;
      }
      if (printer->format() == OutputFormat::kJson || printer->format() == OutputFormat::kJsonl) {
        op::AddOrUpdateRemoteClusterRequest req;
        req.set_frontend_address(f->frontend_address);
        req.set_enable_remote_cluster_connection(f->enable_connection);
        req.set_enable_replication(f->enable_replication);
        printer->Object(ProtoToJson(req), {});
      } else {
        ctx.out << "Upserted cluster " << f->frontend_address << "\n";
      }
      return absl::OkStatus();
    };
  });
}

void AddRemove(CLI::App& group, CommandContext& ctx) {
  auto name = std::make_shared<std::string>();
  CLI::App* cmd = group.add_subcommand("remove", "Remove a remote cluster");
  cmd->add_option("--name", *name, "The remote cluster's name (as tock cluster list shows it)")
      ->required();
  cmd->footer(
      "The current cluster cannot be removed, nor a cluster that a namespace still has among "
      "its clusters. An unknown name is exit 3. Prints \"Removed cluster NAME\"; -o json "
      "prints the RemoveRemoteClusterRequest sent.\n"
      "\n"
      "Examples:\n"
      "  tock cluster remove --name b\n"
      "  tock cluster remove --name b -o json\n");
  cmd->callback([&ctx, name] {
    ctx.action = [&ctx, name]() -> absl::Status {
      if (absl::Status s = admin::CheckClusterName(*name); !s.ok()) return s;
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      if (absl::Status s = admin::RemoveRemoteCluster(**connection, *name); !s.ok()) return s;
      if (printer->format() == OutputFormat::kJson || printer->format() == OutputFormat::kJsonl) {
        op::RemoveRemoteClusterRequest req;
        req.set_cluster_name(*name);
        printer->Object(ProtoToJson(req), {});
      } else {
        ctx.out << "Removed cluster " << *name << "\n";
      }
      return absl::OkStatus();
    };
  });
}

void AddReplicationStatus(CLI::App& group, CommandContext& ctx) {
  auto remote = std::make_shared<std::string>();
  CLI::App* cmd = group.add_subcommand(
      "replication-status",
      "Show replication with the remote clusters: what was pulled from each, what each acked");
  cmd->add_option("--remote", *remote, "Only this remote cluster (as tock cluster list shows it)");
  cmd->footer(
      "One row per remote cluster and direction: IN is what this cluster pulled and applied "
      "from the remote (the namespace queue, then each of the remote's shards: the last task "
      "id applied, when it last pulled, the last error); OUT is what the remote acknowledged "
      "of this cluster's queues (the last task id, the acked one, the tasks between). A last "
      "task id of -1 means nothing was pulled since this server started; DLQ is how many "
      "tasks of the remote's shard (or namespace queue) are in this cluster's replication "
      "DLQ (tock cluster dlq, --type namespace for the namespace queue's).\n"
      "\n"
      "Examples:\n"
      "  tock cluster replication-status\n"
      "  tock cluster replication-status --remote b -o json\n");
  cmd->callback([&ctx, remote] {
    ctx.action = [&ctx, remote]() -> absl::Status {
      auto connection = ctx.connection();
      if (!connection.ok()) return connection.status();
      auto status = admin::GetReplicationStatus(**connection, *remote);
      if (!status.ok()) return status.status();
      absl::StatusOr<Printer> printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->BeginList({"REMOTE", "DIRECTION", "QUEUE", "TASK ID", "ACKED", "LAG", "DLQ",
                          "LAST PULL", "ERROR"});
      for (const auto& r : status->remotes()) {
        nlohmann::json ns = {{"remote", r.cluster_name()}, {"direction", "in"},
                             {"queue", "namespaces"},
                             {"taskId", r.namespace_last_retrieved_task_id()},
                             {"dlqTasks", r.namespace_dlq_tasks()},
                             {"error", r.namespace_last_error()}};
        printer->Row(ns, {r.cluster_name(), "IN", "namespaces",
                          std::to_string(r.namespace_last_retrieved_task_id()), "", "",
                          std::to_string(r.namespace_dlq_tasks()), "", r.namespace_last_error()});
        for (const auto& in : r.inbound()) {
          nlohmann::json row = ProtoToJson(in);
          row["remote"] = r.cluster_name();
          row["direction"] = "in";
          printer->Row(row, {r.cluster_name(), "IN", absl::StrCat("shard ", in.shard_id()),
                             std::to_string(in.last_retrieved_task_id()), "", "",
                             std::to_string(in.dlq_tasks()),
                             in.has_last_pull_time()
                                 ? FormatTimestamp(FromProtoTime(in.last_pull_time()))
                                 : "",
                             in.last_error()});
        }
        nlohmann::json out_ns = {{"remote", r.cluster_name()}, {"direction", "out"},
                                 {"queue", "namespaces"}, {"maxTaskId", r.namespace_max_task_id()},
                                 {"ackedTaskId", r.namespace_acked_task_id()}};
        printer->Row(out_ns, {r.cluster_name(), "OUT", "namespaces",
                              std::to_string(r.namespace_max_task_id()),
                              std::to_string(r.namespace_acked_task_id()), "", "", "", ""});
        for (const auto& out : r.outbound()) {
          nlohmann::json row = ProtoToJson(out);
          row["remote"] = r.cluster_name();
          row["direction"] = "out";
          printer->Row(row, {r.cluster_name(), "OUT", absl::StrCat("shard ", out.shard_id()),
                             std::to_string(out.max_task_id()), std::to_string(out.acked_task_id()),
                             std::to_string(out.lag_tasks()), "", "", ""});
        }
      }
      printer->EndList();
      return absl::OkStatus();
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
  CLI::App* group = app.add_subcommand(
      "cluster", "Inspect the cluster and its peers, add and remove remote clusters");
  group->require_subcommand(1);
  group->footer(
      "Examples:\n  tock cluster describe\n  tock cluster list\n  tock cluster members\n"
      "  tock cluster shards\n  tock cluster upsert --frontend-address 10.0.1.5:7233\n"
      "  tock cluster remove --name b\n  tock cluster replication-status\n"
      "  tock cluster dlq read\n");
  AddDescribe(*group, ctx);
  AddList(*group, ctx);
  AddUpsert(*group, ctx);
  AddRemove(*group, ctx);
  AddReplicationStatus(*group, ctx);
  AddClusterDlqCommands(*group, ctx);
  AddMembers(*group, ctx);
  AddShards(*group, ctx);
}

}  // namespace tock::cli
