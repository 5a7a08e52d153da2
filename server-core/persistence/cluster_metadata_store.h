// Facts fixed when a database is created and checked at every later start.
//
// Thread safety: implementations are safe to call from many threads.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace tock::persistence {

class ClusterMetadataStore {
 public:
  virtual ~ClusterMetadataStore() = default;

  // On a new database stores `shard_count` and returns it. On an existing one returns the
  // stored count when it equals `shard_count`, otherwise FAILED_PRECONDITION:
  // "history shard count is 8 in the configuration but 4 in the database at PATH; the number
  // of history shards is fixed when the database is created".
  virtual absl::StatusOr<int32_t> InitHistoryShardCount(int32_t shard_count) = 0;

  // On a new database stores the current cluster name; afterwards refuses another name
  // (FAILED_PRECONDITION naming both), since the data was written as that cluster.
  virtual absl::Status InitClusterName(const std::string& cluster_name) = 0;

  // The cluster's id: `fresh_id` on a new database, the stored one afterwards (Temporal's
  // cluster id, a UUID fixed at the first start; remote clusters recognize this one by it).
  virtual absl::StatusOr<std::string> InitClusterId(const std::string& fresh_id) = 0;

  // The secret the hosts sharing this database mark their calls to each other with
  // (routing/peer_credential.h): `fresh` on a new database (or one written before it
  // existed), the stored one afterwards, so every host reads the same. Never log it.
  virtual absl::StatusOr<std::string> InitHostSecret(const std::string& fresh) = 0;
};

// ClusterMetadataStore's rules over a table of keys written once: what a backend provides is
// InitValue (an insert that keeps the first value, safe when hosts start together) and the
// location its messages name.
class WriteOnceClusterMetadataStore : public ClusterMetadataStore {
 public:
  absl::StatusOr<int32_t> InitHistoryShardCount(int32_t shard_count) final;
  absl::Status InitClusterName(const std::string& cluster_name) final;
  absl::StatusOr<std::string> InitClusterId(const std::string& fresh_id) final;
  absl::StatusOr<std::string> InitHostSecret(const std::string& fresh) final;

 protected:
  // Stores `value` under `key` unless present; returns what is stored.
  virtual absl::StatusOr<std::string> InitValue(const std::string& key,
                                                const std::string& value) = 0;
  // The database, as messages name it (never with a password).
  virtual std::string Location() const = 0;
};

}  // namespace tock::persistence
