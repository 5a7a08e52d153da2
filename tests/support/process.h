// Running the built binaries from tests: a command to completion with captured output, and a
// tock-server kept running on a free port for the duration of a test.
//
// Thread safety: RunProcess may be called from any thread. A ServerProcess is used from one
// thread (its output is drained by a helper thread it owns).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tock::testing {

struct ProcessResult {
  int exit_code = -1;  // -1: killed (timeout or signal) or could not be started
  std::string out;
  std::string err;
  bool timed_out = false;
};

struct RunOptions {
  // Standard input is the slave side of a fresh pseudo-terminal (isatty(0) is true in the
  // child); `input` is typed into it. Otherwise standard input is a pipe.
  bool stdin_is_terminal = false;
};

// Runs argv[0] (a path) with `env` added to (or overriding) the environment and `input` on
// stdin, stdout and stderr captured separately; kills it (SIGKILL) after `timeout`.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env = {},
                         const std::string& input = "",
                         std::chrono::milliseconds timeout = std::chrono::seconds(30),
                         const RunOptions& options = {});

// A TCP port on 127.0.0.1 that was free a moment ago and has nothing listening on it now
// (bound to port 0, then closed): connecting to it is refused.
int ClosedLocalPort();

// A temporary directory removed with everything in it at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string File(const std::string& name) const { return (path_ / name).string(); }
  // Writes `content` to `name` in the directory and returns its path.
  std::string Write(const std::string& name, const std::string& content) const;

 private:
  std::filesystem::path path_;
};

// tock-server (or `tock server start-dev`) started with `args` then `--port 0`, its address
// read from the first banner line `Tock server <version> listening on <ip>:<port>`.
// Stopped (SIGTERM, then SIGKILL after 5 s) by Stop() or the destructor. After the banner,
// its stdout and stderr keep being read (a full pipe would block the server) and are kept.
class ServerProcess {
 public:
  explicit ServerProcess(std::string binary) : binary_(std::move(binary)) {}
  // Another long-running helper (the S3 stack of tests/s3): ready once a stdout line matches
  // `ready_pattern`, whose first group becomes address(); no `--port 0` is added.
  ServerProcess(std::string binary, std::string ready_pattern)
      : binary_(std::move(binary)), ready_pattern_(std::move(ready_pattern)), append_port_(false) {}
  ~ServerProcess() { Stop(); }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Starts and waits for the banner (20 s at most). False with the reason (and the server's
  // stderr) in error(); exit_code() then holds the server's exit code (-1: killed by us).
  // `env` is added to (or overrides) the environment, as for RunProcess.
  bool Start(const std::vector<std::string>& args,
             const std::map<std::string, std::string>& env = {});
  // `signal` (SIGTERM unless told), then SIGKILL after 5 s. Returns the exit code (-1 when
  // killed by a signal or not running).
  int Stop(int signal = SIGTERM);
  // SIGKILL (a crash, as far as the server can tell).
  void Kill();

  bool running() const { return pid_ > 0; }
  const std::string& address() const { return address_; }
  const std::string& error() const { return error_; }
  const std::string& banner() const { return banner_; }
  int exit_code() const { return exit_code_; }
  pid_t pid() const { return pid_; }
  // Everything the server wrote to stderr so far (complete once stopped).
  std::string stderr_text() const;

 private:
  int Reap(std::chrono::milliseconds grace);
  void Drain();

  std::string binary_;
  std::string ready_pattern_ = "listening on (\\S+)";
  bool append_port_ = true;
  pid_t pid_ = 0;
  int stdin_fd_ = -1;  // write end of the child's stdin, closed once it is reaped
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  std::string address_;
  std::string banner_;
  std::string error_;
  int exit_code_ = -1;

  std::thread drainer_;
  std::atomic<bool> stop_draining_{false};
  std::atomic<bool> drained_{false};  // both pipes reached end of file
  mutable std::mutex mu_;
  std::string stdout_rest_;  // guarded by mu_
  std::string stderr_;       // guarded by mu_
};

}  // namespace tock::testing
