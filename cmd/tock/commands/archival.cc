#include "cmd/tock/commands/archival.h"

#include <cstdlib>
#include <memory>

#include "absl/strings/str_cat.h"
#include "cmd/tock/output/history_format.h"
#include "lib/admin/archival_ops.h"
#include "lib/common/proto_json.h"
#include "lib/common/time_format.h"

namespace tock::cli {
namespace {

using temporal::api::history::v1::HistoryEvent;

// Where an offline read finds the archive: the file provider needs nothing; S3 takes the
// region, endpoint and addressing from flags or the AWS_* environment, credentials from
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN.
struct StoreFlags {
  std::string uri;
  std::string namespace_id;
  std::string region;
  std::string endpoint;
  bool path_style = false;

  archival::ArchiveProviders Providers() const {
    archival::ArchiveProviders p;
    p.file = archival::FileProviderOptions{};
    archival::S3ProviderOptions s3;
    s3.region = region;
    for (const char* name : {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
      if (s3.region.empty() && std::getenv(name) != nullptr) s3.region = std::getenv(name);
    }
    if (s3.region.empty()) s3.region = "us-east-1";
    s3.endpoint = endpoint;
    if (s3.endpoint.empty() && std::getenv("AWS_ENDPOINT_URL") != nullptr) {
      s3.endpoint = std::getenv("AWS_ENDPOINT_URL");
    }
    s3.force_path_style = path_style;
    p.s3 = s3;
    return p;
  }
};

void AddStoreFlags(CLI::App* cmd, StoreFlags& f) {
  cmd->add_option("uri", f.uri, "Archive URI: file:///DIR or s3://BUCKET[/PREFIX]")->required();
  cmd->add_option("--namespace-id", f.namespace_id,
                  "The namespace's id (tock namespace describe NAME shows it)")
      ->required();
  cmd->add_option("--s3-region", f.region, "S3 region (default: AWS_REGION, else us-east-1)");
  cmd->add_option("--s3-endpoint", f.endpoint,
                  "S3-compatible endpoint, e.g. http://127.0.0.1:9000 (default: AWS_ENDPOINT_URL, "
                  "else AWS)");
  cmd->add_flag("--s3-force-path-style", f.path_style,
                "Address buckets in the path (http://host/bucket/key), as most S3-compatible "
                "servers want");
}

absl::Status PrintHistory(CommandContext& ctx, const temporal::api::history::v1::History& history) {
  auto printer = ctx.printer();
  if (!printer.ok()) return printer.status();
  if (printer->format() == OutputFormat::kJson) {
    ctx.out << ProtoToJson(history).dump(2) << "\n";  // the History the SDK replayer accepts
    return absl::OkStatus();
  }
  printer->BeginList({"ID", "TIME", "TYPE", "DETAILS"});
  for (const HistoryEvent& e : history.events()) printer->Row(DecodedJson(e), EventRow(e));
  printer->EndList();
  return absl::OkStatus();
}

void AddTrigger(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    std::string workflow_id;
    std::string run_id;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand(
      "trigger", "Archive a closed run now (its history stays until retention passes)");
  cmd->add_option("-w,--workflow-id", f->workflow_id, "Workflow id")->required();
  cmd->add_option("-r,--run-id", f->run_id, "Run id (default: the current run)");
  cmd->footer(
      "Example:\n"
      "  tock archival trigger --namespace orders --workflow-id order-7\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto resp =
          admin::TriggerArchival(**c, ctx.options.namespace_name, f->workflow_id, f->run_id);
      if (!resp.ok()) return resp.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->Object(ProtoToJson(*resp),
                      {{"Workflow id", f->workflow_id},
                       {"Run id", resp->run_id()},
                       {"History archived to", resp->history_archival_uri()},
                       {"Visibility archived to", resp->visibility_archival_uri()},
                       {"Deleted from the database at",
                        FormatTimestamp(FromProtoTime(resp->delete_time()))}});
      return absl::OkStatus();
    };
  });
}

std::string KindText(const tock::admin::v1::ArchivalKindStatus& k) {
  if (!k.cluster_enabled()) return "off in the cluster";
  return absl::StrCat(k.state(), k.uri().empty() ? "" : " ", k.uri(), " (", k.pending(),
                      " pending, ", k.archived(), " archived, ", k.skipped(), " skipped)");
}

void AddStatus(CLI::App& group, CommandContext& ctx) {
  CLI::App* cmd = group.add_subcommand(
      "status", "Show the archiver's progress in a namespace, with failing runs and their errors");
  cmd->footer(
      "Examples:\n"
      "  tock archival status --namespace orders\n"
      "  tock archival status -o json | jq '.failures[].lastError'\n");
  cmd->callback([&ctx] {
    ctx.action = [&ctx]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto resp = admin::GetArchivalStatus(**c, ctx.options.namespace_name);
      if (!resp.ok()) return resp.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      CardRows card = {{"Namespace", resp->namespace_()},
                       {"History", KindText(resp->history())},
                       {"Visibility", KindText(resp->visibility())},
                       {"Runs deleted", std::to_string(resp->runs_deleted())},
                       {"Failing", std::to_string(resp->failing())}};
      for (const auto& f : resp->failures()) {
        card.push_back({"Failure", absl::StrCat(f.workflow_id(), " ", f.run_id(), " after ",
                                                f.attempts(), f.attempts() == 1 ? " attempt" : " attempts",
                                                ", next ",
                                                FormatTimestamp(FromProtoTime(f.next_attempt_time())),
                                                ": ", f.last_error())});
      }
      printer->Object(ProtoToJson(*resp), card);
      return absl::OkStatus();
    };
  });
}

void AddShow(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    StoreFlags store;
    std::string workflow_id;
    std::string run_id;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand(
      "show", "Print an archived history straight from the archive (no server needed)");
  AddStoreFlags(cmd, f->store);
  cmd->add_option("-w,--workflow-id", f->workflow_id, "Workflow id")->required();
  cmd->add_option("-r,--run-id", f->run_id, "Run id")->required();
  cmd->footer(
      "Examples:\n"
      "  tock archival show file:///var/tock/archive/history --namespace-id 5f0c... -w order-7 -r 9a1b...\n"
      "  tock archival show s3://archive/tock --s3-endpoint http://127.0.0.1:9000 --s3-force-path-style \\\n"
      "      --namespace-id 5f0c... -w order-7 -r 9a1b... -o json > history.json\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      auto history = admin::ReadArchivedHistory(f->store.uri, f->store.Providers(),
                                                f->store.namespace_id, f->workflow_id, f->run_id);
      if (!history.ok()) return history.status();
      return PrintHistory(ctx, *history);
    };
  });
}

void AddList(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    StoreFlags store;
    std::string query;
    int64_t limit = 0;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand(
      "list", "List archived runs straight from a visibility archive (no server needed)");
  AddStoreFlags(cmd, f->store);
  cmd->add_option("--query", f->query,
                  "file: WorkflowId, RunId, WorkflowType, ExecutionStatus, CloseTime; s3: "
                  "WorkflowId or WorkflowType, StartTime or CloseTime with SearchPrecision");
  cmd->add_option("--limit", f->limit, "At most this many runs (default: all)");
  cmd->footer(
      "Examples:\n"
      "  tock archival list file:///var/tock/archive/visibility --namespace-id 5f0c... \\\n"
      "      --query \"ExecutionStatus = 'failed' AND CloseTime > '2026-11-01T00:00:00Z'\"\n"
      "  tock archival list s3://archive/vis --namespace-id 5f0c... \\\n"
      "      --query \"WorkflowType = 'order' AND CloseTime = '2026-11-02T00:00:00Z' AND SearchPrecision = 'Day'\"\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->BeginList(ExecutionColumns());
      absl::Status s = admin::ListArchivedOffline(
          f->store.uri, f->store.Providers(), f->store.namespace_id, f->query, f->limit,
          [&](const temporal::api::workflow::v1::WorkflowExecutionInfo& e) {
            printer->Row(DecodedJson(e), ExecutionRow(e));
            return absl::OkStatus();
          });
      if (!s.ok() && printer->rows_seen() == 0) return s;
      printer->EndList();
      printer->EmptyNote("No archived runs.");
      return s;
    };
  });
}

}  // namespace

void AddArchivalCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* group = app.add_subcommand(
      "archival", "Archive closed runs, watch the archiver, read archives (also offline)");
  group->require_subcommand(1);
  group->footer(
      "Examples:\n"
      "  tock archival status --namespace orders\n"
      "  tock archival trigger --namespace orders --workflow-id order-7\n"
      "  tock archival list file:///var/tock/archive/visibility --namespace-id 5f0c... --query \"WorkflowId = 'order-7'\"\n");
  AddTrigger(*group, ctx);
  AddStatus(*group, ctx);
  AddShow(*group, ctx);
  AddList(*group, ctx);
}

}  // namespace tock::cli
