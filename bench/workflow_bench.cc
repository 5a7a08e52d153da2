// Workflow engine benchmark (issue 3), all in one run against one tock-server on a database
// file: a trivial worker speaking the API directly runs N one-activity workflows
// (start -> workflow task -> activity -> workflow task -> complete) and reports workflows/s,
// state transitions/s and p50/p99 start-to-close latency, next to a raw SQLite loop making
// the same number of durable commits (WAL, and the server's synchronous setting). It does
// so for both settings of persistence.sqlite.synchronous, full (tock-server's default: a
// commit answered survives power loss) and normal (a crash of the process only), unless
// --synchronous names one. History fetches are measured by history_bench.
//
// With --postgres ADMIN_URL it measures four ways in one run (issue 11): the server on SQLite
// against the raw SQLite loop; one host, and N hosts sharing the shards (--hosts, default 3),
// each on a fresh database of that PostgreSQL server (--postgres-url), against a raw
// PostgreSQL loop of the same number of single-row commits (BEGIN; INSERT; COMMIT) over 16
// connections on the same server (so the same durability settings); and N hosts against one.
//
// Usage: workflow_bench TOCK_SERVER [workflows] [pollers per kind] [--archive |
//        --observability | --faults RATE | --eager | --handler-threads | --partitions |
//        --versioned]
//        [--rounds N] [--postgres ADMIN_URL [--hosts N]] [--synchronous full|normal|both]
//        [--sync-delay D]
//   --sync-delay D (the default run): a slower disk for the server and the raw loop alike,
//   each sync of a database file waiting D first (persistence.fault_injection.sync_delay),
//   to measure many transitions per fsync where a flush costs milliseconds;
//   --eager: alternates rounds of a server that hands activities back eagerly (the default)
//   and one configured not to (history.eager_activities: false), and prints the ratio;
//   --handler-threads: alternates rounds of a server at its defaults (calls that wait for
//   their commit run on 32 threads of its own) and one whose calls all run on gRPC's
//   threads (persistence.sqlite.handler_threads: 0), and prints the ratio;
//   --observability: alternates rounds of a server with logging at info and metrics on
//   (--log-level info --metrics-port 0) and one with both off, and prints the ratio;
//   --faults RATE: alternates rounds with RATE of persistence calls failing
//   (--persistence-fault-rate) and without, and prints the ratio;
//   --partitions (with --postgres): alternates rounds of N hosts whose workers' polls wait on
//   their host's partition of the queue first (the default) and N hosts that send every
//   poll to the queue's host (membership.partition_wait: 0s), and prints the ratio;
//   --partition-wait D sets the first ones' wait (the server's default otherwise);
//   --versioned: alternates rounds of workers of a Worker Deployment version (current, their
//   runs pinned to it: matching routes each task by version) and unversioned workers, and
//   prints the ratio (issue 37: at least 0.9).
// The worker retries UNAVAILABLE and DEADLINE_EXCEEDED as the SDKs do (a call that failed
// after its change was made then answers NOT_FOUND, which counts as done).
#include <fcntl.h>
#include <libpq-fe.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/synchronization/mutex.h"

#include "bench/bench_server.h"
#include "bench/bench_worker.h"
#include "bench/server_counters.h"
#include "lib/common/duration.h"
#include "server-core/persistence/sqlite/slow_sync_vfs.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"
#include "tock/admin/v1/service.grpc.pb.h"

extern char** environ;

namespace {

namespace wf = temporal::api::workflowservice::v1;
using Clock = std::chrono::steady_clock;
using tock::bench::Percentile;
using Stub = wf::WorkflowService::Stub;

// Seconds for `commits` one-row commits to a fresh database file in a temporary directory
// (removed after). `synchronous`: "full" or "normal", as the server's --sqlite-synchronous.
double RawSqliteCommits(int commits, const std::string& synchronous) {
  char dir_template[] = "/tmp/tock-bench-raw-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  const std::string path = dir + "/raw.db";
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  const std::string setup = "PRAGMA journal_mode=WAL; PRAGMA synchronous=" + synchronous +
                            "; CREATE TABLE t(id INTEGER PRIMARY KEY, data BLOB)";
  sqlite3_exec(db, setup.c_str(), nullptr, nullptr, nullptr);
  sqlite3_stmt* insert = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO t(data) VALUES (?)", -1, &insert, nullptr);
  std::string blob(400, 'x');  // about one mutable state
  auto start = Clock::now();
  for (int i = 0; i < commits; ++i) {
    sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    sqlite3_bind_blob(insert, 1, blob.data(), static_cast<int>(blob.size()), SQLITE_STATIC);
    sqlite3_step(insert);
    sqlite3_reset(insert);
    sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  sqlite3_finalize(insert);
  sqlite3_close(db);
  std::filesystem::remove_all(dir);
  return seconds;
}

// `admin_url` (postgresql://USER@HOST:PORT/DB) with its database replaced by `database`.
std::string WithDatabase(const std::string& admin_url, const std::string& database) {
  const size_t scheme = admin_url.find("://");
  const size_t slash = admin_url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  return (slash == std::string::npos ? admin_url : admin_url.substr(0, slash)) + "/" + database;
}

// Runs `sql` on a new connection to `url`; false (with the error on stderr) if it fails.
bool PostgresExec(const std::string& url, const std::string& sql) {
  PGconn* conn = PQconnectdb(url.c_str());
  PGresult* r = PQstatus(conn) == CONNECTION_OK ? PQexec(conn, sql.c_str()) : nullptr;
  const bool ok = r != nullptr && PQresultStatus(r) == PGRES_COMMAND_OK;
  if (!ok) std::cerr << sql << ": " << PQerrorMessage(conn);
  PQclear(r);
  PQfinish(conn);
  return ok;
}

// The raw PostgreSQL baseline: `connections` connections committing one-row transactions
// (BEGIN; INSERT of about one mutable state; COMMIT: three round trips, as a store's
// transaction has at least) until `commits` are done in all; returns the seconds taken.
double RawPostgresCommits(const std::string& url, int commits, int connections) {
  if (!PostgresExec(url, "CREATE TABLE raw_commits(id BIGSERIAL PRIMARY KEY, data BYTEA)")) {
    return 0;
  }
  std::vector<PGconn*> conns;
  for (int i = 0; i < connections; ++i) {
    PGconn* conn = PQconnectdb(url.c_str());
    PQclear(PQprepare(conn, "ins", "INSERT INTO raw_commits(data) VALUES ($1::bytea)", 1, nullptr));
    conns.push_back(conn);
  }
  const std::string blob(400, 'x');
  std::atomic<int> next{0};
  auto start = Clock::now();
  {
    std::vector<std::jthread> threads;
    for (PGconn* conn : conns) {
      threads.emplace_back([&, conn] {
        const char* values[] = {blob.data()};
        const int lengths[] = {static_cast<int>(blob.size())};
        const int formats[] = {1};
        while (next++ < commits) {
          PQclear(PQexec(conn, "BEGIN"));
          PQclear(PQexecPrepared(conn, "ins", 1, values, lengths, formats, 0));
          PQclear(PQexec(conn, "COMMIT"));
        }
      });
    }
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (PGconn* conn : conns) PQfinish(conn);
  return seconds;
}

// History shards of a database on PostgreSQL (one host or several: the same, so the two
// compare). Shard count is fixed when a database is first used.
constexpr int kPostgresShards = 16;

struct Round {
  int completed = 0;
  double seconds = 0;
  std::vector<double> latencies_ms;
  double archived_seconds = 0;
  // What the servers did during the load, summed over them (when counted).
  tock::bench::ServerCounters counters;
  double rate() const { return seconds > 0 ? completed / seconds : 0; }
};

// The counters of a round per workflow, in one line (issue 35's machine-independent figures).
void PrintCounters(const char* name, const Round& round) {
  const tock::bench::ServerCounters& c = round.counters;
  const double n = std::max(1, round.completed);
  std::printf("%s per workflow: %.2f transitions in %.2f transactions (%.2f per transaction), "
              "%.2f WAL pages (%.2f per transition), %.2f API calls, %.2f context switches "
              "per API call, %.2f host-to-host calls\n",
              name, c.transitions / n, c.transactions / n,
              c.transactions > 0 ? c.transitions / c.transactions : 0, c.wal_pages / n,
              c.transitions > 0 ? c.wal_pages / c.transitions : 0, c.api_calls / n,
              c.api_calls > 0 ? c.context_switches / c.api_calls : 0, c.host_calls / n);
}

// Waits until `hosts` hosts are alive in the membership and every shard is owned, unchanged
// over a second (the ring has settled); false after 60 s.
bool WaitForSettledRing(const std::string& address, size_t hosts) {
  auto admin = tock::admin::v1::AdminService::NewStub(tock::bench::OpenChannel(address));
  std::string last;
  auto last_change = Clock::now();
  for (const auto limit = Clock::now() + std::chrono::seconds(60); Clock::now() < limit;
       std::this_thread::sleep_for(std::chrono::milliseconds(100))) {
    grpc::ClientContext mctx, sctx;
    tock::admin::v1::ListClusterMembersResponse members;
    tock::admin::v1::ListShardsResponse shards;
    if (!admin->ListClusterMembers(&mctx, {}, &members).ok() ||
        !admin->ListShards(&sctx, {}, &shards).ok()) {
      continue;
    }
    std::string owners;
    bool unowned = false;
    for (const auto& shard : shards.shards()) {
      owners += shard.owner() + ",";
      unowned |= shard.owner().empty();
    }
    size_t alive = 0;
    int owned = 0;
    for (const auto& m : members.members()) {
      alive += m.alive();
      owned += m.shards_owned();
    }
    if (owners != last) {
      last = owners;
      last_change = Clock::now();
      continue;
    }
    if (alive == hosts && !unowned &&
        owned == shards.shards_size() && Clock::now() - last_change > std::chrono::seconds(1)) {
      return true;
    }
  }
  return false;
}

// `hosts` servers on a fresh database (a file; on PostgreSQL, when `postgres_admin` is not
// empty, a fresh database of that server, dropped after), `workflows` one-activity workflows
// through them. With several hosts (PostgreSQL only) the callers spread over them: starter
// k, workflow poller k and activity poller k+1 call host k modulo the count, so most calls
// reach a host that forwards them to the run's or the queue's owner.
Round RunRound(const std::string& binary, int workflows, int pollers, bool archive,
               const std::vector<std::string>& extra_args, const std::string& postgres_admin = "",
               int hosts = 1, bool count = true, const std::string& membership_yaml = "",
               const tock::bench::WorkerVersion& version = {}) {
  Round round;
  char dir_template[] = "/tmp/tock-bench-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  std::vector<std::string> server_args = {"--db-file", dir + "/tock.db"};
  // A name of its own per round: a database just dropped can linger for a moment.
  static int round_number = 0;
  const std::string database =
      "tock_bench_" + std::to_string(getpid()) + "_" + std::to_string(++round_number);
  if (!postgres_admin.empty()) {
    if (!PostgresExec(postgres_admin, "CREATE DATABASE " + database)) {
      std::filesystem::remove_all(dir);
      return round;
    }
    // kPostgresShards shards, so that every one of a few hosts owns some; membership as the
    // multi-host tests run it (a dead host is noticed within a second).
    std::FILE* config = std::fopen((dir + "/hosts.yaml").c_str(), "w");
    std::fprintf(config, "history:\n  shards: %d\nmembership:\n  heartbeat: 200ms\n  cutoff: 1s\n%s",
                 kPostgresShards, membership_yaml.c_str());
    std::fclose(config);
    server_args = {"--postgres-url", WithDatabase(postgres_admin, database), "--config",
                   dir + "/hosts.yaml"};
  }
  if (archive) server_args.insert(server_args.end(), {"--archival-dir", dir + "/archive"});
  server_args.insert(server_args.end(), extra_args.begin(), extra_args.end());
  // Counted: each server serves its metrics, read before and after the load.
  if (count) server_args.insert(server_args.end(), {"--metrics-port", "0"});
  std::vector<tock::bench::Server> servers;
  std::vector<std::unique_ptr<Stub>> stubs;
  auto stop = [&] {
    for (const auto& server : servers) kill(server.pid, SIGTERM);
    for (const auto& server : servers) waitpid(server.pid, nullptr, 0);
    std::filesystem::remove_all(dir);
    if (!postgres_admin.empty()) {
      PostgresExec(postgres_admin, "DROP DATABASE " + database + " WITH (FORCE)");
    }
  };
  for (int h = 0; h < hosts; ++h) {
    tock::bench::Server server =
        tock::bench::StartServer(binary, server_args, count ? "metrics" : "");
    if (server.pid == 0) {
      std::cerr << "tock-server did not start\n";
      stop();
      return round;
    }
    servers.push_back(server);
    stubs.push_back(wf::WorkflowService::NewStub(tock::bench::OpenChannel(server.address)));
  }
  if (hosts > 1 && !WaitForSettledRing(servers[0].address, hosts)) {
    std::cerr << "the " << hosts << " hosts did not settle their shards within 60 s\n";
    stop();
    return round;
  }
  auto stub_for = [&](int k) { return stubs[static_cast<size_t>(k) % stubs.size()].get(); };

  tock::bench::WorkflowLoad load;
  load.workflows = workflows;
  load.pollers = pollers;
  load.stub_for = stub_for;
  load.version = version;
  auto read_counters = [&] {
    tock::bench::ServerCounters sum;
    for (const auto& server : servers) sum += tock::bench::ReadServerCounters(server.pid, server.banner_value);
    return sum;
  };
  const tock::bench::ServerCounters before = count ? read_counters() : tock::bench::ServerCounters();
  const auto begin = Clock::now();
  tock::bench::LoadResult ran = tock::bench::RunWorkflows(load);
  if (count) round.counters = read_counters() - before;
  round.completed = ran.completed;
  round.seconds = ran.seconds;
  round.latencies_ms = std::move(ran.latencies_ms);

  // With archival: the archiver writes one visibility record file per closed run.
  if (archive) {
    auto count = [&] {
      size_t n = 0;
      std::error_code ec;
      for (auto it = std::filesystem::recursive_directory_iterator(dir + "/archive/visibility", ec);
           !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (it->path().extension() == ".visibility") ++n;
      }
      return n;
    };
    const auto archive_limit = Clock::now() + std::chrono::minutes(5);
    while (count() < static_cast<size_t>(workflows) && Clock::now() < archive_limit) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    round.archived_seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  }
  stop();
  return round;
}

double Median(std::vector<double> v) { return Percentile(std::move(v), 0.5); }

// What the transport alone allows on this machine: GetSystemInfo (no database, no engine)
// called by as many threads as a workflow round runs (8 starters and `pollers` of each
// kind), `calls` in all, against a fresh server on a database file; calls/s. Every state
// transition of a workflow is carried by one client call at least (6 calls, 6 transitions
// with eager activities), so no server can make more transitions/s than this on the same
// machine. Also the server's context switches per null call: the transport's own share of
// the switches per API call that the counters report for workflows.
struct NullCalls {
  double per_second = 0;
  double switches_per_call = 0;
};
NullCalls MeasureNullCalls(const std::string& binary, int pollers, int calls) {
  char dir_template[] = "/tmp/tock-bench-null-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  tock::bench::Server server = tock::bench::StartServer(binary, {"--db-file", dir + "/tock.db"});
  NullCalls out;
  if (server.pid != 0) {
    auto stub = wf::WorkflowService::NewStub(tock::bench::OpenChannel(server.address));
    std::atomic<int> next{0}, failed{0};
    const double switches_before = tock::bench::ContextSwitches(server.pid);
    const auto start = Clock::now();
    {
      std::vector<std::jthread> threads;
      for (int t = 0; t < 8 + 2 * pollers; ++t) {
        threads.emplace_back([&] {
          while (next++ < calls) {
            grpc::ClientContext ctx;
            wf::GetSystemInfoRequest req;
            wf::GetSystemInfoResponse resp;
            if (!stub->GetSystemInfo(&ctx, req, &resp).ok()) ++failed;
          }
        });
      }
    }
    // A failed call is not the transport's rate: the figure is then left out (0).
    if (failed == 0) {
      out.per_second = calls / std::chrono::duration<double>(Clock::now() - start).count();
      out.switches_per_call =
          (tock::bench::ContextSwitches(server.pid) - switches_before) / calls;
    } else {
      std::cerr << failed << " GetSystemInfo calls failed; no transport figure\n";
    }
    kill(server.pid, SIGTERM);
    waitpid(server.pid, nullptr, 0);
  }
  std::filesystem::remove_all(dir);
  return out;
}

// Alternates rounds of the two configurations (which goes first alternates too) and prints
// both medians and the ratio variant / baseline.
// On PostgreSQL (`postgres_admin`), `hosts` hosts, the two differing in their `membership:`
// lines instead.
int Compare(const std::string& binary, int workflows, int pollers, int rounds,
            const char* baseline_name, const std::vector<std::string>& baseline_args,
            const char* variant_name, const std::vector<std::string>& variant_args,
            bool count = true, const std::string& postgres_admin = "", int hosts = 1,
            const std::string& baseline_membership = "",
            const std::string& variant_membership = "",
            const tock::bench::WorkerVersion& variant_version = {}) {
  std::vector<double> base, variant;
  bool all = true;
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < 2; ++k) {
      const bool is_variant = (k == 0) == (r % 2 == 1);
      Round round = RunRound(binary, workflows, pollers, false,
                             is_variant ? variant_args : baseline_args, postgres_admin, hosts,
                             count, is_variant ? variant_membership : baseline_membership,
                             is_variant ? variant_version : tock::bench::WorkerVersion{});
      all &= round.completed == workflows;
      (is_variant ? variant : base).push_back(round.rate());
      std::printf("round %d  %-28s %d of %d, %.0f workflows/s\n", r + 1,
                  is_variant ? variant_name : baseline_name, round.completed, workflows,
                  round.rate());
      if (count) PrintCounters("  ", round);
    }
  }
  std::printf("%-34s %.0f workflows/s (median of %d)\n", baseline_name, Median(base), rounds);
  std::printf("%-34s %.0f workflows/s (median of %d)\n", variant_name, Median(variant), rounds);
  std::printf("ratio %s / %s   %.2f\n", variant_name, baseline_name, Median(variant) / Median(base));
  return all ? 0 : 1;
}

// State transitions per workflow as the server counted them (its commits; 6 for the
// one-activity workflow with eager activities), or 6 when the round was not counted.
double TransitionsPerWorkflow(const Round& round) {
  if (round.completed <= 0 || round.counters.transitions <= 0) return 6;
  return round.counters.transitions / round.completed;
}

struct Rates {
  std::vector<double> workflows_per_s, transitions_per_s, p50_ms, p99_ms;
  bool all_completed = true;
  void Add(const Round& round, int workflows) {
    all_completed &= round.completed == workflows;
    workflows_per_s.push_back(round.rate());
    transitions_per_s.push_back(round.rate() * TransitionsPerWorkflow(round));
    p50_ms.push_back(Percentile(round.latencies_ms, 0.5));
    p99_ms.push_back(Percentile(round.latencies_ms, 0.99));
  }
};

// The four figures of issue 11 in one run: the server on SQLite, one host on PostgreSQL and
// `hosts` hosts on PostgreSQL, each against the raw commit loop of its database; `rounds`
// rounds of each (in turn, so a slow spell of the machine hits them alike), medians.
int FourWay(const std::string& binary, int workflows, int pollers, const std::string& admin,
            int hosts, int rounds) {
  constexpr int kConnections = 16;
  const int transitions = workflows * 7;
  Rates sqlite, one, many;
  Round last_sqlite, last_one, last_many;  // the counters printed are the last round's
  std::vector<double> raw_sqlite, raw_postgres, null_calls;  // commits/s, calls/s
  for (int r = 0; r < rounds; ++r) {
    last_sqlite = RunRound(binary, workflows, pollers, false, {});
    sqlite.Add(last_sqlite, workflows);
    raw_sqlite.push_back(transitions / RawSqliteCommits(transitions, "full"));
    null_calls.push_back(MeasureNullCalls(binary, pollers, transitions).per_second);
    last_one = RunRound(binary, workflows, pollers, false, {}, admin, 1);
    one.Add(last_one, workflows);
    last_many = RunRound(binary, workflows, pollers, false, {}, admin, hosts);
    many.Add(last_many, workflows);
    const std::string database =
        "tock_bench_raw_" + std::to_string(getpid()) + "_" + std::to_string(r);
    if (!PostgresExec(admin, "CREATE DATABASE " + database)) return 1;
    const double seconds =
        RawPostgresCommits(WithDatabase(admin, database), transitions, kConnections);
    PostgresExec(admin, "DROP DATABASE " + database + " WITH (FORCE)");
    if (seconds <= 0) return 1;
    raw_postgres.push_back(transitions / seconds);
  }
  auto row = [&](const std::string& name, const Rates& rates) {
    std::printf("%-32s %9.0f %14.0f   %7.1f / %.1f ms\n", name.c_str(),
                Median(rates.workflows_per_s), Median(rates.transitions_per_s),
                Median(rates.p50_ms), Median(rates.p99_ms));
  };
  std::printf("%d one-activity workflows (%d durable state transitions), median of %d\n",
              workflows, transitions, rounds);
  std::printf("%-32s %9s %14s   %s\n", "", "workflows/s", "transitions/s",
              "start-to-close p50 / p99");
  row("tock-server, embedded SQLite", sqlite);
  row("tock-server, 1 host, PostgreSQL", one);
  row("tock-server, " + std::to_string(hosts) + " hosts, PostgreSQL", many);
  std::printf("%-32s %9s %14.0f   (WAL, synchronous=FULL as the server, one connection)\n",
              "raw SQLite commits", "", Median(raw_sqlite));
  std::printf("%-32s %9s %14.0f   (BEGIN; INSERT; COMMIT, %d connections)\n",
              "raw PostgreSQL commits", "", Median(raw_postgres), kConnections);
  std::printf("%-32s %9s %14.0f   (GetSystemInfo, same threads: no engine, no database)\n",
              "null calls to tock-server", "", Median(null_calls));
  std::printf("ratio SQLite transitions/s : raw SQLite commits/s          %.2f   (target >= 2.0 at full)\n",
              Median(sqlite.transitions_per_s) / Median(raw_sqlite));
  std::printf("ratio null calls/s : raw SQLite commits/s (the transport's ceiling) %.2f\n",
              Median(null_calls) / Median(raw_sqlite));
  std::printf("ratio 1 host transitions/s : raw PostgreSQL commits/s      %.2f   (target >= 0.35)\n",
              Median(one.transitions_per_s) / Median(raw_postgres));
  std::printf("ratio %d hosts : 1 host                                     %.2f   (target >= 0.85)\n",
              hosts, Median(many.workflows_per_s) / Median(one.workflows_per_s));
  PrintCounters("SQLite", last_sqlite);
  PrintCounters("1 host, PostgreSQL", last_one);
  PrintCounters((std::to_string(hosts) + " hosts, PostgreSQL").c_str(), last_many);
  return sqlite.all_completed && one.all_completed && many.all_completed ? 0 : 1;
}

// One round with the server's persistence.sqlite.synchronous at `mode` (full or normal),
// against the raw SQLite loop in the same mode; prints the figures under the mode's name.
// True when every workflow completed.
// `sync_delay` (a duration, or empty): a slower disk for both, each sync of a database file
// waiting that long first (persistence.fault_injection.sync_delay in the server, the same
// VFS in this process for the raw loop).
bool ReportOneMode(const std::string& binary, int workflows, int pollers, bool archive,
                   const std::string& mode, const std::string& sync_delay) {
  // Durable state changes per workflow: start, workflow task started, completed, activity
  // started, completed, workflow task started, completed.
  const int transitions = workflows * 7;
  std::vector<std::string> args = {"--sqlite-synchronous", mode};
  char dir_template[] = "/tmp/tock-bench-config-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  if (!sync_delay.empty()) {
    std::ofstream(dir + "/slow.yaml")
        << "persistence:\n  fault_injection:\n    sync_delay: " << sync_delay << "\n";
    args.insert(args.end(), {"--config", dir + "/slow.yaml"});
  }
  Round round = RunRound(binary, workflows, pollers, archive, args);
  std::filesystem::remove_all(dir);
  const double raw = RawSqliteCommits(transitions, mode);

  std::printf("== persistence.sqlite.synchronous: %s (%s)%s%s\n", mode.c_str(),
              mode == "full" ? "each commit answered survives power loss; the default"
                             : "survives a crash of the process only",
              sync_delay.empty() ? "" : "; a slower disk, each sync waiting ",
              sync_delay.c_str());
  std::printf("workflows completed               %d of %d in %.2f s\n", round.completed, workflows,
              round.seconds);
  std::printf("workflows/s                       %.0f   (target >= 1000)\n", round.rate());
  const double transitions_per_s = round.rate() * TransitionsPerWorkflow(round);
  std::printf("state transitions/s               %.0f\n", transitions_per_s);
  std::printf("start-to-close latency            p50 %.1f ms, p99 %.1f ms\n",
              Percentile(round.latencies_ms, 0.5), Percentile(round.latencies_ms, 0.99));
  std::printf("raw SQLite, same %d commits      %.2f s (%.0f commits/s)\n", transitions, raw,
              transitions / raw);
  std::printf("ratio tock transitions/s : raw commits/s   %.2f   (target >= %s)\n",
              transitions_per_s / (transitions / raw), mode == "full" ? "2.0" : "0.15");
  const NullCalls null_calls = MeasureNullCalls(binary, pollers, transitions);
  std::printf("GetSystemInfo calls/s, same threads  %.0f (ceiling ratio %.2f: no engine, no "
              "database); %.2f server context switches per call\n",
              null_calls.per_second, null_calls.per_second / (transitions / raw),
              null_calls.switches_per_call);
  PrintCounters("counters", round);
  if (archive) {
    std::printf("visibility records archived       %d in %.2f s from the first start (%.0f/s; "
                "the last %.2f s after the last close)\n",
                workflows, round.archived_seconds, workflows / round.archived_seconds,
                round.archived_seconds - round.seconds);
  }
  return round.completed == workflows;
}
}  // namespace

int main(int argc, char** argv) {
  // As tock-server does (its main.cc): Abseil's deadlock detection, on in Debian's build,
  // would cost the driver's gRPC calls time that is not the server's.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  if (argc < 2) {
    std::cerr << "usage: workflow_bench TOCK_SERVER [workflows] [pollers per kind] "
                 "[--archive | --observability | --faults RATE | --eager | --handler-threads |\n"
                 "  --partitions | --versioned]\n"
                 "  [--rounds N] "
                 "[--postgres ADMIN_URL [--hosts N]] [--synchronous full|normal|both]\n"
                 "  [--sync-delay D]\n"
                 "  --postgres: four ways in one run: the server on SQLite against a raw SQLite\n"
                 "  loop; one host and N hosts (default 3) on fresh databases of that PostgreSQL\n"
                 "  server against a raw loop of one-row commits over 16 connections on it\n"
                 "  --archive: the server archives to a directory (--archival-dir); also reports\n"
                 "  how long the archiver takes to archive every closed run's visibility record\n"
                 "  --observability: ratio of logging at info + metrics on to both off\n"
                 "  --faults RATE: ratio with RATE of persistence calls failing to none\n"
                 "  --eager: ratio of eager activities (the default) to activities through the queue\n"
                 "  --handler-threads: ratio of the default handler threads to none\n"
                 "  --partitions: with --postgres, N hosts whose polls wait on their host's\n"
                 "    partition first (the default, or --partition-wait D) against polls sent to\n"
                 "    the queue's host\n"
                 "  --versioned: ratio of workers of a current deployment version (runs pinned)\n"
                 "    to unversioned workers\n"
                 "  --synchronous: the server's persistence.sqlite.synchronous in the default run\n"
                 "  (full: power-safe, tock-server's default; normal: process-crash-safe); both\n"
                 "  (the default) reports each against a raw SQLite loop in the same mode\n"
                 "  --sync-delay D: a slower disk for both, each sync waiting D first (e.g. 2ms)\n";
    return 2;
  }
  const std::string binary = argv[1];
  const int workflows = argc > 2 ? std::stoi(argv[2]) : 2000;
  const int pollers = argc > 3 ? std::stoi(argv[3]) : 8;  // per kind (workflow, activity)
  bool archive = false, observability = false, eager = false, handler_threads = false,
       partitions = false, versioned = false;
  std::string fault_rate, postgres_admin, partition_wait, sync_delay;
  int rounds = 3, hosts = 3;
  bool rounds_given = false;
  std::string synchronous = "both";  // the default run reports both settings
  for (int i = 4; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--archive") archive = true;
    if (a == "--observability") observability = true;
    if (a == "--eager") eager = true;
    if (a == "--handler-threads") handler_threads = true;
    if (a == "--partitions") partitions = true;
    if (a == "--versioned") versioned = true;
    if (a == "--partition-wait" && i + 1 < argc) partition_wait = argv[++i];
    if (a == "--faults" && i + 1 < argc) fault_rate = argv[++i];
    if (a == "--rounds" && i + 1 < argc) rounds = std::stoi(argv[++i]);
    if (a == "--postgres" && i + 1 < argc) postgres_admin = argv[++i];
    if (a == "--hosts" && i + 1 < argc) hosts = std::stoi(argv[++i]);
    if (a == "--synchronous" && i + 1 < argc) synchronous = argv[++i];
    if (a == "--sync-delay" && i + 1 < argc) sync_delay = argv[++i];
    rounds_given |= a == "--rounds";
  }
  if (synchronous != "full" && synchronous != "normal" && synchronous != "both") {
    std::cerr << "workflow_bench: --synchronous must be full, normal or both\n";
    return 2;
  }
  if (!sync_delay.empty()) {
    absl::StatusOr<absl::Duration> delay = tock::ParseHumanDuration(sync_delay);
    if (!delay.ok() || *delay <= absl::ZeroDuration() || *delay > absl::Seconds(1)) {
      std::cerr << "workflow_bench: --sync-delay must be a duration above 0 and at most 1s "
                   "(e.g. 2ms)\n";
      return 2;
    }
    tock::persistence::InstallSlowSyncVfs(*delay);  // the raw loop's files, as the server's
  }
  if (observability) {
    return Compare(binary, workflows, pollers, rounds, "logging off, metrics off",
                   {"--log-level", "off"}, "logging info, metrics on",
                   {"--log-level", "info", "--metrics-port", "0"}, /*count=*/false);
  }
  // Rounds of the server at its defaults against one configured by `baseline_yaml`.
  auto against_config = [&](const char* baseline_name, const std::string& baseline_yaml,
                            const char* variant_name) {
    char dir_template[] = "/tmp/tock-bench-config-XXXXXX";
    const std::string dir = mkdtemp(dir_template);
    const std::string config = dir + "/baseline.yaml";
    std::ofstream(config) << baseline_yaml;
    const int status = Compare(binary, workflows, pollers, rounds, baseline_name,
                               {"--config", config}, variant_name, {});
    std::filesystem::remove_all(dir);
    return status;
  };
  if (eager) {
    // The worker asks for its activities eagerly in both (as the SDKs do); the baseline's
    // server is configured not to hand them back, so they go through the activity queue.
    return against_config("activities through the queue",
                          "history:\n  eager_activities: false\n", "eager activities");
  }
  if (handler_threads) {
    return against_config("calls on gRPC's threads",
                          "persistence:\n  sqlite:\n    handler_threads: 0\n",
                          "default handler threads");
  }
  if (!fault_rate.empty()) {
    const std::string name = "persistence faults " + fault_rate;
    return Compare(binary, workflows, pollers, rounds, "no persistence faults", {}, name.c_str(),
                   {"--persistence-fault-rate", fault_rate, "--persistence-fault-seed", "7"});
  }

  if (versioned) {
    return Compare(binary, workflows, pollers, rounds, "unversioned workers", {},
                   "versioned workers (pinned)", {}, true, "", 1, "", "",
                   tock::bench::WorkerVersion{"bench-deployment", "build-1"});
  }
  if (partitions) {
    if (postgres_admin.empty()) {
      std::cerr << "workflow_bench: --partitions needs --postgres ADMIN_URL\n";
      return 2;
    }
    return Compare(binary, workflows, pollers, rounds, "every poll to the queue's host", {},
                   "polls on their host's partition first", {}, true, postgres_admin, hosts,
                   "  partition_wait: 0s\n",
                   partition_wait.empty() ? "" : "  partition_wait: " + partition_wait + "\n");
  }
  if (!postgres_admin.empty()) {
    return FourWay(binary, workflows, pollers, postgres_admin, hosts, rounds_given ? rounds : 1);
  }
  bool all = true;
  for (const std::string& mode : std::vector<std::string>{"full", "normal"}) {
    if (synchronous == "both" || synchronous == mode) {
      all &= ReportOneMode(binary, workflows, pollers, archive, mode, sync_delay);
    }
  }
  return all ? 0 : 1;
}
