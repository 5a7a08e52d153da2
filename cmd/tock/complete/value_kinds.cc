#include "cmd/tock/complete/value_kinds.h"

namespace tock::cli::complete {

const std::vector<ValueRule>& ValueRules() {
  // One line per option or positional that takes a value the server (or the file system)
  // knows. A new command gets completion of its values by adding its line here.
  static const std::vector<ValueRule> rules = {
      {"", "--namespace", ValueKind::kNamespace},
      {"server start-dev", "--namespace", ValueKind::kNone},  // names to create
      {"namespace", "name", ValueKind::kNamespace},
      {"namespace register", "name", ValueKind::kNone},  // a new name
      {"", "--workflow-id", ValueKind::kWorkflowId},
      {"workflow start", "--workflow-id", ValueKind::kNone},  // a new id
      {"workflow execute", "--workflow-id", ValueKind::kNone},
      {"", "--task-queue", ValueKind::kTaskQueue},
      {"namespace failover", "--to", ValueKind::kClusterName},
      {"cluster remove", "--name", ValueKind::kClusterName},
      {"cluster replication-status", "--remote", ValueKind::kClusterName},
      {"cluster dlq read", "--remote", ValueKind::kClusterName},
      {"cluster dlq purge", "--remote", ValueKind::kClusterName},
      {"cluster dlq merge", "--remote", ValueKind::kClusterName},
      {"operator search-attribute remove", "--name", ValueKind::kSearchAttribute},
      {"", "--search-attribute", ValueKind::kSearchAttributeAssignment},
      {"batch describe", "--job-id", ValueKind::kBatchJobId},
      {"batch stop", "--job-id", ValueKind::kBatchJobId},
      {"schedule", "--schedule-id", ValueKind::kScheduleId},
      {"schedule create", "--schedule-id", ValueKind::kNone},  // a new id
      {"schedule create", "--workflow-id", ValueKind::kNone},
      {"schedule update", "--workflow-id", ValueKind::kNone},
      {"worker deployment", "--deployment-name", ValueKind::kDeployment},
      {"worker deployment", "--name", ValueKind::kDeployment},
      {"worker deployment create", "--name", ValueKind::kNone},  // a new name
      {"operator nexus endpoint", "--name", ValueKind::kNexusEndpoint},
      {"operator nexus endpoint create", "--name", ValueKind::kNone},  // a new name
      {"operator nexus endpoint", "--target-namespace", ValueKind::kNamespace},
      {"", "--active-cluster", ValueKind::kClusterName},
      {"", "--clusters", ValueKind::kClusterName},
      {"", "--tls-ca-cert", ValueKind::kFile},
      {"", "--tls-cert", ValueKind::kFile},
      {"", "--tls-key", ValueKind::kFile},
      {"", "--db-file", ValueKind::kFile},
      {"", "--config", ValueKind::kFile},
  };
  return rules;
}

std::string_view ValueKindName(ValueKind kind) {
  switch (kind) {
    case ValueKind::kNone:
      return "none";
    case ValueKind::kNamespace:
      return "namespace";
    case ValueKind::kWorkflowId:
      return "workflow id";
    case ValueKind::kTaskQueue:
      return "task queue";
    case ValueKind::kEventType:
      return "event type";
    case ValueKind::kClusterName:
      return "cluster";
    case ValueKind::kSearchAttribute:
      return "search attribute";
    case ValueKind::kSearchAttributeAssignment:
      return "search attribute assignment";
    case ValueKind::kBatchJobId:
      return "batch job id";
    case ValueKind::kScheduleId:
      return "schedule id";
    case ValueKind::kDeployment:
      return "worker deployment";
    case ValueKind::kNexusEndpoint:
      return "nexus endpoint";
    case ValueKind::kFile:
      return "file";
  }
  return "none";
}

namespace {

// `path` is `prefix` or starts with `prefix` followed by a space ("" matches everything).
bool PathUnder(const std::string& path, std::string_view prefix) {
  if (prefix.empty()) return true;
  if (path.size() < prefix.size() || path.compare(0, prefix.size(), prefix) != 0) return false;
  return path.size() == prefix.size() || path[prefix.size()] == ' ';
}

bool HasExistingFileCheck(const CLI::Option& option) {
  // CLI11 2.x has no validator count; ask by the name CLI::ExistingFile registers.
  try {
    const_cast<CLI::Option&>(option).get_validator("FILE");
    return true;
  } catch (const CLI::OptionNotFound&) {
    return false;
  }
}

}  // namespace

ValueKind KindOf(const std::string& command_path, const CLI::Option& option) {
  const ValueRule* best = nullptr;
  for (const ValueRule& rule : ValueRules()) {
    if (!PathUnder(command_path, rule.command)) continue;
    if (!option.check_name(std::string(rule.name))) continue;
    if (best == nullptr || rule.command.size() >= best->command.size()) best = &rule;
  }
  if (best != nullptr) return best->kind;
  return HasExistingFileCheck(option) ? ValueKind::kFile : ValueKind::kNone;
}

std::string CommandPath(const CLI::App& app) {
  std::string path;
  for (const CLI::App* at = &app; at != nullptr && at->get_parent() != nullptr;
       at = at->get_parent()) {
    path = path.empty() ? at->get_name() : at->get_name() + " " + path;
  }
  return path;
}

}  // namespace tock::cli::complete
