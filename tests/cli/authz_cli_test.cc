// Authorization against a real tock-server (issue 15): a server started with `authorization:`
// and a JWKS file written here, tokens signed here.
//   - `tock --api-key` / TOCK_API_KEY: a call of each kind with and without the role, expired
//     and wrong-key tokens; refusals exit 1 with the server's message.
//   - The whole rules table over raw gRPC: every method the server answers, called with no
//     token and with a token of each role (read, worker, write, admin on the namespace, and
//     cluster admin): each is refused or let through exactly as its rule says. The server
//     refuses to start when a method it registers has no rule, so this covers every RPC.
#include <grpcpp/generic/generic_stub.h>
#include <regex>
#include <thread>
#include <grpcpp/grpcpp.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server-core/security/authz_rules.h"
#include "temporal/api/operatorservice/v1/request_response.pb.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"
#include "tests/cli/cli_fixture.h"
#include "tests/support/eventually.h"
#include "tests/support/http_get.h"
#include "tests/support/test_jwt.h"
#include "tock/admin/v1/service.pb.h"
#include "tock/cluster/v1/host_service.pb.h"
#include "tock/timer/v1/service.pb.h"

namespace tock::testing {
namespace {

namespace pb = google::protobuf;
using server::security::AllRules;
using server::security::MethodRule;
using server::security::Role;
using server::security::RoleName;
using server::security::Scope;

class AuthzCliTest : public CliTest {
 protected:
  void SetUp() override {
    const std::string jwks = dir_.Write("jwks.json", JwksOf({&rsa_, &ec_}));
    StartServer({"--config", dir_.Write("server.yaml", absl::StrCat("authorization:\n"
                                                                  "  jwks: ", jwks, "\n"
                                                                  "  issuer: https://idp.test\n"
                                                                  "  audience: tock\n"))});
  }
  // A token for `permissions`, valid for 10 minutes (or expired `exp_offset` < 0).
  std::string Token(const json& permissions, int64_t exp_offset = 600,
                    const TestSigningKey* key = nullptr) {
    return (key != nullptr ? key : &rsa_)
        ->Sign({{"sub", "tester"},
                {"iss", "https://idp.test"},
                {"aud", "tock"},
                {"exp", UnixNow() + exp_offset},
                {"permissions", permissions}});
  }
  ProcessResult TockWith(const std::string& token, std::vector<std::string> args) {
    args.insert(args.begin(), {"--api-key", token});
    return Tock(args);
  }

  TestSigningKey rsa_{TestSigningKey::Kind::kRsa, "rsa-1"};
  TestSigningKey ec_{TestSigningKey::Kind::kP256, "ec-1"};
};

TEST_F(AuthzCliTest, TheCliSendsItsApiKeyAndExitsOneWithTheServersRefusal) {
  EXPECT_TRUE(absl::StrContains(server_->banner(), "authz:")) << server_->banner();
  const std::vector<std::string> describe = {"namespace", "describe", "default", "-o", "json"};
  // No token.
  ProcessResult r = Tock(describe);
  EXPECT_EQ(r.exit_code, kExitError) << Describe(describe, r);
  EXPECT_EQ(r.err,
            "error: DescribeNamespace on namespace \"default\" needs the read role: no bearer token "
            "in the authorization header, and no client certificate with a configured subject\n");
  // Read: a read call works, a workflow call is refused.
  const std::string reader = Token({"default:read"});
  r = TockWith(reader, describe);
  EXPECT_EQ(r.exit_code, kExitOk) << Describe(describe, r);
  const std::vector<std::string> start = {"workflow", "start", "--type", "T", "--task-queue", "q",
                                          "--id", "wf-authz"};
  r = TockWith(reader, start);
  EXPECT_EQ(r.exit_code, kExitError) << Describe(start, r);
  EXPECT_EQ(r.err, "error: StartWorkflowExecution on namespace \"default\" needs the write role\n");
  EXPECT_FALSE(absl::StrContains(r.err, reader.substr(0, 30)));
  // Write, ES256, through TOCK_API_KEY.
  std::vector<std::string> argv = {TOCK_CLI_BIN, "--address", server_->address()};
  argv.insert(argv.end(), start.begin(), start.end());
  r = RunProcess(argv, {{"TOCK_API_KEY", Token({"default:write"}, 600, &ec_)}});
  EXPECT_EQ(r.exit_code, kExitOk) << Describe(start, r);
  // Namespace administration needs admin; cluster administration the system role.
  const std::vector<std::string> update = {"namespace", "update", "default", "--description", "d"};
  r = TockWith(Token({"default:write"}), update);
  EXPECT_EQ(r.exit_code, kExitError) << Describe(update, r);
  EXPECT_EQ(r.err, "error: UpdateNamespace on namespace \"default\" needs the admin role\n");
  r = TockWith(Token({"default:admin"}), update);
  EXPECT_EQ(r.exit_code, kExitOk) << Describe(update, r);
  const std::vector<std::string> list = {"namespace", "list", "-o", "json"};
  r = TockWith(Token({"default:admin"}), list);
  EXPECT_EQ(r.exit_code, kExitError) << Describe(list, r);
  EXPECT_EQ(r.err, "error: ListNamespaces needs the temporal-system:read role\n");
  r = TockWith(Token({"temporal-system:admin"}), list);
  EXPECT_EQ(r.exit_code, kExitOk) << Describe(list, r);
}

TEST_F(AuthzCliTest, BadTokensAreUnauthenticated) {
  const std::vector<std::string> describe = {"namespace", "describe", "default"};
  ProcessResult r = TockWith(Token({"default:read"}, -3600), describe);
  EXPECT_EQ(r.exit_code, kExitError) << Describe(describe, r);
  EXPECT_TRUE(absl::StartsWith(r.err, "error: DescribeNamespace on namespace \"default\" needs the "
                                      "read role: the bearer token expired at ")) << r.err;
  TestSigningKey stranger(TestSigningKey::Kind::kRsa, "rsa-1");
  r = TockWith(Token({"default:read"}, 600, &stranger), describe);
  EXPECT_EQ(r.exit_code, kExitError) << Describe(describe, r);
  EXPECT_TRUE(absl::StrContains(r.err, "the bearer token does not verify with key \"rsa-1\"")) << r.err;
  json claims = {{"iss", "https://idp.test"}, {"aud", "other"}, {"exp", UnixNow() + 600},
                 {"permissions", {"default:read"}}};
  r = TockWith(rsa_.Sign(claims), describe);
  EXPECT_EQ(r.exit_code, kExitError) << Describe(describe, r);
  EXPECT_TRUE(absl::StrContains(r.err, "the bearer token is not for audience \"tock\"")) << r.err;
  r = TockWith(UnsignedToken(claims, "rsa-1") + "x", describe);
  EXPECT_EQ(r.exit_code, kExitError) << Describe(describe, r);
  EXPECT_TRUE(absl::StrContains(r.err, "alg \"none\"")) << r.err;
}

// A client claiming to be another host of the database or the server itself (the
// `tock-forwarded` and `tock-own-call` headers, routing/peer_credential.h) without the
// database's secret is authorized like any client: no token, no call; a reader's token, no
// write.
TEST_F(AuthzCliTest, AForgedForwardedHeaderDoesNotBypassAuthorization) {
  auto stub = temporal::api::workflowservice::v1::WorkflowService::NewStub(
      grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  const std::string reader = Token({"default:read"});
  for (const std::string forged : {std::string("1"), std::string(64, '0')}) {
    for (const std::string& token : {std::string(), reader}) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      ctx.AddMetadata("tock-forwarded", forged);
      ctx.AddMetadata("tock-own-call", forged);  // what a server's own calls bear
      if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
      temporal::api::workflowservice::v1::StartWorkflowExecutionRequest req;
      req.set_namespace_("default");
      req.set_workflow_id("wf-forged");
      req.mutable_workflow_type()->set_name("T");
      req.mutable_task_queue()->set_name("q");
      req.set_request_id("forged-" + forged.substr(0, 1) + (token.empty() ? "-none" : "-read"));
      temporal::api::workflowservice::v1::StartWorkflowExecutionResponse resp;
      const grpc::Status s = stub->StartWorkflowExecution(&ctx, req, &resp);
      if (token.empty()) {
        EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << forged;
        EXPECT_EQ(s.error_message(),
                  "StartWorkflowExecution on namespace \"default\" needs the write role: no bearer "
                  "token in the authorization header, and no client certificate with a configured "
                  "subject");
      } else {
        EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << forged;
        EXPECT_EQ(s.error_message(),
                  "StartWorkflowExecution on namespace \"default\" needs the write role");
      }
    }
  }
  // Nothing was started.
  const std::vector<std::string> describe = {"workflow", "describe", "--workflow-id", "wf-forged"};
  ProcessResult r = TockWith(Token({"default:read"}), describe);
  EXPECT_EQ(r.exit_code, kExitNotFound) << Describe(describe, r);
}

// A batch and a schedule, created by a client holding the write role, run under
// authorization with no certificates at all: their calls to the server's own frontend are
// marked as its own (routing/peer_credential.h), not refused for want of a token.
TEST_F(AuthzCliTest, BatchesAndSchedulesRunWithoutCertificates) {
  const std::string writer = Token({"default:write"});
  for (const std::string id : {"own-1", "own-2"}) {
    ProcessResult r = TockWith(writer, {"workflow", "start", "--type", "order", "--task-queue",
                                        "q", "--workflow-id", id});
    ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  }
  ProcessResult batch = TockWith(writer, {"batch", "terminate", "--query", "WorkflowType = 'order'",
                                          "--reason", "authz", "--yes", "--job-id", "own-batch",
                                          "-o", "json"});
  ASSERT_EQ(batch.exit_code, kExitOk) << batch.err;
  const json done = json::parse(batch.out, nullptr, false);
  ASSERT_FALSE(done.is_discarded()) << batch.out;
  EXPECT_EQ(done.value("state", ""), "BATCH_OPERATION_STATE_COMPLETED") << batch.out;
  EXPECT_EQ(done.value("completeOperationCount", ""), "2") << batch.out;
  EXPECT_EQ(done.value("failureOperationCount", ""), "0") << batch.out;

  ProcessResult created = TockWith(writer, {"schedule", "create", "-s", "own-schedule",
                                            "--interval", "1h", "-w", "own-scheduled", "--type",
                                            "scheduled", "-t", "q"});
  ASSERT_EQ(created.exit_code, kExitOk) << created.err;
  ProcessResult triggered = TockWith(writer, {"schedule", "trigger", "-s", "own-schedule"});
  ASSERT_EQ(triggered.exit_code, kExitOk) << triggered.err;
  // The triggered start runs on the schedule's runner: seen once visible (bounded wait).
  bool started = false;
  for (int i = 0; i < 100 && !started; ++i) {
    ProcessResult listed = TockWith(writer, {"workflow", "list", "--query",
                                             "WorkflowType = 'scheduled'", "-o", "json"});
    started = listed.exit_code == kExitOk && absl::StrContains(listed.out, "own-scheduled");
    if (!started) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(started) << "the schedule's start did not happen";
}

// A request of `method`'s type with `namespace` set (when it has the field).
grpc::ByteBuffer RequestFor(const std::string& method, const std::string& namespace_name) {
  const size_t slash = method.find('/');
  const size_t dot = method.rfind('.', slash);
  const std::string type = method.substr(0, dot) + "." + method.substr(slash + 1) + "Request";
  std::string bytes;
  if (const pb::Descriptor* d = pb::DescriptorPool::generated_pool()->FindMessageTypeByName(type)) {
    std::unique_ptr<pb::Message> request(
        pb::MessageFactory::generated_factory()->GetPrototype(d)->New());
    if (const pb::FieldDescriptor* f = d->FindFieldByName("namespace")) {
      request->GetReflection()->SetString(request.get(), f, namespace_name);
    }
    bytes = request->SerializeAsString();
  }
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

grpc::Status Call(grpc::GenericStub& stub, const std::string& method, const std::string& token,
                  const grpc::ByteBuffer& request) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
  grpc::ByteBuffer response;
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  grpc::Status status;
  stub.UnaryCall(&context, "/" + method, grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) {
                   std::lock_guard lock(mu);
                   status = std::move(s);
                   done = true;
                   done_cv.notify_all();
                 });
  std::unique_lock lock(mu);
  done_cv.wait(lock, [&] { return done; });
  return status;
}

TEST_F(AuthzCliTest, EveryRpcTheServerAnswersFollowsItsRuleForEveryRole) {
  // The request types the table's requests are built from.
  (void)temporal::api::workflowservice::v1::StartWorkflowExecutionRequest::descriptor();
  (void)temporal::api::operatorservice::v1::AddSearchAttributesRequest::descriptor();
  (void)tock::timer::v1::CreateTimerRequest::descriptor();
  (void)tock::admin::v1::DescribeClusterRequest::descriptor();
  (void)tock::cluster::v1::AddTaskRequest::descriptor();
  // A namespace nobody registered: calls let through fail on it, and change nothing.
  const std::string ns = "authz-table";
  struct Caller {
    std::string name;
    std::string token;
    Role on_namespace;
    Role system;
  };
  const std::vector<Caller> callers = {
      {"read", Token({ns + ":read", "other:admin"}), Role::kRead, Role::kNone},
      {"worker", Token({ns + ":worker"}), Role::kWorker, Role::kNone},
      {"write", Token({ns + ":write"}), Role::kWrite, Role::kNone},
      {"admin", Token({ns + ":admin"}), Role::kAdmin, Role::kNone},
      {"system admin", Token({"temporal-system:admin"}), Role::kAdmin, Role::kAdmin},
  };
  auto channel = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  int served = 0;
  std::vector<std::string> not_served;
  std::map<std::string, int> by_kind;
  for (const MethodRule& rule : AllRules()) {
    const grpc::ByteBuffer request = RequestFor(rule.method, ns);
    const std::string name(server::security::ShortMethodName(rule.method));
    const grpc::Status anonymous = Call(stub, rule.method, "", request);
    if (anonymous.error_code() == grpc::StatusCode::UNIMPLEMENTED &&
        absl::StrContains(anonymous.error_message(), "is unimplemented")) {
      not_served.push_back(rule.method);  // in the table, not (yet) answered by Tock
      continue;
    }
    ++served;
    const std::string needs =
        rule.scope == Scope::kCluster
            ? absl::StrCat(name, " needs the temporal-system:", RoleName(rule.role), " role")
            : absl::StrCat(name, " on namespace \"", ns, "\" needs the ", RoleName(rule.role), " role");
    if (rule.scope == Scope::kOpen) {
      ++by_kind["open"];
      EXPECT_NE(anonymous.error_code(), grpc::StatusCode::UNAUTHENTICATED) << rule.method;
      EXPECT_NE(anonymous.error_code(), grpc::StatusCode::PERMISSION_DENIED) << rule.method;
      continue;
    }
    ++by_kind[absl::StrCat(rule.scope == Scope::kCluster ? "temporal-system:" : "", RoleName(rule.role))];
    EXPECT_EQ(anonymous.error_code(), grpc::StatusCode::UNAUTHENTICATED) << rule.method;
    EXPECT_TRUE(absl::StartsWith(anonymous.error_message(), needs + ": no bearer token"))
        << rule.method << ": " << anonymous.error_message();
    for (const Caller& caller : callers) {
      const Role held = rule.scope == Scope::kCluster ? caller.system : caller.on_namespace;
      const grpc::Status s = Call(stub, rule.method, caller.token, request);
      if (held >= rule.role) {
        // A caller the rule lets through is never refused by the authorizer; the legacy
        // build-id versioning calls answer PERMISSION_DENIED to everyone, as Temporal's
        // server does with them off.
        const bool versioning_off = absl::StrContains(s.error_message(), "(Version Set-based, deprecated) is disabled") ||
                                    absl::StrContains(s.error_message(), "(Rules-based, deprecated) is disabled");
        EXPECT_TRUE(s.error_code() != grpc::StatusCode::PERMISSION_DENIED || versioning_off)
            << rule.method << " as " << caller.name << ": " << s.error_message();
        EXPECT_NE(s.error_code(), grpc::StatusCode::UNAUTHENTICATED)
            << rule.method << " as " << caller.name << ": " << s.error_message();
      } else {
        EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << rule.method << " as " << caller.name << ": " << s.error_message();
        EXPECT_EQ(s.error_message(), needs) << rule.method << " as " << caller.name;
      }
    }
  }
  // Every kind of call was seen (the server answers 84 methods of the table on SQLite; the
  // HostService's only with a shared database).
  EXPECT_GE(served, 80) << "not served: " << not_served.size();
  for (const char* kind : {"open", "read", "worker", "write", "admin", "temporal-system:read",
                           "temporal-system:admin"}) {
    EXPECT_GT(by_kind[kind], 0) << kind;
  }
  // The server is still up and answering after all of that.
  ProcessResult r = TockWith(Token({"default:read"}), {"namespace", "describe", "default"});
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
}

TEST(AuthzServerConfigTest, AServerWithABadJwksDoesNotStart) {
  TempDir dir;
  ServerProcess server(TOCK_SERVER_BIN);
  const std::string jwks = dir.Write("jwks.json", "{\"keys\": []}");
  EXPECT_FALSE(server.Start({"--db-file", dir.File("t.db"), "--config",
                             dir.Write("s.yaml", "authorization:\n  jwks: " + jwks + "\n")}));
  EXPECT_TRUE(absl::StrContains(server.stderr_text(), "no RS256 or ES256 signing key"))
      << server.stderr_text();
}

// With authorization, the HTTP port serves Temporal's HTTP API through the authorizer (the
// caller's Authorization header), and the timer HTTP API, which checks no token, refuses.
TEST_F(AuthzCliTest, TheHttpApiGoesThroughTheAuthorizerAndTheTimerHttpApiRefuses) {
  TempDir dir;
  ServerProcess server(TOCK_SERVER_BIN);
  const std::string jwks = dir.Write("jwks.json", JwksOf({&rsa_}));
  ASSERT_TRUE(server.Start({"--db-file", dir.File("t.db"), "--http-port", "0", "--config",
                            dir.Write("s.yaml", absl::StrCat("authorization:\n  jwks: ", jwks,
                                                             "\n  issuer: https://idp.test\n"
                                                             "  audience: tock\n"))}))
      << server.stderr_text();
  std::smatch match;
  const std::string banner = server.banner();
  ASSERT_TRUE(std::regex_search(banner, match, std::regex(R"(\n  http api:   (http://\S+)/api/v1\n)")))
      << banner;
  const std::string base = match[1];
  auto HttpCall = [](const std::string& method, const std::string& url, const std::string& body,
                     const std::string& authorization) {
    std::vector<std::string> headers = {"Content-Type: application/json"};
    if (!authorization.empty()) headers.push_back("Authorization: " + authorization);
    return HttpSend(method, url, body, headers);
  };
  const std::string path = base + "/api/v1/namespaces/default";
  HttpResult anonymous = HttpCall("GET", path, "", "");
  EXPECT_EQ(anonymous.status, 401) << anonymous.body;
  EXPECT_EQ(json::parse(anonymous.body)["code"], 16) << anonymous.body;
  HttpResult reader = HttpCall("GET", path, "", "Bearer " + Token({"default:read"}));
  EXPECT_EQ(reader.status, 200) << reader.body;
  EXPECT_EQ(json::parse(reader.body)["namespaceInfo"]["name"], "default");
  HttpResult write = HttpCall("POST", base + "/api/v1/namespaces/default/workflows/w1",
                                 R"({"workflowType": {"name": "T"}, "taskQueue": {"name": "q"}})",
                                 "Bearer " + Token({"default:read"}));
  EXPECT_EQ(write.status, 403) << write.body;
  EXPECT_EQ(json::parse(write.body)["code"], 7) << write.body;
  HttpResult writer = HttpCall("POST", base + "/api/v1/namespaces/default/workflows/w1",
                                  R"({"workflowType": {"name": "T"}, "taskQueue": {"name": "q"}})",
                                  "Bearer " + Token({"default:write"}));
  EXPECT_EQ(writer.status, 200) << writer.body;

  HttpResult timers = HttpCall("POST", base + "/api/v1/timers/list", R"({"namespace": "default"})",
                                  "Bearer " + Token({"default:admin"}));
  EXPECT_EQ(timers.status, 403) << timers.body;
  EXPECT_EQ(json::parse(timers.body)["error"], "FORBIDDEN") << timers.body;

  // whoami: the caller's roles as the authorizer reads them (what the console hides by).
  HttpResult who = HttpCall("GET", base + "/tock/v1/whoami", "",
                            "Bearer " + Token({"default:read", "orders:write", "temporal-system:read"}));
  ASSERT_EQ(who.status, 200) << who.body;
  const json roles = json::parse(who.body);
  EXPECT_EQ(roles["authorizationEnabled"], true);
  EXPECT_EQ(roles["clusterRole"], "read");
  EXPECT_EQ(roles["namespaceRoles"], json({{"orders", "write"}})) << who.body;  // above read only
  HttpResult nobody = HttpCall("GET", base + "/tock/v1/whoami", "", "");
  ASSERT_EQ(nobody.status, 200) << nobody.body;
  EXPECT_EQ(json::parse(nobody.body), json({{"authorizationEnabled", true}})) << nobody.body;  // no role
  HttpResult forged = HttpCall("GET", base + "/tock/v1/whoami", "", "Bearer not-a-token");
  EXPECT_EQ(forged.status, 401) << forged.body;
  EXPECT_TRUE(absl::StartsWith(json::parse(forged.body)["message"].get<std::string>(), "WhoAmI: "))
      << forged.body;
}

// Without authorization, whoami says so: every caller may make every call.
TEST_F(AuthzCliTest, WhoAmIWithoutAuthorizationSaysAdminEverywhere) {
  TempDir dir;
  ServerProcess open(TOCK_SERVER_BIN);
  ASSERT_TRUE(open.Start({"--db-file", dir.File("t.db"), "--http-port", "0"})) << open.error();
  std::smatch match;
  const std::string banner = open.banner();
  ASSERT_TRUE(std::regex_search(banner, match, std::regex(R"(\n  http api:   (http://\S+)/api/v1\n)")));
  HttpResult who = HttpSend("GET", std::string(match[1]) + "/tock/v1/whoami", "", {});
  ASSERT_EQ(who.status, 200) << who.body;
  EXPECT_EQ(json::parse(who.body), json({{"clusterRole", "admin"}})) << who.body;
}

// Without authorization.audience, a token the identity provider made for another service
// is accepted: the server says so at start, at WARN (review P2-6). With one (SetUp's
// server), it says nothing of the kind.
TEST_F(AuthzCliTest, AnUnsetAudienceIsWarnedAboutAtStart) {
  EXPECT_FALSE(absl::StrContains(server_->stderr_text(), "authorization.audience is not set"))
      << server_->stderr_text();
  ServerProcess unset(TOCK_SERVER_BIN);
  const std::string jwks = dir_.Write("jwks2.json", JwksOf({&rsa_}));
  ASSERT_TRUE(unset.Start({"--db-file", dir_.File("unset.db"), "--config",
                           dir_.Write("unset.yaml", "authorization:\n  jwks: " + jwks + "\n")}))
      << unset.error();
  const std::string warning =
      "authorization.audience is not set: bearer tokens are accepted whatever their aud claim";
  ASSERT_TRUE(Eventually([&] { return absl::StrContains(unset.stderr_text(), warning); }))
      << unset.stderr_text();
  const std::string log = unset.stderr_text();
  const size_t at = log.find(warning);
  const size_t begin = log.rfind('\n', at) + 1;  // 0 when it is the first line
  const std::string line = log.substr(begin, log.find('\n', at) - begin);
  EXPECT_TRUE(absl::StrContains(absl::AsciiStrToLower(line), "warn")) << line;
}

// A call is authorized before its message is handled: a cluster call (ListNamespaces) on its
// metadata alone, before gRPC reads its message (an anonymous 16 MiB request is refused
// UNAUTHENTICATED, not measured); a namespace call needs its namespace field, so it is
// read, within the receive limit (review P2-5).
TEST_F(AuthzCliTest, AClusterCallIsRefusedBeforeItsMessageIsRead) {
  auto stub = temporal::api::workflowservice::v1::WorkflowService::NewStub(
      grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    temporal::api::workflowservice::v1::ListNamespacesRequest req;
    req.set_next_page_token(std::string(16 << 20, 'x'));
    temporal::api::workflowservice::v1::ListNamespacesResponse resp;
    const grpc::Status s = stub->ListNamespaces(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
    EXPECT_TRUE(absl::StartsWith(s.error_message(), "ListNamespaces needs the temporal-system:read "
                                                    "role: no bearer token"))
        << s.error_message();
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  temporal::api::workflowservice::v1::DescribeNamespaceRequest req;
  req.set_namespace_("default");
  req.set_id(std::string(16 << 20, 'x'));
  temporal::api::workflowservice::v1::DescribeNamespaceResponse resp;
  EXPECT_EQ(stub->DescribeNamespace(&ctx, req, &resp).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
}

namespace tokens {

namespace wf = temporal::api::workflowservice::v1;
namespace enums = temporal::api::enums::v1;

// Fills `ctx` for a call with `token` and a deadline of 20 s.
void Prepare(grpc::ClientContext& ctx, const std::string& token) {
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  ctx.AddMetadata("authorization", "Bearer " + token);
}

// Calls `method` as the holder of `token`, naming namespace `ns` and carrying `task_token`,
// with `req`'s other fields as given.
template <typename Request, typename Response>
grpc::Status CallWithTaskToken(
    wf::WorkflowService::Stub& stub,
    grpc::Status (wf::WorkflowService::Stub::*method)(grpc::ClientContext*, const Request&,
                                                       Response*),
    const std::string& token, const std::string& ns, const std::string& task_token,
    Request req = {}) {
  grpc::ClientContext ctx;
  Prepare(ctx, token);
  req.set_namespace_(ns);
  req.set_task_token(task_token);
  Response out;
  return (stub.*method)(&ctx, req, &out);
}

}  // namespace tokens

// Task tokens are not signed: a caller with write on "default" builds nothing, it simply
// sends a token of namespace "other" (one it saw, or made: the fields are a namespace id,
// workflow and run ids and small integers) with `namespace: default`, which authorization
// lets through. Every token call refuses it with Temporal's message, and other's activity
// and workflow stay as they were (review P2-1).
TEST_F(AuthzCliTest, ATokenOfAnotherNamespaceIsRefusedAndChangesNothing) {
  namespace wf = tokens::wf;
  namespace enums = tokens::enums;
  const std::string system_admin = Token({"temporal-system:admin"});
  ASSERT_EQ(TockWith(system_admin, {"namespace", "register", "other"}).exit_code, kExitOk);
  auto stub = wf::WorkflowService::NewStub(
      grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  const std::string other_writer = Token({"other:write"});
  // other: a workflow whose first task schedules an activity, and that activity started.
  ProcessResult started = TockWith(other_writer, {"-n", "other", "workflow", "start", "--type",
                                                  "T", "--task-queue", "q", "--id", "victim"});
  ASSERT_EQ(started.exit_code, kExitOk) << started.err;
  std::string workflow_token;
  {
    grpc::ClientContext ctx;
    tokens::Prepare(ctx, other_writer);
    wf::PollWorkflowTaskQueueRequest poll;
    poll.set_namespace_("other");
    poll.mutable_task_queue()->set_name("q");
    wf::PollWorkflowTaskQueueResponse task;
    ASSERT_TRUE(stub->PollWorkflowTaskQueue(&ctx, poll, &task).ok());
    ASSERT_FALSE(task.task_token().empty());
    workflow_token = task.task_token();
  }
  const std::string default_writer = Token({"default:write"});
  const std::string kMismatch = "Operation requested with a token from a different namespace.";
  {
    const grpc::Status s =
        tokens::CallWithTaskToken(*stub, &wf::WorkflowService::Stub::RespondWorkflowTaskFailed,
                                  default_writer, "default", workflow_token);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
    EXPECT_EQ(s.error_message(), kMismatch);
  }
  {
    grpc::ClientContext ctx;
    tokens::Prepare(ctx, other_writer);
    wf::RespondWorkflowTaskCompletedRequest done;
    done.set_namespace_("other");
    done.set_task_token(workflow_token);
    auto* command = done.add_commands();
    command->set_command_type(enums::COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK);
    auto* a = command->mutable_schedule_activity_task_command_attributes();
    a->set_activity_id("act-1");
    a->mutable_activity_type()->set_name("A");
    a->mutable_task_queue()->set_name("q");
    a->mutable_start_to_close_timeout()->set_seconds(600);
    wf::RespondWorkflowTaskCompletedResponse out;
    const grpc::Status s = stub->RespondWorkflowTaskCompleted(&ctx, done, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  std::string activity_token;
  {
    grpc::ClientContext ctx;
    tokens::Prepare(ctx, other_writer);
    wf::PollActivityTaskQueueRequest poll;
    poll.set_namespace_("other");
    poll.mutable_task_queue()->set_name("q");
    wf::PollActivityTaskQueueResponse task;
    ASSERT_TRUE(stub->PollActivityTaskQueue(&ctx, poll, &task).ok());
    ASSERT_FALSE(task.task_token().empty());
    activity_token = task.task_token();
  }
  // Each token call, by a writer of default naming default, with other's token.
  std::vector<std::pair<std::string, grpc::Status>> refused;
  using Stub = wf::WorkflowService::Stub;
  const auto forged = [&](auto method, auto req) {
    return tokens::CallWithTaskToken(*stub, method, default_writer, "default", activity_token,
                                     std::move(req));
  };
  refused.emplace_back("completed", forged(&Stub::RespondActivityTaskCompleted,
                                           wf::RespondActivityTaskCompletedRequest()));
  wf::RespondActivityTaskFailedRequest failed;
  failed.mutable_failure()->set_message("forged");
  refused.emplace_back("failed", forged(&Stub::RespondActivityTaskFailed, failed));
  refused.emplace_back("canceled", forged(&Stub::RespondActivityTaskCanceled,
                                          wf::RespondActivityTaskCanceledRequest()));
  wf::RecordActivityTaskHeartbeatRequest heartbeat;
  heartbeat.mutable_details()->add_payloads()->set_data("forged");
  refused.emplace_back("heartbeat", forged(&Stub::RecordActivityTaskHeartbeat, heartbeat));
  for (const auto& [what, s] : refused) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << what << ": " << s.error_message();
    EXPECT_EQ(s.error_message(), kMismatch) << what;
  }
  // other's activity is still open, not heartbeated, and its history holds no answer.
  const ProcessResult describe = TockWith(
      other_writer, {"-n", "other", "workflow", "describe", "--workflow-id", "victim", "-o", "json"});
  json described = json::parse(describe.out, nullptr, false);
  ASSERT_FALSE(described.is_discarded());
  ASSERT_EQ(At(described, "/pendingActivities").size(), 1u) << described.dump();
  EXPECT_EQ(At(described, "/pendingActivities/0/activityId"), "act-1");
  EXPECT_TRUE(At(described, "/pendingActivities/0/heartbeatDetails").is_null()) << described.dump();
  EXPECT_EQ(At(described, "/workflowExecutionInfo/status"), "WORKFLOW_EXECUTION_STATUS_RUNNING");
  // The token itself was good: other's worker answers with it.
  grpc::ClientContext ctx;
  tokens::Prepare(ctx, other_writer);
  wf::RespondActivityTaskCompletedRequest req;
  req.set_namespace_("other");
  req.set_task_token(activity_token);
  wf::RespondActivityTaskCompletedResponse out;
  const grpc::Status answered = stub->RespondActivityTaskCompleted(&ctx, req, &out);
  EXPECT_TRUE(answered.ok()) << answered.error_message();
}

}  // namespace
}  // namespace tock::testing
