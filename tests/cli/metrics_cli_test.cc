// tock-server observed from outside: /metrics scraped over HTTP after real calls and checked
// by Debian's promtool, a real Prometheus server scraping it, the log flags, and a server
// running under injected persistence faults that keeps serving.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "tests/cli/cli_fixture.h"
#include "tests/support/http_get.h"
#include "tests/support/metrics_scrape.h"

extern char** environ;

namespace tock::testing {
namespace {

// The value of one series in a text exposition ("name{labels}"), or -1 when absent.
double SeriesValue(const std::string& exposition, const std::string& series) {
  std::istringstream in(exposition);
  for (std::string line; std::getline(in, line);) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::stod(line.substr(series.size() + 1));
    }
  }
  return -1;
}

// Runs `args` until it exits with one of `accepted` (a call may meet an injected fault),
// at most `attempts` times; the last result.
ProcessResult Retry(const std::function<ProcessResult()>& run, std::vector<int> accepted,
                    int attempts = 8) {
  ProcessResult r;
  for (int i = 0; i < attempts; ++i) {
    r = run();
    if (std::find(accepted.begin(), accepted.end(), r.exit_code) != accepted.end()) break;
  }
  return r;
}

TEST_F(CliTest, MetricsCountTheCallsMadeAndPromtoolFindsNothingToFix) {
  StartServer({"--metrics-port", "0"});
  const std::string url = MetricsUrl(*server_);
  ASSERT_FALSE(url.empty()) << "no metrics line in the banner:\n" << server_->banner();
  ASSERT_NO_FATAL_FAILURE(Register({"orders", "--retention", "3d"}));
  HttpResult before = HttpGet(url);
  ASSERT_EQ(before.status, 200) << before.error;
  for (int i = 0; i < 3; ++i) TockJson({"namespace", "describe", "orders"});
  ExpectError({"namespace", "describe", "missing"}, kExitNotFound,
              "Namespace missing is not found.");
  ASSERT_EQ(Tock({"workflow", "start", "--type", "t", "--task-queue", "q", "--id", "w1"}).exit_code,
            kExitOk);

  HttpResult scrape = HttpGet(url);
  ASSERT_EQ(scrape.status, 200) << scrape.error;
  EXPECT_EQ(scrape.content_type, "text/plain; version=0.0.4; charset=utf-8");
  const std::string& text = scrape.body;
  // How far a series moved between the two scrapes (absent before counts as 0).
  auto moved = [&](const std::string& series) {
    return SeriesValue(text, series) - std::max(0.0, SeriesValue(before.body, series));
  };
  EXPECT_GE(SeriesValue(before.body, "service_requests_total{operation=\"RegisterNamespace\"}"), 1)
      << before.body;
  EXPECT_EQ(moved("service_requests_total{operation=\"RegisterNamespace\"}"), 0);
  EXPECT_EQ(moved("service_requests_total{operation=\"DescribeNamespace\"}"), 4) << text;
  EXPECT_EQ(moved("service_latency_count{operation=\"DescribeNamespace\"}"), 4);
  EXPECT_EQ(moved("service_requests_total{operation=\"StartWorkflowExecution\"}"), 1);
  EXPECT_EQ(moved("service_error_with_type_total{error_type=\"NotFound\",operation="
                  "\"DescribeNamespace\"}"),
            1);
  EXPECT_EQ(
      SeriesValue(text, "service_requests_total{operation=\"ListArchivedWorkflowExecutions\"}"), 0)
      << "methods not called are there, at zero";
  EXPECT_GE(SeriesValue(text, "persistence_requests_total{operation=\"CreateNamespace\"}"), 2)
      << "default and orders";
  EXPECT_GE(SeriesValue(text, "persistence_requests_total{operation=\"WriteExecution\"}"), 1);
  EXPECT_EQ(FamilySum(text, "persistence_injected_faults_total"), 0) << "no faults unless asked";

  if (!std::filesystem::exists(PROMTOOL_BIN)) GTEST_SKIP() << "promtool not installed";
  ProcessResult lint = RunProcess({PROMTOOL_BIN, "check", "metrics"}, {}, text);
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
  EXPECT_EQ(lint.out + lint.err, "") << "promtool's lint has complaints";
}

TEST_F(CliTest, WithoutMetricsPortThereIsNoMetricsEndpoint) {
  StartServer();
  EXPECT_EQ(MetricsUrl(*server_), "") << server_->banner();
}

TEST_F(CliTest, LogFlagsChooseTheLevelAndJsonLines) {
  StartServer({"--log-level", "debug", "--log-format", "json"});
  ExpectError({"namespace", "describe", "nope"}, kExitNotFound, "Namespace nope is not found.");
  ASSERT_EQ(server_->Stop(), 0);
  // Every log line is a JSON object (lines the logger did not write are left aside).
  std::vector<json> entries;
  std::istringstream lines(server_->stderr_text());
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != '{') continue;
    entries.push_back(json::parse(line, nullptr, false));
    EXPECT_TRUE(entries.back().is_object()) << line;
  }
  auto find = [&](const std::string& msg) {
    for (const json& e : entries) {
      if (e.value("msg", "") == msg) return e;
    }
    return json();
  };
  EXPECT_EQ(At(find("tock-server started"), "/level"), "info") << server_->stderr_text();
  const json refused = find("request refused");
  EXPECT_EQ(At(refused, "/level"), "debug") << server_->stderr_text();
  EXPECT_EQ(At(refused, "/namespace"), "nope");
  EXPECT_EQ(At(refused, "/code"), "NotFound");
  EXPECT_EQ(At(refused, "/method"),
            "temporal.api.workflowservice.v1.WorkflowService/DescribeNamespace");
  EXPECT_EQ(At(find("signal received; shutting down"), "/signal"), "SIGTERM");
  EXPECT_FALSE(find("tock-server stopped").is_null());
  for (const json& e : entries) EXPECT_TRUE(e.contains("ts")) << e.dump();

  // At warn, none of those; a bad level is a usage error.
  ASSERT_NO_FATAL_FAILURE(StartServer({"--log-level", "warn"}));
  ExpectError({"namespace", "describe", "nope"}, kExitNotFound, "Namespace nope is not found.");
  ASSERT_EQ(server_->Stop(), 0);
  EXPECT_EQ(server_->stderr_text().find("tock-server started"), std::string::npos);
  EXPECT_EQ(server_->stderr_text().find("request refused"), std::string::npos);
  ProcessResult bad = RunProcess({TOCK_SERVER_BIN, "--port", "0", "--log-level", "loud"});
  EXPECT_EQ(bad.exit_code, kExitUsage) << bad.err;
}

// Debian's prometheus, as a throwaway process: a config scraping `target` every second, its
// database in `dir`, listening on a free port of 127.0.0.1. Stopped (SIGTERM, then SIGKILL)
// by its pid at destruction.
class PrometheusProcess {
 public:
  PrometheusProcess(const TempDir& dir, const std::string& target) : dir_(dir) {
    port_ = ClosedLocalPort();
    const std::string config =
        dir.Write("prometheus.yml",
                  "global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\n"
                  "scrape_configs:\n"
                  "  - job_name: tock\n"
                  "    static_configs:\n"
                  "      - targets: ['" +
                      target + "']\n");
    std::filesystem::create_directories(dir.path() / "tsdb");
    std::vector<std::string> args = {
        PROMETHEUS_BIN, "--config.file=" + config, "--storage.tsdb.path=" + dir.File("tsdb"),
        "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string log = dir.File("prometheus.log");
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (posix_spawn(&pid_, PROMETHEUS_BIN, &actions, nullptr, argv.data(), environ) != 0) pid_ = 0;
    posix_spawn_file_actions_destroy(&actions);
  }

  ~PrometheusProcess() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }

  bool started() const { return pid_ > 0; }

  // The result vector of an instant query ([] while there is none, null on error).
  json Query(const std::string& promql) const {
    HttpResult r = HttpGet(
        "http://127.0.0.1:" + std::to_string(port_) + "/api/v1/query?query=" + UrlEncode(promql),
        std::chrono::seconds(5));
    if (r.status != 200) return json();
    json parsed = json::parse(r.body, nullptr, false);
    if (parsed.is_discarded() || parsed.value("status", "") != "success") return json();
    return At(parsed, "/data/result");
  }

  std::string log() const {
    std::ifstream in(dir_.File("prometheus.log"));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  const TempDir& dir_;
  pid_t pid_ = 0;
  int port_ = 0;
};

// The first sample value of a query's result as a number, or -1.
double FirstValue(const json& result) {
  const json value = At(result, "/0/value/1");
  return value.is_string() ? std::stod(value.get<std::string>()) : -1;
}

TEST_F(CliTest, APrometheusServerScrapesTockServer) {
  if (!std::filesystem::exists(PROMETHEUS_BIN)) GTEST_SKIP() << "prometheus not installed";
  StartServer({"--metrics-port", "0"});
  const std::string url = MetricsUrl(*server_);
  ASSERT_FALSE(url.empty()) << server_->banner();
  const std::string target = url.substr(7, url.size() - 7 - std::string("/metrics").size());
  ASSERT_NO_FATAL_FAILURE(Register({"scraped"}));

  TempDir prometheus_dir;
  PrometheusProcess prometheus(prometheus_dir, target);
  ASSERT_TRUE(prometheus.started());
  // Bounded: Prometheus starts in a second or two and scrapes every second.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  double up = -1;
  double registered = -1;
  while (std::chrono::steady_clock::now() < deadline && (up != 1 || registered < 1)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    up = FirstValue(prometheus.Query("up{job=\"tock\"}"));
    registered = FirstValue(
        prometheus.Query("service_requests_total{job=\"tock\",operation=\"RegisterNamespace\"}"));
  }
  EXPECT_EQ(up, 1) << "prometheus log:\n" << prometheus.log();
  EXPECT_EQ(registered, 1) << "prometheus log:\n" << prometheus.log();
  // Histograms arrive whole: a quantile over the latency buckets is a number.
  const json quantile = prometheus.Query(
      "histogram_quantile(0.5, "
      "service_latency_bucket{job=\"tock\",operation=\"RegisterNamespace\"})");
  EXPECT_GT(FirstValue(quantile), 0) << quantile.dump();
}

TEST_F(CliTest, UnderInjectedPersistenceFaultsErrorsShowAndTheServerKeepsServing) {
  const std::string config =
      dir_.Write("faults.yaml", "persistence:\n  fault_injection: {rate: 0.05, seed: 11}\n");
  StartServer({"--config", config, "--metrics-port", "0", "--log-level", "debug"});
  const std::string url = MetricsUrl(*server_);
  ASSERT_FALSE(url.empty()) << server_->banner();

  // Namespace calls and workflow starts, each retried while it meets a fault: exit 4 is
  // UNAVAILABLE or DEADLINE_EXCEEDED; after a timeout that did write, a retry finds the
  // namespace or workflow already there (exit 5). Which store call draws a fault depends on
  // timing (background work draws too), so rounds go on until both kinds were injected and
  // some reached the client, within a bound.
  int failed_attempts = 0;
  int namespaces = 0;
  int workflows = 0;
  HttpResult scrape;
  auto enough = [&] {
    scrape = HttpGet(url);
    return scrape.status == 200 && failed_attempts > 0 &&
           FamilySum(scrape.body, "persistence_injected_faults_total", "unavailable") > 0 &&
           FamilySum(scrape.body, "persistence_injected_faults_total", "timeout_after") > 0;
  };
  for (int round = 0; round < 10 && (round < 2 || !enough()); ++round) {
    for (int i = 0; i < 6; ++i, ++namespaces) {
      const std::string name = "ns" + std::to_string(namespaces);
      ProcessResult r = Retry(
          [&] {
            ProcessResult attempt = Tock({"namespace", "register", name});
            if (attempt.exit_code == kExitUnavailable) ++failed_attempts;
            return attempt;
          },
          {kExitOk, kExitConflict});
      EXPECT_TRUE(r.exit_code == kExitOk || r.exit_code == kExitConflict) << Describe({name}, r);
      Retry([&] { return Tock({"namespace", "describe", name}); }, {kExitOk});
    }
    for (int i = 0; i < 15; ++i, ++workflows) {
      const std::string id = "wf" + std::to_string(workflows);
      ProcessResult r = Retry(
          [&] {
            ProcessResult attempt =
                Tock({"workflow", "start", "--type", "t", "--task-queue", "q", "--id", id});
            if (attempt.exit_code == kExitUnavailable) ++failed_attempts;
            return attempt;
          },
          {kExitOk, kExitConflict});
      EXPECT_TRUE(r.exit_code == kExitOk || r.exit_code == kExitConflict) << Describe({id}, r);
    }
  }

  scrape = HttpGet(url);
  ASSERT_EQ(scrape.status, 200) << scrape.error;
  const double injected = FamilySum(scrape.body, "persistence_injected_faults_total");
  EXPECT_GT(injected, 0) << scrape.body;
  EXPECT_GT(FamilySum(scrape.body, "persistence_injected_faults_total", "unavailable"), 0);
  EXPECT_GT(FamilySum(scrape.body, "persistence_injected_faults_total", "timeout_after"), 0);
  EXPECT_GE(FamilySum(scrape.body, "persistence_errors_total"), injected);
  EXPECT_GT(failed_attempts, 0) << "some calls reached the client as errors";
  EXPECT_GT(FamilySum(scrape.body, "service_error_with_type_total", "Unavailable") +
                FamilySum(scrape.body, "service_error_with_type_total", "DeadlineExceeded"),
            0);

  // Still serving: every namespace and workflow is there (reads retried past faults).
  for (int i = 0; i < namespaces; ++i) {
    ProcessResult r = Retry(
        [&] {
          return Tock({"namespace", "describe", "ns" + std::to_string(i), "-o", "json"});
        },
        {kExitOk});
    EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  }
  for (int i = 0; i < workflows; ++i) {
    ProcessResult r = Retry(
        [&] {
          return Tock({"workflow", "describe", "--workflow-id", "wf" + std::to_string(i)});
        },
        {kExitOk});
    EXPECT_EQ(r.exit_code, kExitOk) << "wf" << i << ": " << r.err;
  }
  EXPECT_TRUE(server_->running());
  EXPECT_EQ(server_->Stop(), 0) << server_->stderr_text();
  EXPECT_NE(server_->stderr_text().find("injected persistence fault"), std::string::npos);
}

}  // namespace
}  // namespace tock::testing
