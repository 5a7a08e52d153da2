// The Nexus endpoint registry over real gRPC (OperatorService; reference/api_2026.md §4.2,
// mirroring Temporal's tests/nexus_endpoint_test.go): create, get, update with the version,
// delete, list in id order with pages and by name, and each call's errors with Temporal's
// messages. Endpoints are cluster-global and survive a restart of the server on its file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/client/connection.h"
#include "server-core/server.h"
#include "tests/support/process.h"

namespace tock::server {
namespace {

namespace op = temporal::api::operatorservice::v1;
using O = op::OperatorService::Stub;
using ::testing::HasSubstr;

class NexusEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override { Boot(); }

  void Boot() {
    c_.reset();
    server_.reset();
    ServerConfig config;
    config.port = 0;
    config.persistence.sqlite_path = dir_.File("tock.db");
    auto server = TockServer::Start(config, RealClock());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    client::ConnectionOptions options;
    options.address = server_->address();
    auto connection = client::Connection::Open(options);
    ASSERT_TRUE(connection.ok());
    c_ = std::move(*connection);
  }

  static temporal::api::nexus::v1::EndpointSpec WorkerSpec(const std::string& name,
                                                           const std::string& ns = "default",
                                                           const std::string& queue = "handlers") {
    temporal::api::nexus::v1::EndpointSpec spec;
    spec.set_name(name);
    spec.mutable_target()->mutable_worker()->set_namespace_(ns);
    spec.mutable_target()->mutable_worker()->set_task_queue(queue);
    return spec;
  }

  absl::StatusOr<op::CreateNexusEndpointResponse> Create(
      const temporal::api::nexus::v1::EndpointSpec& spec) {
    op::CreateNexusEndpointRequest req;
    *req.mutable_spec() = spec;
    return c_->Call(&O::CreateNexusEndpoint, c_->operator_service(), req);
  }

  absl::StatusOr<op::ListNexusEndpointsResponse> List(int32_t page_size, const std::string& token = "",
                                                      const std::string& name = "") {
    op::ListNexusEndpointsRequest req;
    req.set_page_size(page_size);
    req.set_next_page_token(token);
    req.set_name(name);
    return c_->Call(&O::ListNexusEndpoints, c_->operator_service(), req);
  }

  tock::testing::TempDir dir_;
  std::unique_ptr<TockServer> server_;
  std::unique_ptr<client::Connection> c_;
};

TEST_F(NexusEndpointTest, CreateGetUpdateDelete) {
  auto created = Create(WorkerSpec("payments"));
  ASSERT_TRUE(created.ok()) << created.status();
  const auto& e = created->endpoint();
  EXPECT_EQ(e.version(), 1);
  EXPECT_EQ(e.id().size(), 36u) << "a UUID";
  EXPECT_TRUE(e.has_created_time());
  EXPECT_FALSE(e.has_last_modified_time());
  EXPECT_EQ(e.url_prefix(), absl::StrCat("/nexus/endpoints/", e.id(), "/services"));
  EXPECT_EQ(e.spec().target().worker().namespace_(), "default") << "rendered by name";

  auto again = Create(WorkerSpec("payments"));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(again.status().message(),
            "error creating Nexus endpoint. Endpoint with name payments already registered");

  op::GetNexusEndpointRequest get;
  get.set_id(e.id());
  auto got = c_->Call(&O::GetNexusEndpoint, c_->operator_service(), get);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->endpoint().spec().name(), "payments");

  op::UpdateNexusEndpointRequest update;
  update.set_id(e.id());
  update.set_version(1);
  *update.mutable_spec() = WorkerSpec("payments", "default", "handlers-v2");
  update.mutable_spec()->mutable_description()->set_data("\"card payments\"");
  auto updated = c_->Call(&O::UpdateNexusEndpoint, c_->operator_service(), update);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(updated->endpoint().version(), 2);
  EXPECT_TRUE(updated->endpoint().has_last_modified_time());
  EXPECT_EQ(updated->endpoint().spec().target().worker().task_queue(), "handlers-v2");
  auto stale = c_->Call(&O::UpdateNexusEndpoint, c_->operator_service(), update);
  EXPECT_EQ(stale.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(stale.status().message(), "nexus endpoint version mismatch. received: 1 expected 2");
  update.set_id("00000000-0000-4000-8000-000000000001");
  auto missing = c_->Call(&O::UpdateNexusEndpoint, c_->operator_service(), update);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "error updating Nexus endpoint. endpoint ID 00000000-0000-4000-8000-000000000001 not found");

  // Endpoints are stored: a restart finds them.
  Boot();
  got = c_->Call(&O::GetNexusEndpoint, c_->operator_service(), get);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->endpoint().version(), 2);

  op::DeleteNexusEndpointRequest del;
  del.set_id(e.id());
  del.set_version(0);
  auto refused = c_->Call(&O::DeleteNexusEndpoint, c_->operator_service(), del);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(), "endpoint version is non-positive");
  del.set_version(2);
  ASSERT_TRUE(c_->Call(&O::DeleteNexusEndpoint, c_->operator_service(), del).ok());
  auto gone = c_->Call(&O::DeleteNexusEndpoint, c_->operator_service(), del);
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(gone.status().message(), absl::StrCat("error deleting nexus endpoint with ID: ", e.id()));
  EXPECT_EQ(c_->Call(&O::GetNexusEndpoint, c_->operator_service(), get).status().code(),
            absl::StatusCode::kNotFound);
  get.set_id("not-a-uuid");
  auto bad = c_->Call(&O::GetNexusEndpoint, c_->operator_service(), get);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("malformed endpoint ID"));
  get.set_id("");
  EXPECT_EQ(c_->Call(&O::GetNexusEndpoint, c_->operator_service(), get).status().message(),
            "endpoint ID not set");
}

TEST_F(NexusEndpointTest, SpecValidation) {
  auto status = [&](const temporal::api::nexus::v1::EndpointSpec& spec) { return Create(spec).status(); };
  EXPECT_EQ(status(WorkerSpec("")).message(), "endpoint name not set");
  const absl::Status bad_name = status(WorkerSpec("no_underscores"));
  EXPECT_EQ(bad_name.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad_name.message()), HasSubstr("endpoint name must match the regex"));
  EXPECT_THAT(std::string(status(WorkerSpec(std::string(201, 'a'))).message()),
              HasSubstr("endpoint name exceeds length limit of 200"));

  temporal::api::nexus::v1::EndpointSpec no_target;
  no_target.set_name("x1");
  EXPECT_EQ(status(no_target).message(), "empty target variant");
  const absl::Status unknown = status(WorkerSpec("x1", "nowhere"));
  EXPECT_EQ(unknown.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(unknown.message()),
              HasSubstr("could not verify namespace referenced by target exists"));
  EXPECT_THAT(std::string(status(WorkerSpec("x1", "default", "")).message()),
              HasSubstr("invalid target task queue"));

  temporal::api::nexus::v1::EndpointSpec external;
  external.set_name("x1");
  external.mutable_target()->mutable_external()->set_url("ftp://example.com");
  EXPECT_EQ(status(external).message(), "invalid target URL scheme: \"ftp\", expected http or https");
  external.mutable_target()->mutable_external()->set_url("");
  EXPECT_EQ(status(external).message(), "empty target URL");
  external.mutable_target()->mutable_external()->set_url("https://" + std::string(5000, 'a'));
  EXPECT_EQ(status(external).message(), "target URL length exceeds limit of 4096");
  external.mutable_target()->mutable_external()->set_url("https://handlers.example.com/nexus");
  auto ok = Create(external);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->endpoint().spec().target().external().url(), "https://handlers.example.com/nexus");

  // Every issue of a spec in one answer.
  temporal::api::nexus::v1::EndpointSpec many = WorkerSpec("bad_name", "default", "");
  many.mutable_description()->set_data(std::string(20001, 'd'));
  const std::string message(status(many).message());
  EXPECT_THAT(message, HasSubstr("endpoint name must match the regex"));
  EXPECT_THAT(message, HasSubstr("invalid target task queue"));
  EXPECT_THAT(message, HasSubstr("description size exceeds limit of 20000"));
}

TEST_F(NexusEndpointTest, ListsInIdOrderByPagesAndByName) {
  std::set<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    auto created = Create(WorkerSpec(absl::StrCat("endpoint-", i)));
    ASSERT_TRUE(created.ok()) << created.status();
    ids.insert(created->endpoint().id());
  }
  std::vector<std::string> listed;
  std::string token;
  for (int pages = 0; pages < 10; ++pages) {
    auto page = List(2, token);
    ASSERT_TRUE(page.ok()) << page.status();
    for (const auto& e : page->endpoints()) listed.push_back(e.id());
    token = page->next_page_token();
    if (token.empty()) break;
  }
  EXPECT_EQ(listed, std::vector<std::string>(ids.begin(), ids.end())) << "sorted by id";

  auto by_name = List(0, "", "endpoint-3");
  ASSERT_TRUE(by_name.ok());
  ASSERT_EQ(by_name->endpoints_size(), 1);
  EXPECT_EQ(by_name->endpoints(0).spec().name(), "endpoint-3");
  by_name = List(0, "", "absent");
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(by_name->endpoints_size(), 0);

  EXPECT_EQ(List(-1).status().message(), "page_size is negative");
  EXPECT_EQ(List(1001).status().message(), "page_size exceeds limit of 1000");
}

}  // namespace
}  // namespace tock::server
