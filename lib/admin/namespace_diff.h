// What changed between two versions of a namespace, for `tock namespace history`.
#pragma once

#include <string>
#include <vector>

#include "tock/persistence/v1/namespace.pb.h"

namespace tock::admin {

struct FieldChange {
  std::string field;   // JSON path, e.g. "config.workflowExecutionRetentionTtl"
  std::string before;  // empty when the field was absent
  std::string after;   // empty when the field was removed

  bool operator==(const FieldChange&) const = default;
};

// Field-by-field differences, ordered by path. Durations read as operators write them
// ("3d"); the failover history list and the config version counter are left out (the failover version itself is compared).
std::vector<FieldChange> DiffNamespaceRecords(const tock::persistence::v1::NamespaceRecord& before,
                                              const tock::persistence::v1::NamespaceRecord& after);

// One line: `config.workflowExecutionRetentionTtl: 2d -> 3d; info.description: "" -> "x"`,
// or "no change".
std::string SummarizeChanges(const std::vector<FieldChange>& changes);

}  // namespace tock::admin
