#include "cmd/tock/commands/batch.h"

#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "cmd/tock/commands/batch_request.h"
#include "cmd/tock/commands/confirm.h"
#include "cmd/tock/interrupt.h"
#include "lib/admin/workflow_ops.h"
#include "lib/common/proto_json.h"

namespace tock::cli {
namespace {

namespace wf = temporal::api::workflowservice::v1;
using Stub = wf::WorkflowService::Stub;
using Describe = wf::DescribeBatchOperationResponse;

// How often a waiting command asks for the batch's progress.
constexpr auto kPollInterval = std::chrono::milliseconds(250);

absl::StatusOr<Describe> DescribeBatch(client::Connection& c, const std::string& namespace_name,
                                       const std::string& job_id) {
  wf::DescribeBatchOperationRequest req;
  req.set_namespace_(namespace_name);
  req.set_job_id(job_id);
  return c.Call(&Stub::DescribeBatchOperation, c.workflow(), req, namespace_name);
}

absl::Status StoppedWaiting(const std::string& job_id) {
  return absl::CancelledError(absl::StrCat(
      "stopped waiting; batch ", job_id, " goes on (tock batch describe --job-id ", job_id,
      " shows it, tock batch stop --job-id ", job_id, " --reason R stops it)"));
}

// Polls DescribeBatchOperation until the batch is finished, calling `progress` with each
// answer. Ctrl-C stops the waiting (not the batch): CANCELLED naming the job.
absl::StatusOr<Describe> WaitForBatch(CommandContext& ctx, client::Connection& c,
                                      const std::string& job_id,
                                      const std::function<void(const Describe&)>& progress) {
  std::optional<InterruptWatcher> watcher;
  if (!InterruptWatcher::active()) watcher.emplace([&ctx] { ctx.Interrupt(); });
  while (true) {
    absl::StatusOr<Describe> d = DescribeBatch(c, ctx.options.namespace_name, job_id);
    if (ctx.interrupted()) return StoppedWaiting(job_id);
    if (!d.ok()) return d.status();
    progress(*d);
    if (BatchFinished(d->state())) return d;
    // In slices, so that Ctrl-C answers at once.
    const auto until = std::chrono::steady_clock::now() + kPollInterval;
    while (std::chrono::steady_clock::now() < until && !ctx.interrupted()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    if (ctx.interrupted()) return StoppedWaiting(job_id);
  }
}

// The end of a waited-for batch: the card (or the DescribeBatchOperationResponse), and an
// error when the batch failed (it was stopped, or the server gave up on it).
absl::Status PrintFinished(Printer& printer, const Describe& d) {
  printer.Object(ProtoToJson(d), BatchCard(d));
  if (d.state() == temporal::api::enums::v1::BATCH_OPERATION_STATE_FAILED) {
    return absl::UnknownError(
        absl::StrCat("batch ", d.job_id(), " ended in state Failed after ",
                     d.complete_operation_count() + d.failure_operation_count(), " of ",
                     d.total_operation_count(), " operations"));
  }
  return absl::OkStatus();
}

absl::Status RunStart(CommandContext& ctx, BatchKind kind, const BatchStartFlags& f) {
  // Bad flags and a missing --yes off a terminal are reported before connecting.
  auto options = ToConnectionOptions(ctx.options);
  if (!options.ok()) return options.status();
  auto req = MakeStartBatchRequest(kind, f, ctx.options.namespace_name, options->identity);
  if (!req.ok()) return req.status();
  return StartAndFollowBatch(ctx, *req, absl::StrCat("start batch ", BatchKindName(kind)), f.yes,
                             f.no_wait);
}

void AddStart(CLI::App& group, CommandContext& ctx, BatchKind kind) {
  auto f = std::make_shared<BatchStartFlags>();
  const std::string name = BatchKindName(kind);
  const char* description = "";
  std::string example;
  switch (kind) {
    case BatchKind::kTerminate:
      description = "Terminate every workflow the query matches (their code gets no say)";
      example =
          "  tock batch terminate --query \"WorkflowType = 'order' AND ExecutionStatus = "
          "'Running'\" --reason \"bad deploy\"\n";
      break;
    case BatchKind::kCancel:
      description = "Ask every workflow the query matches to cancel (their code decides how)";
      example =
          "  tock batch cancel --query \"CustomerId = 'c-42'\" --reason \"customer left\" "
          "--yes\n";
      break;
    case BatchKind::kSignal:
      description = "Send a signal to every workflow the query matches";
      example =
          "  tock batch signal --query \"WorkflowType = 'order'\" --name approve --input "
          "true --reason \"approved in bulk\"\n";
      break;
    case BatchKind::kDelete:
      description = "Delete every run the query matches, with its history";
      example =
          "  tock batch delete --query \"ExecutionStatus = 'Terminated'\" --reason cleanup "
          "--rps 20 --yes\n";
      break;
  }
  CLI::App* cmd = group.add_subcommand(name, description);
  cmd->add_option("--query", f->query,
                  "Visibility query of the workflows, e.g. \"WorkflowType = 'order'\"")
      ->required();
  cmd->add_option("--reason", f->reason, "Why (recorded with the batch)")->required();
  if (kind == BatchKind::kSignal) {
    cmd->add_option("--name", f->signal_name, "Signal name")->required();
    cmd->add_option("-i,--input", f->inputs, "An argument of the signal as JSON (repeatable)");
  }
  cmd->add_option("--rps", f->rps,
                  "At most this many operations per second (default: the server's limit)");
  cmd->add_option("--job-id", f->job_id, "Id of the new batch job (default: a new UUID)");
  cmd->add_flag("-y,--yes", f->yes, "Start at once: no count of the workflows, no question");
  cmd->add_flag("--no-wait", f->no_wait, "Print the job id and return once the batch started");
  cmd->footer(
      "Counts the workflows of the query and asks before starting (--yes: neither; off a\n"
      "terminal --yes is required). Then waits for the batch to finish: on a terminal with a\n"
      "progress bar and a summary, elsewhere printing the DescribeBatchOperationResponse at the\n"
      "end (-o json); --no-wait prints {\"jobId\": ...} at once. Ctrl-C stops the waiting, not\n"
      "the batch. Exit 1 when the batch failed (tock batch stop); operations that failed on\n"
      "single workflows are counted in failureOperationCount.\n"
      "\n"
      "Examples:\n" +
      example + "  tock batch " + name + " --query \"WorkflowId STARTS_WITH 'load-'\"" +
      (kind == BatchKind::kSignal ? " --name stop" : "") +
      " --reason test --yes --no-wait -o json\n");
  cmd->callback([&ctx, f, kind] {
    ctx.action = [&ctx, f, kind]() -> absl::Status { return RunStart(ctx, kind, *f); };
  });
}

void AddList(CLI::App& group, CommandContext& ctx) {
  auto limit = std::make_shared<int64_t>(0);
  CLI::App* cmd = group.add_subcommand("list", "List the namespace's batch jobs (streams)");
  cmd->add_option("--limit", *limit, "At most this many jobs (default: all)");
  cmd->footer(
      "-o json prints each BatchOperationInfo (jobId, state, startTime, closeTime, "
      "operationType).\n"
      "\n"
      "Examples:\n"
      "  tock batch list\n"
      "  tock batch list -o jsonl | jq -r 'select(.state == \"BATCH_OPERATION_STATE_RUNNING\") "
      "| .jobId'\n");
  cmd->callback([&ctx, limit] {
    ctx.action = [&ctx, limit]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      wf::ListBatchOperationsRequest req;
      req.set_namespace_(ctx.options.namespace_name);
      req.set_page_size(static_cast<int32_t>(*limit > 0 && *limit < 100 ? *limit : 100));
      printer->BeginList(BatchColumns());
      int64_t seen = 0;
      absl::Status status;
      do {
        auto page = (*c)->Call(&Stub::ListBatchOperations, (*c)->workflow(), req,
                               ctx.options.namespace_name);
        if (!page.ok()) {
          status = page.status();
          break;
        }
        for (const auto& info : page->operation_info()) {
          if (*limit > 0 && seen >= *limit) break;
          printer->Row(ProtoToJson(info), BatchRow(info));
          ++seen;
        }
        req.set_next_page_token(page->next_page_token());
      } while (!req.next_page_token().empty() && (*limit <= 0 || seen < *limit));
      if (!status.ok() && printer->rows_seen() == 0) return status;
      printer->EndList();
      printer->EmptyNote("No batch jobs.");
      return status;
    };
  });
}

void AddDescribe(CLI::App& group, CommandContext& ctx) {
  auto job_id = std::make_shared<std::string>();
  CLI::App* cmd = group.add_subcommand(
      "describe", "Show a batch job: type, state, reason, query, counts and times");
  cmd->add_option("--job-id", *job_id, "Batch job id")->required();
  cmd->footer(
      "-o json prints the DescribeBatchOperationResponse.\n"
      "\n"
      "Examples:\n"
      "  tock batch describe --job-id 5f0c2b8e-0d6a-4c1e-9f7a-3b2d1e0c9a88\n"
      "  tock batch describe --job-id cleanup-7 -o json | jq .completeOperationCount\n");
  cmd->callback([&ctx, job_id] {
    ctx.action = [&ctx, job_id]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto d = DescribeBatch(**c, ctx.options.namespace_name, *job_id);
      if (!d.ok()) return d.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->Object(ProtoToJson(*d), BatchCard(*d));
      return absl::OkStatus();
    };
  });
}

void AddStop(CLI::App& group, CommandContext& ctx) {
  struct Flags {
    std::string job_id;
    std::string reason;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = group.add_subcommand(
      "stop", "Stop a running batch job (what it did stays done; its state becomes Failed)");
  cmd->add_option("--job-id", f->job_id, "Batch job id")->required();
  cmd->add_option("--reason", f->reason, "Why (recorded with the batch)")->required();
  cmd->footer(
      "Examples:\n"
      "  tock batch stop --job-id cleanup-7 --reason \"wrong query\"\n");
  cmd->callback([&ctx, f] {
    ctx.action = [&ctx, f]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      wf::StopBatchOperationRequest req;
      req.set_namespace_(ctx.options.namespace_name);
      req.set_job_id(f->job_id);
      req.set_reason(f->reason);
      req.set_identity((*c)->options().identity);
      auto out =
          (*c)->Call(&Stub::StopBatchOperation, (*c)->workflow(), req, ctx.options.namespace_name);
      if (!out.ok()) return out.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->Object({{"jobId", f->job_id}, {"result", "stopped"}},
                      {{"Job id", f->job_id}, {"Result", "stopped"}});
      return absl::OkStatus();
    };
  });
}

}  // namespace

absl::Status StartAndFollowBatch(CommandContext& ctx, const wf::StartBatchOperationRequest& req,
                                 const std::string& what, bool yes, bool no_wait) {
  if (absl::Status s = RequireConfirmable(ctx, yes, what); !s.ok()) return s;
  auto printer = ctx.printer();
  if (!printer.ok()) return printer.status();
  auto c = ctx.connection();
  if (!c.ok()) return c.status();
  if (!yes) {
    auto count = admin::CountWorkflows(**c, ctx.options.namespace_name, req.visibility_query());
    if (!count.ok()) return count.status();
    if (absl::Status s = Ask(
            ctx, absl::StrCat("Start batch against approximately ", *count, " workflow(s)?"), what);
        !s.ok()) {
      return s;
    }
  }
  auto started =
      (*c)->Call(&Stub::StartBatchOperation, (*c)->workflow(), req, ctx.options.namespace_name);
  if (!started.ok()) return started.status();
  const std::string& job_id = req.job_id();
  if (no_wait) {
    printer->Object({{"jobId", job_id}}, {{"Job id", job_id}});
    return absl::OkStatus();
  }
  // On a terminal: a progress bar while it runs, then the summary card. Elsewhere (and with
  // -o json) only the end.
  const bool live = ctx.stdout_is_terminal && (printer->format() == OutputFormat::kTable ||
                                               printer->format() == OutputFormat::kCard);
  size_t drawn = 0;
  if (live) ctx.out << "Started batch " << job_id << "\n";
  auto d = WaitForBatch(ctx, **c, job_id, [&](const Describe& now) {
    if (!live) return;
    const std::string line = BatchProgressLine(now);
    ctx.out << "\r" << line << std::string(drawn > line.size() ? drawn - line.size() : 0, ' ')
            << std::flush;
    drawn = line.size();
  });
  if (live && drawn > 0) ctx.out << "\n";
  if (!d.ok()) return d.status();
  return PrintFinished(*printer, *d);
}

void AddBatchCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* group = app.add_subcommand(
      "batch",
      "Terminate, cancel, signal or delete every workflow a query matches, as a batch job");
  group->require_subcommand(1);
  group->footer(
      "Examples:\n"
      "  tock batch terminate --query \"WorkflowType = 'order'\" --reason \"bad deploy\"\n"
      "  tock batch list\n"
      "  tock batch describe --job-id cleanup-7\n"
      "  tock batch stop --job-id cleanup-7 --reason \"wrong query\"\n");
  for (BatchKind kind :
       {BatchKind::kTerminate, BatchKind::kCancel, BatchKind::kSignal, BatchKind::kDelete}) {
    AddStart(*group, ctx, kind);
  }
  AddList(*group, ctx);
  AddDescribe(*group, ctx);
  AddStop(*group, ctx);
}

}  // namespace tock::cli
