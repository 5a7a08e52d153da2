// Running the built binaries from tests: a command to completion with captured output, and a
// tock-server kept running on a free port for the duration of a test.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace tock::testing {

struct ProcessResult {
  int exit_code = -1;  // -1: killed (timeout or signal)
  std::string out;
  std::string err;
};

// Runs argv[0] (a path) with `env` added to the environment and `input` on stdin; kills it
// after `timeout`.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env = {},
                         const std::string& input = "",
                         std::chrono::milliseconds timeout = std::chrono::seconds(30));

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

// tock-server (or `tock server start-dev`) started with `args` then `--port 0`, its address read from the banner.
// Stopped (SIGTERM, then SIGKILL after 5 s) by Stop() or the destructor.
class ServerProcess {
 public:
  explicit ServerProcess(std::string binary) : binary_(std::move(binary)) {}
  ~ServerProcess() { Stop(); }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Starts and waits for the banner (20 s at most). False with the reason in error().
  bool Start(const std::vector<std::string>& args);
  // SIGTERM, then SIGKILL after 5 s. Returns the exit code (-1 when killed by a signal).
  int Stop();
  void Kill();

  const std::string& address() const { return address_; }
  const std::string& error() const { return error_; }
  const std::string& banner() const { return banner_; }
  pid_t pid() const { return pid_; }

 private:
  int Reap(std::chrono::milliseconds grace);

  std::string binary_;
  pid_t pid_ = 0;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  std::string address_;
  std::string banner_;
  std::string error_;
};

}  // namespace tock::testing
