// How a run's history is stored: in batches, one row per stretch of consecutive events that
// one commit wrote (a workflow task's completion is typically 2-4 events), keyed by the run
// and the batch's first event id. A batch's bytes are a serialized
// temporal.api.history.v1.History: each event as field 1, length-delimited, so the events
// are visited without parsing them and a batch parses as a History where a tool needs it.
//
// Why batches: one row per event cost each commit a B-tree insert (and in SQLite a copy of
// the run id, its key) per event; a batch costs one. Reading a range finds its first batch
// by one index probe (the last batch starting at or before it) and walks forward.
//
// Both backends store this format (SQLite migration 18, PostgreSQL migration 18), written
// and read by these functions; the PostgreSQL schema also holds SQL twins of them
// (tock_history_entry, tock_history_events) for its branch operations.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "temporal/api/history/v1/message.pb.h"

namespace tock::persistence {

using HistoryEvent = temporal::api::history::v1::HistoryEvent;

// At most this many events, or about this many bytes, in one batch: a read that starts in
// the middle of a batch reads the whole of it, so batches stay small even when one commit
// writes many events (a reset's copy, a replicated catch-up).
inline constexpr size_t kMaxBatchEvents = 100;
inline constexpr size_t kMaxBatchBytes = 256 * 1024;

struct EventBatch {
  int64_t first_event_id = 0;
  int64_t event_count = 0;
  std::string bytes;  // a serialized History
  int64_t last_event_id() const { return first_event_id + event_count - 1; }
};

// Appends one event's serialized bytes to a batch's bytes.
void AppendToBatch(std::string& batch, std::string_view event_bytes);

// The batches of `events`, in order: a new batch starts where ids are not consecutive or a
// batch is full. The stores refuse a commit whose batches do not follow each other and the
// run's stored events (ids that do not increase). Each event is serialized straight into
// its batch.
std::vector<EventBatch> BatchEvents(absl::Span<const HistoryEvent> events);
// The same for events already serialized (`event_bytes`, with their ids).
std::vector<EventBatch> BatchEvents(absl::Span<const int64_t> event_ids,
                                    absl::Span<const std::string> event_bytes);

// Calls `visit(event_id, bytes)` for each event of the batch `batch` (whose first event is
// `first_event_id`), in order, until it returns false. DATA_LOSS when the bytes are not a
// batch.
absl::Status VisitBatch(std::string_view batch, int64_t first_event_id,
                        absl::FunctionRef<bool(int64_t, std::string_view)> visit);

// A read of events [from, next) at most `limit` of them (negative: no limit), batch by
// batch, oldest first: what the stores' history reads share.
struct EventRangeRead {
  int64_t from, next, limit;
  int64_t visited = 0;
  bool done = false;  // the range or the limit ended: no later batch is needed
  // Visits the events of `batch` (its first event `first_event_id`) that the read wants.
  absl::Status Visit(std::string_view batch, int64_t first_event_id,
                     absl::FunctionRef<void(int64_t, std::string_view)> visit);
};

}  // namespace tock::persistence
