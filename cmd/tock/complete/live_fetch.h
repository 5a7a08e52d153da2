// The server calls behind live completion values. Each takes an absolute deadline for all
// its calls together and returns the values in the server's order, or the first error.
// Thread safety: as the Connection.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cmd/tock/complete/completer.h"
#include "lib/client/connection.h"

namespace tock::cli::complete {

// Namespace names (ListNamespaces), with their state as description; deleted ones left out.
absl::StatusOr<std::vector<Candidate>> FetchNamespaces(client::Connection& connection,
                                                       absl::Time deadline, int limit);

struct WorkflowValues {
  std::vector<Candidate> workflow_ids;  // running ones first, then the most recent others
  std::vector<Candidate> task_queues;   // of those workflows, first seen first
};

// ListWorkflowExecutions twice: `ExecutionStatus = 'Running'`, then every run (newest first).
absl::StatusOr<WorkflowValues> FetchWorkflows(client::Connection& connection,
                                              const std::string& namespace_name,
                                              absl::Time deadline, int limit);

// Cluster names (OperatorService.ListClusters), with their address as description.
absl::StatusOr<std::vector<Candidate>> FetchClusters(client::Connection& connection,
                                                     absl::Time deadline, int limit);

// The namespace's custom search attributes (OperatorService.ListSearchAttributes), sorted
// by name, with their type as description.
absl::StatusOr<std::vector<Candidate>> FetchSearchAttributes(client::Connection& connection,
                                                             const std::string& namespace_name,
                                                             absl::Time deadline);

// The namespace's batch job ids (ListBatchOperations), running ones first, then the others in
// the server's order, with their state and type as description.
absl::StatusOr<std::vector<Candidate>> FetchBatchJobs(client::Connection& connection,
                                                      const std::string& namespace_name,
                                                      absl::Time deadline, int limit);

// The namespace's schedule ids (ListSchedules), by id, with "paused" or the workflow type as
// description.
absl::StatusOr<std::vector<Candidate>> FetchSchedules(client::Connection& connection,
                                                      const std::string& namespace_name,
                                                      absl::Time deadline, int limit);

// The namespace's Worker Deployment names (ListWorkerDeployments), by name, with the current
// version's build id as description.
absl::StatusOr<std::vector<Candidate>> FetchDeployments(client::Connection& connection,
                                                        const std::string& namespace_name,
                                                        absl::Time deadline, int limit);

// The cluster's Nexus endpoint names (ListNexusEndpoints), by name, with the target as
// description.
absl::StatusOr<std::vector<Candidate>> FetchNexusEndpoints(client::Connection& connection,
                                                           absl::Time deadline, int limit);

// temporal.api.enums.v1.EventType names as the Temporal CLI writes them (WorkflowExecutionStarted),
// UNSPECIFIED left out; no server call.
std::vector<Candidate> EventTypeNames();

// Entries of the directory part of `partial` whose names start with its last part, as
// `partial` would continue: "ma" -> "main.cc", "man/"; "src/ap" -> "src/app.cc". Directories
// end with "/". Hidden entries only when the last part starts with ".".
std::vector<Candidate> PathCandidates(const std::string& partial);

}  // namespace tock::cli::complete
