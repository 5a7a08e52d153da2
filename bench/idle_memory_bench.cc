// The server's memory under many idle workflows: tock-server on a fresh database file, its
// resident set (VmRSS) read idle and again after N StartWorkflowExecution calls that no
// worker polls for (the runs stay open, their workflow tasks queued). The figure that
// matters is the growth per 1,000 idle workflows: a server's memory should be bounded by its
// caches, not grow with the number of open runs (the target: 10,000 idle starts
// well under 30 MB above the idle server).
//
// Then, as the price of a bounded cache, the rate of DescribeWorkflowExecution over every one
// of those runs (most no longer cached).
//
// Usage: idle_memory_bench TOCK_SERVER [workflows] [-- extra tock-server args]
// (`-- --db-file :memory:` measures the in-memory database instead of a fresh file).
// BENCH_HOLD=SECONDS keeps the server up that long after the figures were read (its pid on
// stderr), to look inside it (gdb: sqlite3_memory_used(), mallinfo2()).
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "bench/bench_server.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"

namespace {

namespace wf = temporal::api::workflowservice::v1;
using Clock = std::chrono::steady_clock;

// A field of /proc/PID/status in kB ("VmRSS", "VmHWM"); -1 when it cannot be read.
long StatusKb(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

// The resident set once the server has settled: background work (shard acquisition,
// matching's first reads) runs for a moment after a burst, so the figure is read after a
// pause, as the steady state of an idle server.
double SettledRssMb(pid_t pid) {
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  return StatusKb(pid, "VmRSS") / 1024.0;
}

// Calls `body(i)` for i in [0, count), in increasing order of i across 8 threads.
template <typename Body>
void ForEachOnEightThreads(int count, const Body& body) {
  std::atomic<int> next{0};
  std::vector<std::jthread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = next++; i < count; i = next++) body(i);
    });
  }
}

// Describes every idle workflow, oldest first, over 8 threads; returns the calls per second.
// The runs not in the server's run cache are read from its database: this is what a bound on
// that cache costs (oldest first is the order least-recently-used eviction serves worst).
double DescribeAll(wf::WorkflowService::Stub& stub, int workflows) {
  const auto begin = Clock::now();
  ForEachOnEightThreads(workflows, [&](int i) {
    wf::DescribeWorkflowExecutionRequest req;
    req.set_namespace_("default");
    req.mutable_execution()->set_workflow_id("idle-" + std::to_string(i));
    grpc::ClientContext ctx;
    wf::DescribeWorkflowExecutionResponse resp;
    stub.DescribeWorkflowExecution(&ctx, req, &resp);
  });
  return workflows / std::chrono::duration<double>(Clock::now() - begin).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: idle_memory_bench TOCK_SERVER [workflows] [-- extra server args]\n";
    return 2;
  }
  int workflows = 10'000;
  std::vector<std::string> server_extra;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      server_extra.assign(argv + i + 1, argv + argc);
      break;
    }
    workflows = std::stoi(argv[i]);
  }
  char dir_template[] = "/tmp/tock-bench-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  // A fresh database file, unless the extra arguments name one.
  const bool fresh_file =
      std::find(server_extra.begin(), server_extra.end(), "--db-file") == server_extra.end();
  std::vector<std::string> server_args;
  if (fresh_file) server_args = {"--db-file", dir + "/tock.db"};
  server_args.insert(server_args.end(), server_extra.begin(), server_extra.end());
  tock::bench::Server server = tock::bench::StartServer(argv[1], server_args);
  if (server.pid == 0) {
    std::cerr << "tock-server did not start\n";
    return 1;
  }
  auto stub = wf::WorkflowService::NewStub(tock::bench::OpenChannel(server.address));
  // One call first, so that the idle figure includes what any first request brings in
  // (the namespace cache, gRPC's per-method state), not just the process at rest.
  {
    wf::DescribeNamespaceRequest req;
    req.set_namespace_("default");
    grpc::ClientContext ctx;
    wf::DescribeNamespaceResponse resp;
    stub->DescribeNamespace(&ctx, req, &resp);
  }
  const double idle = SettledRssMb(server.pid);

  std::atomic<int> failed{0};
  const auto begin = Clock::now();
  ForEachOnEightThreads(workflows, [&](int i) {
    wf::StartWorkflowExecutionRequest req;
    req.set_namespace_("default");
    req.set_workflow_id("idle-" + std::to_string(i));
    req.mutable_workflow_type()->set_name("bench");
    req.mutable_task_queue()->set_name("nobody-polls");
    req.set_request_id("req-" + std::to_string(i));
    grpc::ClientContext ctx;
    wf::StartWorkflowExecutionResponse resp;
    if (!stub->StartWorkflowExecution(&ctx, req, &resp).ok()) ++failed;
  });
  const double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  const double loaded = SettledRssMb(server.pid);
  const double peak = StatusKb(server.pid, "VmHWM") / 1024.0;
  const double describe_rate = DescribeAll(*stub, workflows);
  if (const char* hold = getenv("BENCH_HOLD")) {
    std::fprintf(stderr, "tock-server pid %d, held %s s\n", server.pid, hold);
    std::this_thread::sleep_for(std::chrono::seconds(std::stoi(hold)));
  }
  kill(server.pid, SIGTERM);
  waitpid(server.pid, nullptr, 0);
  char database[64] = "the database named by the extra arguments";
  if (fresh_file) {
    std::snprintf(database, sizeof(database), "database file %.1f MB",
                  std::filesystem::file_size(dir + "/tock.db") / 1e6);
  }
  std::filesystem::remove_all(dir);

  std::printf("tock-server RSS, idle (one call served)    %7.1f MB\n", idle);
  std::printf("after %d idle starts (%d failed)       %7.1f MB  (peak %.1f MB)\n", workflows,
              failed.load(), loaded, peak);
  std::printf("growth                                    %7.1f MB  (%.2f MB per 1,000 idle "
              "workflows)\n",
              loaded - idle, (loaded - idle) * 1000.0 / workflows);
  std::printf("starts/s %.0f, then describes/s of each %.0f; %s\n", workflows / seconds,
              describe_rate, database);
  return failed == 0 ? 0 : 1;
}
