// Namespace benchmark (issue 2). Everything is measured in this one run, against one
// tock-server started here on a free port:
//   1. median wall time of `tock namespace describe default` (process start to exit) next to
//      min_describe, a program that only connects and makes the same RPC: ratio, target <= 1.5;
//   2. median wall time of `tock --help` next to `git --version` (a small C program's start,
//      the yardstick of issue 12): ratio, target <= 3, and the describe ratio's target of
//      issue 12 (<= 1.3) next to issue 2's (<= 1.5);
//   3. DescribeNamespace requests per second with 16 concurrent callers on one channel.
// Usage: namespace_bench TOCK_SERVER TOCK MIN_DESCRIBE [runs]
#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <iostream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "bench/bench_server.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

// Runs argv to completion with stdout/stderr to /dev/null; returns wall seconds (-1 on failure).
double TimeRun(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  auto start = Clock::now();
  pid_t pid;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  posix_spawn_file_actions_destroy(&actions);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? seconds : -1;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double DescribeRps(const std::string& address, int callers, double seconds) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto stub = temporal::api::workflowservice::v1::WorkflowService::NewStub(channel);
  std::atomic<long> done{0};
  std::atomic<long> failed{0};
  auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  std::vector<std::thread> threads;
  for (int i = 0; i < callers; ++i) {
    threads.emplace_back([&] {
      temporal::api::workflowservice::v1::DescribeNamespaceRequest request;
      request.set_namespace_("default");
      while (Clock::now() < deadline) {
        grpc::ClientContext context;
        temporal::api::workflowservice::v1::DescribeNamespaceResponse response;
        if (stub->DescribeNamespace(&context, request, &response).ok()) {
          done.fetch_add(1);
        } else {
          failed.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  if (failed.load() > 0) std::cerr << "warning: " << failed.load() << " calls failed\n";
  return done.load() / seconds;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: namespace_bench TOCK_SERVER TOCK MIN_DESCRIBE [runs]\n";
    return 2;
  }
  const std::string server_bin = argv[1], tock = argv[2], min_describe = argv[3];
  const int runs = argc > 4 ? std::stoi(argv[4]) : 41;
  tock::bench::Server server = tock::bench::StartServer(server_bin);
  if (server.pid == 0) {
    std::cerr << "tock-server did not start\n";
    return 1;
  }

  // git's own start, when git is installed (it is the yardstick; nothing else about git).
  const std::string git = std::filesystem::exists("/usr/bin/git") ? "/usr/bin/git" : "";
  std::vector<double> cli, baseline, help, git_version;
  TimeRun({tock, "--address", server.address, "namespace", "describe", "default", "-o", "json"});
  TimeRun({min_describe, server.address});
  for (int i = 0; i < runs; ++i) {  // interleaved, so drift hits both alike
    double c = TimeRun({tock, "--address", server.address, "namespace", "describe", "default",
                        "-o", "json"});
    double b = TimeRun({min_describe, server.address});
    double h = TimeRun({tock, "--help"});
    double g = git.empty() ? 0 : TimeRun({git, "--version"});
    if (c < 0 || b < 0 || h < 0 || g < 0) {
      std::cerr << "a run failed\n";
      kill(server.pid, SIGTERM);
      return 1;
    }
    cli.push_back(c);
    baseline.push_back(b);
    help.push_back(h);
    git_version.push_back(g);
  }
  double rps = DescribeRps(server.address, 16, 5.0);
  kill(server.pid, SIGTERM);
  waitpid(server.pid, nullptr, 0);

  double c = Median(cli) * 1e3, b = Median(baseline) * 1e3, h = Median(help) * 1e3;
  std::printf("tock namespace describe default   median %.2f ms (%d runs)\n", c, runs);
  std::printf("minimal C++ client, same RPC      median %.2f ms\n", b);
  std::printf("ratio cli/minimal                 %.2f   (target <= 1.50; issue 12: <= 1.30)\n",
              c / b);
  std::printf("tock --help                       median %.2f ms (target < 10 ms)\n", h);
  if (!git.empty()) {
    const double g = Median(git_version) * 1e3;
    std::printf("git --version                     median %.2f ms\n", g);
    std::printf("ratio tock --help / git --version %.2f   (target <= 3.00)\n", h / g);
  }
  std::printf("DescribeNamespace, 16 callers     %.0f requests/s\n", rps);
  return 0;
}
