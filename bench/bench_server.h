// Starts tock-server for a benchmark: port 0, the address read from its banner.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <grpcpp/create_channel.h>

#include <regex>
#include <string>
#include <vector>

extern char** environ;

namespace tock::bench {

struct Server {
  pid_t pid = 0;  // 0: it did not start
  std::string address;
  std::string banner_value;  // the value of the banner line StartServer was asked to wait for
};

// Runs `binary --port 0 extra_args...` and waits for the banner (stderr: see BENCH_STDERR);
// with a `banner_key` (e.g. "timers", the HTTP API's address when given --http-port 0), also
// for that line of it. A port the server picks itself cannot be taken by another process
// between a probe and the server's bind, as one picked for it could.
inline Server StartServer(const std::string& binary, std::vector<std::string> extra_args = {},
                          const std::string& banner_key = "") {
  int out[2];
  if (pipe(out) != 0) return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  // The server's stderr is dropped unless BENCH_STDERR names a file to append it to.
  const char* log = getenv("BENCH_STDERR");
  posix_spawn_file_actions_addopen(&actions, 2, log ? log : "/dev/null",
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  std::vector<std::string> args = {binary, "--port", "0"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  Server server;
  int rc = posix_spawn(&server.pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    return {};
  }
  std::string text;
  char buf[256];
  // Reads until `pattern` matches a whole line; its first group, or "" when the server
  // closed its output (it exited).
  auto read_until = [&](const std::regex& pattern) -> std::string {
    std::smatch match;
    while (!std::regex_search(text, match, pattern)) {
      ssize_t n = read(out[0], buf, sizeof(buf));
      if (n <= 0) return "";
      text.append(buf, n);
    }
    return match[1];
  };
  server.address = read_until(std::regex("listening on (\\S+)\n"));
  if (!banner_key.empty() && !server.address.empty()) {
    server.banner_value = read_until(std::regex("\\s" + banner_key + ":\\s+(\\S+)\n"));
    if (server.banner_value.empty()) server.address.clear();
  }
  if (server.address.empty()) {
    close(out[0]);
    return {};
  }
  return server;
}

// A channel to the benchmark's server that accepts the largest history pages.
inline std::shared_ptr<grpc::Channel> OpenChannel(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(128 * 1024 * 1024);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

}  // namespace tock::bench
