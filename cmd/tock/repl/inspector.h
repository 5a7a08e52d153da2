// The REPL's history inspector: `open WORKFLOW_ID [RUN_ID]` loads one execution's history
// (every page; archived histories come back from the server the same way) and answers
// commands over it at a sub-prompt: events, event, find, next/prev, pending, timeline,
// branches, follow, export, back. Output goes through the session's printer (table, card,
// json, jsonl), errors to the context's error stream.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cmd/tock/context.h"
#include "temporal/api/history/v1/message.pb.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::cli::repl {

class HistoryInspector {
 public:
  // Reads the history of the run (the current run when `run_id` is empty).
  static absl::StatusOr<std::unique_ptr<HistoryInspector>> Open(CommandContext& ctx,
                                                                const std::string& workflow_id,
                                                                const std::string& run_id);

  // Runs one inspector command; an error is returned, not printed.
  absl::Status Execute(const std::vector<std::string>& words);

  // The command names, for completion and help.
  static const std::vector<std::string>& CommandNames();
  static std::string Help();

  const std::string& workflow_id() const { return workflow_id_; }
  size_t size() const { return events_.size(); }

 private:
  HistoryInspector(CommandContext& ctx, std::string workflow_id, std::string run_id)
      : ctx_(ctx),
        namespace_(ctx.options.namespace_name),
        workflow_id_(std::move(workflow_id)),
        run_id_(std::move(run_id)) {}

  absl::Status Load();
  absl::Status PrintEvents(size_t from_index, size_t to_index);  // [from, to)
  absl::Status Events(const std::vector<std::string>& args);
  absl::Status Event(const std::vector<std::string>& args);
  absl::Status Find(const std::vector<std::string>& args);
  absl::Status Page(int direction);
  absl::Status Pending();
  absl::Status Timeline();
  absl::Status Branches();
  absl::Status PrintBranches(const tock::admin::v1::DescribeMutableStateResponse& state);
  absl::Status Follow();
  absl::Status Export(const std::vector<std::string>& args);

  static constexpr size_t kPageSize = 20;

  CommandContext& ctx_;
  const std::string namespace_;  // fixed at open: a later `use` does not move the inspector
  const std::string workflow_id_;
  std::string run_id_;  // resolved when loading the current run
  std::vector<temporal::api::history::v1::HistoryEvent> events_;
  size_t page_start_ = 0;  // index of the first event of the current page
};

}  // namespace tock::cli::repl
