#include "tests/support/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <thread>

extern char** environ;

namespace tock::testing {
namespace {

using SteadyClock = std::chrono::steady_clock;

std::vector<std::string> Environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    std::string key = entry.substr(0, entry.find('='));
    if (!extra.contains(key)) out.push_back(entry);
  }
  for (const auto& [k, v] : extra) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

pid_t Spawn(std::vector<std::string> argv, const std::map<std::string, std::string>& env,
            int in_fd, int out_fd, int err_fd, const std::vector<int>& close_fds) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_fd, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  for (int fd : close_fds) posix_spawn_file_actions_addclose(&actions, fd);
  std::vector<std::string> envs = Environment(env);
  auto args = Pointers(argv);
  auto envp = Pointers(envs);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

}  // namespace

ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env, const std::string& input,
                         std::chrono::milliseconds timeout) {
  ProcessResult result;
  int in[2], out[2], err[2];
  if (pipe(in) != 0 || pipe(out) != 0 || pipe(err) != 0) return result;
  pid_t pid = Spawn(argv, env, in[0], out[1], err[1], {in[1], out[0], err[0]});
  close(in[0]);
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(in[1]);
    close(out[0]);
    close(err[0]);
    result.err = "cannot start " + argv[0];
    return result;
  }
  if (!input.empty()) {
    ssize_t ignored = write(in[1], input.data(), input.size());
    (void)ignored;
  }
  close(in[1]);

  const auto deadline = SteadyClock::now() + timeout;
  bool killed = false;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  char buffer[4096];
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      killed = true;
      break;
    }
    if (poll(fds, 2, static_cast<int>(left.count())) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP)) == 0) continue;
      ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? result.out : result.err).append(buffer, n);
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = (!killed && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  return result;
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "tock-test-XXXXXX").string();
  path_ = mkdtemp(pattern.data());
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::Write(const std::string& name, const std::string& content) const {
  std::string path = File(name);
  std::ofstream(path) << content;
  return path;
}

bool ServerProcess::Start(const std::vector<std::string>& args) {
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) return false;
  int devnull = open("/dev/null", O_RDONLY);
  std::vector<std::string> argv = {binary_};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--port");
  argv.push_back("0");
  pid_ = Spawn(argv, {}, devnull, out[1], err[1], {out[0], err[0]});
  close(devnull);
  close(out[1]);
  close(err[1]);
  stdout_fd_ = out[0];
  stderr_fd_ = err[0];
  if (pid_ < 0) {
    error_ = "cannot start " + binary_;
    pid_ = 0;
    return false;
  }
  const std::regex listening("listening on (\\S+)");
  const auto deadline = SteadyClock::now() + std::chrono::seconds(20);
  std::string err_text;
  char buffer[4096];
  while (SteadyClock::now() < deadline) {
    pollfd fds[2] = {{stdout_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}};
    if (poll(fds, 2, 200) <= 0) continue;
    if (fds[1].revents & POLLIN) {
      ssize_t n = read(stderr_fd_, buffer, sizeof(buffer));
      if (n > 0) err_text.append(buffer, n);
    }
    if (fds[0].revents & (POLLIN | POLLHUP)) {
      ssize_t n = read(stdout_fd_, buffer, sizeof(buffer));
      if (n <= 0) break;  // exited
      banner_.append(buffer, n);
      std::smatch match;
      if (std::regex_search(banner_, match, listening) && banner_.find('\n') != std::string::npos) {
        address_ = match[1];
        return true;
      }
    }
  }
  // Collect the rest of stderr to say why it did not start.
  for (int i = 0; i < 10; ++i) {
    pollfd fd = {stderr_fd_, POLLIN, 0};
    if (poll(&fd, 1, 100) <= 0) break;
    ssize_t n = read(stderr_fd_, buffer, sizeof(buffer));
    if (n <= 0) break;
    err_text.append(buffer, n);
  }
  error_ = "tock-server did not start: " + err_text;
  Kill();
  return false;
}

int ServerProcess::Reap(std::chrono::milliseconds grace) {
  const auto deadline = SteadyClock::now() + grace;
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (SteadyClock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = 0;
  if (stdout_fd_ >= 0) close(stdout_fd_);
  if (stderr_fd_ >= 0) close(stderr_fd_);
  stdout_fd_ = stderr_fd_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int ServerProcess::Stop() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  return Reap(std::chrono::seconds(5));
}

void ServerProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  Reap(std::chrono::seconds(5));
}

}  // namespace tock::testing
