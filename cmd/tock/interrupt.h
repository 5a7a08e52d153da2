// Ctrl-C for a process that must not die of it: the REPL (Ctrl-C cancels the running
// command, not the session) and commands that end cleanly when interrupted (`show --follow`).
//
// A signal handler may only do async-signal-safe things, and cancelling gRPC calls is not
// one of them: the handler writes one byte to a pipe, and a thread of the watcher reads it
// and runs the callback (e.g. CommandContext::Interrupt) outside signal context.
#pragma once

#include <csignal>
#include <functional>
#include <thread>

namespace tock::cli {

class InterruptWatcher {
 public:
  // Installs a SIGINT handler (without SA_RESTART, so a blocking read returns EINTR) that
  // ends in `on_interrupt`. At most one watcher exists at a time; while one is active,
  // active() is true and a command must not start another.
  explicit InterruptWatcher(std::function<void()> on_interrupt);
  // Restores the previous SIGINT disposition and stops the thread.
  ~InterruptWatcher();
  InterruptWatcher(const InterruptWatcher&) = delete;
  InterruptWatcher& operator=(const InterruptWatcher&) = delete;

  static bool active();

 private:
  std::function<void()> on_interrupt_;
  int pipe_[2] = {-1, -1};
  bool installed_ = false;
  struct ::sigaction previous_ {};
  std::thread thread_;
};

}  // namespace tock::cli
