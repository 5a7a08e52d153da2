// Workflow operations against any Temporal frontend: start, wait for results, read and
// follow histories, signal, query, cancel, terminate, list and count.
// Never prints; errors are absl::Status with the server's message and details.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/client/connection.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::admin {

namespace wf = temporal::api::workflowservice::v1;

struct StartWorkflowOptions {
  std::string namespace_name;
  std::string workflow_type;
  std::string task_queue;
  std::string workflow_id;            // empty: a new UUID
  std::vector<std::string> inputs;    // JSON values
  std::string execution_timeout;      // durations as typed; empty: none
  std::string run_timeout;
  std::string task_timeout;
  std::string start_delay;  // the first workflow task waits this long (a signal ends it)
  std::string cron_schedule;  // "*/15 * * * *", "@hourly", "@every 90m"; "" for none
  std::string identity = "tock";
};

struct StartedWorkflow {
  std::string workflow_id;
  std::string run_id;
};

absl::StatusOr<StartedWorkflow> StartWorkflow(client::Connection& connection,
                                              const StartWorkflowOptions& options);

// Waits for the run to close, following continue-as-new and retries to the last run;
// returns its close event. `timeout` of the whole wait (0: none).
absl::StatusOr<temporal::api::history::v1::HistoryEvent> WaitForResult(
    client::Connection& connection, const std::string& namespace_name,
    const std::string& workflow_id, const std::string& run_id, absl::Duration timeout);

absl::StatusOr<wf::DescribeWorkflowExecutionResponse> DescribeWorkflow(
    client::Connection& connection, const std::string& namespace_name,
    const std::string& workflow_id, const std::string& run_id);

// Calls `each` for every event, page by page; with `follow`, keeps waiting for new events
// until the run closes or `stop()` returns true.
absl::Status ReadHistory(client::Connection& connection, const std::string& namespace_name,
                         const std::string& workflow_id, const std::string& run_id, bool follow,
                         const std::function<absl::Status(const temporal::api::history::v1::HistoryEvent&)>& each,
                         const std::function<bool()>& stop = [] { return false; });

absl::Status SignalWorkflow(client::Connection& connection, const std::string& namespace_name,
                            const std::string& workflow_id, const std::string& run_id,
                            const std::string& signal_name, const std::vector<std::string>& inputs);

absl::StatusOr<wf::QueryWorkflowResponse> QueryWorkflow(
    client::Connection& connection, const std::string& namespace_name,
    const std::string& workflow_id, const std::string& run_id, const std::string& query_type,
    const std::vector<std::string>& inputs);

absl::Status CancelWorkflow(client::Connection& connection, const std::string& namespace_name,
                            const std::string& workflow_id, const std::string& run_id,
                            const std::string& reason);

absl::Status TerminateWorkflow(client::Connection& connection, const std::string& namespace_name,
                               const std::string& workflow_id, const std::string& run_id,
                               const std::string& reason);

// Terminates the run if it is still open, then removes it and its history.
absl::Status DeleteWorkflow(client::Connection& connection, const std::string& namespace_name,
                            const std::string& workflow_id, const std::string& run_id);

// Calls `each` for up to `limit` executions (0: all), page by page (constant memory).
absl::Status ListWorkflows(client::Connection& connection, const std::string& namespace_name,
                           const std::string& query, int64_t limit,
                           const std::function<absl::Status(const temporal::api::workflow::v1::WorkflowExecutionInfo&)>& each);

absl::StatusOr<int64_t> CountWorkflows(client::Connection& connection,
                                       const std::string& namespace_name, const std::string& query);

}  // namespace tock::admin
