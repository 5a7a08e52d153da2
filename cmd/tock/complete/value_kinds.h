// Which option or positional of the command tree takes which kind of value, in one table
// (value_kinds.cc). Completion asks it; nothing else about values is written down by hand:
// subcommands, flags and enum values (CLI::IsMember) come from the CLI11 tree itself.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace tock::cli::complete {

enum class ValueKind {
  kNone,         // free text: nothing to offer
  kNamespace,    // namespace names (server: ListNamespaces)
  kWorkflowId,   // workflow ids, running then recent (server: ListWorkflowExecutions)
  kTaskQueue,    // task queues of recent workflows (server: ListWorkflowExecutions)
  kEventType,    // temporal.api.enums.v1.EventType names (no server call)
  kClusterName,  // cluster names (server: OperatorService.ListClusters)
  kSearchAttribute,  // custom search attribute names (server: OperatorService.ListSearchAttributes)
  kSearchAttributeAssignment,  // "NAME=" of each custom search attribute, to type a value after
  kBatchJobId,   // batch job ids, running first (server: ListBatchOperations)
  kScheduleId,   // schedule ids, by id (server: ListSchedules)
  kDeployment,   // Worker Deployment names (server: ListWorkerDeployments)
  kNexusEndpoint,  // Nexus endpoint names, cluster-wide (server: OperatorService.ListNexusEndpoints)
  kFile,         // a local path
};

// "namespace", "workflow id", ...: for descriptions and tests.
std::string_view ValueKindName(ValueKind kind);

// One line of the table. `command` is a command path under `tock` with canonical names
// ("namespace describe"; "" is the root); the rule applies to that command and every command
// below it, and the longest matching path wins, so a later, more specific rule can say
// kNone. `name` is one of the option's names ("-n" or "--namespace" both match the option
// "-n,--namespace") or a positional's name ("name").
struct ValueRule {
  std::string_view command;
  std::string_view name;
  ValueKind kind;
};

// The table itself, for checks (every rule must name an existing command and option).
const std::vector<ValueRule>& ValueRules();

// The kind of value `option` of the command at `command_path` takes: the longest matching
// rule; else kFile for an option checked by CLI::ExistingFile; else kNone.
ValueKind KindOf(const std::string& command_path, const CLI::Option& option);

// The path of `app` below the root, canonical names joined by spaces ("" for the root).
std::string CommandPath(const CLI::App& app);

}  // namespace tock::cli::complete
