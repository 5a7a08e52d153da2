// REPL benchmark (issue 4), measured in this one run against one tock-server:
//   the median latency of `namespace describe default` typed into one `tock shell` session
//   (its own `\timing on` figure: parse, call, print; the connection stays open), next to the
//   median wall time of the same command run one-shot as `tock namespace describe default`
//   (process start, connect, call, print, exit). Target: the REPL at least 3x faster.
// Usage: repl_bench TOCK_SERVER TOCK [commands]
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_server.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Runs argv with stdin from `stdin_path` and stderr to `stderr_path` (stdout discarded);
// returns the wall time in ms, or -1 when it failed.
double Run(const std::vector<std::string>& args, const std::string& stdin_path,
           const std::string& stderr_path) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, stdin_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  const auto start = Clock::now();
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ms : -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: repl_bench TOCK_SERVER TOCK [commands]\n";
    return 2;
  }
  const std::string tock = argv[2];
  const int commands = argc > 3 ? std::stoi(argv[3]) : 100;
  char dir_template[] = "/tmp/tock-repl-bench-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  tock::bench::Server server = tock::bench::StartServer(argv[1]);
  if (server.pid == 0) {
    std::cerr << "tock-server did not start\n";
    return 1;
  }
  setenv("XDG_STATE_HOME", (dir + "/state").c_str(), 1);
  const std::string empty = dir + "/empty", err = dir + "/stderr";
  std::ofstream(empty).close();

  std::vector<double> one_shot;
  for (int i = 0; i < commands; ++i) {
    const double ms =
        Run({tock, "--address", server.address, "namespace", "describe", "default"}, empty, err);
    if (ms < 0) {
      std::cerr << "one-shot describe failed\n";
      return 1;
    }
    one_shot.push_back(ms);
  }

  const std::string script = dir + "/script";
  {
    std::ofstream out(script);
    out << "\\timing on\n";
    for (int i = 0; i < commands; ++i) out << "namespace describe default\n";
  }
  const double session_ms = Run({tock, "--address", server.address, "shell"}, script, err);
  std::vector<double> in_repl;
  {
    std::ifstream in(err);
    const std::regex timing(R"(^Time: ([0-9.]+) ms$)");
    std::smatch m;
    bool first = true;  // the \timing line itself
    for (std::string line; std::getline(in, line);) {
      if (!std::regex_match(line, m, timing)) continue;
      if (first) {
        first = false;
        continue;
      }
      in_repl.push_back(std::stod(m[1]));
    }
  }
  kill(server.pid, SIGTERM);
  waitpid(server.pid, nullptr, 0);
  std::filesystem::remove_all(dir);
  if (session_ms < 0 || static_cast<int>(in_repl.size()) != commands) {
    std::cerr << "the REPL session failed (" << in_repl.size() << " timings)\n";
    return 1;
  }
  const double a = Median(one_shot), b = Median(in_repl);
  std::printf("namespace describe, one-shot (median of %d)   %6.2f ms\n", commands, a);
  std::printf("namespace describe, in one REPL session        %6.2f ms  (whole session %.0f ms)\n",
              b, session_ms);
  std::printf("ratio one-shot / REPL                          %6.1f   (target >= 3)\n", a / b);
  std::printf("ratio one-shot / (whole session / commands)    %6.1f   (process start included)\n",
              a / (session_ms / commands));
  return 0;
}
