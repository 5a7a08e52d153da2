// Persistence of namespaces as a valid-time table (seed 004, SPEC §1.3).
//
// Every register, update, failover, deprecation or deletion appends a new version; the
// previous current version gets its valid_to set to the new version's valid_from, and
// nothing else of an old version is ever rewritten. Versions of one namespace are numbered
// 1, 2, 3, ... and their valid_from strictly increases (NextValidFrom, lib/common/valid_time.h).
//
// Thread safety: implementations are safe to call from many threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tock/persistence/v1/namespace.pb.h"

namespace tock::persistence {

using NamespaceRecord = tock::persistence::v1::NamespaceRecord;

struct NamespaceVersion {
  int64_t version = 0;
  absl::Time valid_from;
  std::optional<absl::Time> valid_to;  // unset for the current version
  std::string operation;               // register, update, failover, promote, deprecate, delete
  NamespaceRecord record;
};

struct NamespacePage {
  std::vector<NamespaceVersion> namespaces;  // current versions, ordered by name
  std::string next_page_token;               // empty on the last page
};

class NamespaceStore {
 public:
  virtual ~NamespaceStore() = default;

  // Stores version 1 of a new namespace with valid_from = `now` (truncated to ms).
  // record.info().id() and name() must be set. ALREADY_EXISTS (message exactly
  // "Namespace already exists.") when the name or the id is taken, deleted namespaces included.
  // The operation is "register", or the replicated one (replication_store.h) when another
  // cluster registered it.
  virtual absl::StatusOr<NamespaceVersion> CreateNamespace(
      const NamespaceRecord& record, absl::Time now,
      const std::string& operation = "register") = 0;  // NOLINT: one default, for every backend

  // The current version. NOT_FOUND ("Namespace NAME is not found.") when absent.
  virtual absl::StatusOr<NamespaceVersion> GetNamespaceByName(const std::string& name) = 0;
  virtual absl::StatusOr<NamespaceVersion> GetNamespaceById(const std::string& id) = 0;

  // The version valid at `as_of`: valid_from <= as_of < valid_to. NOT_FOUND when the
  // namespace did not exist yet (or never existed).
  virtual absl::StatusOr<NamespaceVersion> GetNamespaceAsOf(const std::string& name,
                                                            absl::Time as_of) = 0;

  // Appends the next version. `expected_version` must be the current version number,
  // otherwise ABORTED (someone else changed it in between) and nothing is written.
  // The new valid_from is NextValidFrom(current.valid_from, now). The record's id and name
  // must equal the stored ones (INVALID_ARGUMENT otherwise).
  virtual absl::StatusOr<NamespaceVersion> AppendNamespaceVersion(const NamespaceRecord& record,
                                                                  int64_t expected_version,
                                                                  const std::string& operation,
                                                                  absl::Time now) = 0;

  // Current versions ordered by name, `page_size` at most (0 means 100); DELETED ones only
  // when `include_deleted`. `page_token` is the next_page_token of the previous page; an
  // unreadable token is INVALID_ARGUMENT.
  virtual absl::StatusOr<NamespacePage> ListNamespaces(int32_t page_size,
                                                       const std::string& page_token,
                                                       bool include_deleted) = 0;

  // Every version of the namespace, oldest first. NOT_FOUND when absent.
  virtual absl::StatusOr<std::vector<NamespaceVersion>> GetNamespaceHistory(
      const std::string& name) = 0;
};

// The rules every backend applies, written once so that they answer alike.
// Version 1 of a new namespace at `now`; INVALID_ARGUMENT without an id or a name.
absl::StatusOr<NamespaceVersion> FirstNamespaceVersion(const NamespaceRecord& record,
                                                       absl::Time now,
                                                       const std::string& operation);
// The version that follows `current` (AppendNamespaceVersion's checks and messages).
absl::StatusOr<NamespaceVersion> NextNamespaceVersion(const NamespaceVersion& current,
                                                      const NamespaceRecord& record,
                                                      int64_t expected_version,
                                                      const std::string& operation,
                                                      absl::Time now);
bool IsDeletedNamespace(const NamespaceRecord& record);
// Whether the namespace's replication config lists `cluster` among its clusters.
bool ListsCluster(const NamespaceRecord& record, const std::string& cluster);
// ListNamespaces pages: their size (0 or less: the default), the name a page starts after
// ("" for the first page; INVALID_ARGUMENT for a token this server did not give out), and
// the token that follows a page ending at `last_name`. Paging by name stays correct when
// namespaces are added or deleted between pages.
int32_t NamespacePageSize(int32_t page_size);
absl::StatusOr<std::string> NamespacePageStart(const std::string& page_token);
std::string NamespacePageToken(const std::string& last_name);

}  // namespace tock::persistence
