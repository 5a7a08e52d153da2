// Which role each RPC needs: the authorization table of every method tock-server answers.
//
// Modelled on Temporal's default authorizer and its method metadata (scope and access of
// each API), with one addition: worker calls (polls, task answers, heartbeats) need the
// `worker` role, which Temporal's default authorizer does not distinguish from `write`.
//
// Roles are ordered: read < worker < write < admin. Each includes the ones before it: a
// worker must read histories and namespaces, a writer may also run workers (as Temporal's
// writer may), an admin may do everything in its namespace.
//
// Scopes:
//   kOpen       no check at all (health, GetSystemInfo: the SDKs call it before anything);
//   kNamespace  the role on the request's `namespace` field, or the same role cluster-wide
//               (`temporal-system:<role>`);
//   kCluster    the cluster-wide role only (`temporal-system:<role>`): namespace listing,
//               cluster membership and replication, Tock's AdminService, host-to-host calls.
//
// A method with no rule here has no rule at all: Authorizer::Install refuses to start a
// server that registers one (a new RPC must be given a rule, tests/cli's table test walks
// this table against a real server).
#pragma once

#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

namespace tock::server::security {

enum class Role { kNone = 0, kRead = 1, kWorker = 2, kWrite = 3, kAdmin = 4 };

// "read", "worker", "write", "admin" ("none" for kNone).
absl::string_view RoleName(Role role);

enum class Scope { kOpen, kNamespace, kCluster };

struct MethodRule {
  std::string method;  // "temporal.api.workflowservice.v1.WorkflowService/StartWorkflowExecution"
  Scope scope = Scope::kCluster;
  Role role = Role::kAdmin;  // unused for kOpen
};

// The rule of a full method name ("package.Service/Method", no leading slash), if any.
std::optional<MethodRule> RuleFor(absl::string_view method);

// Every rule, for tests and documentation. Stable order (by service, then as listed).
const std::vector<MethodRule>& AllRules();

// "StartWorkflowExecution" from a full method name.
absl::string_view ShortMethodName(absl::string_view method);

}  // namespace tock::server::security
