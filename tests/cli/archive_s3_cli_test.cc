// Archival to S3 against a real S3-compatible server on loopback: s3rver behind a proxy that
// checks every request's SigV4 signature with AWS's own signer (tests/s3). Tock's S3 store
// (libcurl + SigV4) writes; the real AWS client (@aws-sdk/client-s3) reads back, and the other
// way round. Then the server end to end: archive on close and at retention, an outage of the
// store (retries, nothing deleted, the error in `archival status`, done once it returns),
// and offline reads.
#include <filesystem>
#include <fstream>
#include <thread>

#include "lib/archival/history_archive.h"
#include "lib/archival/s3_blob_store.h"
#include "lib/archival/visibility_archive.h"
#include "tests/cli/cli_fixture.h"
#include "tests/support/s3_stack.h"

namespace tock::testing {
namespace {
namespace hist = temporal::api::history::v1;

const archival::AwsCredentials kCredentials{"tockaccess", "tocksecret", ""};

class S3Test : public CliTest {
 protected:
  void SetUp() override {
    stack_ = std::make_unique<S3Stack>(TOCK_SOURCE_DIR, dir_.File("s3-data"),
                                       std::vector<std::string>{"archive"});
    ASSERT_TRUE(stack_->Start()) << stack_->error();
  }

  std::unique_ptr<archival::S3BlobStore> Store(bool path_style = true,
                                               archival::AwsCredentials credentials = kCredentials,
                                               std::string prefix = "tock") {
    archival::S3Options o;
    o.bucket = "archive";
    o.prefix = std::move(prefix);
    o.region = "us-east-1";
    o.endpoint = stack_->endpoint();
    o.force_path_style = path_style;
    o.credentials = std::move(credentials);
    o.max_attempts = 3;
    o.first_backoff = absl::Milliseconds(50);
    auto store = archival::S3BlobStore::Create(o);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // The objects under `prefix` as the AWS client reads them: key -> body.
  std::map<std::string, std::string> ReadBack(const std::string& prefix) {
    ProcessResult r = stack_->ReadObjects("archive", prefix);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, std::string> out;
    json doc = json::parse(r.out, nullptr, false);
    if (doc.is_discarded()) {
      ADD_FAILURE() << r.out;
      return out;
    }
    for (const json& o : doc["objects"]) out[o["key"]] = o["body"];
    return out;
  }

  std::unique_ptr<S3Stack> stack_;
};

TEST_F(S3Test, StoreWritesReadsAndListsInBothAddressingStyles) {
  for (bool path_style : {true, false}) {
    SCOPED_TRACE(path_style ? "path style" : "virtual-host style");
    auto store = Store(path_style, kCredentials, path_style ? "p" : "v");
    ASSERT_NE(store, nullptr);
    // Keys with what the visibility layout puts in them (':' of RFC 3339, '=' and spaces of
    // workflow ids) and a non-ASCII id.
    const std::vector<std::string> keys = {"ns/visibility/workflowID/a b=c/closeTimeout/2026-01-02T03:04:05Z/r1",
                                           "ns/history/w\xc3\xa9/r/0/0", "ns/history/w/r/0/1"};
    for (const std::string& k : keys) ASSERT_TRUE(store->Put(k, "body of " + k).ok()) << k;
    for (const std::string& k : keys) {
      auto got = store->Get(k);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(*got, "body of " + k);
      EXPECT_TRUE(*store->Exists(k));
    }
    EXPECT_FALSE(*store->Exists("ns/none"));
    EXPECT_EQ(store->Get("ns/none").status().code(), absl::StatusCode::kNotFound);
    auto page = store->List("ns/history/", 1, "");
    ASSERT_TRUE(page.ok()) << page.status();
    ASSERT_EQ(page->keys.size(), 1u);
    ASSERT_FALSE(page->next_token.empty());
    auto rest = store->List("ns/history/", 10, page->next_token);
    ASSERT_TRUE(rest.ok()) << rest.status();
    EXPECT_EQ(rest->keys.size(), 1u);
    EXPECT_TRUE(rest->next_token.empty());
  }
  // The AWS client sees the same objects under the same keys.
  std::map<std::string, std::string> seen = ReadBack("p/ns/");
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen["p/ns/history/w/r/0/1"], "body of ns/history/w/r/0/1");
}

TEST_F(S3Test, AWrongSecretIsRefusedAndStoresNothing) {
  auto bad = Store(true, {"tockaccess", "not-the-secret", ""});
  absl::Status s = bad->Put("ns/x", "data");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
  EXPECT_NE(s.message().find("SignatureDoesNotMatch"), std::string::npos) << s;
  EXPECT_FALSE(*Store()->Exists("ns/x"));
  auto unknown = Store(true, {"someone-else", "tocksecret", ""});
  EXPECT_NE(unknown->Put("ns/x", "data").message().find("InvalidAccessKeyId"), std::string::npos);
}

TEST_F(S3Test, AStoppedServerIsUnavailableAfterRetriesAndFineOnceBack) {
  auto store = Store();
  ASSERT_TRUE(store->Put("ns/before", "1").ok());
  stack_->Stop();
  absl::Status s = store->Put("ns/during", "2");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_NE(s.message().find("failed after 3 attempts"), std::string::npos) << s;
  ASSERT_TRUE(stack_->Start()) << stack_->error();
  EXPECT_TRUE(store->Put("ns/during", "2").ok());
  EXPECT_EQ(*store->Get("ns/before"), "1") << "objects survive the restart";
}

TEST_F(S3Test, ArchivesAreInterchangeableWithTheAwsClient) {
  auto store = Store(true, kCredentials, "");
  archival::HistoryArchive history(*archival::ParseArchivalUri("s3://archive"), *store);
  std::vector<hist::HistoryEvent> events(4);
  for (int i = 0; i < 4; ++i) {
    events[i].set_event_id(i + 1);
    events[i].set_version(5);
    events[i].set_event_type(i == 0 ? temporal::api::enums::v1::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED
                                    : temporal::api::enums::v1::EVENT_TYPE_TIMER_FIRED);
  }
  ASSERT_TRUE(history.Archive({"ns-1", "orders", "wf-1", "run-1"}, events).ok());
  // Written by Tock, read by the AWS client: Temporal's key and a HistoryBlob.
  std::map<std::string, std::string> objects = ReadBack("ns-1/history/");
  ASSERT_EQ(objects.size(), 1u);
  ASSERT_EQ(objects.begin()->first, "ns-1/history/wf-1/run-1/5/0");
  json blob = json::parse(objects.begin()->second);
  EXPECT_EQ(At(blob, "/header/namespace"), "orders");
  EXPECT_EQ(At(blob, "/header/isLast"), true);
  EXPECT_EQ(At(blob, "/header/lastEventId"), "4");
  EXPECT_EQ(At(blob, "/body/0/events/3/eventType"), "EVENT_TYPE_TIMER_FIRED");

  archival::VisibilityArchive visibility(*archival::ParseArchivalUri("s3://archive"), *store);
  tock::archiver::v1::VisibilityRecord record;
  record.set_namespace_id("ns-1");
  record.set_workflow_id("wf-1");
  record.set_run_id("run-1");
  record.set_workflow_type_name("order");
  record.mutable_start_time()->set_seconds(1'790'000'000);
  record.mutable_close_time()->set_seconds(1'790'000'090);
  record.set_status(temporal::api::enums::v1::WORKFLOW_EXECUTION_STATUS_COMPLETED);
  ASSERT_TRUE(visibility.Archive(record).ok());
  objects = ReadBack("ns-1/visibility/");
  std::vector<std::string> keys;
  for (const auto& [k, v] : objects) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "ns-1/visibility/workflowID/wf-1/closeTimeout/2026-09-21T14:14:50Z/run-1",
                      "ns-1/visibility/workflowID/wf-1/startTimeout/2026-09-21T14:13:20Z/run-1",
                      "ns-1/visibility/workflowTypeName/order/closeTimeout/2026-09-21T14:14:50Z/run-1",
                      "ns-1/visibility/workflowTypeName/order/startTimeout/2026-09-21T14:13:20Z/run-1"}));
  auto hour = visibility.Query(
      "ns-1", "WorkflowType = 'order' AND CloseTime = '2026-09-21T14:00:00Z' AND SearchPrecision = 'Hour'",
      10, "", absl::Now());
  ASSERT_TRUE(hour.ok()) << hour.status();
  ASSERT_EQ(hour->executions.size(), 1u);
  EXPECT_EQ(hour->executions[0].execution().run_id(), "run-1");
  EXPECT_TRUE(visibility
                  .Query("ns-1", "WorkflowType = 'order' AND CloseTime = '2026-09-21T15:00:00Z' AND "
                                 "SearchPrecision = 'Hour'",
                         10, "", absl::Now())
                  ->executions.empty());

  // Written by the AWS client (as Temporal's archiver would), read by Tock.
  const std::string planted = dir_.Write(
      "blob.json",
      R"({"header":{"namespace":"orders","namespaceId":"ns-1","workflowId":"wf-2","runId":"run-2","isLast":true,)"
      R"("firstEventId":"1","lastEventId":"2","eventCount":"2","unknownHeaderField":1},)"
      R"("body":[{"events":[{"eventId":"1","eventType":"EVENT_TYPE_WORKFLOW_EXECUTION_STARTED"},)"
      R"({"eventId":"2","eventType":"EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED"}]}]})");
  ProcessResult put = stack_->PutObject("archive", "ns-1/history/wf-2/run-2/0/0", planted);
  ASSERT_EQ(put.exit_code, 0) << put.err;
  auto read = history.Get("ns-1", "wf-2", "run-2");
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->events_size(), 2);
  EXPECT_EQ(read->events(1).event_type(), temporal::api::enums::v1::EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
}

// The server archiving to S3 (credentials from the environment, as on AWS).
class S3ServerTest : public S3Test {
 protected:
  void StartS3Server() {
    const std::string provider = "provider: {s3store: {region: us-east-1, endpoint: \"" +
                                 stack_->endpoint() + "\", force_path_style: true}}";
    const std::string config =
        "archival:\n"
        "  history: {state: enabled, enable_read: true, " + provider + "}\n"
        "  visibility: {state: enabled, enable_read: true, " + provider + "}\n"
        "namespace_defaults:\n"
        "  archival:\n"
        "    history: {state: enabled, uri: \"s3://archive/tock/history\"}\n"
        "    visibility: {state: enabled, uri: \"s3://archive/tock/visibility\"}\n";
    server_ = std::make_unique<ServerProcess>(TOCK_SERVER_BIN);
    ASSERT_TRUE(server_->Start({"--config", dir_.Write("s3.yaml", config), "--db-file",
                                dir_.File("tock.db"), "--enable-time-skipping"},
                               {{"AWS_ACCESS_KEY_ID", "tockaccess"},
                                {"AWS_SECRET_ACCESS_KEY", "tocksecret"}}))
        << server_->error();
  }

  std::string CloseRun(const std::string& workflow_id) {
    json started = TockJson({"-n", "orders", "workflow", "start", "--type", "order",
                             "--task-queue", "nobody", "--id", workflow_id});
    EXPECT_EQ(Tock({"-n", "orders", "workflow", "terminate", "-w", workflow_id}).exit_code, kExitOk);
    return At(started, "/runId").get<std::string>();
  }

  // Polls `tock archival status` until `done(status)` (20 s at most).
  json WaitFor(const std::function<bool(const json&)>& done, const std::string& what) {
    json status;
    for (int i = 0; i < 200; ++i) {
      status = TockJson({"-n", "orders", "archival", "status"});
      if (done(status)) return status;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "never " << what << ": " << status.dump();
    return status;
  }
};

TEST_F(S3ServerTest, ArchivesToS3AndSurvivesAnOutageOfTheStore) {
  ASSERT_NO_FATAL_FAILURE(StartS3Server());
  ASSERT_NO_FATAL_FAILURE(Register({"orders", "--retention", "1d"}));
  const std::string ns_id =
      At(TockJson({"namespace", "describe", "orders"}), "/namespaceInfo/id").get<std::string>();
  const std::string run = CloseRun("order-1");
  WaitFor([](const json& s) { return At(s, "/visibility/archived") == "1"; }, "visibility archived");
  EXPECT_EQ(ReadBack("tock/visibility/" + ns_id + "/").size(), 4u);

  // The store goes down; retention passes: archival fails and retries, nothing is deleted.
  stack_->Stop();
  TockJson({"server", "advance-time", "25h"});
  json failing = WaitFor([](const json& s) { return At(s, "/failing") == "1"; }, "failing");
  EXPECT_EQ(At(failing, "/runsDeleted"), "0");
  EXPECT_EQ(At(failing, "/history/pending"), "1");
  EXPECT_EQ(At(failing, "/failures/0/runId"), run);
  EXPECT_NE(At(failing, "/failures/0/lastError").get<std::string>().find("failed after"),
            std::string::npos)
      << failing.dump();
  EXPECT_EQ(At(TockJson({"-n", "orders", "workflow", "describe", "-w", "order-1"}), "/archived"),
            json())
      << "never deleted before its history is archived";
  ProcessResult card = Tock({"-n", "orders", "archival", "status", "-o", "card"});
  EXPECT_NE(card.out.find("Failing:       1"), std::string::npos) << card.out;

  // The store returns: the retry (after its backoff, skipped here) archives, then deletes.
  ASSERT_TRUE(stack_->Start()) << stack_->error();
  TockJson({"server", "advance-time", "2m"});
  json done = WaitFor([](const json& s) { return At(s, "/runsDeleted") == "1"; }, "deleted");
  EXPECT_EQ(At(done, "/failing"), "0");
  EXPECT_EQ(At(done, "/history/archived"), "1");
  std::map<std::string, std::string> history = ReadBack("tock/history/" + ns_id + "/");
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history.begin()->first, "tock/history/" + ns_id + "/history/order-1/" + run + "/0/0");
  EXPECT_EQ(At(json::parse(history.begin()->second), "/header/isLast"), true);

  // Reads: through the server, and offline with the environment's credentials.
  json shown = TockJson({"-n", "orders", "workflow", "show", "-w", "order-1", "-r", run});
  ASSERT_EQ(At(shown, "/events").size(), 3u);
  std::vector<json> listed = TockJsonLines(
      {"-n", "orders", "workflow", "list", "--archived", "--query", "WorkflowId = 'order-1'"});
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(At(listed[0], "/execution/runId"), run);
  const std::map<std::string, std::string> aws = {{"AWS_ACCESS_KEY_ID", "tockaccess"},
                                                  {"AWS_SECRET_ACCESS_KEY", "tocksecret"}};
  ProcessResult offline = RunProcess(
      {TOCK_CLI_BIN, "archival", "show", "s3://archive/tock/history", "--s3-endpoint",
       stack_->endpoint(), "--s3-force-path-style", "--namespace-id", ns_id, "-w", "order-1", "-r",
       run, "-o", "json"},
      aws);
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  EXPECT_EQ(json::parse(offline.out), shown);
  ProcessResult wrong = RunProcess(
      {TOCK_CLI_BIN, "archival", "list", "s3://archive/tock/visibility", "--s3-endpoint",
       stack_->endpoint(), "--s3-force-path-style", "--namespace-id", ns_id, "--query",
       "WorkflowType = 'order'"},
      {{"AWS_ACCESS_KEY_ID", "tockaccess"}, {"AWS_SECRET_ACCESS_KEY", "wrong"}});
  EXPECT_EQ(wrong.exit_code, kExitError) << wrong.err;
  EXPECT_NE(wrong.err.find("SignatureDoesNotMatch"), std::string::npos) << wrong.err;
  ProcessResult by_type = RunProcess(
      {TOCK_CLI_BIN, "archival", "list", "s3://archive/tock/visibility", "--s3-endpoint",
       stack_->endpoint(), "--s3-force-path-style", "--namespace-id", ns_id, "--query",
       "WorkflowType = 'order'", "-o", "jsonl"},
      aws);
  ASSERT_EQ(by_type.exit_code, 0) << by_type.err;
  EXPECT_EQ(ParseJsonLines(by_type.out).size(), 1u);
}

}  // namespace
}  // namespace tock::testing
