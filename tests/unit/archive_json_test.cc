// Archive JSON (lib/archival/archive_json.h) is protobuf's canonical proto3 JSON: the same
// document as protobuf's own printer for every kind of field histories hold, and it parses
// back to the same message.
#include "lib/archival/archive_json.h"

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "temporal/api/history/v1/message.pb.h"

namespace tock::archival {
namespace {
namespace hist = temporal::api::history::v1;
namespace enums = temporal::api::enums::v1;

hist::History RichHistory() {
  hist::History h;
  hist::HistoryEvent* e = h.add_events();
  e->set_event_id(1);
  e->set_version(-3);
  e->set_task_id(1'048'576);
  e->mutable_event_time()->set_seconds(1'790'000'000);
  e->mutable_event_time()->set_nanos(123'000'000);
  e->set_event_type(enums::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
  auto* a = e->mutable_workflow_execution_started_event_attributes();
  a->mutable_workflow_type()->set_name("order \"quoted\" \\ tab\t nl\n \x01 caf\xc3\xa9 \xe2\x82\xac");
  a->mutable_task_queue()->set_name("orders");
  a->mutable_task_queue()->set_kind(enums::TASK_QUEUE_KIND_NORMAL);
  auto* p = a->mutable_input()->add_payloads();
  (*p->mutable_metadata())["encoding"] = "json/plain";
  p->set_data(std::string("{\"a\":1}\0\xff\x80 binary", 18));
  a->mutable_input()->add_payloads()->set_data("");
  (*a->mutable_header()->mutable_fields())["trace"].set_data("t");
  (*a->mutable_memo()->mutable_fields())["k"].set_data("v");
  a->mutable_workflow_run_timeout()->set_seconds(90);
  a->mutable_workflow_task_timeout()->set_seconds(10);
  a->mutable_workflow_task_timeout()->set_nanos(500'000);
  a->mutable_workflow_execution_timeout()->set_nanos(7);
  a->set_attempt(2);
  a->mutable_retry_policy()->set_backoff_coefficient(1.5);
  a->mutable_retry_policy()->mutable_initial_interval()->set_seconds(1);
  a->mutable_retry_policy()->set_maximum_attempts(0);
  a->mutable_retry_policy()->add_non_retryable_error_types("A");
  a->mutable_retry_policy()->add_non_retryable_error_types("B");
  a->set_first_execution_run_id("run-1");

  hist::HistoryEvent* f = h.add_events();
  f->set_event_id(2);
  f->mutable_event_time()->set_seconds(1'790'000'001);
  f->mutable_event_time()->set_nanos(1);
  f->set_event_type(enums::EVENT_TYPE_WORKFLOW_EXECUTION_FAILED);
  auto* failed = f->mutable_workflow_execution_failed_event_attributes();
  failed->mutable_failure()->set_message("boom");
  failed->mutable_failure()->mutable_application_failure_info()->set_type("E");
  failed->mutable_failure()->mutable_application_failure_info()->set_non_retryable(true);
  failed->mutable_failure()->mutable_cause()->set_message("inner");
  failed->set_retry_state(enums::RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED);
  failed->set_workflow_task_completed_event_id(9'007'199'254'740'993);  // beyond a double
  return h;
}

TEST(ArchiveJson, IsProtobufsCanonicalJson) {
  const hist::History h = RichHistory();
  std::string theirs;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(h, &theirs).ok());
  const std::string ours = ArchiveJson(h);
  EXPECT_EQ(nlohmann::json::parse(ours), nlohmann::json::parse(theirs)) << ours << "\n" << theirs;
  EXPECT_NE(ours.find("\"eventTime\":\"2026-09-21T14:13:20.123Z\""), std::string::npos) << ours;
  EXPECT_NE(ours.find("\"workflowTaskTimeout\":\"10.000500s\""), std::string::npos) << ours;
  EXPECT_NE(ours.find("\"workflowTaskCompletedEventId\":\"9007199254740993\""), std::string::npos);

  hist::History back;
  ASSERT_TRUE(ParseArchiveJson(ours, back, "test").ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back, h));
}

TEST(ArchiveJson, ParseIgnoresUnknownFieldsAndNamesBadInput) {
  hist::History h;
  EXPECT_TRUE(ParseArchiveJson(R"({"events":[{"eventId":"4","newField":{"x":1}}]})", h, "k").ok());
  EXPECT_EQ(h.events(0).event_id(), 4);
  absl::Status bad = ParseArchiveJson("[not json", h, "ns/history/w/r/0/0");
  EXPECT_EQ(bad.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(bad.message().find("archive ns/history/w/r/0/0 is not valid"), std::string::npos);
}

}  // namespace
}  // namespace tock::archival
