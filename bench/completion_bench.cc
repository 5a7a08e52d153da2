// Completion benchmark (issue 4): how long a shell waits on TAB. Against one tock-server
// started here on a free port, holding `namespaces` namespaces (default 50):
//   1. median and p95 wall time of `tock __complete namespace describe ""` (process start to
//      exit: the tree walk, one ListNamespaces, printing): target < 100 ms;
//   2. the same for a word that needs no server (`tock __complete namespace ""`);
//   3. the live completion against a closed port (the unreachable case must stay fast).
// Usage: completion_bench TOCK_SERVER TOCK [runs] [namespaces]
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "bench/bench_server.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

// Runs argv with stdout captured into `out` (when given) and stderr discarded; wall seconds,
// -1 on failure.
double TimeRun(const std::vector<std::string>& args, std::string* out = nullptr) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  auto start = Clock::now();
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (rc != 0) {
    close(pipe_fds[0]);
    return -1;
  }
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof buf)) > 0;) text.append(buf, n);
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (out != nullptr) *out = text;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? seconds : -1;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

int ClosedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: completion_bench TOCK_SERVER TOCK [runs] [namespaces]\n";
    return 2;
  }
  const std::string server_bin = argv[1], tock = argv[2];
  const int runs = argc > 3 ? std::stoi(argv[3]) : 41;
  const int namespaces = argc > 4 ? std::stoi(argv[4]) : 50;
  tock::bench::Server server = tock::bench::StartServer(server_bin);
  if (server.pid == 0) {
    std::cerr << "tock-server did not start\n";
    return 1;
  }
  auto stop = [&] {
    kill(server.pid, SIGTERM);
    waitpid(server.pid, nullptr, 0);
  };
  for (int i = 0; i < namespaces; ++i) {
    if (TimeRun({tock, "--address", server.address, "namespace", "register",
                 "bench-ns-" + std::to_string(i)}) < 0) {
      std::cerr << "namespace register failed\n";
      stop();
      return 1;
    }
  }
  const std::string closed = "127.0.0.1:" + std::to_string(ClosedPort());
  std::string out;
  TimeRun({tock, "__complete", "--address", server.address, "namespace", "describe", ""}, &out);
  const long offered = std::count(out.begin(), out.end(), '\n');
  if (offered != namespaces + 1) {
    std::cerr << "expected " << namespaces + 1 << " candidates, got " << offered << ":\n" << out;
    stop();
    return 1;
  }

  std::vector<double> live, tree, down;
  for (int i = 0; i < runs; ++i) {  // interleaved, so drift hits all alike
    double l =
        TimeRun({tock, "__complete", "--address", server.address, "namespace", "describe", ""});
    double t = TimeRun({tock, "__complete", "--address", server.address, "namespace", ""});
    double d = TimeRun({tock, "__complete", "--address", closed, "namespace", "describe", ""});
    if (l < 0 || t < 0 || d < 0) {
      std::cerr << "a run failed\n";
      stop();
      return 1;
    }
    live.push_back(l * 1e3);
    tree.push_back(t * 1e3);
    down.push_back(d * 1e3);
  }
  stop();

  std::printf("tock __complete namespace describe \"\"  (%ld candidates, live)\n", offered);
  std::printf("  median %.2f ms, p95 %.2f ms (%d runs; target < 100 ms)\n", Percentile(live, 0.5),
              Percentile(live, 0.95), runs);
  std::printf("tock __complete namespace \"\"  (tree only, no server call)\n");
  std::printf("  median %.2f ms, p95 %.2f ms\n", Percentile(tree, 0.5), Percentile(tree, 0.95));
  std::printf("tock __complete namespace describe \"\" against a closed port  (silent)\n");
  std::printf("  median %.2f ms, p95 %.2f ms\n", Percentile(down, 0.5), Percentile(down, 0.95));
  const bool ok = Percentile(live, 0.5) < 100.0;
  std::printf("%s: live completion median %s 100 ms\n", ok ? "PASS" : "FAIL", ok ? "<" : ">=");
  return ok ? 0 : 1;
}
