// Visibility records: one summary per run, listed and counted with a typed filter (a
// predicate over the record's fields and an order), which each backend compiles to its own
// query language. The visibility query language (server-core/visibility/query.h) produces
// these filters; no SQL text ever crosses this interface.
//
// Thread safety: implementations are safe to call from many threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
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
  // The Worker Deployment attributes Temporal's server sets on a versioned run
  // (TemporalWorkerDeployment, TemporalWorkerDeploymentVersion,
  // TemporalWorkflowVersioningBehavior): keyword columns of their own, absent (NULL) when unset.
  kWorkerDeployment,
  kWorkerDeploymentVersion,
  kVersioningBehavior,
  kCustom,  // a custom search attribute's column: VisibilityCondition::custom says which
};

// Custom search attributes live in pre-allocated typed columns of the visibility table, as
// in Temporal's SQL visibility: a namespace maps each attribute's name (its alias) to one
// column, "keyword01".."keyword10", "int01".."int03", and so on (kCustomSlots per type).
enum class CustomType { kKeyword, kText, kInt, kDouble, kBool, kDatetime, kKeywordList };
inline constexpr int kCustomTypes = 7;
inline constexpr int kCustomSlots[kCustomTypes] = {10, 3, 3, 3, 3, 3, 3};

// How a custom column holds its values (VisibilityValue):
//   Keyword: text; Text: text normalized by NormalizeText (searched by word);
//   Int: int64_t; Double: double; Bool: int64_t 0 or 1; Datetime: int64_t nanoseconds since
//   the Unix epoch; KeywordList: text (a condition's value is one keyword; the column holds
//   a JSON array of them).
struct CustomColumn {
  CustomType type = CustomType::kKeyword;
  int slot = 1;  // 1..kCustomSlots[type]
  bool operator==(const CustomColumn&) const = default;
};
// "keyword01", "keywordlist03": the column's SQL name in every backend.
std::string CustomColumnName(const CustomColumn& column);
// Every custom column, in a fixed order (by type, then slot).
const std::vector<CustomColumn>& AllCustomColumns();
// A Text attribute as its column holds it and as a condition searches it: ASCII letters
// lowered, every byte that is not a letter, digit or part of a UTF-8 sequence made a
// separator, each word framed by single spaces (" order shipped "), or "" for no word. A
// condition matches when each of its words is found as " word " in the column.
std::string NormalizeText(std::string_view text);

// Whether the field's values are text (std::string) or numbers (int64_t).
inline bool IsTextField(VisibilityField field) {
  return field == VisibilityField::kWorkflowId || field == VisibilityField::kWorkflowType ||
         field == VisibilityField::kRunId || field == VisibilityField::kTaskQueue ||
         field == VisibilityField::kWorkerDeployment ||
         field == VisibilityField::kWorkerDeploymentVersion ||
         field == VisibilityField::kVersioningBehavior;
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
  kIsNull,      // no value: the field is absent (an open run's close time, an unset attribute)
  kIsNotNull,   // no value
};

// int64_t for numeric fields, std::string for text fields, double for Double columns; a
// backend refuses a mismatch with INVALID_ARGUMENT.
using VisibilityValue = std::variant<int64_t, std::string, double>;

// On custom columns: Keyword, Int, Double, Datetime take every operator (STARTS_WITH on
// Keyword only); Bool takes = and !=; Text takes = (every word of the value is in the
// attribute) and != (not so); KeywordList takes = (the list holds the value), != (it does
// not) and IN (it holds one of the values). Every field takes IS NULL and IS NOT NULL.
struct VisibilityCondition {
  VisibilityField field = VisibilityField::kWorkflowId;
  VisibilityOp op = VisibilityOp::kEqual;
  std::vector<VisibilityValue> values;
  CustomColumn custom;  // with kCustom
};

// A condition, or AND / OR over sub-predicates. AND of nothing is true (every record), OR of
// nothing is false. The default value is AND of nothing.
struct VisibilityPredicate {
  enum class Kind { kCondition, kAnd, kOr };
  Kind kind = Kind::kAnd;
  VisibilityCondition condition;              // with kCondition
  std::vector<VisibilityPredicate> children;  // with kAnd and kOr

  static VisibilityPredicate Of(VisibilityField field, VisibilityOp op,
                                std::vector<VisibilityValue> values, CustomColumn custom = {}) {
    VisibilityPredicate p;
    p.kind = Kind::kCondition;
    p.condition = {field, op, std::move(values), custom};
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
// `custom` names the column of kCustom.
std::string VisibilityColumn(VisibilityField field, const CustomColumn& custom = {});

struct VisibilityOrderKey {
  VisibilityField field = VisibilityField::kStartTime;
  bool descending = true;  // an absent close time (or attribute) sorts before every value
  CustomColumn custom;     // with kCustom: Keyword, Int, Double, Bool or Datetime
};

struct VisibilityFilter {
  VisibilityPredicate predicate;             // default: every record
  std::vector<VisibilityOrderKey> order_by;  // empty: newest start first, then run id descending
  // Count only: one count per ExecutionStatus ("GROUP BY ExecutionStatus").
  bool group_by_status = false;
};

// A custom column's value in a visibility record.
struct CustomValue {
  CustomColumn column;
  VisibilityValue value;  // KeywordList: the JSON array text
};
// The record's custom columns as one JSON object {"keyword01": "c-42", "int02": 7, ...}
// (doubles always written with a fraction or exponent, so that a backend reads them back
// as floating point), or "" for none. Both backends write every custom column from it in the
// statement that writes the record (absent keys are NULL).
// `system` adds the keyword columns of the Worker Deployment attributes (VersioningColumns)
// to the same object, by column name.
std::string CustomValuesJson(const std::vector<CustomValue>& values,
                             const std::vector<std::pair<std::string, std::string>>& system = {});
// The columns of kWorkerDeployment, kWorkerDeploymentVersion and kVersioningBehavior, written
// from CustomValuesJson's object like the custom columns.
const std::vector<std::string>& VersioningColumns();
// The schema migration that adds the custom columns to the visibility table, with a partial
// index (namespace, column, start, run) on each Keyword, Int, Double and Datetime column
// where it is set (a run without the attribute costs no index entry); `postgres` picks
// PostgreSQL's types (KeywordList as jsonb, text COLLATE "C") instead of SQLite's.
std::string CustomSearchAttributeColumnsSql(bool postgres);

struct VisibilityPage {
  // Each record as stored: a serialized temporal.api.workflow.v1.WorkflowExecutionInfo, which
  // the frontend copies into its response without parsing it.
  std::vector<std::string> executions;
  std::string next_page_token;  // empty on the last page
};

// A position in ListClosedBefore's order: after the run `run_id` closed at `close_ms` (Unix
// milliseconds, as stored). The default is before every run.
struct ClosedRunCursor {
  int64_t close_ms = INT64_MIN;
  std::string run_id;
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
  // The matching records per ExecutionStatus (temporal.api.enums.v1.WorkflowExecutionStatus
  // number → count), statuses without a record left out, in status order.
  virtual absl::StatusOr<std::vector<std::pair<int, int64_t>>> CountByStatus(
      const std::string& namespace_id, const VisibilityPredicate& predicate) = 0;

  // For retention: the closed runs of `namespace_id` whose close time is before
  // `closed_before` (compared in milliseconds), leaving out runs queued for archival and not
  // yet deleted by the archiver (ArchivalQueueStore: the archiver deletes those itself).
  // Oldest close first, then run id; only those after `after` in that order (a reader that
  // leaves some runs, such as the retention scanner a host's other shards' runs, pages with
  // it); at most `limit`.
  virtual absl::StatusOr<std::vector<temporal::api::workflow::v1::WorkflowExecutionInfo>>
  ListClosedBefore(const std::string& namespace_id, absl::Time closed_before,
                   const ClosedRunCursor& after, int32_t limit) = 0;
};

}  // namespace tock::persistence
