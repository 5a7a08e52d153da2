// How history events read on a terminal, shared by `tock workflow show`, the REPL's history
// inspector and the archive readers: the event type as a short label, the time, and a
// one-line summary of the attributes with payloads decoded; and the rows of run lists.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "google/protobuf/message.h"
#include "google/protobuf/timestamp.pb.h"
#include "temporal/api/history/v1/message.pb.h"
#include "temporal/api/workflow/v1/message.pb.h"

namespace tock::cli {

// The message as proto3 JSON with every Payload decoded (JSON and text shown as values).
nlohmann::json DecodedJson(const google::protobuf::Message& message);

// "WorkflowExecutionStarted" for EVENT_TYPE_WORKFLOW_EXECUTION_STARTED.
std::string EventTypeLabel(const temporal::api::history::v1::HistoryEvent& event);

// RFC 3339 in UTC; empty for an unset timestamp.
std::string TimestampText(const google::protobuf::Timestamp& t);

// The event's attributes as `path=value` pairs, defaults left out, cut at 120 characters.
std::string EventSummary(const temporal::api::history::v1::HistoryEvent& event);

// The row of a history table: ID, TIME, TYPE, DETAILS.
std::vector<std::string> EventRow(const temporal::api::history::v1::HistoryEvent& event);

// The columns and a row of a table of runs (`workflow list`, archived lists).
std::vector<std::string> ExecutionColumns();
std::vector<std::string> ExecutionRow(const temporal::api::workflow::v1::WorkflowExecutionInfo& e);

}  // namespace tock::cli
