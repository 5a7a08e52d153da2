// Visibility records: one summary per run, listed and counted with a typed filter (a
// predicate over the record's fields and an order), which each backend compiles to its own
// query language. The visibility query language (server-core/visibility/query.h) produces
// these filters; no SQL text ever crosses this interface.
//
// Thread safety: implementations are safe to call from many threads.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "temporal/api/workflow/v1/message.pb.h"

namespace tock::persistence {

// The fields of a visibility record a filter can test and order by. Text fields compare as
// byte strings; kExecutionStatus as the temporal.api.enums.v1.WorkflowExecutionStatus number;
// times as milliseconds since the Unix epoch.
enum class VisibilityField {
  kWorkflowId,
  kWorkflowType,
  kRunId,
  kTaskQueue,
  kExecutionStatus,
  kStartTime,
  kCloseTime,  // absent while the run is open: every condition on it is then false
  kExecutionTime,
};

// Whether the field's values are text (std::string) or numbers (int64_t).
inline bool IsTextField(VisibilityField field) {
  return field == VisibilityField::kWorkflowId || field == VisibilityField::kWorkflowType ||
         field == VisibilityField::kRunId || field == VisibilityField::kTaskQueue;
}

enum class VisibilityOp {
  kEqual,
  kNotEqual,
  kLess,
  kLessOrEqual,
  kGreater,
  kGreaterOrEqual,
  kIn,          // one or more values
  kBetween,     // two values: low and high, both inclusive
  kStartsWith,  // one text value; text fields only
};

// int64_t for numeric fields, std::string for text fields; a backend refuses a mismatch
// with INVALID_ARGUMENT.
using VisibilityValue = std::variant<int64_t, std::string>;

struct VisibilityCondition {
  VisibilityField field = VisibilityField::kWorkflowId;
  VisibilityOp op = VisibilityOp::kEqual;
  std::vector<VisibilityValue> values;
};

// A condition, or AND / OR over sub-predicates. AND of nothing is true (every record), OR of
// nothing is false. The default value is AND of nothing.
struct VisibilityPredicate {
  enum class Kind { kCondition, kAnd, kOr };
  Kind kind = Kind::kAnd;
  VisibilityCondition condition;              // with kCondition
  std::vector<VisibilityPredicate> children;  // with kAnd and kOr

  static VisibilityPredicate Of(VisibilityField field, VisibilityOp op,
                                std::vector<VisibilityValue> values) {
    VisibilityPredicate p;
    p.kind = Kind::kCondition;
    p.condition = {field, op, std::move(values)};
    return p;
  }
  static VisibilityPredicate And(std::vector<VisibilityPredicate> children) {
    VisibilityPredicate p;
    p.children = std::move(children);
    return p;
  }
  static VisibilityPredicate Or(std::vector<VisibilityPredicate> children) {
    VisibilityPredicate p;
    p.kind = Kind::kOr;
    p.children = std::move(children);
    return p;
  }
  bool MatchesAll() const { return kind == Kind::kAnd && children.empty(); }
};

// What every backend runs. A predicate within both limits always runs; beyond them a backend
// may refuse it with INVALID_ARGUMENT (SQLite's parser, for one, has a fixed stack of 100
// entries and expressions at most 1000 deep).
//   conditions: in the whole predicate, an IN of n values counting n;
//   nesting: AND and OR nodes on any path from the root (same-kind nesting counts too).
inline constexpr int kMaxVisibilityConditions = 2000;
inline constexpr int kMaxVisibilityNesting = 32;

// What every backend checks of one condition before compiling it: the values' type fits the
// field (text or numbers), their count fits the operator, STARTS_WITH is on text.
// INVALID_ARGUMENT naming the field as the query language does (never SQL).
absl::Status CheckVisibilityCondition(const VisibilityCondition& condition);
// The field's name in the query language ("WorkflowId"), for messages.
const char* VisibilityFieldName(VisibilityField field);
// List's pages are offsets: the offset a page token names (0 for ""; INVALID_ARGUMENT for
// a token this server did not give out), and the token of the page after one.
absl::StatusOr<int64_t> VisibilityPageOffset(const std::string& page_token);
std::string VisibilityPageToken(int64_t offset);
// The field's column in the visibility table; the SQL schemas of the backends share it.
const char* VisibilityColumn(VisibilityField field);

struct VisibilityOrderKey {
  VisibilityField field = VisibilityField::kStartTime;
  bool descending = true;  // an absent close time sorts before every time
};

struct VisibilityFilter {
  VisibilityPredicate predicate;             // default: every record
  std::vector<VisibilityOrderKey> order_by;  // empty: newest start first, then run id descending
};

struct VisibilityPage {
  std::vector<temporal::api::workflow::v1::WorkflowExecutionInfo> executions;
  std::string next_page_token;  // empty on the last page
};

class VisibilityStore {
 public:
  virtual ~VisibilityStore() = default;
  // INVALID_ARGUMENT for a token this store did not issue, or a filter beyond the limits
  // above. Error messages never contain the backend's query text.
  virtual absl::StatusOr<VisibilityPage> List(const std::string& namespace_id,
                                              const VisibilityFilter& filter, int32_t page_size,
                                              const std::string& page_token) = 0;
  virtual absl::StatusOr<int64_t> Count(const std::string& namespace_id,
                                        const VisibilityPredicate& predicate) = 0;

  // For retention: the closed runs of `namespace_id` whose close time is before
  // `closed_before` (compared in milliseconds), leaving out runs queued for archival and not
  // yet deleted by the archiver (ArchivalQueueStore: the archiver deletes those itself).
  // Oldest close first, then run id; at most `limit`.
  virtual absl::StatusOr<std::vector<temporal::api::workflow::v1::WorkflowExecutionInfo>>
  ListClosedBefore(const std::string& namespace_id, absl::Time closed_before, int32_t limit) = 0;
};

}  // namespace tock::persistence
