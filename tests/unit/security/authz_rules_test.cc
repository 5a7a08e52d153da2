// The rules table, the claim mapper and the authorizer's decision on calls (no server: the
// dispatcher's wrapper is exercised by tests/cli/authz_cli_test.cc against a real one).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <set>

#include "absl/strings/match.h"
#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "server-core/rpc/dispatcher.h"
#include "server-core/security/authz_interceptor.h"
#include "temporal/api/operatorservice/v1/request_response.pb.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"
#include "tests/support/process.h"
#include "tests/support/test_jwt.h"
#include "tock/admin/v1/service.pb.h"
#include "tock/cluster/v1/host_service.pb.h"
#include "tock/timer/v1/service.pb.h"

namespace tock::server::security {
namespace {

using nlohmann::json;
using testing::TestSigningKey;
namespace wf = temporal::api::workflowservice::v1;

// Links the request types the rules read namespaces from (the generated pool holds a file's
// messages once something of that file is linked).
void LinkRequestTypes() {
  (void)wf::StartWorkflowExecutionRequest::descriptor();
  (void)temporal::api::operatorservice::v1::AddSearchAttributesRequest::descriptor();
  (void)tock::timer::v1::CreateTimerRequest::descriptor();
  (void)tock::admin::v1::DescribeClusterRequest::descriptor();
  (void)tock::cluster::v1::AddTaskRequest::descriptor();
}

// Slices need gRPC's core, which its C++ library sets up when one of its objects is made.
grpc::internal::GrpcLibraryInitializer grpc_library;

grpc::ByteBuffer Serialize(const google::protobuf::Message& message) {
  grpc::Slice slice(message.SerializeAsString());
  return grpc::ByteBuffer(&slice, 1);
}

TEST(AuthzRulesTest, EveryRuleIsAMethodOnceAndEveryNamespaceRuleReadsTheNamespace) {
  LinkRequestTypes();
  std::set<std::string> seen;
  for (const MethodRule& rule : AllRules()) {
    EXPECT_TRUE(seen.insert(rule.method).second) << rule.method << " twice";
    EXPECT_EQ(std::count(rule.method.begin(), rule.method.end(), '/'), 1) << rule.method;
    absl::StatusOr<Authorizer::Compiled> c = Authorizer::Compile(rule.method);
    EXPECT_TRUE(c.ok()) << rule.method << ": " << c.status();
    if (c.ok() && rule.scope == Scope::kNamespace) EXPECT_GT(c->namespace_field, 0) << rule.method;
  }
  EXPECT_GT(seen.size(), 150u);
}

TEST(AuthzRulesTest, KindsOfCallNeedTheirRoles) {
  auto rule = [](const std::string& m) { return RuleFor(m).value(); };
  const std::string w = "temporal.api.workflowservice.v1.WorkflowService/";
  EXPECT_EQ(rule(w + "DescribeWorkflowExecution").role, Role::kRead);
  EXPECT_EQ(rule(w + "StartWorkflowExecution").role, Role::kWrite);
  EXPECT_EQ(rule(w + "PollWorkflowTaskQueue").role, Role::kWorker);
  EXPECT_EQ(rule(w + "UpdateNamespace").role, Role::kAdmin);
  EXPECT_EQ(rule(w + "UpdateNamespace").scope, Scope::kNamespace);
  EXPECT_EQ(rule(w + "ListNamespaces").scope, Scope::kCluster);
  EXPECT_EQ(rule(w + "GetSystemInfo").scope, Scope::kOpen);
  EXPECT_EQ(rule("grpc.health.v1.Health/Check").scope, Scope::kOpen);
  EXPECT_EQ(rule("tock.admin.v1.AdminService/AdvanceTime").scope, Scope::kCluster);
  EXPECT_EQ(rule("tock.admin.v1.AdminService/AdvanceTime").role, Role::kAdmin);
  EXPECT_EQ(rule("tock.cluster.v1.HostService/AddTask").role, Role::kAdmin);
  EXPECT_EQ(rule("tock.timer.v1.TimerService/CreateTimer").role, Role::kWrite);
  EXPECT_FALSE(RuleFor(w + "NoSuchMethod").has_value());
}

TEST(AuthzClaimsTest, MapsPermissionsLikeTemporal) {
  Permissions p = MapPermissions({"orders:read", "orders:WRITE", "billing:worker", "a:b:admin",
                                  "temporal-system:read", "junk", ":admin", "x:owner"});
  EXPECT_EQ(p.On("orders"), Role::kWrite);  // the higher of two
  EXPECT_EQ(p.On("billing"), Role::kWorker);
  EXPECT_EQ(p.On("a:b"), Role::kAdmin);  // split at the last ':'
  EXPECT_EQ(p.On("x"), Role::kRead);     // unknown roles grant nothing; the system read does
  EXPECT_EQ(p.system, Role::kRead);
  EXPECT_EQ(p.namespaces.size(), 3u);
  Permissions q = MapPermissions({"billing:admin"});
  q.Merge(p);
  EXPECT_EQ(q.On("billing"), Role::kAdmin);
  EXPECT_EQ(q.On("orders"), Role::kWrite);
}

TEST(AuthzNamespaceTest, ReadsTheFieldFromThePayloadOnly) {
  wf::StartWorkflowExecutionRequest request;
  request.set_workflow_id("wf");
  request.set_namespace_("orders");
  request.mutable_input()->add_payloads()->set_data(std::string(1 << 20, 'x'));
  request.set_request_id("r");
  EXPECT_EQ(ReadNamespaceField(Serialize(request), 1), "orders");
  request.set_namespace_(std::string(1001, 'n'));
  EXPECT_EQ(ReadNamespaceField(Serialize(request), 1), "") << "longer than a namespace";
  grpc::Slice junk(std::string("\xff\xff\xff"));
  EXPECT_EQ(ReadNamespaceField(grpc::ByteBuffer(&junk, 1), 1), "");
  EXPECT_EQ(ReadNamespaceField(grpc::ByteBuffer(), 1), "");
}

class AuthorizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LinkRequestTypes();
    AuthorizationConfig config;
    config.jwks = dir_.Write("jwks.json", testing::JwksOf({&key_}));
    config.audience = "tock";
    config.subjects["CN=worker-1,O=Tock"] = {"orders:worker"};
    absl::StatusOr<std::unique_ptr<Authorizer>> a = Authorizer::Create(config, clock_, logger_);
    ASSERT_TRUE(a.ok()) << a.status();
    authorizer_ = std::move(*a);
  }
  std::string Token(const json& permissions, int64_t exp_offset = 600) {
    return "Bearer " + key_.Sign({{"sub", "t"},
                                  {"aud", "tock"},
                                  {"exp", absl::ToUnixSeconds(clock_.Now()) + exp_offset},
                                  {"permissions", permissions}});
  }
  absl::Status Check(const std::string& method, const std::string& authorization,
                     const std::string& namespace_name = "orders", const std::string& subject = "") {
    absl::StatusOr<Authorizer::Compiled> c = Authorizer::Compile(method);
    EXPECT_TRUE(c.ok()) << c.status();
    wf::StartWorkflowExecutionRequest request;  // `namespace` is field 1 here too
    request.set_namespace_(namespace_name);
    return authorizer_->Check(*c, authorization, subject, Serialize(request));
  }

  testing::TempDir dir_;
  ManualClock clock_{absl::FromUnixSeconds(testing::UnixNow())};
  Logger& logger_ = NullLogger();
  TestSigningKey key_{TestSigningKey::Kind::kP256, "k1"};
  std::unique_ptr<Authorizer> authorizer_;
};

const std::string kStart = "temporal.api.workflowservice.v1.WorkflowService/StartWorkflowExecution";
const std::string kPoll = "temporal.api.workflowservice.v1.WorkflowService/PollActivityTaskQueue";
const std::string kList = "temporal.api.workflowservice.v1.WorkflowService/ListNamespaces";

TEST_F(AuthorizerTest, DecidesByRoleAndNamesTheCallAndTheRole) {
  EXPECT_TRUE(Check(kStart, Token({"orders:write"})).ok());
  EXPECT_TRUE(Check(kStart, Token({"orders:admin"})).ok());
  EXPECT_TRUE(Check(kStart, Token({"temporal-system:write"}), "any").ok());
  absl::Status s = Check(kStart, Token({"orders:worker", "billing:admin"}));
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(), "StartWorkflowExecution on namespace \"orders\" needs the write role");
  s = Check(kList, Token({"orders:admin"}));
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(), "ListNamespaces needs the temporal-system:read role");
  EXPECT_TRUE(Check(kList, Token({"temporal-system:read"})).ok());
  EXPECT_TRUE(Check("temporal.api.workflowservice.v1.WorkflowService/GetSystemInfo", "").ok());
}

TEST_F(AuthorizerTest, UnauthenticatedWithoutAGoodToken) {
  absl::Status s = Check(kStart, "");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(absl::StartsWith(s.message(), "StartWorkflowExecution on namespace \"orders\" needs the write role: no bearer token")) << s;
  s = Check(kStart, "Basic dXNlcg==");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(absl::StrContains(s.message(), "is not \"Bearer <token>\"")) << s;
  s = Check(kStart, Token({"orders:write"}, -120));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(absl::StrContains(s.message(), "needs the write role: the bearer token expired at")) << s;
  s = Check(kStart, "Bearer " + std::string(Authorizer::kMaxHeaderBytes, 'a'));
  EXPECT_TRUE(absl::StrContains(s.message(), "the authorization header is longer than")) << s;
}

TEST_F(AuthorizerTest, ACachedTokenStillExpires) {
  const std::string token = Token({"orders:write"}, 100);
  EXPECT_TRUE(Check(kStart, token).ok());
  EXPECT_TRUE(Check(kStart, token).ok());  // from the cache
  clock_.Advance(absl::Seconds(100) + kClockSkew + absl::Seconds(1));
  absl::Status s = Check(kStart, token);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "expired")) << s;
}

TEST_F(AuthorizerTest, AClientCertificateSubjectGivesItsMappedRoles) {
  EXPECT_TRUE(Check(kPoll, "", "orders", "CN=worker-1,O=Tock").ok());
  absl::Status s = Check(kStart, "", "orders", "CN=worker-1,O=Tock");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
  s = Check(kPoll, "", "orders", "CN=someone-else");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
  // A token adds its roles to the certificate's.
  EXPECT_TRUE(Check(kStart, Token({"orders:write"}), "orders", "CN=worker-1,O=Tock").ok());
}

TEST_F(AuthorizerTest, InstallRefusesAMethodWithoutARule) {
  rpc::Dispatcher dispatcher;
  dispatcher.AddRaw(kStart, [](const rpc::CallContext&, const grpc::ByteBuffer&, rpc::RawResponder) {});
  dispatcher.AddRaw("tock.new.v1.NewService/Frobnicate",
                    [](const rpc::CallContext&, const grpc::ByteBuffer&, rpc::RawResponder) {});
  absl::Status s = authorizer_->Install(dispatcher);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(s.message(), "tock.new.v1.NewService/Frobnicate (no authorization rule)")) << s;
  EXPECT_FALSE(absl::StrContains(s.message(), "StartWorkflowExecution")) << s;
}

}  // namespace
}  // namespace tock::server::security
