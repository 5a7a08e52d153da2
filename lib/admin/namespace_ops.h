// Namespace operations against any Temporal frontend (tock-server or Temporal itself).
//
// Inputs are validated before anything is sent: a bad retention never reaches the wire.
// Never prints; every error is an absl::Status carrying the server's message verbatim and
// its errordetails (see lib/client/connection.h). The Make*Request functions are the pure
// half of each operation (options -> request), so the mapping is testable without a server.
// Thread safety: as the Connection (every function may be called from any thread).
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

// Archival fields of register and update (SPEC §3). Empty strings: not given.
struct ArchivalOptions {
  std::string history_state;  // "enabled" or "disabled"
  std::string history_uri;    // file:///DIR or s3://BUCKET[/PREFIX]
  std::string visibility_state;
  std::string visibility_uri;
};

struct RegisterNamespaceOptions {
  std::string name;
  std::optional<std::string> retention;  // operator text ("3d"); absent: the server default (2d)
  std::string description;
  std::string owner_email;
  std::map<std::string, std::string> data;
  bool global = false;
  std::vector<std::string> clusters;  // empty: the server decides (the current cluster)
  std::string active_cluster;         // empty: the server decides (the current cluster)
  ArchivalOptions archival;
};

// The RegisterNamespaceRequest for `options`; INVALID_ARGUMENT with kInvalidRetentionMessage
// when the retention is not a duration between 1d and 30d.
absl::StatusOr<wf::RegisterNamespaceRequest> MakeRegisterNamespaceRequest(
    const RegisterNamespaceOptions& options);

// Registers, then describes: returns the namespace as stored. A bad retention fails before
// any RPC.
absl::StatusOr<wf::DescribeNamespaceResponse> RegisterNamespace(
    client::Connection& connection, const RegisterNamespaceOptions& options);

// The namespace now or, with `as_of`, the version valid at that time (tock-server's
// AdminService.DescribeNamespaceAsOf; UNIMPLEMENTED on other servers). NOT_FOUND when the
// namespace does not exist (or did not exist yet at `as_of`).
absl::StatusOr<wf::DescribeNamespaceResponse> DescribeNamespace(
    client::Connection& connection, const std::string& name,
    std::optional<absl::Time> as_of = std::nullopt);

// The version valid at `as_of` together with its metadata (version number, valid time).
absl::StatusOr<tock::admin::v1::DescribeNamespaceAsOfResponse> DescribeNamespaceAsOf(
    client::Connection& connection, const std::string& name, absl::Time as_of);

// Calls `each` for every namespace, page by page, so memory stays constant however many
// namespaces there are. Stops at the first error of `each` and returns it. `page_size` is a
// hint to the server.
inline constexpr int kListNamespacesPageSize = 100;
absl::Status ListNamespaces(
    client::Connection& connection, bool include_deleted,
    const std::function<absl::Status(const wf::DescribeNamespaceResponse&)>& each,
    int page_size = kListNamespacesPageSize);

struct UpdateNamespaceOptions {
  std::string name;
  std::optional<std::string> retention;     // absent: unchanged; re-validated (1d..30d)
  std::string description;                  // empty: unchanged
  std::string owner_email;                  // empty: unchanged
  std::map<std::string, std::string> data;  // merged into the existing data (never removes)
  bool promote_global = false;              // local -> global
  std::vector<std::string> clusters;        // empty: unchanged
  ArchivalOptions archival;                 // a set URI never changes (the server refuses)
  // "normal" or "handover" (Temporal's --replication-state); empty: unchanged.
  std::string replication_state;
};

absl::StatusOr<wf::UpdateNamespaceRequest> MakeUpdateNamespaceRequest(
    const UpdateNamespaceOptions& options);

// Updates, then describes (the UpdateNamespaceResponse lacks the failover history): returns
// the namespace as stored after the change.
absl::StatusOr<wf::DescribeNamespaceResponse> UpdateNamespace(
    client::Connection& connection, const UpdateNamespaceOptions& options);

// The update that makes `to_cluster` active: only replication_config.active_cluster_name is
// set (SPEC §2.2: a failover carries no other change). INVALID_ARGUMENT for an empty cluster.
absl::StatusOr<wf::UpdateNamespaceRequest> MakeFailoverNamespaceRequest(
    const std::string& name, const std::string& to_cluster);

// Fails a global namespace over to `to_cluster`, then describes it.
absl::StatusOr<wf::DescribeNamespaceResponse> FailoverNamespace(client::Connection& connection,
                                                                const std::string& name,
                                                                const std::string& to_cluster);

// REGISTERED -> DEPRECATED (WorkflowService.DeprecateNamespace).
absl::Status DeprecateNamespace(client::Connection& connection, const std::string& name);

// Soft delete (OperatorService.DeleteNamespace): the namespace becomes DELETED and stays
// describable. Returns the deleted namespace's name as the server reports it.
absl::StatusOr<std::string> DeleteNamespace(client::Connection& connection,
                                            const std::string& name);

// One stored version with what changed since the version before it.
struct NamespaceHistoryEntry {
  tock::admin::v1::NamespaceVersion version;
  std::vector<FieldChange> changes;  // against the previous version; the whole record for v1
};

// Pairs each version (oldest first) with its diff to the previous one.
std::vector<NamespaceHistoryEntry> PairVersionsWithChanges(
    const tock::admin::v1::GetNamespaceHistoryResponse& history);

// Every version of a namespace (AdminService.GetNamespaceHistory), oldest first, each with
// what changed.
absl::StatusOr<std::vector<NamespaceHistoryEntry>> NamespaceHistory(
    client::Connection& connection, const std::string& name);

// Parses "K=V" pairs (--data; the value may contain '=' and be empty); INVALID_ARGUMENT
// naming the bad pair. A key given twice keeps the last value.
absl::StatusOr<std::map<std::string, std::string>> ParseKeyValues(
    const std::vector<std::string>& pairs);

}  // namespace tock::admin
