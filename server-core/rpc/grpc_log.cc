#include "server-core/rpc/grpc_log.h"

#include <grpc/support/log.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

namespace tock::server::rpc {
namespace {

constexpr auto kWindow = std::chrono::seconds(10);
constexpr size_t kMaxMessage = 512;

std::mutex mu;
std::chrono::steady_clock::time_point window_start;
int lines_in_window = 0;
long suppressed = 0;

const char* Basename(const char* path) {
  const char* slash = path == nullptr ? nullptr : std::strrchr(path, '/');
  return slash == nullptr ? (path == nullptr ? "" : path) : slash + 1;
}

void Sink(gpr_log_func_args* args) {
  const auto now = std::chrono::steady_clock::now();
  std::string line;
  {
    std::lock_guard lock(mu);
    if (now - window_start >= kWindow) {
      window_start = now;
      lines_in_window = 0;
    }
    if (lines_in_window >= kGrpcLogLinesPerWindow) {
      ++suppressed;
      return;
    }
    ++lines_in_window;
    if (suppressed > 0) {
      line = "grpc: " + std::to_string(suppressed) + " more lines were dropped (at most " +
             std::to_string(kGrpcLogLinesPerWindow) + " every 10 s)\n";
      suppressed = 0;
    }
  }
  std::string message = args->message == nullptr ? "" : args->message;
  if (message.size() > kMaxMessage) message.resize(kMaxMessage);
  line += "grpc: " + std::string(gpr_log_severity_string(args->severity)) + " " +
          Basename(args->file) + ":" + std::to_string(args->line) + ": " + message + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);  // one write per line: lines never mix
}

}  // namespace

void InstallBoundedGrpcLog() { gpr_set_log_function(Sink); }

}  // namespace tock::server::rpc
