// tock-server under pressure, as a process: it keeps accepting after running out of file
// descriptors, a SIGTERM answers pending long polls at once and exits within 2 s, and
// requests past Temporal's limits are refused with Temporal's messages, storing nothing
// (over 4 MiB, by gRPC before any handler).
#include <arpa/inet.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <thread>

#include "temporal/api/workflowservice/v1/service.grpc.pb.h"
#include "tests/cli/cli_fixture.h"
#include "tests/support/eventually.h"

namespace tock::testing {
namespace {

namespace wf = temporal::api::workflowservice::v1;

int Port(const std::string& address) { return std::stoi(address.substr(address.rfind(':') + 1)); }

// A plain TCP connection to 127.0.0.1:port (no gRPC): -1 when it could not be made.
int RawConnect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

TEST_F(CliTest, KeepsAcceptingAfterRunningOutOfDescriptors) {
  // 256 descriptors for the whole server; 400 connections are far more than it can hold.
  server_ = std::make_unique<ServerProcess>("/usr/bin/prlimit");
  ASSERT_TRUE(server_->Start({"--nofile=256:256", TOCK_SERVER_BIN})) << server_->error();
  const int port = Port(server_->address());
  std::vector<int> fds;
  for (int i = 0; i < 400; ++i) {
    int fd = RawConnect(port);
    if (fd >= 0) fds.push_back(fd);
  }
  // Give the server a moment to take them all from its backlog.
  absl::SleepFor(absl::Milliseconds(500));
  for (int fd : fds) close(fd);

  // Descriptors are free again: the server answers (it may need a moment to close the
  // connections above).
  ProcessResult r;
  const absl::Time until = absl::Now() + absl::Seconds(10);
  do {
    r = Tock({"namespace", "describe", "default", "-o", "json"});
    if (r.exit_code == kExitOk) break;
    absl::SleepFor(absl::Milliseconds(100));
  } while (absl::Now() < until);
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(server_->Stop(), 0);
  EXPECT_NE(server_->stderr_text().find("connection refused: too many open connections"),
            std::string::npos)
      << server_->stderr_text();
}

TEST_F(CliTest, ConnectionsPastTheCapAreClosedAndClosedOnesMakeRoom) {
  // Three client connections at most. The server's own descriptors (database, WAL, wake
  // pipes) are not connections: the first three raw connections are all kept.
  StartServer({"--config", dir_.Write("cap.yaml", "listen:\n  max_connections: 3\n")});
  const int port = Port(server_->address());
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) {
    const int fd = RawConnect(port);
    ASSERT_GE(fd, 0);
    held.push_back(fd);
  }
  // Whether the server closed `fd` within `wait`: reading it reaches the end of the stream
  // (a kept connection gets gRPC's HTTP/2 settings and then waits for the client's preface).
  auto closed_by_server = [](int fd, int wait_ms) {
    char buffer[256];
    pollfd p{fd, POLLIN, 0};
    while (poll(&p, 1, wait_ms) == 1) {
      const ssize_t n = read(fd, buffer, sizeof(buffer));
      if (n <= 0) return true;
    }
    return false;
  };
  const int fourth = RawConnect(port);
  ASSERT_GE(fourth, 0);
  EXPECT_TRUE(closed_by_server(fourth, 5000)) << "a fourth connection was kept";
  close(fourth);
  // The kept ones were not closed (the fourth was refused after them, so they were seen).
  for (int fd : held) EXPECT_FALSE(closed_by_server(fd, 0)) << "a connection within the cap was closed";
  for (int fd : held) close(fd);
  // Closed connections make room again: the CLI's connection is served.
  EXPECT_TRUE(Eventually([&] {
    return Tock({"namespace", "describe", "default", "-o", "json"}).exit_code == kExitOk;
  })) << server_->stderr_text();
  EXPECT_EQ(server_->Stop(), 0);
  EXPECT_NE(server_->stderr_text().find("connection refused: too many open connections"),
            std::string::npos)
      << server_->stderr_text();
}

TEST_F(CliTest, SigtermAnswersPendingLongPollsAndExitsWithinTwoSeconds) {
  StartServer({"--log-level", "debug"});
  auto channel = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
  auto stub = wf::WorkflowService::NewStub(channel);
  // Eight workers' polls, each willing to wait a minute.
  std::vector<std::future<grpc::Status>> polls;
  for (int i = 0; i < 8; ++i) {
    polls.push_back(std::async(std::launch::async, [&stub, i] {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(70));
      wf::PollWorkflowTaskQueueRequest req;
      req.set_namespace_("default");
      req.mutable_task_queue()->set_name(i % 2 == 0 ? "busy" : "idle");
      req.set_identity("worker-" + std::to_string(i));
      wf::PollWorkflowTaskQueueResponse out;
      return stub->PollWorkflowTaskQueue(&ctx, req, &out);
    }));
  }
  // A history long poll too: `workflow show --follow` of a run nobody works on.
  ASSERT_EQ(Tock({"workflow", "start", "--type", "t", "--task-queue", "nobody", "--id", "wait"})
                .exit_code,
            kExitOk);
  absl::SleepFor(absl::Milliseconds(500));  // the polls are waiting now
  const absl::Time sent = absl::Now();
  EXPECT_EQ(server_->Stop(SIGTERM), 0) << server_->stderr_text();
  const absl::Duration took = absl::Now() - sent;
  EXPECT_LT(took, absl::Seconds(2)) << "SIGTERM to exit; stderr: " << server_->stderr_text();
  for (auto& poll : polls) {
    ASSERT_EQ(poll.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    grpc::Status s = poll.get();
    // Answered with the empty response, or cut off by the server going away: never left
    // waiting for its minute.
    EXPECT_TRUE(s.ok() || s.error_code() == grpc::StatusCode::UNAVAILABLE ||
                s.error_code() == grpc::StatusCode::CANCELLED)
        << s.error_code() << " " << s.error_message();
  }
}

TEST_F(CliTest, RequestsPastTemporalsLimitsAreRefusedAndNothingIsStored) {
  StartServer();
  auto channel = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
  auto stub = wf::WorkflowService::NewStub(channel);
  auto start = [&](const std::function<void(wf::StartWorkflowExecutionRequest&)>& change) {
    wf::StartWorkflowExecutionRequest req;
    req.set_namespace_("default");
    req.set_workflow_id("limits");
    req.mutable_workflow_type()->set_name("t");
    req.mutable_task_queue()->set_name("q");
    req.set_request_id("r");
    change(req);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    wf::StartWorkflowExecutionResponse out;
    return stub->StartWorkflowExecution(&ctx, req, &out);
  };
  struct Case {
    const char* what;
    std::function<void(wf::StartWorkflowExecutionRequest&)> change;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"negative execution timeout",
       [](auto& r) { r.mutable_workflow_execution_timeout()->set_seconds(-5); },
       "An invalid WorkflowExecutionTimeoutSeconds is set on request. cause: negative duration"},
      {"negative run timeout", [](auto& r) { r.mutable_workflow_run_timeout()->set_seconds(-1); },
       "An invalid WorkflowRunTimeoutSeconds is set on request. cause: negative duration"},
      {"nanos of 2e9", [](auto& r) { r.mutable_workflow_task_timeout()->set_nanos(2000000000); },
       "An invalid WorkflowTaskTimeoutSeconds is set on request. cause: duration nanos out of "
       "range (at most 999999999)"},
      {"reuse policy 99", [](auto& r) { r.set_workflow_id_reuse_policy(
                              static_cast<temporal::api::enums::v1::WorkflowIdReusePolicy>(99)); },
       "Invalid WorkflowIdReusePolicy: 99 is not a known value."},
      {"conflict policy 77", [](auto& r) { r.set_workflow_id_conflict_policy(
                                 static_cast<temporal::api::enums::v1::WorkflowIdConflictPolicy>(77)); },
       "Invalid WorkflowIdConflictPolicy: 77 is not a known value."},
      {"retry attempts -1",
       [](auto& r) { r.mutable_retry_policy()->set_maximum_attempts(-1); },
       "MaximumAttempts cannot be negative on retry policy."},
      {"backoff 0.1", [](auto& r) { r.mutable_retry_policy()->set_backoff_coefficient(0.1); },
       "BackoffCoefficient cannot be less than 1 on retry policy."},
      {"unknown search attribute",
       [](auto& r) {
         (*r.mutable_search_attributes()->mutable_indexed_fields())["CustomerId"].set_data("\"c\"");
       },
       "search attribute CustomerId is not defined"},
      {"workflow id with NUL", [](auto& r) { r.set_workflow_id(std::string("a\0b", 3)); },
       "WorkflowId must not contain a NUL byte."},
      // Over the blob and memo limits (2 MiB), within a request's (4 MiB).
      {"3 MB input",
       [](auto& r) { r.mutable_input()->add_payloads()->set_data(std::string(3 << 20, 'x')); },
       "Blob data size exceeds limit."},
      {"3 MB memo",
       [](auto& r) {
         (*r.mutable_memo()->mutable_fields())["m"].set_data(std::string(3 << 20, 'x'));
       },
       "Memo size exceeds limit."},
  };
  for (const Case& c : cases) {
    grpc::Status s = start(c.change);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.what;
    EXPECT_EQ(s.error_message(), c.message) << c.what;
  }
  // Nothing was stored by any of them.
  EXPECT_EQ(Tock({"workflow", "describe", "--workflow-id", "limits"}).exit_code, kExitNotFound);

  // int64-max seconds and a start delay of 1e12 s are capped at 100 years, as Temporal caps.
  grpc::Status capped = start([](auto& r) {
    r.mutable_workflow_execution_timeout()->set_seconds(INT64_MAX);
    r.mutable_workflow_start_delay()->set_seconds(1'000'000'000'000);
  });
  EXPECT_TRUE(capped.ok()) << capped.error_message();

  // A signal of 3 MB, and a 1 MB signal name.
  auto signal = [&](const std::string& name, size_t bytes) {
    wf::SignalWorkflowExecutionRequest req;
    req.set_namespace_("default");
    req.mutable_workflow_execution()->set_workflow_id("limits");
    req.set_signal_name(name);
    if (bytes > 0) req.mutable_input()->add_payloads()->set_data(std::string(bytes, 'x'));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    wf::SignalWorkflowExecutionResponse out;
    return stub->SignalWorkflowExecution(&ctx, req, &out);
  };
  grpc::Status big = signal("s", 3 << 20);
  EXPECT_EQ(big.error_message(), "Blob data size exceeds limit.");
  grpc::Status long_name = signal(std::string(1 << 20, 'n'), 0);
  EXPECT_EQ(long_name.error_message(), "SignalName length exceeds limit.");

  // A list page larger than Temporal allows, and a namespace name of 1 MB (echoed back it
  // would make the answer too large to arrive).
  {
    wf::ListWorkflowExecutionsRequest req;
    req.set_namespace_("default");
    req.set_page_size(20000);
    grpc::ClientContext ctx;
    wf::ListWorkflowExecutionsResponse out;
    grpc::Status s = stub->ListWorkflowExecutions(&ctx, req, &out);
    EXPECT_EQ(s.error_message(), "PageSize is larger than allowed 10000.");
  }
  {
    wf::DescribeNamespaceRequest req;
    req.set_namespace_(std::string(1 << 20, 'n'));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    wf::DescribeNamespaceResponse out;
    grpc::Status s = stub->DescribeNamespace(&ctx, req, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
    EXPECT_EQ(s.error_message(), "Namespace length exceeds limit.");
  }
  EXPECT_EQ(server_->Stop(), 0) << server_->stderr_text();
}

// A request over 4 MiB (Temporal's frontend limit) is refused by gRPC before any handler
// sees it, whoever sends it: RESOURCE_EXHAUSTED, nothing stored, and the server goes on
// answering, also a burst of such requests at once (review P2-5).
TEST_F(CliTest, ARequestOverFourMebibytesIsRefusedBeforeItIsHandled) {
  StartServer();
  auto channel = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
  auto stub = wf::WorkflowService::NewStub(channel);
  auto start = [&](size_t bytes, const std::string& id) {
    wf::StartWorkflowExecutionRequest req;
    req.set_namespace_("default");
    req.set_workflow_id(id);
    req.mutable_workflow_type()->set_name("T");
    req.mutable_task_queue()->set_name("q");
    req.mutable_input()->add_payloads()->set_data(std::string(bytes, 'x'));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    wf::StartWorkflowExecutionResponse out;
    return stub->StartWorkflowExecution(&ctx, req, &out);
  };
  const grpc::Status refused = start((4 << 20) + 1, "too-large");
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  std::vector<std::future<grpc::Status>> burst;
  for (int i = 0; i < 4; ++i) {
    burst.push_back(std::async(std::launch::async,
                               [&, i] { return start(16 << 20, "huge-" + std::to_string(i)); }));
  }
  for (auto& f : burst) EXPECT_EQ(f.get().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  // Just under the limit reaches the handler, which applies the blob limit (2 MiB).
  EXPECT_EQ(start((4 << 20) - 1024, "under").error_message(), "Blob data size exceeds limit.");
  EXPECT_TRUE(start(1 << 20, "fits").ok());
  EXPECT_EQ(Tock({"workflow", "describe", "--workflow-id", "too-large"}).exit_code, kExitNotFound);
  EXPECT_EQ(Tock({"workflow", "describe", "--workflow-id", "fits"}).exit_code, kExitOk);
  EXPECT_EQ(server_->Stop(), 0) << server_->stderr_text();
}

TEST_F(CliTest, AnotherProgramsSqliteDatabaseIsRefusedAndLeftAlone) {
  const std::string path = dir_.File("theirs.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE invoices(id INTEGER PRIMARY KEY, total REAL)", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  ServerProcess server(TOCK_SERVER_BIN);
  EXPECT_FALSE(server.Start({"--db-file", path}));
  EXPECT_NE(server.error().find("belongs to another program"), std::string::npos) << server.error();
  // Nothing of Tock's was written into it.
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'", -1,
                               &q, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(q, 0), 1);
  sqlite3_finalize(q);
  sqlite3_close(db);
}

TEST_F(CliTest, TheDatabaseIsCreatedOwnerOnlyAndAnUnwritableOneIsNamed) {
  StartServer();
  const std::string path = dir_.File("tock.db");
  EXPECT_EQ(Tock({"namespace", "describe", "default"}).exit_code, kExitOk);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat((path + "-wal").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0077, 0u) << "the write-ahead log holds payloads too";
  EXPECT_EQ(server_->Stop(), 0);

  // The same file for a user who cannot write it (tests run as root, who can write
  // anything: run the server as nobody).
  if (geteuid() != 0 || access("/usr/sbin/runuser", X_OK) != 0) GTEST_SKIP() << "needs root";
  chmod(dir_.path().c_str(), 0755);
  ServerProcess as_nobody("/usr/sbin/runuser");
  EXPECT_FALSE(as_nobody.Start({"-u", "nobody", "--", TOCK_SERVER_BIN, "--db-file", path}));
  EXPECT_NE(as_nobody.error().find("read-only for this user"), std::string::npos)
      << as_nobody.error();
}

TEST_F(CliTest, AnEmptyConfigFileIsNamedInTheBanner) {
  StartServer({"--config", dir_.Write("empty.yaml", "# nothing set yet\n")});
  EXPECT_NE(server_->banner().find("config:     " + dir_.File("empty.yaml") +
                                   " (empty: every setting is its default)"),
            std::string::npos)
      << server_->banner();
  ProcessResult big = Tock({"workflow", "list", "--limit", "5"});
  EXPECT_EQ(big.exit_code, kExitOk) << big.err;
}

}  // namespace
}  // namespace tock::testing
