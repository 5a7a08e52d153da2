// tock-server: load the configuration, start the server core, serve until SIGINT/SIGTERM.
#include <pthread.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <chrono>
#include <iostream>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "cmd/tock-server/tls_flags.h"
#include "cmd/tock/exit_codes.h"
#include "lib/common/clock.h"
#include "lib/common/env.h"
#include "lib/common/log.h"
#include "lib/common/metrics.h"
#include "server-core/rpc/grpc_log.h"
#include "server-core/server.h"

namespace {

// Exit codes, as for the CLI (DESIGN.md): 2 bad configuration, 4 cannot listen or reach the
// database, 1 otherwise.
int ServerExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
      return 2;
    case absl::StatusCode::kNotFound:
      return 3;
    case absl::StatusCode::kUnavailable:
      return 4;
    default:
      return 1;
  }
}

// `tock server start-dev` execs this binary with --as-tock-start-dev (hidden): it then speaks
// as that command always has: "error: ..." with the CLI's exit codes, hints for a first
// session after the banner, "Shutting down" when stopped.
bool as_start_dev = false;

int Fail(const absl::Status& status) {
  if (as_start_dev) {
    std::cerr << "error: " << status.message() << "\n";
    return tock::cli::ExitCodeFor(status);
  }
  std::cerr << "tock-server: " << status.message() << "\n";
  return ServerExitCodeFor(status);
}

}  // namespace

int main(int argc, char** argv) {
  // Debian builds Abseil without NDEBUG, which leaves absl::Mutex's deadlock detection on:
  // every lock of gRPC's mutexes then updates a global lock graph (a few percent of the
  // server's time in profiles). It is a debugging aid, not a safety net; off here.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  CLI::App app{"tock-server: the Tock server core (Temporal gRPC API; embedded SQLite or "
               "PostgreSQL)",
               "tock-server"};
  app.footer(
      "Examples:\n"
      "  tock-server                              # in-memory database on 127.0.0.1:7233\n"
      "  tock-server --db-file tock.db --port 7233\n"
      "  tock-server --postgres-url postgresql://tock@db.example.com:5432/tock --port 7233\n"
      "  tock-server --config /etc/tock/server.yaml\n"
      "  tock-server --metrics-port 9090 --log-level debug --log-format json\n"
      "  tock-server --db-file tock.db --http-port 8080   # timers over HTTP/JSON too\n");
  std::string config_path;
  std::optional<int> port;
  std::optional<std::string> ip;
  std::optional<std::string> db_file;
  std::vector<std::string> namespaces;
  app.add_option("--config", config_path, "YAML configuration file")->check(CLI::ExistingFile);
  app.add_option("--port", port, "Port to listen on (0: any free port); overrides the config");
  app.add_option("--ip", ip, "Address to listen on; overrides the config");
  auto* db_file_option = app.add_option(
      "--db-file", db_file,
      "SQLite database file (default: in memory, at most 2 GiB); overrides the config");
  std::optional<std::string> postgres_url;
  app.add_option("--postgres-url", postgres_url,
                 "Store everything in this PostgreSQL database "
                 "(postgresql://USER@HOST:PORT/DB; keep a password in ~/.pgpass or PGPASSWORD); "
                 "several hosts may share it; sets persistence.engine to postgres")
      ->excludes(db_file_option);
  app.add_option("--namespace", namespaces, "Namespace to register at start (repeatable)");
  std::optional<std::string> archival_dir;
  app.add_option("--archival-dir", archival_dir,
                 "Archive histories and visibility records to this directory (file store); "
                 "new namespaces archive by default");
  bool time_skipping = false;
  app.add_flag(
      "--enable-time-skipping", time_skipping,
      "Allow AdminService.AdvanceTime (`tock server advance-time`): development and tests only");
  std::optional<std::string> replication_faults_file;
  app.add_option("--replication-faults-file", replication_faults_file,
                 "Tests only: read replication faults (pause, drop_workflow_id, "
                 "fail_workflow_ids, replay, tasks_per_pull) from this JSON file before each history "
                 "replication pull; without this flag none can be set");
  std::optional<std::string> dc_redirection_policy;
  app.add_option("--dc-redirection-policy", dc_redirection_policy,
                 "Calls on a global namespace active in another cluster: noop (run here; the "
                 "default), selected-apis-forwarding (start, signal, update, cancel, terminate, "
                 "reset, delete and query go to the active cluster) or all-apis-forwarding "
                 "(every namespaced call); overrides the config")
      ->check(CLI::IsMember({"noop", "selected-apis-forwarding", "all-apis-forwarding"}));
  std::optional<int> metrics_port;
  app.add_option("--metrics-port", metrics_port,
                 "Serve Prometheus metrics at http://127.0.0.1:PORT/metrics (0: any free port; "
                 "the banner shows it); overrides the config. Off unless given here or in the "
                 "config");
  std::optional<int> http_port;
  app.add_option("--http-port", http_port,
                 "Serve the timer service's HTTP/JSON API at http://IP:PORT/api/v1/timers/"
                 "create|get|update|delete|list, IP that of --ip (0: any free port; the banner "
                 "shows it); overrides the config's timers.http. Off unless given here or there");
  tock::server::TlsFlags tls_flags;
  tls_flags.Add(app);
  std::optional<std::string> log_level;
  std::optional<std::string> log_format;
  std::optional<std::string> log_file;
  app.add_option("--log-level", log_level, "debug, info (default), warn, error or off")
      ->check(CLI::IsMember({"debug", "info", "warn", "warning", "error", "off"}));
  app.add_option("--log-format", log_format, "text (default) or json: one object per line")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_option("--log-file", log_file, "Append the log to this file instead of stderr");
  // Testing only, hence hidden: make this share of store calls fail (see the README).
  std::optional<double> fault_rate;
  std::optional<uint64_t> fault_seed;
  app.add_option("--persistence-fault-rate", fault_rate)->group("");
  app.add_option("--persistence-fault-seed", fault_seed)->group("");
  app.add_flag("--as-tock-start-dev", as_start_dev)->group("");
#ifdef TOCK_FAULT_POINTS
  // Only in tock-server-faults, the tests' build of this file: stop the archiver for good
  // right after a history upload, so a test can kill -9 the server exactly there.
  bool hang_after_history_upload = false;
  app.add_flag("--hang-after-history-upload", hang_after_history_upload)->group("");
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every other parse error is a usage error (exit 2).
    return app.exit(e) == 0 ? 0 : 2;
  }

  tock::server::ServerConfig config;
  if (!config_path.empty()) {
    absl::StatusOr<tock::server::ServerConfig> loaded = tock::server::LoadServerConfig(config_path);
    if (!loaded.ok()) {
      return Fail(loaded.status());
    }
    config = *loaded;
  }
  if (port) config.port = *port;
  if (ip) config.ip = *ip;
  if (db_file) config.persistence.sqlite_path = *db_file;
  if (postgres_url) {
    config.persistence.engine = "postgres";
    config.persistence.postgres_url = *postgres_url;
    config.persistence.sqlite_path.clear();  // the flag picks the database, over the file
  }
  if (time_skipping) config.time_skipping = true;
  if (replication_faults_file) config.replication_faults_file = *replication_faults_file;
  if (dc_redirection_policy) config.dc_redirection_policy = *dc_redirection_policy;
  if (archival_dir) config.archival.UseDirectory(*archival_dir);
  config.namespaces.insert(config.namespaces.end(), namespaces.begin(), namespaces.end());
  if (metrics_port) {
    if (!config.metrics) config.metrics.emplace();
    config.metrics->port = *metrics_port;
  }
  if (http_port) {
    if (!config.timer_http) {
      config.timer_http.emplace();
      config.timer_http->ip = config.ip;
    }
    config.timer_http->port = *http_port;
  }
  tls_flags.ApplyTo(config.tls);
  if (log_level) config.log.level = *log_level;
  if (log_format) config.log.format = *log_format;
  if (log_file) config.log.file = *log_file;
  if (fault_rate) config.persistence.fault_injection.rate = *fault_rate;
  if (fault_seed) config.persistence.fault_injection.seed = *fault_seed;
  // A development server's timer callbacks may reach this machine (a receiver on localhost).
  if (as_start_dev) tock::server::AllowLoopbackCallbacks(config);

  // Checked here as well as at start, so that a bad log setting is reported with its key.
  if (absl::Status s = config.Validate(); !s.ok()) {
    return Fail(s);
  }
  absl::StatusOr<std::unique_ptr<tock::Logger>> logger = tock::server::MakeLogger(config.log);
  if (!logger.ok()) {
    return Fail(logger.status());
  }
  // Metrics only when asked for: otherwise every handle is a disabled one (one branch).
  std::unique_ptr<tock::MetricsRegistry> metrics = config.metrics
                                                       ? std::make_unique<tock::MetricsRegistry>()
                                                       : tock::MetricsRegistry::Disabled();
  const tock::Env env{tock::RealClock(), **logger, *metrics};

  // gRPC's own stderr lines (one per refused TLS handshake) bounded: server-core/rpc/grpc_log.h.
  tock::server::rpc::InstallBoundedGrpcLog();

  // Block the stop signals in every thread (gRPC's included) and wait for them here.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

#ifdef TOCK_FAULT_POINTS
  if (hang_after_history_upload) {
    config.fault_points.after_history_upload = [](const std::string& run_id) {
      std::cerr << "fault point: history of run " << run_id
                << " archived; the archiver stops here for good" << std::endl;
      while (true) std::this_thread::sleep_for(std::chrono::hours(1));
    };
  }
#endif
  absl::StatusOr<std::unique_ptr<tock::server::TockServer>> server =
      tock::server::TockServer::Start(config, env);
  if (!server.ok()) {
    return Fail(server.status());
  }
  std::cout << (*server)->Banner();
  if (as_start_dev) {
    const std::string address = (*server)->address();
    std::cout << "\n"
              << "Try, in another terminal:\n"
              << "  tock --address " << address << " namespace register orders --retention 3d\n"
              << "  tock --address " << address << " namespace describe orders\n"
              << "  tock --address " << address << " namespace list\n"
              << "  tock --address " << address << " cluster describe\n"
              << "Press Ctrl-C to stop.\n";
  }
  std::cout << std::flush;

  int signal = 0;
  sigwait(&stop_signals, &signal);
  if (as_start_dev) {
    std::cerr << "\nShutting down\n";
  } else {
    (*logger)->Info("signal received; shutting down",
                    {{"signal", signal == SIGINT ? "SIGINT" : "SIGTERM"}});
  }
  (*server)->Shutdown();
  return 0;
}
