// Temporal's HTTP API without a server: the route table against the pinned OpenAPI file,
// Temporal's JSON with and without the payload shorthand, and the binding of path
// variables and query parameters.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"
#include "server-core/http_api/history_summary.h"
#include "server-core/http_api/json_codec.h"
#include "server-core/http_api/route_table.h"
#include "server-core/http_api/temporal_http_api.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::server::http_api {
namespace {

using nlohmann::json;
namespace wf = temporal::api::workflowservice::v1;
namespace common = temporal::api::common::v1;

const RouteTable& Table() {
  static const RouteTable* table = [] {
    absl::StatusOr<RouteTable> t = RouteTable::Served();
    EXPECT_TRUE(t.ok()) << t.status();
    return new RouteTable(t.ok() ? std::move(*t) : RouteTable());
  }();
  return *table;
}

TEST(HttpRouteTableTest, EveryOperationOfThePinnedOpenApiFileMapsToItsRpc) {
  std::ifstream file(TOCK_TEMPORAL_OPENAPI_FILE);
  ASSERT_TRUE(file.good()) << TOCK_TEMPORAL_OPENAPI_FILE;
  const json spec = json::parse(file);
  int operations = 0;
  for (const auto& [path, verbs] : spec.at("paths").items()) {
    for (const auto& [verb, operation] : verbs.items()) {
      ++operations;
      // Each variable gets a value of its own, so that a literal cannot stand in for it.
      const std::string concrete = std::regex_replace(path, std::regex("\\{[^}]+\\}"), "v1a");
      std::string upper = verb;
      for (char& c : upper) c = static_cast<char>(std::toupper(c));
      std::optional<Match> match = Table().Find(upper, concrete);
      ASSERT_TRUE(match.has_value()) << upper << " " << path;
      // operationId: the RPC's name, with a digit for its additional bindings.
      std::string rpc = operation.at("operationId").get<std::string>();
      while (!rpc.empty() && std::isdigit(static_cast<unsigned char>(rpc.back()))) rpc.pop_back();
      EXPECT_EQ(match->route->method->name(), rpc) << upper << " " << path;
      EXPECT_EQ(match->route->method->service()->name(),
                operation.at("tags").at(0).get<std::string>());
      // Every variable of the template is bound.
      const size_t variables = std::count(path.begin(), path.end(), '{');
      EXPECT_EQ(match->variables.size(), variables) << path;
    }
  }
  EXPECT_GE(operations, 200);
  const size_t temporal_routes = std::count_if(
      Table().routes().begin(), Table().routes().end(),
      [](const Route& r) { return !absl::StartsWith(r.path, "/tock/v1/"); });
  EXPECT_EQ(static_cast<size_t>(operations), temporal_routes)
      << "every binding of the protos is in the OpenAPI file, and the reverse";
}

TEST(HttpRouteTableTest, VariablesArePercentDecodedAfterSplittingAndOtherVerbsAreKnown) {
  std::optional<Match> match =
      Table().Find("GET", "/api/v1/namespaces/default/workflows/order%2F42%20x/history");
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->route->method->name(), "GetWorkflowExecutionHistory");
  ASSERT_EQ(match->variables.size(), 2u);
  EXPECT_EQ(match->variables[0], std::make_pair(std::string("namespace"), std::string("default")));
  EXPECT_EQ(match->variables[1],
            std::make_pair(std::string("execution.workflow_id"), std::string("order/42 x")));

  bool known = false;
  EXPECT_FALSE(Table().Find("DELETE", "/api/v1/namespaces/default/workflows/w/history", &known));
  EXPECT_TRUE(known) << "a path served with another verb (405, not 404)";
  EXPECT_FALSE(Table().Find("GET", "/api/v1/no-such-thing", &known));
  EXPECT_FALSE(known);
  EXPECT_FALSE(Table().Find("GET", "/api/v1/namespaces/%zz", &known)) << "a malformed escape";
  EXPECT_FALSE(Table().Find("GET", "/api/v1/namespaces//workflows", &known))
      << "a variable never matches an empty segment";
}

// Tock's own routes (tock/http/v1/routes.proto) call the service each one stands for.
TEST(HttpRouteTableTest, TocksOwnRoutesCallTheServiceTheyStandFor) {
  std::optional<Match> del = Table().Find("DELETE", "/tock/v1/namespaces/default/workflows/w%2F1");
  ASSERT_TRUE(del.has_value());
  EXPECT_EQ(del->route->rpc, "/temporal.api.workflowservice.v1.WorkflowService/DeleteWorkflowExecution");
  EXPECT_EQ(del->variables[1].second, "w/1");
  std::optional<Match> archival = Table().Find("GET", "/tock/v1/namespaces/orders/archival");
  ASSERT_TRUE(archival.has_value());
  EXPECT_EQ(archival->route->rpc, "/tock.admin.v1.AdminService/GetArchivalStatus");
  std::optional<Match> start = Table().Find("POST", "/api/v1/namespaces/default/workflows/w");
  ASSERT_TRUE(start.has_value());
  EXPECT_EQ(start->route->rpc, "/temporal.api.workflowservice.v1.WorkflowService/StartWorkflowExecution");
  for (const Route& route : Table().routes()) {
    EXPECT_TRUE(absl::StartsWith(route.path, "/tock/v1/") ||
                route.rpc.find("/tock.") == std::string::npos)
        << route.path << ": Tock's calls only under /tock/v1";
  }
}

TEST(HttpRouteTableTest, PercentDecodeTreatsPlusByContext) {
  EXPECT_EQ(PercentDecode("a+b%2Bc", false), "a+b+c");
  EXPECT_EQ(PercentDecode("a+b", true), "a b");
  EXPECT_EQ(PercentDecode("%4", false), std::nullopt);
  EXPECT_EQ(PercentDecode("%g0", false), std::nullopt);
}

common::Payload JsonPlain(const std::string& json_text) {
  common::Payload p;
  (*p.mutable_metadata())["encoding"] = "json/plain";
  p.set_data(json_text);
  return p;
}

TEST(HttpJsonTest, ProtoJsonRulesInt64AsStringsEnumNamesTimesAndBytes) {
  wf::DescribeWorkflowExecutionResponse r;
  auto* info = r.mutable_workflow_execution_info();
  info->set_history_length(12);
  info->set_status(temporal::api::enums::v1::WORKFLOW_EXECUTION_STATUS_RUNNING);
  info->mutable_start_time()->set_seconds(1700000000);
  info->mutable_start_time()->set_nanos(123000000);
  wf::PollActivityTaskQueueResponse bytes;
  bytes.set_task_token(std::string("\xff\x00\x01", 3));
  absl::StatusOr<std::string> out = ToJson(r, {});
  ASSERT_TRUE(out.ok()) << out.status();
  const json j = json::parse(*out);
  EXPECT_EQ(j["workflowExecutionInfo"]["historyLength"], "12");
  EXPECT_EQ(j["workflowExecutionInfo"]["status"], "WORKFLOW_EXECUTION_STATUS_RUNNING");
  EXPECT_EQ(j["workflowExecutionInfo"]["startTime"], "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(json::parse(*ToJson(bytes, {}))["taskToken"], absl::Base64Escape(std::string("\xff\x00\x01", 3)));
}

// The JSON written from reflection is protobuf's own canonical JSON (the shorthand off).
TEST(HttpJsonTest, WithoutTheShorthandTheJsonIsProtobufsOwn) {
  wf::GetWorkflowExecutionHistoryResponse r;
  auto* started = r.mutable_history()->add_events();
  started->set_event_id(1);
  started->set_event_type(temporal::api::enums::v1::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
  started->mutable_event_time()->set_seconds(1700000000);
  started->mutable_event_time()->set_nanos(120000);
  auto* a = started->mutable_workflow_execution_started_event_attributes();
  a->mutable_workflow_type()->set_name("T \"quoted\" \xc3\xa9");
  a->mutable_workflow_run_timeout()->set_seconds(90);
  a->mutable_workflow_run_timeout()->set_nanos(500000000);
  *a->mutable_input()->add_payloads() = JsonPlain("{\"a\": 1}");
  (*a->mutable_memo()->mutable_fields())["k"] = JsonPlain("2");
  a->set_attempt(3);
  a->mutable_retry_policy()->set_backoff_coefficient(1.5);
  a->mutable_retry_policy()->add_non_retryable_error_types("E1");
  a->mutable_retry_policy()->add_non_retryable_error_types("E2");
  r.set_next_page_token(std::string("\x00\xff", 2));
  r.set_archived(true);
  std::string theirs;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(r, &theirs).ok());
  absl::StatusOr<std::string> ours = ToJson(r, {.payload_shorthand = false});
  ASSERT_TRUE(ours.ok()) << ours.status();
  EXPECT_EQ(json::parse(*ours), json::parse(theirs)) << *ours << "\n" << theirs;
}

TEST(HttpJsonTest, StringsAreEscapedAndInvalidUtf8Replaced) {
  wf::StartWorkflowExecutionResponse r;
  r.set_run_id(std::string("a\"b\\c\n\x01\xc3\xa9\xf0\x9f\x98\x80|\xff|\xc3|\xed\xa0\x80", 21));
  absl::StatusOr<std::string> out = ToJson(r, {});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "{\"runId\":\"a\\\"b\\\\c\\n\\u0001\xc3\xa9\xf0\x9f\x98\x80|\xef\xbf\xbd|\xef\xbf\xbd|"
                  "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"}");
}

TEST(HttpJsonTest, PayloadShorthandOutFromEveryPlaceAPayloadSits) {
  wf::StartWorkflowExecutionRequest r;
  *r.mutable_input()->add_payloads() = JsonPlain("{\"b\":[1,2],\"a\":\"x\"}");
  *r.mutable_input()->add_payloads() = JsonPlain("\"Hello\"");
  common::Payload null_payload;
  (*null_payload.mutable_metadata())["encoding"] = "binary/null";
  *r.mutable_input()->add_payloads() = null_payload;
  (*r.mutable_memo()->mutable_fields())["owner"] = JsonPlain("\"ops\"");
  common::Payload proto_json;
  (*proto_json.mutable_metadata())["encoding"] = "json/protobuf";
  (*proto_json.mutable_metadata())["messageType"] = "pkg.Order";
  proto_json.set_data("{\"id\":\"7\"}");
  (*r.mutable_header()->mutable_fields())["trace"] = proto_json;

  const json j = json::parse(*ToJson(r, {}));
  EXPECT_EQ(j["input"], json::parse("[{\"a\":\"x\",\"b\":[1,2]},\"Hello\",null]"));
  EXPECT_EQ(j["memo"]["fields"]["owner"], "ops");
  EXPECT_EQ(j["header"]["fields"]["trace"], json::parse("{\"id\":\"7\",\"_protoMessageType\":\"pkg.Order\"}"));

  // Off: the proto form, metadata and data in base64.
  const json raw = json::parse(*ToJson(r, {.payload_shorthand = false}));
  EXPECT_EQ(raw["input"]["payloads"][1]["metadata"]["encoding"], absl::Base64Escape("json/plain"));
  EXPECT_EQ(raw["input"]["payloads"][1]["data"], absl::Base64Escape("\"Hello\""));
}

TEST(HttpJsonTest, AListWithOnePayloadWithoutAShortFormStaysWhole) {
  wf::SignalWorkflowExecutionRequest r;
  *r.mutable_input()->add_payloads() = JsonPlain("1");
  common::Payload binary;
  (*binary.mutable_metadata())["encoding"] = "binary/plain";
  binary.set_data("\x01\x02");
  *r.mutable_input()->add_payloads() = binary;
  common::Payload extra = JsonPlain("2");
  (*extra.mutable_metadata())["encodingEnvelope"] = "x";  // a second key: no short form
  const json j = json::parse(*ToJson(r, {}));
  ASSERT_TRUE(j["input"].is_object());
  EXPECT_EQ(j["input"]["payloads"].size(), 2u);
  EXPECT_EQ(j["input"]["payloads"][0]["data"], absl::Base64Escape("1"));

  wf::SignalWorkflowExecutionRequest one;
  *one.mutable_input()->add_payloads() = extra;
  EXPECT_TRUE(json::parse(*ToJson(one, {}))["input"].is_object());
}

TEST(HttpJsonTest, PayloadShorthandInAndTheProtoFormStillAccepted) {
  wf::StartWorkflowExecutionRequest r;
  const std::string body = R"({
    "workflowId": "w", "workflow_type": {"name": "T"},
    "input": [{"b": 1, "a": [true]}, "Hello", null, {"id": "7", "_protoMessageType": "pkg.Order"},
              {"metadata": {"encoding": "YmluYXJ5L3BsYWlu"}, "data": "AQI="}],
    "memo": {"fields": {"owner": "ops"}},
    "workflowExecutionTimeout": "10s"})";
  ASSERT_TRUE(FromJson(body, &r, true).ok()) << FromJson(body, &r, true);
  EXPECT_EQ(r.workflow_id(), "w");
  EXPECT_EQ(r.workflow_type().name(), "T");
  EXPECT_EQ(r.workflow_execution_timeout().seconds(), 10);
  ASSERT_EQ(r.input().payloads_size(), 5);
  EXPECT_EQ(r.input().payloads(0).metadata().at("encoding"), "json/plain");
  EXPECT_EQ(r.input().payloads(0).data(), "{\"a\":[true],\"b\":1}");
  EXPECT_EQ(r.input().payloads(1).data(), "\"Hello\"");
  EXPECT_EQ(r.input().payloads(2).metadata().at("encoding"), "binary/null");
  EXPECT_EQ(r.input().payloads(3).metadata().at("encoding"), "json/protobuf");
  EXPECT_EQ(r.input().payloads(3).metadata().at("messageType"), "pkg.Order");
  EXPECT_EQ(r.input().payloads(3).data(), "{\"id\":\"7\"}");
  EXPECT_EQ(r.input().payloads(4).metadata().at("encoding"), "binary/plain") << "the proto form";
  EXPECT_EQ(r.input().payloads(4).data(), "\x01\x02");
  EXPECT_EQ(r.memo().fields().at("owner").data(), "\"ops\"");

  // Shorthand off: an array is no Payloads.
  wf::StartWorkflowExecutionRequest off;
  absl::Status refused = FromJson(R"({"input": ["x"]})", &off, false);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(refused.message(), "the body is not a StartWorkflowExecutionRequest"))
      << refused;
}

TEST(HttpJsonTest, BadBodiesAreRefusedNamingWhatIsWrong) {
  wf::StartWorkflowExecutionRequest r;
  EXPECT_EQ(FromJson("{", &r, true).message(), "the body is not valid JSON");
  EXPECT_EQ(FromJson("[1]", &r, true).message(),
            "the body must be a JSON object (StartWorkflowExecutionRequest)");
  const std::string deep = std::string(200, '[') + std::string(200, ']');
  EXPECT_EQ(FromJson("{\"input\":" + deep + "}", &r, true).message(),
            "the body nests deeper than 100 levels");
  absl::Status unknown = FromJson(R"({"noSuchField": 1})", &r, true);
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(unknown.message(), "noSuchField")) << unknown;
  absl::Status type = FromJson(R"({"input": [1], "_": 1, "memo": {"fields": {"a": {"_protoMessageType": 3}}}})",
                               &r, true);
  EXPECT_EQ(type.message(), "a payload's \"_protoMessageType\" must be a string (the message type)");
}

TEST(HttpJsonTest, PathAndQueryValuesBindByProtoOrJsonNames) {
  wf::GetWorkflowExecutionHistoryRequest r;
  ASSERT_TRUE(SetFromText(&r, "execution.runId", {"r1"}).ok());
  ASSERT_TRUE(SetFromText(&r, "execution.workflow_id", {"w/1"}).ok());
  ASSERT_TRUE(SetFromText(&r, "maximumPageSize", {"5"}).ok());
  ASSERT_TRUE(SetFromText(&r, "waitNewEvent", {"true"}).ok());
  ASSERT_TRUE(SetFromText(&r, "historyEventFilterType", {"HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT"}).ok());
  ASSERT_TRUE(SetFromText(&r, "next_page_token", {"_-8"}).ok()) << "URL-safe base64, unpadded";
  EXPECT_EQ(r.execution().run_id(), "r1");
  EXPECT_EQ(r.execution().workflow_id(), "w/1");
  EXPECT_EQ(r.maximum_page_size(), 5);
  EXPECT_TRUE(r.wait_new_event());
  EXPECT_EQ(r.history_event_filter_type(), temporal::api::enums::v1::HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT);
  EXPECT_EQ(r.next_page_token(), std::string("\xff\xef", 2));
  ASSERT_TRUE(SetFromText(&r, "historyEventFilterType", {"1"}).ok()) << "an enum by number";
  EXPECT_EQ(r.history_event_filter_type(), 1);

  EXPECT_EQ(SetFromText(&r, "maximumPageSize", {"many"}).message(),
            "invalid value \"many\" for maximumPageSize: expected a 32-bit integer");
  EXPECT_EQ(SetFromText(&r, "historyEventFilterType", {"LOUD"}).message(),
            "invalid value \"LOUD\" for historyEventFilterType: not a value of HistoryEventFilterType");
  EXPECT_EQ(SetFromText(&r, "nope", {"1"}).code(), absl::StatusCode::kNotFound);
  const absl::Status long_name = SetFromText(&r, std::string(500, 'x'), {"1"});
  EXPECT_LT(long_name.message().size(), 200u) << "a long name is quoted in part";
  EXPECT_TRUE(absl::StrContains(long_name.message(), "(500 bytes)")) << long_name;
}

namespace history = temporal::api::history::v1;
namespace enums = temporal::api::enums::v1;

history::HistoryEvent Event(int64_t id, enums::EventType type) {
  history::HistoryEvent e;
  e.set_event_id(id);
  e.set_event_type(type);
  e.mutable_event_time()->set_seconds(1700000000 + id);
  return e;
}

TEST(HttpHistorySummaryTest, SpansOfActivitiesTimersChildrenAndUpdatesWithoutPayloads) {
  std::vector<history::HistoryEvent> events;
  events.push_back(Event(1, enums::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED));
  auto scheduled = Event(5, enums::EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
  scheduled.mutable_activity_task_scheduled_event_attributes()->set_activity_id("a1");
  scheduled.mutable_activity_task_scheduled_event_attributes()->mutable_activity_type()->set_name("Charge");
  *scheduled.mutable_activity_task_scheduled_event_attributes()->mutable_input()->add_payloads() =
      JsonPlain("\"secret input\"");
  events.push_back(scheduled);
  auto started = Event(6, enums::EVENT_TYPE_ACTIVITY_TASK_STARTED);
  started.mutable_activity_task_started_event_attributes()->set_scheduled_event_id(5);
  started.mutable_activity_task_started_event_attributes()->set_attempt(3);
  events.push_back(started);
  auto failed = Event(7, enums::EVENT_TYPE_ACTIVITY_TASK_FAILED);
  failed.mutable_activity_task_failed_event_attributes()->set_scheduled_event_id(5);
  // 300 bytes of two-byte characters: cut at 200 bytes, on a character's boundary.
  std::string long_message;
  for (int i = 0; i < 150; ++i) long_message += "\xc3\xa9";
  failed.mutable_activity_task_failed_event_attributes()->mutable_failure()->set_message(long_message);
  events.push_back(failed);
  auto timer = Event(8, enums::EVENT_TYPE_TIMER_STARTED);
  timer.mutable_timer_started_event_attributes()->set_timer_id("t1");
  events.push_back(timer);
  auto fired = Event(9, enums::EVENT_TYPE_TIMER_FIRED);
  fired.mutable_timer_fired_event_attributes()->set_started_event_id(8);
  events.push_back(fired);
  auto child = Event(10, enums::EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED);
  child.mutable_start_child_workflow_execution_initiated_event_attributes()->set_workflow_id("kid");
  events.push_back(child);
  auto signal = Event(11, enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
  signal.mutable_workflow_execution_signaled_event_attributes()->set_signal_name("go");
  events.push_back(signal);
  auto accepted = Event(12, enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
  accepted.mutable_workflow_execution_update_accepted_event_attributes()->set_protocol_instance_id("u1");
  accepted.mutable_workflow_execution_update_accepted_event_attributes()
      ->mutable_accepted_request()->mutable_input()->set_name("SetPrice");
  events.push_back(accepted);
  auto done = Event(13, enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED);
  done.mutable_workflow_execution_update_completed_event_attributes()->set_accepted_event_id(12);
  events.push_back(done);
  events.push_back(Event(14, enums::EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED));

  admin::HistorySpans spans;
  for (const auto& e : events) spans.Add(e);
  const nlohmann::ordered_json s = SummaryJson(spans);
  EXPECT_EQ(s["status"], "TERMINATED");
  EXPECT_EQ(s["start"], "2023-11-14T22:13:21Z");
  EXPECT_EQ(s["end"], "2023-11-14T22:13:34Z");
  EXPECT_EQ(s["events"], 11);
  ASSERT_EQ(s["spans"].size(), 4u) << s.dump();
  const auto& activity = s["spans"][0];
  EXPECT_EQ(activity["kind"], "activity");
  EXPECT_EQ(activity["id"], "a1");
  EXPECT_EQ(activity["name"], "Charge");
  EXPECT_EQ(activity["eventId"], 5);
  EXPECT_EQ(activity["started"], "2023-11-14T22:13:26Z");
  EXPECT_EQ(activity["end"], "2023-11-14T22:13:27Z");
  EXPECT_EQ(activity["status"], "FAILED");
  EXPECT_EQ(activity["attempt"], 3);
  EXPECT_EQ(activity["failure"].get<std::string>().size(), 200u);
  EXPECT_EQ(s["spans"][1]["status"], "FIRED");
  EXPECT_EQ(s["spans"][2]["kind"], "child");
  EXPECT_EQ(s["spans"][2]["status"], "INITIATED");
  EXPECT_FALSE(s["spans"][2].contains("end")) << "open when the run closed";
  EXPECT_EQ(s["spans"][3]["name"], "SetPrice");
  EXPECT_EQ(s["spans"][3]["status"], "COMPLETED");
  ASSERT_EQ(s["points"].size(), 1u);
  EXPECT_EQ(s["points"][0]["name"], "go");
  EXPECT_EQ(s.dump().find("secret input"), std::string::npos) << "no payloads";
}

TEST(HttpJsonTest, GrpcCodesMapToTemporalsHttpStatuses) {
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kFailedPrecondition), 400);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kPermissionDenied), 403);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kAlreadyExists), 409);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kAborted), 409);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kCancelled), 499);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kUnimplemented), 501);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kDeadlineExceeded), 504);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kInternal), 500);
}

}  // namespace
}  // namespace tock::server::http_api
