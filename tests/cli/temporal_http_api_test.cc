// Temporal's HTTP API black-box: a real tock-server started with --http-port 0, called with
// libcurl as curl users call Temporal's port 7243: namespaces, a workflow started, signalled,
// described, listed, counted, its history read (payload shorthand on and off), terminated;
// schedules and batch jobs; Temporal's error bodies and HTTP statuses.
#include <curl/curl.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <regex>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cmd/tock/commands/web.h"
#include "tests/cli/cli_fixture.h"
#include "tests/support/curl_call.h"
#include "tests/support/eventually.h"

namespace tock::testing {
namespace {

// An event stream read until `until` appears in it (then the read is cut), the stream ends,
// or 30 s pass. `seen` is called with the text read so far after each chunk.
std::string ReadStream(const std::string& url, const std::string& until,
                       const std::function<void(const std::string&)>& seen = nullptr) {
  struct State {
    std::string text;
    std::string until;
    std::function<void(const std::string&)> seen;
  } state{"", until, seen};
  CURL* curl = curl_easy_init();
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION,
                   +[](char* data, size_t size, size_t n, void* out) -> size_t {
                     auto* s = static_cast<State*>(out);
                     s->text.append(data, size * n);
                     if (s->seen) s->seen(s->text);
                     return s->text.find(s->until) != std::string::npos ? 0 : size * n;
                   });
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &state);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 30'000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_perform(curl);
  curl_easy_cleanup(curl);
  return state.text;
}

class TemporalHttpApiTest : public CliTest {
 protected:
  void SetUp() override {
    StartServer({"--http-port", "0"});
    std::smatch match;
    const std::string& banner = server_->banner();
    ASSERT_TRUE(std::regex_search(banner, match,
                                  std::regex(R"(\n  http api:   (http://\S+)/api/v1\n)")))
        << "no http api line in the banner:\n" << banner;
    base_ = match[1];
  }

  // `method` on `path` (under the port's root); the answer's JSON, expecting `status`.
  json Expect(const std::string& method, const std::string& path, long status,
              const std::string& body = "", const std::vector<std::string>& headers = {}) {
    HttpAnswer a = CurlCall(method, base_ + path, body, headers);
    EXPECT_EQ(a.error, "");
    EXPECT_EQ(a.status, status) << method << " " << path << " " << body.substr(0, 300) << " -> "
                                << a.body.substr(0, 2000);
    EXPECT_EQ(a.content_type, "application/json") << path;
    json parsed = json::parse(a.body, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << a.body.substr(0, 2000);
    return parsed.is_discarded() ? json() : parsed;
  }

  std::string base_;
};

TEST_F(TemporalHttpApiTest, AWorkflowStartedSignalledReadAndTerminatedOverHttp) {
  // Namespaces and the cluster, with and without the prefix.
  json ns = Expect("GET", "/api/v1/namespaces/default", 200);
  EXPECT_EQ(ns["namespaceInfo"]["name"], "default");
  // (Temporal's unprefixed twin of this one is under /cluster.)
  EXPECT_EQ(Expect("GET", "/cluster/namespaces/default", 200)["namespaceInfo"]["name"], "default");
  EXPECT_TRUE(Expect("GET", "/api/v1/system-info", 200).contains("capabilities"));
  EXPECT_FALSE(Expect("GET", "/api/v1/cluster-info", 200)["clusterName"].get<std::string>().empty());

  // A workflow id with a '/' travels percent-encoded; the input in the payload shorthand.
  json started = Expect("POST", "/api/v1/namespaces/default/workflows/order%2F1", 200,
                        R"({"workflowType": {"name": "Checkout"}, "taskQueue": {"name": "q"},
                            "input": ["hello", {"n": 1}], "requestId": "r-1",
                            "memo": {"fields": {"owner": "ops"}}})");
  const std::string run_id = started["runId"];
  EXPECT_FALSE(run_id.empty());
  Expect("POST", "/api/v1/namespaces/default/workflows/order%2F1/signal/go", 200,
         R"({"input": [42], "identity": "curl"})");

  json described = Expect("GET", "/api/v1/namespaces/default/workflows/order%2F1?execution.runId=" + run_id, 200);
  EXPECT_EQ(described["workflowExecutionInfo"]["execution"]["workflowId"], "order/1");
  EXPECT_EQ(described["workflowExecutionInfo"]["status"], "WORKFLOW_EXECUTION_STATUS_RUNNING");
  EXPECT_EQ(described["workflowExecutionInfo"]["memo"]["fields"]["owner"], "ops");
  EXPECT_TRUE(described["workflowExecutionInfo"]["historyLength"].is_string()) << "int64 as a string";

  json history = Expect("GET", "/api/v1/namespaces/default/workflows/order%2F1/history", 200);
  ASSERT_GE(history["history"]["events"].size(), 2u) << history.dump();
  const json& first = history["history"]["events"][0];
  EXPECT_EQ(first["eventId"], "1");
  EXPECT_EQ(first["eventType"], "EVENT_TYPE_WORKFLOW_EXECUTION_STARTED");
  EXPECT_EQ(first["workflowExecutionStartedEventAttributes"]["input"], json::parse(R"(["hello", {"n": 1}])"));
  bool signalled = false;
  for (const json& e : history["history"]["events"]) {
    if (e["eventType"] == "EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED") {
      signalled = true;
      EXPECT_EQ(e["workflowExecutionSignaledEventAttributes"]["input"], json::parse("[42]"));
    }
  }
  EXPECT_TRUE(signalled) << history.dump();

  // Shorthand off, by the query or by the media type: the proto form.
  for (const auto& [query, header] : std::vector<std::pair<std::string, std::string>>{
           {"?noPayloadShorthand", ""},
           {"", "Accept: application/json+no-payload-shorthand"}}) {
    json raw = Expect("GET", "/api/v1/namespaces/default/workflows/order%2F1/history" + query, 200,
                      "", header.empty() ? std::vector<std::string>{} : std::vector<std::string>{header});
    const json& input = raw["history"]["events"][0]["workflowExecutionStartedEventAttributes"]["input"];
    EXPECT_EQ(input["payloads"][0]["data"], absl::Base64Escape("\"hello\"")) << input.dump();
  }
  // ?pretty indents.
  HttpAnswer pretty = CurlCall("GET", base_ + "/api/v1/namespaces/default?pretty", "");
  EXPECT_NE(pretty.body.find("\n  \"namespaceInfo\": {"), std::string::npos) << pretty.body;

  // Visibility: list and count with a query (query parameters, URL-encoded).
  json listed = Expect("GET", "/api/v1/namespaces/default/workflows?query=WorkflowId%3D%22order%2F1%22", 200);
  ASSERT_EQ(listed["executions"].size(), 1u) << listed.dump();
  EXPECT_EQ(listed["executions"][0]["execution"]["runId"], run_id);
  EXPECT_EQ(Expect("GET", "/api/v1/namespaces/default/workflow-count?query=WorkflowType%3D%22Checkout%22", 200)["count"], "1");

  Expect("POST", "/api/v1/namespaces/default/workflows/order%2F1/terminate", 200,
         R"({"reason": "done by hand"})");
  EXPECT_EQ(Expect("GET", "/api/v1/namespaces/default/workflows/order%2F1", 200)["workflowExecutionInfo"]["status"],
            "WORKFLOW_EXECUTION_STATUS_TERMINATED");
}

TEST_F(TemporalHttpApiTest, ErrorsAreTemporalsStatusBodiesWithTheirHttpStatuses) {
  json missing = Expect("GET", "/api/v1/namespaces/default/workflows/nope", 404);
  EXPECT_EQ(missing["code"], 5);
  EXPECT_FALSE(missing["message"].get<std::string>().empty());

  Expect("POST", "/api/v1/namespaces/default/workflows/w1", 200,
         R"({"workflowType": {"name": "T"}, "taskQueue": {"name": "q"}, "requestId": "a"})");
  json again = Expect("POST", "/api/v1/namespaces/default/workflows/w1", 409,
                      R"({"workflowType": {"name": "T"}, "taskQueue": {"name": "q"}, "requestId": "b"})");
  EXPECT_EQ(again["code"], 6);
  ASSERT_EQ(again["details"].size(), 1u) << again.dump();
  EXPECT_EQ(again["details"][0]["@type"],
            "type.googleapis.com/temporal.api.errordetails.v1.WorkflowExecutionAlreadyStartedFailure");
  EXPECT_FALSE(again["details"][0]["runId"].get<std::string>().empty());

  json bad = Expect("POST", "/api/v1/namespaces/default/workflows/w2", 400, R"({"workflowTyp": 1})");
  EXPECT_EQ(bad["code"], 3);
  EXPECT_NE(bad["message"].get<std::string>().find("workflowTyp"), std::string::npos) << bad.dump();
  EXPECT_EQ(Expect("POST", "/api/v1/namespaces/default/workflows/w2", 400, "{not json")["message"],
            "the body is not valid JSON");

  // The seed's retention rule, with its exact message.
  json retention = Expect("POST", "/api/v1/namespaces", 400,
                          R"({"namespace": "n1", "workflowExecutionRetentionPeriod": "0s"})");
  EXPECT_TRUE(absl::StartsWith(retention["message"].get<std::string>(),
                               "A valid retention period is not set on request."))
      << retention.dump();

  EXPECT_EQ(Expect("GET", "/api/v1/no-such-thing", 404)["code"], 5);
  json huge = Expect("POST", "/api/v1/namespaces/default/workflows/w3", 413,
                     "{\"input\": [\"" + std::string(5 << 20, 'x') + "\"]}");
  EXPECT_EQ(huge["code"], 8);
  EXPECT_EQ(huge["message"], "the request body is over 4194304 bytes, the limit of Temporal's HTTP API");
  EXPECT_EQ(Expect("DELETE", "/api/v1/namespaces/default/workflows/w1/history", 405)["code"], 12);
  // The pinned OpenAPI description, as Temporal serves it.
  json swagger = Expect("GET", "/api/v1/swagger.json", 200);
  EXPECT_TRUE(swagger["paths"].contains("/api/v1/namespaces/{namespace}/workflows")) << swagger.dump().substr(0, 300);
  HttpAnswer v3 = CurlCall("GET", base_ + "/api/v1/openapi.yaml", "");
  EXPECT_EQ(v3.status, 200);
  EXPECT_NE(v3.body.find("\nopenapi: 3."), std::string::npos) << v3.body.substr(0, 200);
  // The timer API keeps its paths on the same port.
  HttpAnswer timers = CurlCall("POST", base_ + "/api/v1/timers/list", R"({"namespace": "default"})");
  EXPECT_EQ(timers.status, 200) << timers.body;
}

// waitNewEvent over HTTP: the page ends with a token, and the call with it answers with the
// next event once it is written (here a signal sent while, or before, the call waits).
TEST_F(TemporalHttpApiTest, AHistoryLongPollAnswersWithTheNextEvent) {
  Expect("POST", "/api/v1/namespaces/default/workflows/lp", 200,
         R"({"workflowType": {"name": "T"}, "taskQueue": {"name": "q"}})");
  json first = Expect("GET", "/api/v1/namespaces/default/workflows/lp/history?waitNewEvent=true", 200);
  ASSERT_TRUE(first.contains("nextPageToken")) << first.dump();
  const std::string token = first["nextPageToken"];
  const size_t seen = first["history"]["events"].size();
  std::string escaped;
  for (char c : token) escaped += c == '=' ? std::string("%3D") : c == '+' ? std::string("%2B") : std::string(1, c);
  json next;
  std::thread poll([&] {
    next = Expect("GET", "/api/v1/namespaces/default/workflows/lp/history?waitNewEvent=true&nextPageToken=" +
                             escaped, 200);
  });
  Expect("POST", "/api/v1/namespaces/default/workflows/lp/signal/wake", 200, R"({"input": ["now"]})");
  poll.join();
  ASSERT_GE(next["history"]["events"].size(), 1u) << next.dump();
  EXPECT_EQ(next["history"]["events"][0]["eventId"], std::to_string(seen + 1));
  EXPECT_EQ(next["history"]["events"][0]["eventType"], "EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED");
}

// Tock's own routes under /tock/v1: the calls Temporal's HTTP API has no path for, and the
// AdminService's.
TEST_F(TemporalHttpApiTest, TocksOwnRoutesUnderTockV1) {
  json cluster = Expect("GET", "/tock/v1/cluster", 200);
  EXPECT_FALSE(cluster["currentClusterName"].get<std::string>().empty()) << cluster.dump();
  EXPECT_GE(Expect("GET", "/tock/v1/cluster/shards", 200)["shards"].size(), 1u);
  EXPECT_GE(Expect("GET", "/tock/v1/namespaces/default/versions", 200)["versions"].size(), 1u);

  Expect("POST", "/tock/v1/namespaces/default/search-attributes", 200,
         R"({"searchAttributes": {"CustomerId": "INDEXED_VALUE_TYPE_KEYWORD"}})");
  json attributes = Expect("GET", "/api/v1/namespaces/default/search-attributes", 200);
  EXPECT_EQ(attributes["customAttributes"]["CustomerId"], "INDEXED_VALUE_TYPE_KEYWORD") << attributes.dump();

  Expect("POST", "/api/v1/namespaces/default/workflows/doomed", 200,
         R"({"workflowType": {"name": "T"}, "taskQueue": {"name": "q"}})");
  Expect("DELETE", "/tock/v1/namespaces/default/workflows/doomed", 200);
  EXPECT_TRUE(Eventually([&] {
    return CurlCall("GET", base_ + "/api/v1/namespaces/default/workflows/doomed", "").status == 404;
  })) << "the deleted workflow is gone";
  EXPECT_EQ(Expect("DELETE", "/tock/v1/namespaces/default/workflows/never-was", 404)["code"], 5);
}

// The run's events as server-sent events: the history first, then each new event as it is
// written, then `end` once the run closes; resumed after the last event seen.
TEST_F(TemporalHttpApiTest, AWorkflowsEventsStreamAsServerSentEvents) {
  Expect("POST", "/api/v1/namespaces/default/workflows/sse", 200,
         R"({"workflowType": {"name": "T"}, "taskQueue": {"name": "q"}, "input": ["in"]})");
  const std::string url = base_ + "/tock/v1/namespaces/default/workflows/sse/events";
  std::mutex mu;
  std::condition_variable cv;
  bool started = false;
  std::string text;
  std::thread reader([&] {
    text = ReadStream(url, "EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED", [&](const std::string& so_far) {
      if (so_far.find("EVENT_TYPE_WORKFLOW_TASK_SCHEDULED") == std::string::npos) return;
      std::lock_guard lock(mu);
      started = true;
      cv.notify_one();
    });
  });
  {
    // The history so far has arrived: the signal below comes through the stream's long poll.
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return started; }));
  }
  Expect("POST", "/api/v1/namespaces/default/workflows/sse/signal/go", 200, R"({"input": [7]})");
  reader.join();
  EXPECT_EQ(text.rfind("id: 1\nevent: history\ndata: {", 0), 0u) << text.substr(0, 300);
  EXPECT_NE(text.find(R"("input":["in"])"), std::string::npos) << "payload shorthand";
  EXPECT_NE(text.find("\nid: 3\nevent: history\ndata: {"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("input":[7])"), std::string::npos) << text;

  Expect("POST", "/api/v1/namespaces/default/workflows/sse/terminate", 200, R"({"reason": "r"})");
  const std::string rest = ReadStream(url + "?after=3", "event: end\n");
  EXPECT_EQ(rest.rfind("id: 4\nevent: history\n", 0), 0u) << rest;
  EXPECT_NE(rest.find("EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED"), std::string::npos) << rest;
  EXPECT_NE(rest.find("event: end\n"), std::string::npos) << rest;

  EXPECT_EQ(Expect("GET", "/tock/v1/namespaces/default/workflows/nope/events", 404)["code"], 5);

  // The same run as a timeline, without payloads.
  json summary = Expect("GET", "/tock/v1/namespaces/default/workflows/sse/summary", 200);
  EXPECT_EQ(summary["status"], "TERMINATED") << summary.dump();
  EXPECT_EQ(summary["events"], 4);
  ASSERT_EQ(summary["points"].size(), 1u) << summary.dump();
  EXPECT_EQ(summary["points"][0]["name"], "go");
  EXPECT_EQ(summary.dump().find("\"in\""), std::string::npos) << "no payloads";
}

TEST_F(TemporalHttpApiTest, SchedulesAndBatchJobs) {
  Expect("POST", "/api/v1/namespaces/default/schedules/nightly", 200, R"({
    "schedule": {"spec": {"interval": [{"interval": "3600s"}]},
                 "action": {"startWorkflow": {"workflowId": "nightly-run", "workflowType": {"name": "T"},
                                              "taskQueue": {"name": "q"}, "input": ["x"]}}},
    "requestId": "s1"})");
  json schedule = Expect("GET", "/api/v1/namespaces/default/schedules/nightly", 200);
  EXPECT_EQ(schedule["schedule"]["action"]["startWorkflow"]["input"], json::parse(R"(["x"])"));
  Expect("DELETE", "/api/v1/namespaces/default/schedules/nightly", 200);
  Expect("GET", "/api/v1/namespaces/default/schedules/nightly", 404);

  for (const std::string id : {"b1", "b2"}) {
    Expect("POST", "/api/v1/namespaces/default/workflows/" + id, 200,
           R"({"workflowType": {"name": "Batchable"}, "taskQueue": {"name": "q"}})");
  }
  Expect("POST", "/api/v1/namespaces/default/batch-operations/job-1", 200, R"({
    "visibilityQuery": "WorkflowType = \"Batchable\"", "reason": "cleanup",
    "terminationOperation": {"identity": "curl"}})");
  json job = Expect("GET", "/api/v1/namespaces/default/batch-operations/job-1", 200);
  EXPECT_EQ(job["jobId"], "job-1");
  EXPECT_EQ(job["operationType"], "BATCH_OPERATION_TYPE_TERMINATE");
}

// The console at the port's root, and `tock web` finding it through the server it talks to.
TEST_F(TemporalHttpApiTest, TheConsoleIsServedAtTheRootAndTockWebFindsIt) {
  std::smatch match;
  const std::string& banner = server_->banner();
  ASSERT_TRUE(std::regex_search(banner, match, std::regex(R"(\n  console:    (http://\S+/)\n)"))) << banner;
  const std::string console = match[1];
  EXPECT_EQ(console, base_ + "/");
  HttpAnswer page = CurlCall("GET", console, "", {});
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("assets/app/main.js"), std::string::npos);
  EXPECT_EQ(CurlCall("GET", base_ + "/healthz", "", {}).body, "{\"status\":\"OK\"}");
  // A browser accepts brotli too; answers come gzipped (cpp-httplib's brotli took 0.6 s for
  // a 260 KB page): the gzip magic bytes, not a brotli stream.
  HttpAnswer packed = CurlCall("GET", base_ + "/api/v1/namespaces", "",
                               {"Accept-Encoding: gzip, deflate, br, zstd"});
  ASSERT_GE(packed.body.size(), 2u);
  EXPECT_EQ(packed.body.substr(0, 2), "\x1f\x8b");
  json web = TockJson({"web", "--no-open"});
  EXPECT_EQ(web["url"], console);
  EXPECT_EQ(web["opened"], false);
}

TEST_F(CliTest, TockWebSaysWhenTheServerServesNoConsole) {
  StartServer({"--http-port", "0", "--headless"});
  EXPECT_EQ(server_->banner().find("console:"), std::string::npos) << server_->banner();
  ProcessResult r = Tock({"web", "--no-open"});
  EXPECT_EQ(r.exit_code, kExitNotFound) << r.out << r.err;
  EXPECT_NE(r.err.find("serves no web console: start it with --http-port (tock server start-dev "
                       "does) and without --headless"),
            std::string::npos)
      << r.err;
}

TEST(TockWebTest, AWildcardListeningAddressBecomesTheHostTockReaches) {
  EXPECT_EQ(cli::ReachableConsoleUrl("http://0.0.0.0:7243/", "ops.example:7233"), "http://ops.example:7243/");
  EXPECT_EQ(cli::ReachableConsoleUrl("https://[::]:8443/", "10.0.0.5:7233"), "https://10.0.0.5:8443/");
  EXPECT_EQ(cli::ReachableConsoleUrl("http://127.0.0.1:7243/", "ops.example:7233"), "http://127.0.0.1:7243/");
}

}  // namespace
}  // namespace tock::testing
