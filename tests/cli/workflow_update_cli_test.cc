// `tock workflow update execute|start|result|describe` against a real tock-server, with a
// worker of raw WorkflowService calls (test_worker.h) taking the workflow tasks that carry the
// update requests and answering them with protocol messages: results, rejections, failures,
// start then result, describe at each stage, deduplicated update ids, closed workflows,
// unknown updates, and the usage errors with their exact messages and exit codes.
#include <algorithm>
#include <future>
#include <thread>
#include <map>

#include "lib/admin/workflow_update.h"
#include "lib/common/ids.h"
#include "tests/cli/cli_fixture.h"
#include "tests/cli/test_worker.h"

namespace tock::testing {
namespace {

namespace pb = temporal::api::protocol::v1;

constexpr char kAccepted[] = "UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ACCEPTED";
constexpr char kAdmitted[] = "UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED";
constexpr char kCompleted[] = "UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED";
constexpr char kInputHint[] =
    ": each input is one JSON value, for example '\"text\"', 42 or '{\"k\": 1}'";

class WorkflowUpdateCliTest : public CliTest {
 protected:
  void SetUp() override { StartServer(); }

  // The worker of workflow `id`'s own task queue.
  TestWorker& Worker(const std::string& id) {
    auto& w = workers_[id];
    if (!w) w = std::make_unique<TestWorker>(server_->address(), "q-" + id);
    return *w;
  }

  // Starts workflow `id` and completes its first workflow task with no commands: the run is
  // open and idle, so an update brings the next workflow task. Returns the run id.
  std::string StartIdle(const std::string& id) {
    json started = TockJson({"workflow", "start", "--type", "order", "--task-queue", "q-" + id,
                             "--id", id});
    auto task = Worker(id).PollWorkflowTask();
    EXPECT_FALSE(task.task_token().empty()) << "no first workflow task for " << id;
    Worker(id).CompleteWorkflowTask(task.task_token());
    const json run = At(started, "/runId");
    return run.is_string() ? run.get<std::string>() : "";
  }

  // `tock args...` in the background (the update commands wait for the worker).
  std::future<ProcessResult> TockAsync(std::vector<std::string> args) {
    return std::async(std::launch::async, [this, args] { return Tock(args); });
  }

  // The next workflow task of workflow `id`, which must carry exactly one update request;
  // `request` receives it.
  std::string TakeUpdate(const std::string& id, pb::Message& request) {
    auto task = Worker(id).PollWorkflowTask();
    EXPECT_FALSE(task.task_token().empty()) << "no workflow task for the update of " << id;
    auto requests = TestWorker::UpdateRequests(task);
    EXPECT_EQ(requests.size(), 1u) << task.DebugString();
    if (!requests.empty()) request = requests[0];
    return task.task_token();
  }

  // Accepts the update of `request` and completes it with `json` in one workflow task.
  void AcceptAndComplete(const std::string& id, const std::string& token,
                         const pb::Message& request, const std::string& json) {
    pb::Message accept = TestWorker::AcceptUpdate(request);
    pb::Message complete = TestWorker::CompleteUpdate(request, json);
    Worker(id).CompleteWorkflowTask(
        token,
        {TestWorker::ProtocolMessageCommand(accept), TestWorker::ProtocolMessageCommand(complete)},
        {accept, complete});
  }

  // The command must exit 0 and print one JSON document.
  static json Json(const std::vector<std::string>& args, const ProcessResult& r) {
    EXPECT_EQ(r.exit_code, kExitOk) << Describe(args, r);
    EXPECT_EQ(r.err, "") << Describe(args, r);
    json parsed = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << Describe(args, r);
    return parsed.is_discarded() ? json() : parsed;
  }

  static void ExpectFailed(const std::vector<std::string>& args, const ProcessResult& r,
                           const std::string& message) {
    EXPECT_EQ(r.exit_code, kExitError) << Describe(args, r);
    EXPECT_EQ(r.err, "error: " + message + "\n") << Describe(args, r);
    EXPECT_EQ(r.out, "") << Describe(args, r);
  }

  std::map<std::string, std::unique_ptr<TestWorker>> workers_;
};

// ---- execute -----------------------------------------------------------------------------------

TEST_F(WorkflowUpdateCliTest, ExecutePrintsTheResultTheWorkerReturned) {
  const std::string run = StartIdle("u-exec");
  const std::vector<std::string> args = {"workflow",  "update", "execute", "--workflow-id",
                                         "u-exec",    "--name", "add-item", "--input",
                                         "{\"sku\": 42}", "--input", "\"gift\"", "--update-id",
                                         "add-1",     "-o",     "json"};
  auto pending = TockAsync(args);
  pb::Message request;
  const std::string token = TakeUpdate("u-exec", request);
  // The request as the worker sees it: id, handler name, both arguments in order.
  EXPECT_EQ(request.id(), "add-1/request");
  EXPECT_EQ(request.protocol_instance_id(), "add-1");
  const auto body = TestWorker::UpdateRequestBody(request);
  EXPECT_EQ(body.meta().update_id(), "add-1");
  EXPECT_EQ(body.input().name(), "add-item");
  ASSERT_EQ(body.input().args().payloads_size(), 2);
  EXPECT_EQ(body.input().args().payloads(0).data(), "{\"sku\":42}");
  EXPECT_EQ(body.input().args().payloads(1).data(), "\"gift\"");
  EXPECT_EQ(body.input().args().payloads(0).metadata().at("encoding"), "json/plain");
  AcceptAndComplete("u-exec", token, request, "{\"items\": 3}");

  const json out = Json(args, pending.get());
  EXPECT_EQ(out, (json{{"name", "add-item"},
                       {"updateId", "add-1"},
                       {"workflowId", "u-exec"},
                       {"runId", run},
                       {"stage", kCompleted},
                       {"result", {{"items", 3}}}}))
      << out.dump();

  // The history records both stages of the accepted update.
  std::vector<std::string> types;
  for (const json& e : TockJsonLines({"workflow", "show", "--workflow-id", "u-exec"})) {
    types.push_back(At(e, "/eventType").get<std::string>());
  }
  EXPECT_NE(std::find(types.begin(), types.end(), "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED"),
            types.end());
  EXPECT_NE(std::find(types.begin(), types.end(), "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED"),
            types.end());

  // The same update id again joins the completed update: its result at once, no worker.
  const json again = TockJson({"workflow", "update", "execute", "-w", "u-exec", "--name",
                               "add-item", "--input", "1", "--update-id", "add-1"});
  EXPECT_EQ(At(again, "/result"), (json{{"items", 3}})) << again.dump();
}

TEST_F(WorkflowUpdateCliTest, ExecutePrintsACardOnATable) {
  const std::string run = StartIdle("u-card");
  const std::vector<std::string> args = {"workflow", "update", "execute", "-w", "u-card",
                                         "--name", "rename", "--input", "\"Lyon\"",
                                         "--update-id", "r-1", "-o", "card"};
  auto pending = TockAsync(args);
  pb::Message request;
  const std::string token = TakeUpdate("u-card", request);
  AcceptAndComplete("u-card", token, request, "\"renamed\"");
  const ProcessResult r = pending.get();
  EXPECT_EQ(r.exit_code, kExitOk) << Describe(args, r);
  EXPECT_EQ(r.out, "Update id:    r-1\n"
                   "Name:         rename\n"
                   "Workflow id:  u-card\n"
                   "Run id:       " + run + "\n"
                   "Stage:        Completed\n"
                   "Result:       \"renamed\"\n")
      << Describe(args, r);
}

TEST_F(WorkflowUpdateCliTest, ARejectedUpdateIsExit1WithTheValidatorsMessage) {
  StartIdle("u-rej");
  const std::vector<std::string> args = {"workflow", "update", "execute", "-w", "u-rej",
                                         "--name", "withdraw", "--input", "-5", "--update-id",
                                         "w-1"};
  auto pending = TockAsync(args);
  pb::Message request;
  const std::string token = TakeUpdate("u-rej", request);
  Worker("u-rej").CompleteWorkflowTask(
      token, {}, {TestWorker::RejectUpdate(request, "amount must be positive")});
  ExpectFailed(args, pending.get(),
               "update \"w-1\" of workflow \"u-rej\" failed: amount must be positive");

  // A rejection leaves no event; describe shows it completed with the failure (exit 0).
  for (const json& e : TockJsonLines({"workflow", "show", "--workflow-id", "u-rej"})) {
    EXPECT_EQ(At(e, "/eventType").get<std::string>().find("UPDATE"), std::string::npos)
        << e.dump();
  }
  const json d =
      TockJson({"workflow", "update", "describe", "-w", "u-rej", "--update-id", "w-1"});
  EXPECT_EQ(At(d, "/stage"), kCompleted) << d.dump();
  EXPECT_EQ(At(d, "/failure/message"), "amount must be positive") << d.dump();
  EXPECT_FALSE(d.contains("result")) << d.dump();
  // result of a rejected update: the same failure, exit 1.
  const std::vector<std::string> result = {"workflow", "update", "result", "-w", "u-rej",
                                           "--update-id", "w-1"};
  ExpectFailed(result, Tock(result),
               "update \"w-1\" of workflow \"u-rej\" failed: amount must be positive");
}

TEST_F(WorkflowUpdateCliTest, AFailedHandlerIsExit1WithItsMessage) {
  StartIdle("u-fail");
  const std::vector<std::string> args = {"workflow", "update", "execute", "-w", "u-fail",
                                         "--name", "reserve", "--update-id", "res-1"};
  auto pending = TockAsync(args);
  pb::Message request;
  const std::string token = TakeUpdate("u-fail", request);
  pb::Message accept = TestWorker::AcceptUpdate(request);
  pb::Message fail = TestWorker::FailUpdate(request, "out of stock");
  Worker("u-fail").CompleteWorkflowTask(
      token, {TestWorker::ProtocolMessageCommand(accept), TestWorker::ProtocolMessageCommand(fail)},
      {accept, fail});
  ExpectFailed(args, pending.get(), "update \"res-1\" of workflow \"u-fail\" failed: out of stock");
}

TEST_F(WorkflowUpdateCliTest, AWorkerThatDoesNotAnswerTheUpdateRejectsIt) {
  // An SDK without updates completes the task without a word about the update.
  StartIdle("u-deaf");
  const std::vector<std::string> args = {"workflow", "update", "execute", "-w", "u-deaf",
                                         "--name", "ping", "--update-id", "p-1"};
  auto pending = TockAsync(args);
  pb::Message request;
  const std::string token = TakeUpdate("u-deaf", request);
  Worker("u-deaf").CompleteWorkflowTask(token);
  ExpectFailed(args, pending.get(),
               "update \"p-1\" of workflow \"u-deaf\" failed: Workflow Update is rejected because "
               "it wasn't processed by worker. Probably, Workflow Update is not supported by the "
               "worker.");
}

TEST_F(WorkflowUpdateCliTest, ExecuteOutlastsTheServersLongPolls) {
  // The server answers a long poll after 20 s with the stage reached so far: ADMITTED (no
  // worker took the update) makes execute send the update again, ACCEPTED without an outcome
  // makes it poll for the outcome. Both answers need the 20 s to pass, hence the waits.
  const std::string run = StartIdle("u-slow");
  const std::vector<std::string> args = {"workflow", "update", "execute", "-w", "u-slow",
                                         "--name", "slow", "--update-id", "slow-1", "-o", "json"};
  auto pending = std::async(std::launch::async, [this, args] {
    std::vector<std::string> argv = {TOCK_CLI_BIN, "--address", server_->address()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, {}, "", std::chrono::seconds(90));
  });
  std::this_thread::sleep_for(std::chrono::seconds(22));  // ADMITTED answered, sent again
  pb::Message request;
  const std::string token = TakeUpdate("u-slow", request);
  pb::Message accept = TestWorker::AcceptUpdate(request);
  Worker("u-slow").CompleteWorkflowTask(token, {TestWorker::ProtocolMessageCommand(accept)},
                                        {accept});
  std::this_thread::sleep_for(std::chrono::seconds(22));  // ACCEPTED answered, polling
  ASSERT_EQ(Tock({"workflow", "signal", "-w", "u-slow", "--name", "go"}).exit_code, kExitOk);
  auto task = Worker("u-slow").PollWorkflowTask();
  ASSERT_FALSE(task.task_token().empty());
  pb::Message complete = TestWorker::CompleteUpdate(request, "\"late\"");
  Worker("u-slow").CompleteWorkflowTask(task.task_token(),
                                        {TestWorker::ProtocolMessageCommand(complete)}, {complete});
  const json out = Json(args, pending.get());
  EXPECT_EQ(At(out, "/result"), "late") << out.dump();
  EXPECT_EQ(At(out, "/runId"), run) << out.dump();
  EXPECT_EQ(At(out, "/stage"), kCompleted) << out.dump();
}

// ---- start, describe, result ---------------------------------------------------------------

TEST_F(WorkflowUpdateCliTest, StartReturnsOnceAcceptedAndResultWaitsForTheOutcome) {
  const std::string run = StartIdle("u-start");
  const std::vector<std::string> start = {"workflow", "update", "start", "-w", "u-start",
                                          "--name", "ship", "--update-id", "ship-1",
                                          "--wait-for-stage", "accepted", "-o", "json"};
  auto started = TockAsync(start);
  pb::Message request;
  const std::string token = TakeUpdate("u-start", request);

  // Delivered to the worker, not answered yet: admitted.
  const std::vector<std::string> describe = {"workflow", "update", "describe", "-w", "u-start",
                                             "--update-id", "ship-1"};
  json d = TockJson(describe);
  EXPECT_EQ(d, (json{{"updateId", "ship-1"},
                     {"workflowId", "u-start"},
                     {"runId", run},
                     {"stage", kAdmitted}}))
      << d.dump();

  pb::Message accept = TestWorker::AcceptUpdate(request);
  Worker("u-start").CompleteWorkflowTask(token, {TestWorker::ProtocolMessageCommand(accept)},
                                         {accept});
  const json out = Json(start, started.get());
  EXPECT_EQ(out, (json{{"name", "ship"},
                       {"updateId", "ship-1"},
                       {"workflowId", "u-start"},
                       {"runId", run},
                       {"stage", kAccepted}}))
      << out.dump();

  d = TockJson(describe);
  EXPECT_EQ(At(d, "/stage"), kAccepted) << d.dump();
  EXPECT_FALSE(d.contains("result")) << d.dump();

  // result waits; the handler finishes in a later workflow task (brought by a signal).
  const std::vector<std::string> result = {"workflow", "update", "result", "-w", "u-start",
                                           "--update-id", "ship-1", "-o", "json"};
  auto waiting = TockAsync(result);
  ASSERT_EQ(Tock({"workflow", "signal", "-w", "u-start", "--name", "go"}).exit_code, kExitOk);
  auto task = Worker("u-start").PollWorkflowTask();
  ASSERT_FALSE(task.task_token().empty());
  EXPECT_TRUE(TestWorker::UpdateRequests(task).empty()) << task.DebugString();
  pb::Message complete = TestWorker::CompleteUpdate(request, "{\"tracking\": \"T-9\"}");
  Worker("u-start").CompleteWorkflowTask(task.task_token(),
                                         {TestWorker::ProtocolMessageCommand(complete)}, {complete});
  const json r = Json(result, waiting.get());
  EXPECT_EQ(r, (json{{"updateId", "ship-1"},
                     {"workflowId", "u-start"},
                     {"runId", run},
                     {"stage", kCompleted},
                     {"result", {{"tracking", "T-9"}}}}))
      << r.dump();

  // describe after: completed, with the result; as a card on a table.
  d = TockJson(describe);
  EXPECT_EQ(At(d, "/stage"), kCompleted) << d.dump();
  EXPECT_EQ(At(d, "/result"), (json{{"tracking", "T-9"}})) << d.dump();
  std::vector<std::string> card = describe;
  card.insert(card.end(), {"-o", "card"});
  const ProcessResult c = Tock(card);
  EXPECT_EQ(c.exit_code, kExitOk) << Describe(card, c);
  EXPECT_EQ(c.out, "Update id:    ship-1\n"
                   "Workflow id:  u-start\n"
                   "Run id:       " + run + "\n"
                   "Stage:        Completed\n"
                   "Result:       {\"tracking\":\"T-9\"}\n")
      << Describe(card, c);
}

TEST_F(WorkflowUpdateCliTest, StartOfARejectedUpdateIsExit1) {
  StartIdle("u-srej");
  const std::vector<std::string> args = {"workflow", "update", "start", "-w", "u-srej",
                                         "--name", "ship", "--update-id", "s-1",
                                         "--wait-for-stage", "Accepted"};
  auto pending = TockAsync(args);
  pb::Message request;
  const std::string token = TakeUpdate("u-srej", request);
  Worker("u-srej").CompleteWorkflowTask(token, {},
                                        {TestWorker::RejectUpdate(request, "already shipped")});
  ExpectFailed(args, pending.get(), "update \"s-1\" of workflow \"u-srej\" failed: already shipped");
}

// ---- not found ---------------------------------------------------------------------------------

TEST_F(WorkflowUpdateCliTest, AnUpdateOfACompletedWorkflowIsNotFound) {
  TockJson({"workflow", "start", "--type", "order", "--task-queue", "q-u-done", "--id", "u-done"});
  auto task = Worker("u-done").PollWorkflowTask();
  ASSERT_FALSE(task.task_token().empty());
  Worker("u-done").CompleteWorkflowTask(task.task_token(),
                                        {TestWorker::CompleteWorkflowCommand("\"done\"")});
  ExpectError({"workflow", "update", "execute", "-w", "u-done", "--name", "add"}, kExitNotFound,
              "workflow execution already completed");
  ExpectError({"workflow", "update", "start", "-w", "u-done", "--name", "add",
               "--wait-for-stage", "accepted"},
              kExitNotFound, "workflow execution already completed");
}

TEST_F(WorkflowUpdateCliTest, AnUnknownUpdateIdIsNotFound) {
  StartIdle("u-unknown");
  ExpectError({"workflow", "update", "result", "-w", "u-unknown", "--update-id", "nope"},
              kExitNotFound, "update \"nope\" not found");
  ExpectError({"workflow", "update", "describe", "-w", "u-unknown", "--update-id", "nope"},
              kExitNotFound, "update \"nope\" not found");
}

TEST_F(WorkflowUpdateCliTest, AnUnknownWorkflowIsNotFound) {
  const std::string message = "Workflow execution not found. WorkflowId: no-such-wf, RunId: .";
  ExpectError({"workflow", "update", "execute", "-w", "no-such-wf", "--name", "add"},
              kExitNotFound, message);
  ExpectError({"workflow", "update", "describe", "-w", "no-such-wf", "--update-id", "u"},
              kExitNotFound, message);
  ExpectError({"workflow", "update", "result", "-w", "no-such-wf", "--update-id", "u"},
              kExitNotFound, message);
}

// ---- usage errors ------------------------------------------------------------------------------

TEST_F(WorkflowUpdateCliTest, InputMustBeJson) {
  ExpectError({"workflow", "update", "execute", "-w", "any", "--name", "add", "--input", "{bad"},
              kExitUsage, std::string("invalid --input \"{bad\"") + kInputHint);
  // The second of two inputs, named as typed.
  ExpectError({"workflow", "update", "start", "-w", "any", "--name", "add", "--input", "1",
               "--input", "two words", "--wait-for-stage", "accepted"},
              kExitUsage, std::string("invalid --input \"two words\"") + kInputHint);
  // A long input is not echoed whole: its first 64 characters and its size.
  const std::string long_input(5000, 'x');
  ExpectError({"workflow", "update", "execute", "-w", "any", "--name", "add", "--input",
               long_input},
              kExitUsage,
              "invalid --input \"" + std::string(64, 'x') + "...\" (5000 bytes)" + kInputHint);
}

TEST_F(WorkflowUpdateCliTest, UsageErrorsNameTheFlag) {
  auto usage = [&](const std::vector<std::string>& args, const std::string& first_line) {
    const ProcessResult r = Tock(args);
    EXPECT_EQ(r.exit_code, kExitUsage) << Describe(args, r);
    EXPECT_EQ(r.out, "") << Describe(args, r);
    EXPECT_EQ(r.err.substr(0, r.err.find('\n')), first_line) << Describe(args, r);
  };
  usage({"workflow", "update", "execute", "-w", "u"}, "error: --name is required");
  usage({"workflow", "update", "execute", "--name", "add"}, "error: --workflow-id is required");
  usage({"workflow", "update", "start", "-w", "u", "--name", "add"},
        "error: --wait-for-stage is required");
  usage({"workflow", "update", "start", "-w", "u", "--name", "add", "--wait-for-stage",
         "completed"},
        "error: --wait-for-stage: the only stage to wait for is accepted (update execute waits "
        "for the update to complete)");
  usage({"workflow", "update", "result", "-w", "u"}, "error: --update-id is required");
  usage({"workflow", "update", "describe", "-w", "u"}, "error: --update-id is required");
  ExpectError({"workflow", "update", "execute", "-w", "u", "--name", "  "}, kExitUsage,
              "--name is empty: give the name of the workflow's update handler");
}

// ---- the request, in process (no server) --------------------------------------------------

TEST(UpdateRequest, CarriesTheFlagsTheStageAndNewIds) {
  admin::UpdateWorkflowOptions o;
  o.namespace_name = "orders";
  o.workflow_id = "order-7";
  o.run_id = "run-1";
  o.first_execution_run_id = "first-1";
  o.name = "add";
  o.inputs = {"1", " {\"a\": [true, null]} "};
  o.identity = "me@host";
  auto req = admin::MakeUpdateRequest(
      o, temporal::api::enums::v1::UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ACCEPTED);
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->namespace_(), "orders");
  EXPECT_EQ(req->workflow_execution().workflow_id(), "order-7");
  EXPECT_EQ(req->workflow_execution().run_id(), "run-1");
  EXPECT_EQ(req->first_execution_run_id(), "first-1");
  EXPECT_EQ(req->wait_policy().lifecycle_stage(),
            temporal::api::enums::v1::UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ACCEPTED);
  EXPECT_TRUE(IsUuid(req->request().meta().update_id())) << req->request().meta().update_id();
  EXPECT_TRUE(IsUuid(req->request().request_id()));
  EXPECT_EQ(req->request().meta().identity(), "me@host");
  EXPECT_EQ(req->request().input().name(), "add");
  ASSERT_EQ(req->request().input().args().payloads_size(), 2);
  EXPECT_EQ(req->request().input().args().payloads(1).data(), "{\"a\":[true,null]}");
  o.update_id = "mine";
  req = admin::MakeUpdateRequest(
      o, temporal::api::enums::v1::UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED);
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->request().meta().update_id(), "mine");
}

TEST(UpdateRequest, EchoQuotedCutsLongTextOnACharacterBoundary) {
  EXPECT_EQ(admin::EchoQuoted("short"), "\"short\"");
  EXPECT_EQ(admin::EchoQuoted(std::string(64, 'a')), "\"" + std::string(64, 'a') + "\"");
  // 63 ASCII bytes then a 2-byte character across the cut: the character is left out whole.
  const std::string text = std::string(63, 'a') + "\xc3\xa9" + std::string(10, 'b');
  EXPECT_EQ(admin::EchoQuoted(text), "\"" + std::string(63, 'a') + "...\" (75 bytes)");
}

}  // namespace
}  // namespace tock::testing
