// What changed between two versions of a namespace, for `tock namespace history`.
#pragma once

#include <string>
#include <vector>

#include "tock/persistence/v1/namespace.pb.h"

namespace tock::admin {

struct FieldChange {
  std::string field;   // JSON (camelCase) path, e.g. "config.workflowExecutionRetentionTtl"
  std::string before;  // empty when the field was absent
  std::string after;   // empty when the field was removed

  bool operator==(const FieldChange&) const = default;
};

// Field-by-field differences between the canonical JSON of two records (see
// lib/common/proto_json.h), flattened with lib/common/json_flatten.h and ordered by path
// (array indexes numerically). Values are the flattened JSON scalars, except that Duration
// fields read as operators write them ("259200s" -> "3d"). Left out: the failover history
// list (noise; the failover version itself is compared) and the config version counter
// (it changes with every change). Pure function; thread-safe.
std::vector<FieldChange> DiffNamespaceRecords(const tock::persistence::v1::NamespaceRecord& before,
                                              const tock::persistence::v1::NamespaceRecord& after);

// One line: `config.workflowExecutionRetentionTtl: 2d -> 3d; info.description: "" -> "orders"`,
// or "no change" for an empty list. Values of string fields and empty values are shown in
// double quotes (with `"` and `\` escaped); numbers, booleans, enum names, durations and
// timestamps are shown bare.
std::string SummarizeChanges(const std::vector<FieldChange>& changes);

}  // namespace tock::admin
