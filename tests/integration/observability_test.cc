// The server's Env in process: the HTTP endpoint (routes, bounded shutdown), the persistence
// decorators (metrics per operation, injected faults before and after the call), the new
// configuration keys, and a whole server logging refusals and counting calls.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "lib/client/connection.h"
#include "lib/common/env.h"
#include "server-core/http/http_server.h"
#include "server-core/persistence/observed/observed_persistence.h"
#include "server-core/server.h"
#include "tests/support/http_get.h"
#include "tests/support/process.h"

namespace tock::server {
namespace {

using testing::HttpGet;
using testing::HttpResult;
namespace wf = temporal::api::workflowservice::v1;

bool HasLine(const std::string& text, const std::string& line) {
  return absl::StrContains("\n" + text, "\n" + line + "\n");
}

std::string Url(int port, const std::string& path) {
  return "http://127.0.0.1:" + std::to_string(port) + path;
}

// ---- HTTP ----

TEST(HttpServerTest, ServesMetricsAndRegisteredRoutesAndAnswers404Otherwise) {
  MetricsRegistry registry;
  registry.Counter("probe_total", "Probe.").Increment(7);
  http::HttpServer server;
  http::RouteMetrics(server, registry);
  server.Route("GET", "/timers/([^/]+)", [](const http::HttpRequest& request) {
    http::HttpResponse response;
    response.body = "timer " + request.path_groups.at(0);
    return response;
  });
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  ASSERT_GT(server.port(), 0);

  HttpResult metrics = HttpGet(Url(server.port(), "/metrics"));
  ASSERT_EQ(metrics.status, 200) << metrics.error;
  EXPECT_EQ(metrics.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_TRUE(HasLine(metrics.body, "probe_total 7")) << metrics.body;
  EXPECT_EQ(HttpGet(Url(server.port(), "/timers/t-1")).body, "timer t-1");
  EXPECT_EQ(HttpGet(Url(server.port(), "/nothing")).status, 404);
  EXPECT_EQ(HttpGet(Url(server.port(), "/metrics/extra")).status, 404);
}

TEST(HttpServerTest, StopsWithinASecondWithIdleAndHalfSentConnectionsOpen) {
  http::HttpServer server;
  server.Route("GET", "/", [](const http::HttpRequest&) { return http::HttpResponse{}; });
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  std::vector<int> sockets;
  for (int i = 0; i < 4; ++i) sockets.push_back(testing::ConnectTcp("127.0.0.1", server.port()));
  const std::string partial = "GET / HTTP/1.1\r\nHost: x\r\n";  // never finished
  ASSERT_GT(send(sockets[0], partial.data(), partial.size(), MSG_NOSIGNAL), 0);
  ASSERT_EQ(HttpGet(Url(server.port(), "/")).status, 200) << "served despite the idle ones";
  const auto start = std::chrono::steady_clock::now();
  server.Stop();
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::milliseconds(1500))
      << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
  for (int fd : sockets) close(fd);
  EXPECT_EQ(testing::ConnectTcp("127.0.0.1", server.port()), -1) << "nothing listens after Stop";
}

TEST(HttpServerTest, ManyConcurrentScrapesAllSucceedOnTheSmallPool) {
  MetricsRegistry registry;
  registry.Counter("probe_total", "Probe.").Increment();
  http::HttpServer server(http::HttpServerOptions{.threads = 2, .queue = 2});
  http::RouteMetrics(server, registry);
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 12; ++t) {
    clients.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        if (HttpGet(Url(server.port(), "/metrics")).status == 200) ++ok;
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(ok.load(), 60);
}

TEST(HttpServerTest, APortInUseIsUnavailableNamingTheAddress) {
  http::HttpServer first;
  ASSERT_TRUE(first.Start("127.0.0.1", 0).ok());
  http::HttpServer second;
  absl::Status s = second.Start("127.0.0.1", first.port());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(s.message(), "127.0.0.1:" + std::to_string(first.port())))
      << s.message();
}

// ---- Fault injection and persistence metrics ----

TEST(FaultInjectorTest, NothingBeforeArmThenTheConfiguredShareOfBothKinds) {
  persistence::FaultInjector faults({.rate = 0.1, .seed = 7}, NoMetrics(), NullLogger());
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(faults.Next("Op"), persistence::InjectedFault::kNone) << "not armed yet";
  }
  faults.Arm();
  int before = 0;
  int after = 0;
  for (int i = 0; i < 20000; ++i) {
    switch (faults.Next("Op")) {
      case persistence::InjectedFault::kUnavailableBefore:
        ++before;
        break;
      case persistence::InjectedFault::kTimeoutAfter:
        ++after;
        break;
      case persistence::InjectedFault::kNone:
        break;
    }
  }
  EXPECT_NEAR(before + after, 2000, 200);
  EXPECT_NEAR(before, after, 300);
}

TEST(FaultInjectorTest, TheSameSeedGivesTheSameDecisions) {
  persistence::FaultInjector a({.rate = 0.3, .seed = 42}, NoMetrics(), NullLogger());
  persistence::FaultInjector b({.rate = 0.3, .seed = 42}, NoMetrics(), NullLogger());
  persistence::FaultInjector c({.rate = 0.3, .seed = 43}, NoMetrics(), NullLogger());
  a.Arm();
  b.Arm();
  c.Arm();
  int differ = 0;
  for (int i = 0; i < 500; ++i) {
    const auto x = a.Next("Op");
    ASSERT_EQ(x, b.Next("Op")) << "draw " << i;
    if (x != c.Next("Op")) ++differ;
  }
  EXPECT_GT(differ, 50) << "another seed, another sequence";
}

persistence::NamespaceRecord Record(const std::string& name) {
  persistence::NamespaceRecord r;
  r.mutable_info()->set_name(name);
  r.mutable_info()->set_id("id-" + name);
  return r;
}

TEST(ObservedPersistenceTest, WithoutMetricsOrFaultsTheStoresAreNotWrapped) {
  auto opened = persistence::OpenPersistence({});
  ASSERT_TRUE(opened.ok());
  persistence::Persistence* raw = opened->get();
  auto observed = persistence::ObservePersistence(std::move(*opened), NoMetrics(), nullptr);
  EXPECT_EQ(observed.get(), raw);
}

TEST(ObservedPersistenceTest, CountsRequestsErrorsAndLatencyPerOperation) {
  MetricsRegistry registry;
  auto opened = persistence::OpenPersistence({});
  ASSERT_TRUE(opened.ok());
  auto p = persistence::ObservePersistence(std::move(*opened), registry, nullptr);
  const absl::Time now = absl::FromUnixSeconds(1'700'000'000);
  ASSERT_TRUE(p->namespaces().CreateNamespace(Record("a"), now).ok());
  EXPECT_EQ(p->namespaces().CreateNamespace(Record("a"), now).status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(p->namespaces().GetNamespaceByName("missing").status().code(),
            absl::StatusCode::kNotFound);
  const std::string text = registry.TextExposition();
  EXPECT_TRUE(HasLine(text, "persistence_requests_total{operation=\"CreateNamespace\"} 2")) << text;
  EXPECT_TRUE(HasLine(text, "persistence_errors_total{operation=\"CreateNamespace\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "persistence_requests_total{operation=\"GetNamespaceByName\"} 1"));
  EXPECT_TRUE(HasLine(text, "persistence_errors_total{operation=\"GetNamespaceByName\"} 0"))
      << "NOT_FOUND is an answer, not an error";
  EXPECT_TRUE(HasLine(text, "persistence_latency_count{operation=\"CreateNamespace\"} 2")) << text;
}

TEST(ObservedPersistenceTest, InjectedFaultsFailBeforeTheCallOrAfterItCompleted) {
  MetricsRegistry registry;
  persistence::FaultInjector faults({.rate = 1.0, .seed = 3}, registry, NullLogger());
  auto opened = persistence::OpenPersistence({});
  ASSERT_TRUE(opened.ok());
  persistence::NamespaceStore& inner = (*opened)->namespaces();
  auto p = persistence::ObservePersistence(std::move(*opened), registry, &faults);
  const absl::Time now = absl::FromUnixSeconds(1'700'000'000);
  ASSERT_TRUE(p->namespaces().CreateNamespace(Record("before-arm"), now).ok());
  faults.Arm();
  int unavailable = 0;
  int timed_out = 0;
  for (int i = 0; i < 40; ++i) {
    const std::string name = "ns-" + std::to_string(i);
    absl::Status s = p->namespaces().CreateNamespace(Record(name), now).status();
    const bool stored = inner.GetNamespaceByName(name).ok();
    if (s.code() == absl::StatusCode::kUnavailable) {
      ++unavailable;
      EXPECT_FALSE(stored) << name << ": UNAVAILABLE means the call was not made";
    } else {
      ASSERT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
      ++timed_out;
      EXPECT_TRUE(stored) << name << ": the timeout came after the write";
      EXPECT_TRUE(absl::StrContains(s.message(), "injected")) << s.message();
    }
  }
  EXPECT_GT(unavailable, 5);
  EXPECT_GT(timed_out, 5);
  const std::string text = registry.TextExposition();
  EXPECT_TRUE(HasLine(text, "persistence_injected_faults_total{kind=\"unavailable\"} " +
                                std::to_string(unavailable)))
      << text;
  EXPECT_TRUE(HasLine(text, "persistence_errors_total{operation=\"CreateNamespace\"} 40")) << text;
}

// ---- Configuration ----

TEST(ObservabilityConfigTest, MetricsLogAndFaultInjectionKeysAreRead) {
  auto config = ParseServerConfig(
      "metrics: {ip: 0.0.0.0, port: 9090}\n"
      "log: {level: debug, format: json}\n"
      "persistence: {fault_injection: {rate: 0.01, seed: 9, sync_delay: 2ms}}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_TRUE(config->metrics.has_value());
  EXPECT_EQ(config->metrics->ip, "0.0.0.0");
  EXPECT_EQ(config->metrics->port, 9090);
  EXPECT_EQ(config->log.level, "debug");
  EXPECT_EQ(config->log.format, "json");
  EXPECT_EQ(config->persistence.fault_injection.rate, 0.01);
  EXPECT_EQ(config->persistence.fault_injection.seed, 9u);
  EXPECT_EQ(config->persistence.fault_injection.sync_delay, absl::Milliseconds(2));
  EXPECT_TRUE(config->Validate().ok());

  auto defaults = ParseServerConfig("listen: {port: 7233}\n");
  ASSERT_TRUE(defaults.ok());
  EXPECT_FALSE(defaults->metrics.has_value()) << "metrics are off unless configured";
  EXPECT_EQ(defaults->log.level, "info");
  EXPECT_EQ(defaults->persistence.fault_injection.rate, 0);
  EXPECT_EQ(defaults->persistence.fault_injection.sync_delay, absl::ZeroDuration());
}

TEST(ObservabilityConfigTest, BadValuesAreRefusedNamingTheKey) {
  auto message = [](const std::string& yaml) -> std::string {
    auto config = ParseServerConfig(yaml);
    if (!config.ok()) return std::string(config.status().message());
    return std::string(config->Validate().message());
  };
  EXPECT_EQ(message("metrics: {port: 70000}"),
            "config metrics.port: must be between 0 and 65535; got 70000");
  EXPECT_EQ(message("metrics: {host: x}"), "config metrics.host: unknown key; allowed: ip, port");
  EXPECT_EQ(message("log: {level: loud}"),
            "config log.level: invalid log level \"loud\": use debug, info, warn, error or off");
  EXPECT_EQ(message("log: {format: xml}"),
            "config log.format: invalid log format \"xml\": use text or json");
  EXPECT_EQ(message("persistence: {fault_injection: {rate: 2}}"),
            "config persistence.fault_injection.rate: must be between 0 and 1; got 2");
  EXPECT_EQ(message("persistence: {fault_injection: {rate: often}}"),
            "config persistence.fault_injection.rate: must be a number between 0 and 1");
  EXPECT_EQ(message("persistence: {fault_injection: {sync_delay: 2s}}"),
            "config persistence.fault_injection.sync_delay: must be between 0s and 1s; got 2s");
}

// ---- A whole server ----

// Keeps every entry as its JSON line.
class CapturingLogger : public Logger {
 public:
  bool Enabled(LogLevel level) const override { return level >= LogLevel::kDebug; }
  void Write(LogLevel level, absl::string_view message,
             std::initializer_list<LogField> fields) override {
    std::lock_guard lock(mu_);
    lines_.push_back(FormatLogEntry(LogFormat::kJson, level, message, fields));
  }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

bool Logged(const CapturingLogger& logger, const std::vector<std::string>& parts) {
  for (const std::string& line : logger.lines()) {
    bool all = true;
    for (const std::string& part : parts) all = all && absl::StrContains(line, part);
    if (all) return true;
  }
  return false;
}

TEST(ServerEnvTest, CallsAreCountedRefusalsLoggedAndMetricsServedOverHttp) {
  CapturingLogger logger;
  MetricsRegistry registry;
  ServerConfig config;
  config.port = 0;
  config.metrics.emplace();  // 127.0.0.1, a free port
  auto server = TockServer::Start(config, Env{RealClock(), logger, registry});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string banner = (*server)->Banner();
  const size_t at = banner.find("  metrics:    http://127.0.0.1:");
  ASSERT_NE(at, std::string::npos) << banner;
  const std::string url = banner.substr(at + 14, banner.find('\n', at) - at - 14);
  EXPECT_TRUE(Logged(logger, {"\"level\":\"info\"", "tock-server started", url}));

  client::ConnectionOptions options;
  options.address = (*server)->address();
  auto connection = client::Connection::Open(options);
  ASSERT_TRUE(connection.ok());
  wf::DescribeNamespaceRequest req;
  req.set_namespace_("no-such-namespace");
  auto out =
      (*connection)
          ->Call(&wf::WorkflowService::Stub::DescribeNamespace, (*connection)->workflow(), req);
  ASSERT_EQ(out.status().code(), absl::StatusCode::kNotFound);
  req.set_namespace_("default");
  ASSERT_TRUE(
      (*connection)
          ->Call(&wf::WorkflowService::Stub::DescribeNamespace, (*connection)->workflow(), req)
          .ok());

  EXPECT_TRUE(
      Logged(logger, {"\"level\":\"debug\"", "request refused", "WorkflowService/DescribeNamespace",
                      "\"code\":\"NotFound\"", "\"namespace\":\"no-such-namespace\""}));
  HttpResult scrape = HttpGet(url);
  ASSERT_EQ(scrape.status, 200) << scrape.error;
  EXPECT_TRUE(HasLine(scrape.body, "service_requests_total{operation=\"DescribeNamespace\"} 2"))
      << scrape.body;
  EXPECT_TRUE(HasLine(scrape.body,
                      "service_error_with_type_total{error_type=\"NotFound\",operation="
                      "\"DescribeNamespace\"} 1"));
  EXPECT_TRUE(HasLine(scrape.body,
                      "service_errors_entity_not_found_total{operation=\"DescribeNamespace\"} 1"));
  EXPECT_TRUE(HasLine(scrape.body, "service_errors_total{operation=\"DescribeNamespace\"} 0"))
      << "NOT_FOUND is the caller's problem, not a server failure";
  EXPECT_TRUE(HasLine(scrape.body, "service_latency_count{operation=\"DescribeNamespace\"} 2"));
  EXPECT_TRUE(absl::StrContains(scrape.body,
                                "persistence_requests_total{operation=\"GetNamespaceByName\"}"));

  (*server)->Shutdown();
  EXPECT_TRUE(Logged(logger, {"tock-server stopped"}));
  EXPECT_EQ(HttpGet(url, std::chrono::seconds(2)).status, 0) << "the HTTP endpoint stopped too";
  EXPECT_TRUE(absl::StrContains(HttpGet(url).error, "cannot connect")) << "nothing listens";
}

// The sum of the samples of `name` (every label set) in exposition `text`.
double Sample(const std::string& text, const std::string& name) {
  double sum = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, name)) continue;
    const char next = line.size() > name.size() ? line[name.size()] : '\0';
    if (next != ' ' && next != '{') continue;
    sum += std::stod(std::string(line.substr(line.rfind(' ') + 1)));
  }
  return sum;
}

// What the execution store's writes cost is counted (issue 35's counters): transactions, the
// state transitions they held, and the pages appended to SQLite's write-ahead log.
TEST(ServerEnvTest, WritesAreCountedInTransactionsTransitionsAndWalPages) {
  testing::TempDir dir;
  MetricsRegistry registry;
  ServerConfig config;
  config.port = 0;
  config.persistence.sqlite_path = dir.File("tock.db");
  auto server = TockServer::Start(config, Env{RealClock(), NullLogger(), registry});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string before = registry.TextExposition();
  client::ConnectionOptions options;
  options.address = (*server)->address();
  auto connection = client::Connection::Open(options);
  ASSERT_TRUE(connection.ok());
  constexpr int kStarts = 5;
  for (int i = 0; i < kStarts; ++i) {
    wf::StartWorkflowExecutionRequest start;
    start.set_namespace_("default");
    start.set_workflow_id("counted-" + std::to_string(i));
    start.mutable_workflow_type()->set_name("flow");
    start.mutable_task_queue()->set_name("q");
    ASSERT_TRUE((*connection)
                    ->Call(&wf::WorkflowService::Stub::StartWorkflowExecution,
                           (*connection)->workflow(), start)
                    .ok());
  }
  const std::string after = registry.TextExposition();
  auto delta = [&](const std::string& name) { return Sample(after, name) - Sample(before, name); };
  const double transitions = delta("persistence_transitions_total");
  const double transactions = delta("persistence_transactions_total");
  EXPECT_EQ(transitions, kStarts) << after;
  EXPECT_GE(transactions, 1);
  EXPECT_LE(transactions, transitions);
  EXPECT_EQ(delta("persistence_transaction_transitions_count"), transactions);
  EXPECT_EQ(delta("persistence_transaction_transitions_sum"), transitions);
  EXPECT_GE(delta("persistence_wal_pages_total"), transactions)
      << "every transaction appends a page to the write-ahead log at least";
  (*server)->Shutdown();
}

TEST(ServerEnvTest, WithoutMetricsConfiguredThereIsNoEndpointAndNoBannerLine) {
  ServerConfig config;
  config.port = 0;
  auto server = TockServer::Start(config, RealClock());
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_FALSE(absl::StrContains((*server)->Banner(), "metrics:")) << (*server)->Banner();
}

}  // namespace
}  // namespace tock::server
