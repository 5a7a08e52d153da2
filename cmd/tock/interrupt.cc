#include "cmd/tock/interrupt.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

namespace tock::cli {
namespace {

std::atomic<int> g_write_fd{-1};

void OnSigint(int) {
  const int saved = errno;
  const int fd = g_write_fd.load();
  if (fd >= 0) {
    const char byte = 'i';
    (void)!write(fd, &byte, 1);
  }
  errno = saved;
}

}  // namespace

InterruptWatcher::InterruptWatcher(std::function<void()> on_interrupt)
    : on_interrupt_(std::move(on_interrupt)) {
  if (pipe(pipe_) != 0) return;  // no watcher: Ctrl-C keeps its default meaning
  g_write_fd = pipe_[1];
  struct ::sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = OnSigint;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: the REPL's line read returns on Ctrl-C
  installed_ = sigaction(SIGINT, &action, &previous_) == 0;
  thread_ = std::thread([this] {
    char byte;
    while (read(pipe_[0], &byte, 1) == 1) {
      if (byte == 'q') return;
      if (on_interrupt_) on_interrupt_();
    }
  });
}

InterruptWatcher::~InterruptWatcher() {
  if (installed_) sigaction(SIGINT, &previous_, nullptr);
  g_write_fd = -1;
  if (thread_.joinable()) {
    const char quit = 'q';
    (void)!write(pipe_[1], &quit, 1);
    thread_.join();
  }
  for (int fd : pipe_) {
    if (fd >= 0) close(fd);
  }
}

bool InterruptWatcher::active() { return g_write_fd.load() >= 0; }

}  // namespace tock::cli
