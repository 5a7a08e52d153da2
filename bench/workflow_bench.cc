// Workflow engine benchmark (issue 3), all in one run against one tock-server on a database
// file: a trivial worker speaking the API directly runs N one-activity workflows
// (start -> workflow task -> activity -> workflow task -> complete) and reports workflows/s,
// state transitions/s and p50/p99 start-to-close latency, next to a raw SQLite loop making
// the same number of durable commits (WAL, synchronous=NORMAL, as tock-server). History
// fetches are measured by history_bench.
//
// Usage: workflow_bench TOCK_SERVER [workflows] [pollers per kind]
#include <fcntl.h>
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
#include <iostream>
#include <map>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "bench/bench_server.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"

extern char** environ;

namespace {

namespace wf = temporal::api::workflowservice::v1;
namespace enums = temporal::api::enums::v1;
using Clock = std::chrono::steady_clock;
using Stub = wf::WorkflowService::Stub;

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

// The trivial worker's decision: schedule the activity first, complete once it returned.
wf::RespondWorkflowTaskCompletedRequest Decide(const wf::PollWorkflowTaskQueueResponse& task) {
  wf::RespondWorkflowTaskCompletedRequest req;
  req.set_namespace_("default");
  req.set_task_token(task.task_token());
  req.set_identity("bench");
  bool activity_done = false;
  for (const auto& e : task.history().events()) {
    activity_done |= e.event_type() == enums::EVENT_TYPE_ACTIVITY_TASK_COMPLETED;
  }
  auto* command = req.add_commands();
  if (activity_done) {
    command->set_command_type(enums::COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION);
    command->mutable_complete_workflow_execution_command_attributes();
  } else {
    command->set_command_type(enums::COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK);
    auto* a = command->mutable_schedule_activity_task_command_attributes();
    a->set_activity_id("1");
    a->mutable_activity_type()->set_name("work");
    a->mutable_start_to_close_timeout()->set_seconds(30);
  }
  return req;
}

double RawSqliteCommits(const std::string& path, int commits) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                   "CREATE TABLE t(id INTEGER PRIMARY KEY, data BLOB)", nullptr, nullptr, nullptr);
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
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: workflow_bench TOCK_SERVER [workflows] [pollers per kind] [--archive]\n"
                 "  --archive: the server archives to a directory (--archival-dir); also reports\n"
                 "  how long the archiver takes to archive every closed run's visibility record\n";
    return 2;
  }
  const int workflows = argc > 2 ? std::stoi(argv[2]) : 2000;
  const int pollers = argc > 3 ? std::stoi(argv[3]) : 8;  // per kind (workflow, activity)
  const bool archive = argc > 4 && std::string(argv[4]) == "--archive";
  char dir_template[] = "/tmp/tock-bench-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  std::vector<std::string> server_args = {"--db-file", dir + "/tock.db"};
  if (archive) server_args.insert(server_args.end(), {"--archival-dir", dir + "/archive"});
  tock::bench::Server server = tock::bench::StartServer(argv[1], server_args);
  if (server.pid == 0) {
    std::cerr << "tock-server did not start\n";
    return 1;
  }
  auto channel = tock::bench::OpenChannel(server.address);
  auto stub = wf::WorkflowService::NewStub(channel);

  std::mutex mu;
  std::map<std::string, Clock::time_point> started_at;
  std::vector<double> latencies_ms;
  std::atomic<int> completed{0};
  std::atomic<bool> done{false};
  const std::string queue = "bench";

  auto workflow_poller = [&] {
    while (!done) {
      wf::PollWorkflowTaskQueueRequest poll;
      poll.set_namespace_("default");
      poll.mutable_task_queue()->set_name(queue);
      poll.set_identity("bench");
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
      wf::PollWorkflowTaskQueueResponse task;
      if (!stub->PollWorkflowTaskQueue(&ctx, poll, &task).ok() || task.task_token().empty()) continue;
      wf::RespondWorkflowTaskCompletedRequest req = Decide(task);
      grpc::ClientContext rctx;
      wf::RespondWorkflowTaskCompletedResponse resp;
      if (!stub->RespondWorkflowTaskCompleted(&rctx, req, &resp).ok()) continue;
      if (req.commands(0).command_type() == enums::COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION) {
        auto now = Clock::now();
        std::lock_guard lock(mu);
        latencies_ms.push_back(std::chrono::duration<double, std::milli>(
                                   now - started_at[task.workflow_execution().workflow_id()])
                                   .count());
        if (++completed == workflows) done = true;
      }
    }
  };
  auto activity_poller = [&] {
    while (!done) {
      wf::PollActivityTaskQueueRequest poll;
      poll.set_namespace_("default");
      poll.mutable_task_queue()->set_name(queue);
      poll.set_identity("bench");
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
      wf::PollActivityTaskQueueResponse task;
      if (!stub->PollActivityTaskQueue(&ctx, poll, &task).ok() || task.task_token().empty()) continue;
      wf::RespondActivityTaskCompletedRequest req;
      req.set_namespace_("default");
      req.set_task_token(task.task_token());
      req.set_identity("bench");
      grpc::ClientContext rctx;
      wf::RespondActivityTaskCompletedResponse resp;
      stub->RespondActivityTaskCompleted(&rctx, req, &resp);
    }
  };

  std::vector<std::thread> threads;
  for (int i = 0; i < pollers; ++i) threads.emplace_back(workflow_poller);
  for (int i = 0; i < pollers; ++i) threads.emplace_back(activity_poller);
  auto begin = Clock::now();
  std::vector<std::thread> starters;
  std::atomic<int> next{0};
  for (int s = 0; s < 8; ++s) {
    starters.emplace_back([&] {
      for (int i = next++; i < workflows; i = next++) {
        wf::StartWorkflowExecutionRequest req;
        req.set_namespace_("default");
        req.set_workflow_id("bench-" + std::to_string(i));
        req.mutable_workflow_type()->set_name("bench");
        req.mutable_task_queue()->set_name(queue);
        req.set_request_id("req-" + std::to_string(i));
        {
          std::lock_guard lock(mu);
          started_at[req.workflow_id()] = Clock::now();
        }
        grpc::ClientContext ctx;
        wf::StartWorkflowExecutionResponse resp;
        stub->StartWorkflowExecution(&ctx, req, &resp);
      }
    });
  }
  for (auto& t : starters) t.join();
  const auto limit = Clock::now() + std::chrono::minutes(5);
  while (!done && Clock::now() < limit) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  done = true;
  for (auto& t : threads) t.join();

  // With archival: the archiver writes one visibility record file per closed run.
  double archived_seconds = 0;
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
    archived_seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  }

  // Durable state changes per workflow: start, workflow task started, completed, activity
  // started, completed, workflow task started, completed.
  const int transitions = workflows * 7;
  double raw = RawSqliteCommits(dir + "/raw.db", transitions);

  std::printf("workflows completed               %d of %d in %.2f s\n", completed.load(), workflows, seconds);
  std::printf("workflows/s                       %.0f   (target >= 1000)\n", completed / seconds);
  std::printf("state transitions/s               %.0f\n", completed * 7 / seconds);
  std::printf("start-to-close latency            p50 %.1f ms, p99 %.1f ms\n",
              Percentile(latencies_ms, 0.5), Percentile(latencies_ms, 0.99));
  std::printf("raw SQLite, same %d commits      %.2f s (%.0f commits/s)\n", transitions, raw,
              transitions / raw);
  std::printf("ratio tock transitions/s : raw commits/s   %.2f\n",
              (completed * 7 / seconds) / (transitions / raw));
  if (archive) {
    std::printf("visibility records archived       %d in %.2f s from the first start (%.0f/s; "
                "the last %.2f s after the last close)\n",
                workflows, archived_seconds, workflows / archived_seconds,
                archived_seconds - seconds);
  }

  kill(server.pid, SIGTERM);
  waitpid(server.pid, nullptr, 0);
  std::filesystem::remove_all(dir);
  return completed == workflows ? 0 : 1;
}
