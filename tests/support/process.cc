#include "tests/support/process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <regex>

extern char** environ;

namespace tock::testing {
namespace {

using SteadyClock = std::chrono::steady_clock;

// A child that exits before reading its input must not kill the test with SIGPIPE.
void IgnoreSigpipeOnce() {
  static std::once_flag once;
  std::call_once(once, [] { signal(SIGPIPE, SIG_IGN); });
}

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

// Every descriptor the tests create is close-on-exec, so a child spawned by another thread
// never inherits (and holds open) someone else's pipe; dup2 onto 0/1/2 clears the flag.
bool Pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC) == 0; }

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

pid_t Spawn(std::vector<std::string> argv, const std::map<std::string, std::string>& env,
            int in_fd, int out_fd, int err_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_fd, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  // The child starts with default signal dispositions (SIGPIPE included) and no mask.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::vector<std::string> envs = Environment(env);
  auto args = Pointers(argv);
  auto envp = Pointers(envs);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0].c_str(), &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc == 0 ? pid : -1;
}

int WaitExitCode(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The master and slave sides of a new pseudo-terminal, both close-on-exec.
bool OpenTerminal(int& master, int& slave) {
  master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0) return false;
  char name[128];
  if (grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, name, sizeof(name)) != 0) {
    CloseFd(master);
    return false;
  }
  slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0) {
    CloseFd(master);
    return false;
  }
  return true;
}

}  // namespace

ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env, const std::string& input,
                         std::chrono::milliseconds timeout, const RunOptions& options) {
  IgnoreSigpipeOnce();
  ProcessResult result;
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  int terminal = -1;  // master side when stdin is a terminal
  bool ready = Pipe(out) && Pipe(err) &&
               (options.stdin_is_terminal ? OpenTerminal(terminal, in[0]) : Pipe(in));
  pid_t pid = ready ? Spawn(argv, env, in[0], out[1], err[1]) : -1;
  CloseFd(in[0]);
  CloseFd(out[1]);
  CloseFd(err[1]);
  if (pid < 0) {
    for (int* fd : {&in[1], &out[0], &err[0], &terminal}) CloseFd(*fd);
    result.err = "cannot start " + argv[0];
    return result;
  }

  // Input: typed into the terminal at once (a line discipline buffers it), or written to the
  // pipe as the child reads it, then the pipe is closed (end of input).
  size_t written = 0;
  if (terminal >= 0) {
    if (!input.empty()) {
      ssize_t ignored = write(terminal, input.data(), input.size());
      (void)ignored;
    }
  } else if (input.empty()) {
    CloseFd(in[1]);
  } else {
    fcntl(in[1], F_SETFL, fcntl(in[1], F_GETFL) | O_NONBLOCK);
  }

  const auto deadline = SteadyClock::now() + timeout;
  char buffer[8192];
  while (out[0] >= 0 || err[0] >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      result.timed_out = true;
      break;
    }
    pollfd fds[3] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}, {in[1], POLLOUT, 0}};
    int n = poll(fds, 3, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      ssize_t got = read(fds[i].fd, buffer, sizeof(buffer));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        CloseFd(i == 0 ? out[0] : err[0]);
      } else {
        (i == 0 ? result.out : result.err).append(buffer, static_cast<size_t>(got));
      }
    }
    if (fds[2].fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
      ssize_t put = write(in[1], input.data() + written, input.size() - written);
      if (put > 0) written += static_cast<size_t>(put);
      if ((put < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) {
        CloseFd(in[1]);  // done, or the child closed its end (EPIPE)
      }
    }
  }
  for (int* fd : {&in[1], &out[0], &err[0]}) CloseFd(*fd);
  int code = WaitExitCode(pid);
  CloseFd(terminal);  // only now: closing the master hangs up the child's terminal
  result.exit_code = result.timed_out ? -1 : code;
  return result;
}

int ClosedLocalPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);  // never listened: a connection is refused
  return port;
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "tock-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) std::abort();
  path_ = pattern;
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

bool ServerProcess::Start(const std::vector<std::string>& args,
                          const std::map<std::string, std::string>& env) {
  IgnoreSigpipeOnce();
  if (pid_ > 0) Stop();
  address_.clear();
  banner_.clear();
  error_.clear();
  exit_code_ = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stdout_rest_.clear();
    stderr_.clear();
  }
  int out[2] = {-1, -1}, err[2] = {-1, -1};
  // Standard input is a pipe kept open while the process runs: a helper that ends when its
  // stdin closes (as the test's child should when the test dies) stays up meanwhile.
  int in[2] = {-1, -1};
  std::vector<std::string> argv = {binary_};
  argv.insert(argv.end(), args.begin(), args.end());
  if (append_port_) {
    argv.push_back("--port");
    argv.push_back("0");
  }
  pid_t pid = (Pipe(in) && Pipe(out) && Pipe(err)) ? Spawn(argv, env, in[0], out[1], err[1]) : -1;
  CloseFd(in[0]);
  stdin_fd_ = in[1];
  CloseFd(out[1]);
  CloseFd(err[1]);
  stdout_fd_ = out[0];
  stderr_fd_ = err[0];
  if (pid < 0) {
    error_ = "cannot start " + binary_;
    CloseFd(stdin_fd_);
    CloseFd(stdout_fd_);
    CloseFd(stderr_fd_);
    return false;
  }
  pid_ = pid;

  // The first stdout line is the banner: `Tock server <version> listening on <ip>:<port>`.
  const std::regex listening(ready_pattern_);
  const auto deadline = SteadyClock::now() + std::chrono::seconds(20);
  std::string err_text;
  std::string why;
  char buffer[4096];
  bool exited = false;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    if (left.count() <= 0) {
      why = "no banner within 20 s";
      break;
    }
    pollfd fds[2] = {{stdout_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}};
    if (poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 200))) <= 0) continue;
    if (fds[1].fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t n = read(stderr_fd_, buffer, sizeof(buffer));
      if (n > 0) err_text.append(buffer, static_cast<size_t>(n));
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = read(stdout_fd_, buffer, sizeof(buffer));
      if (n <= 0) {
        exited = true;
        why = "it closed its stdout without a banner";
        break;
      }
      banner_.append(buffer, static_cast<size_t>(n));
      size_t eol = banner_.find('\n');
      if (eol == std::string::npos) continue;
      std::string first_line = banner_.substr(0, eol);
      std::smatch match;
      if (!std::regex_search(first_line, match, listening)) {
        why = "the first stdout line is not the banner: " + first_line;
        break;
      }
      address_ = match[1];
      {
        std::lock_guard<std::mutex> lock(mu_);
        stderr_ = err_text;
      }
      stop_draining_ = false;
      drained_ = false;
      drainer_ = std::thread([this] { Drain(); });
      return true;
    }
  }
  // Say why it did not start: the rest of stderr and the exit code.
  if (!exited) kill(pid_, SIGKILL);
  for (int i = 0; i < 50; ++i) {
    pollfd fd = {stderr_fd_, POLLIN, 0};
    if (poll(&fd, 1, 100) <= 0) break;
    ssize_t n = read(stderr_fd_, buffer, sizeof(buffer));
    if (n <= 0) break;
    err_text.append(buffer, static_cast<size_t>(n));
  }
  int code = Reap(std::chrono::seconds(5));
  {
    std::lock_guard<std::mutex> lock(mu_);
    stderr_ = err_text;
  }
  error_ = binary_ + " did not start (" + why + "; exit code " + std::to_string(code) +
           "); stdout: " + banner_ + "; stderr: " + err_text;
  return false;
}

void ServerProcess::Drain() {
  char buffer[8192];
  int fds_open = 2;
  pollfd fds[2] = {{stdout_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}};
  while (fds_open > 0 && !stop_draining_) {
    if (poll(fds, 2, 100) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        fds[i].fd = -1;  // closed by Reap after the join
        --fds_open;
        continue;
      }
      std::lock_guard<std::mutex> lock(mu_);
      (i == 0 ? stdout_rest_ : stderr_).append(buffer, static_cast<size_t>(n));
    }
  }
  drained_ = true;
}

std::string ServerProcess::stderr_text() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stderr_;
}

int ServerProcess::Reap(std::chrono::milliseconds grace) {
  const auto deadline = SteadyClock::now() + grace;
  int status = 0;
  bool reaped = false;
  while (true) {
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped = true;
      break;
    }
    if (r < 0 && errno != EINTR) break;
    if (SteadyClock::now() > deadline) {
      kill(pid_, SIGKILL);
      while ((r = waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
      }
      reaped = r == pid_;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = 0;
  CloseFd(stdin_fd_);
  if (drainer_.joinable()) {
    // The child is gone, so both pipes reach end of file unless something else holds them.
    auto give_up = SteadyClock::now() + std::chrono::seconds(2);
    while (!drained_ && SteadyClock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    stop_draining_ = true;
    drainer_.join();
  }
  CloseFd(stdout_fd_);
  CloseFd(stderr_fd_);
  exit_code_ = (reaped && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  return exit_code_;
}

int ServerProcess::Stop(int signal) {
  if (pid_ <= 0) return -1;
  kill(pid_, signal);
  return Reap(std::chrono::seconds(5));
}

void ServerProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  Reap(std::chrono::seconds(5));
}

}  // namespace tock::testing
