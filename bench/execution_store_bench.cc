// execution_store_bench ADMIN_URL [SECONDS] [THREADS]: the PostgreSQL ExecutionStore's Write
// rate against the raw commit rate of the same server, measured in one run.
//
//   raw:    THREADS connections, each committing one-row INSERT transactions in a loop (the
//           same durability settings as the store's commits: whatever the server has);
//   store:  THREADS threads, each changing its own run in a loop with a typical change of
//           the history engine (mutable state ~1 KB, 2 events, one task queued and the
//           previous one consumed), a shard per thread, then every thread on one shard,
//           then 8 runs' changes per commit (as group commit would write them).
//
// A fresh database is created on the server of ADMIN_URL and dropped at the end. Prints
// commits per second and the ratios store/raw. Not a test.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/persistence.h"
#include "server-core/persistence/postgres/pg_db.h"

namespace tp = tock::persistence;
using Clock = std::chrono::steady_clock;

namespace {

std::string WithDatabase(const std::string& admin_url, const std::string& db) {
  const size_t scheme = admin_url.find("://");
  const size_t slash = admin_url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  return (slash == std::string::npos ? admin_url : admin_url.substr(0, slash)) + "/" + db;
}

// Runs `body(thread)` on `threads` threads for `seconds`; returns the calls per second.
template <typename Body>
double Rate(int threads, double seconds, Body body) {
  std::atomic<int64_t> done{0};
  std::atomic<bool> failed{false};
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  const auto start = Clock::now();
  {
    std::vector<std::jthread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        for (int64_t i = 0; Clock::now() < end && !failed; ++i) {
          if (absl::Status s = body(t, i); !s.ok()) {
            std::fprintf(stderr, "thread %d: %s\n", t, s.ToString().c_str());
            failed = true;
            return;
          }
          ++done;
        }
      });
    }
  }
  if (failed) std::exit(1);
  return done / std::chrono::duration<double>(Clock::now() - start).count();
}

// The store's loop: thread t changes runs "<prefix>t.<k>" (k < group, all in one commit) on
// shard t + 1, or every thread on shard 1. Returns run changes per second.
double StoreRate(tp::ExecutionStore& store, int threads, double seconds, bool one_shard,
                 int group) {
  std::vector<int64_t> ranges(threads);
  for (int t = 0; t < threads; ++t) {
    const int32_t shard = one_shard ? 1 : t + 1;
    if (one_shard && t > 0) {
      ranges[t] = ranges[0];
      continue;
    }
    auto r = store.AcquireShard(shard, "bench");
    if (!r.ok()) {
      std::fprintf(stderr, "AcquireShard: %s\n", r.status().ToString().c_str());
      std::exit(1);
    }
    ranges[t] = *r;
  }
  const std::string prefix = absl::StrCat(one_shard ? "one-" : "own-", group, "-");
  std::vector<std::vector<int64_t>> last_tasks(threads);
  const std::string padding(900, 'x');
  const double commits = Rate(threads, seconds, [&](int t, int64_t i) {
    tp::Commit c;
    c.shard_id = one_shard ? 1 : t + 1;
    c.range_id = ranges[t];
    for (int k = 0; k < group; ++k) {
      const std::string run = absl::StrCat(prefix, t, ".", k);
      tp::RunWrite& w = c.runs.emplace_back();
      auto* exec = w.state.mutable_execution();
      exec->set_namespace_id("ns");
      exec->set_workflow_id(run);
      exec->set_run_id(run);
      exec->set_workflow_type(padding);
      w.state.set_db_version(i + 1);
      w.expected_db_version = i;
      if (i == 0) w.current_run_change = tp::CurrentRunChange::kCreate;
      for (int e = 1; e <= 2; ++e) {
        tp::HistoryEvent& event = w.events.emplace_back();
        event.set_event_id(2 * i + e);
        event.set_task_id(2 * i + e);
        event.mutable_workflow_task_scheduled_event_attributes()->mutable_task_queue()->set_name(
            std::string(150, 'q'));
      }
      tp::TaskQueueTask& task = c.new_tasks.emplace_back();
      task.namespace_id = "ns";
      task.task_queue = "queue";
      task.task.set_run_id(run);
      task.task.set_scheduled_event_id(2 * i + 2);
    }
    c.done_task_ids = last_tasks[t];
    absl::Status s = store.Write(c);
    if (s.ok()) {
      last_tasks[t].clear();
      for (const tp::TaskQueueTask& task : c.new_tasks) last_tasks[t].push_back(task.task_id);
    }
    return s;
  });
  return commits * group;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s ADMIN_URL [SECONDS] [THREADS]\n", argv[0]);
    return 2;
  }
  const std::string admin_url = argv[1];
  const double seconds = argc > 2 ? std::atof(argv[2]) : 5;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 16;
  const std::string db = absl::StrCat("tock_bench_", getpid());

  auto admin = tp::PgPool::Open(admin_url, {.max_connections = 1});
  if (!admin.ok()) {
    std::fprintf(stderr, "%s\n", admin.status().ToString().c_str());
    return 1;
  }
  if (auto s = (*admin)->Query(absl::StrCat("CREATE DATABASE ", db)); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.status().ToString().c_str());
    return 1;
  }
  const std::string url = WithDatabase(admin_url, db);
  double raw = 0, own = 0, one = 0, grouped = 0;
  {
    tp::PersistenceConfig config;
    config.engine = "postgres";
    config.postgres_url = url;
    config.postgres_max_connections = threads;
    auto p = tp::OpenPersistence(config);
    if (!p.ok()) {
      std::fprintf(stderr, "%s\n", p.status().ToString().c_str());
      return 1;
    }
    auto pool = tp::PgPool::Open(url, {.max_connections = threads});
    if (!pool.ok() ||
        !(*pool)->Query("CREATE TABLE bench_raw(id BIGSERIAL PRIMARY KEY, v BYTEA)").ok()) {
      std::fprintf(stderr, "cannot create the raw table\n");
      return 1;
    }
    const std::string row(100, 'r');
    raw = Rate(threads, seconds, [&](int, int64_t) {
      return (*pool)->InTransaction([&](tp::PgConn& conn) {
        return conn.Query("INSERT INTO bench_raw(v) VALUES ($1)", {tp::PgParam::Bytes(row)})
            .status();
      });
    });
    own = StoreRate((*p)->executions(), threads, seconds, false, 1);
    one = StoreRate((*p)->executions(), threads, seconds, true, 1);
    grouped = StoreRate((*p)->executions(), threads, seconds, false, 8);
  }
  (void)(*admin)->Query(absl::StrCat("DROP DATABASE ", db, " WITH (FORCE)"));
  std::printf("PostgreSQL, %d threads, %.0f s each:\n", threads, seconds);
  std::printf("  raw one-row commits        %8.0f /s\n", raw);
  std::printf("  store writes, own shards   %8.0f /s   %.2f of raw\n", own, own / raw);
  std::printf("  store writes, one shard    %8.0f /s   %.2f of raw\n", one, one / raw);
  std::printf("  run changes, 8 per commit  %8.0f /s   %.2f of raw\n", grouped, grouped / raw);
  return 0;
}
