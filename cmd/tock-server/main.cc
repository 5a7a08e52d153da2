// tock-server: load the configuration, start the server core, serve until SIGINT/SIGTERM.
#include <pthread.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <chrono>
#include <iostream>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "cmd/tock-server/apply_flags.h"
#include "cmd/tock-server/server_flags.h"
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

// The hidden switches, for tests only; the flags meant for people are in server_flags.h.
struct HiddenFlags {
  std::optional<double> fault_rate;
  std::optional<uint64_t> fault_seed;
  bool hang_after_history_upload = false;
};

void DescribeApp(CLI::App& app) {
  app.footer(
      "Examples:\n"
      "  tock-server                              # in-memory database on 127.0.0.1:7233\n"
      "  tock-server --db-file tock.db --port 7233\n"
      "  tock-server --postgres-url postgresql://tock@db.example.com:5432/tock --port 7233\n"
      "  tock-server --config /etc/tock/server.yaml\n"
      "  tock-server --metrics-port 9090 --log-level debug --log-format json\n"
      "  tock-server --db-file tock.db --http-port 8080   # timers over HTTP/JSON too\n"
      "  tock-server --db-file tock.db --sqlite-synchronous normal   # faster; not power-safe\n");
}

void AddHiddenFlags(CLI::App& app, HiddenFlags& hidden) {
  // Testing only, hence hidden: make this share of store calls fail (docs/server.md, the
  // "Testing only" block of its configuration reference).
  app.add_option("--persistence-fault-rate", hidden.fault_rate)->group("");
  app.add_option("--persistence-fault-seed", hidden.fault_seed)->group("");
  app.add_flag("--as-tock-start-dev", as_start_dev)->group("");
#ifdef TOCK_FAULT_POINTS
  // Only in tock-server-faults, the tests' build of this file: stop the archiver for good
  // right after a history upload, so a test can kill -9 the server exactly there.
  app.add_flag("--hang-after-history-upload", hidden.hang_after_history_upload)->group("");
#endif
}

// The configuration: the file, the flags over it, the hidden switches; checked here as well
// as at start, so that a bad log setting is reported with its key.
absl::StatusOr<tock::server::ServerConfig> BuildConfig(const tock::server::ServerFlags& flags,
                                                       const HiddenFlags& hidden) {
  absl::StatusOr<tock::server::ServerConfig> config = tock::server::ConfigFromFlags(flags);
  if (!config.ok()) return config.status();
  if (hidden.fault_rate) config->persistence.fault_injection.rate = *hidden.fault_rate;
  if (hidden.fault_seed) config->persistence.fault_injection.seed = *hidden.fault_seed;
  // A development server's timer callbacks may reach this machine (a receiver on localhost).
  if (as_start_dev) tock::server::AllowLoopbackCallbacks(*config);
  // A development server serves Temporal's HTTP API (and the timer API) on Temporal's port,
  // or any free one when that is taken, unless told otherwise.
  if (as_start_dev && !config->timer_http.has_value()) {
    config->timer_http = tock::server::HttpEndpointConfig{config->ip, tock::server::kTemporalHttpPort, true};
  }
#ifdef TOCK_FAULT_POINTS
  if (hidden.hang_after_history_upload) {
    config->fault_points.after_history_upload = [](const std::string& run_id) {
      std::cerr << "fault point: history of run " << run_id
                << " archived; the archiver stops here for good" << std::endl;
      while (true) std::this_thread::sleep_for(std::chrono::hours(1));
    };
  }
#endif
  if (absl::Status s = config->Validate(); !s.ok()) return s;
  return config;
}

void PrintBanner(const tock::server::TockServer& server) {
  std::cout << server.Banner();
  if (as_start_dev) {
    const std::string address = server.address();
    std::cout << "\n"
              << "Try, in another terminal:\n"
              << "  tock --address " << address << " namespace register orders --retention 3d\n"
              << "  tock --address " << address << " namespace describe orders\n"
              << "  tock --address " << address << " namespace list\n"
              << "  tock --address " << address << " cluster describe\n"
              << "Press Ctrl-C to stop.\n";
  }
  std::cout << std::flush;
}

// Starts the server, prints the banner and serves until SIGINT or SIGTERM.
int Serve(const tock::server::ServerConfig& config) {
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

  absl::StatusOr<std::unique_ptr<tock::server::TockServer>> server =
      tock::server::TockServer::Start(config, env);
  if (!server.ok()) {
    return Fail(server.status());
  }
  PrintBanner(**server);

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

}  // namespace

int main(int argc, char** argv) {
  // Debian builds Abseil without NDEBUG, which leaves absl::Mutex's deadlock detection on:
  // every lock of gRPC's mutexes then updates a global lock graph (a few percent of the
  // server's time in profiles). It is a debugging aid, not a safety net; off here.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  CLI::App app{"tock-server: the Tock server core (Temporal gRPC API; embedded SQLite or "
               "PostgreSQL)",
               "tock-server"};
  DescribeApp(app);
  tock::server::ServerFlags flags;
  tock::server::AddServerFlags(app, flags);
  HiddenFlags hidden;
  AddHiddenFlags(app, hidden);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every other parse error is a usage error (exit 2).
    return app.exit(e) == 0 ? 0 : 2;
  }
  absl::StatusOr<tock::server::ServerConfig> config = BuildConfig(flags, hidden);
  if (!config.ok()) {
    return Fail(config.status());
  }
  return Serve(*config);
}
