#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/common/valid_time.h"
#include "server-core/persistence/namespace_store.h"
#include "server-core/persistence/replication_store.h"

namespace tock::persistence {

absl::StatusOr<NamespaceVersion> FirstNamespaceVersion(const NamespaceRecord& record,
                                                       absl::Time now,
                                                       const std::string& operation) {
  if (record.info().id().empty() || record.info().name().empty()) {
    return absl::InvalidArgumentError("a namespace record needs an id and a name");
  }
  NamespaceVersion v;
  v.version = 1;
  v.valid_from = TruncateToMillis(now);
  v.operation = operation;
  v.record = record;
  return v;
}

absl::StatusOr<NamespaceVersion> NextNamespaceVersion(const NamespaceVersion& current,
                                                      const NamespaceRecord& record,
                                                      int64_t expected_version,
                                                      const std::string& operation,
                                                      absl::Time now) {
  if (current.record.info().name() != record.info().name()) {
    return absl::InvalidArgumentError("a namespace version must keep its id and name");
  }
  if (current.version != expected_version) {
    return absl::AbortedError(absl::StrCat(
        "Namespace ", record.info().name(), " was changed concurrently (version ",
        current.version, ", expected ", expected_version, "); retry the update."));
  }
  NamespaceVersion next;
  next.version = current.version + 1;
  next.valid_from = NextValidFrom(current.valid_from, now);
  next.operation = operation;
  next.record = record;
  return next;
}

bool IsDeletedNamespace(const NamespaceRecord& record) {
  return record.info().state() == temporal::api::enums::v1::NAMESPACE_STATE_DELETED;
}

bool ListsCluster(const NamespaceRecord& record, const std::string& cluster) {
  const auto& clusters = record.replication_config().clusters();
  return std::any_of(clusters.begin(), clusters.end(),
                     [&](const auto& c) { return c.cluster_name() == cluster; });
}

bool EnqueuesNamespaceReplication(const NamespaceRecord& record, const std::string& operation) {
  return record.is_global_namespace() && record.replication_config().clusters_size() > 1 &&
         !IsDeletedNamespace(record) && !operation.starts_with(kReplicatedOperationPrefix);
}

int32_t NamespacePageSize(int32_t page_size) { return page_size > 0 ? page_size : 100; }

absl::StatusOr<std::string> NamespacePageStart(const std::string& page_token) {
  std::string after;
  if (!page_token.empty() && (!page_token.starts_with("n:") ||
                              !absl::WebSafeBase64Unescape(page_token.substr(2), &after))) {
    return absl::InvalidArgumentError(
        "the next_page_token is not one this server gave out; start the list again");
  }
  return after;
}

std::string NamespacePageToken(const std::string& last_name) {
  return "n:" + absl::WebSafeBase64Escape(last_name);
}

}  // namespace tock::persistence
