// Namespace operations against any Temporal frontend (tock-server or Temporal itself).
// Inputs are validated before anything is sent: a bad retention never reaches the wire.
// Never prints; every error is an absl::Status with the server's message and details.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/admin/namespace_diff.h"
#include "lib/client/connection.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::admin {

namespace wf = temporal::api::workflowservice::v1;

struct RegisterNamespaceOptions {
  std::string name;
  std::optional<std::string> retention;  // CLI text ("3d"); absent: the server default (2d)
  std::string description;
  std::string owner_email;
  std::map<std::string, std::string> data;
  bool global = false;
  std::vector<std::string> clusters;
  std::string active_cluster;
};

// Registers, then describes: the stored namespace.
absl::StatusOr<wf::DescribeNamespaceResponse> RegisterNamespace(
    client::Connection& connection, const RegisterNamespaceOptions& options);

absl::StatusOr<wf::DescribeNamespaceResponse> DescribeNamespace(client::Connection& connection,
                                                                const std::string& name);

// The namespace as it was at `as_of` (tock-server's AdminService).
absl::StatusOr<tock::admin::v1::DescribeNamespaceAsOfResponse> DescribeNamespaceAsOf(
    client::Connection& connection, const std::string& name, absl::Time as_of);

// Calls `each` for every namespace, page by page (constant memory); stops early and
// returns its error when `each` fails.
absl::Status ListNamespaces(client::Connection& connection, bool include_deleted,
                            const std::function<absl::Status(const wf::DescribeNamespaceResponse&)>& each);

struct UpdateNamespaceOptions {
  std::string name;
  std::optional<std::string> retention;
  std::string description;               // empty: unchanged
  std::string owner_email;               // empty: unchanged
  std::map<std::string, std::string> data;  // merged into the existing data
  bool promote_global = false;
  std::vector<std::string> clusters;     // empty: unchanged
};

absl::StatusOr<wf::UpdateNamespaceResponse> UpdateNamespace(client::Connection& connection,
                                                            const UpdateNamespaceOptions& options);

// Makes `to_cluster` the active cluster of a global namespace (an update with no other change).
absl::StatusOr<wf::UpdateNamespaceResponse> FailoverNamespace(client::Connection& connection,
                                                              const std::string& name,
                                                              const std::string& to_cluster);

absl::Status DeprecateNamespace(client::Connection& connection, const std::string& name);

// Soft delete: the namespace becomes DELETED. Returns the deleted namespace's name.
absl::StatusOr<std::string> DeleteNamespace(client::Connection& connection,
                                            const std::string& name);

// One stored version with what changed since the version before it.
struct NamespaceHistoryEntry {
  tock::admin::v1::NamespaceVersion version;
  std::vector<FieldChange> changes;  // against the previous version; the whole record for v1
};

absl::StatusOr<std::vector<NamespaceHistoryEntry>> NamespaceHistory(
    client::Connection& connection, const std::string& name);

// Parses "K=V" pairs (--data); INVALID_ARGUMENT naming the bad pair.
absl::StatusOr<std::map<std::string, std::string>> ParseKeyValues(
    const std::vector<std::string>& pairs);

}  // namespace tock::admin
