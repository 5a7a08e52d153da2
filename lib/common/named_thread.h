// A std::thread whose name (what top -H, perf and /proc/PID/task/*/comm show) says what it
// does: the timer engine's and the callback sender's threads are told apart by it, and
// timer_bench reads their processor time by name.
#pragma once

#include <functional>
#include <thread>

namespace tock {

// Starts `body` on a new thread named `name` (Linux keeps at most 15 characters; longer
// names are cut).
std::thread NamedThread(const char* name, std::function<void()> body);

}  // namespace tock
