#include "server-core/rpc/acceptor.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace tock::server::rpc {
namespace {

constexpr absl::Duration kFirstBackoff = absl::Milliseconds(10);
constexpr absl::Duration kMaxBackoff = absl::Seconds(1);
// Refusals and accept failures are logged at most this often.
constexpr absl::Duration kLogEvery = absl::Seconds(10);

// How often closed connections are swept and /proc/self/fd counted at most (each also runs
// when its figure nears its limit).
constexpr absl::Duration kRecountEvery = absl::Seconds(1);

// The descriptors open in this process; -1 when /proc cannot be read.
int OpenDescriptors() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int n = 0;
  while (readdir(dir) != nullptr) ++n;
  closedir(dir);
  return n - 3;  // ".", ".." and the directory's own descriptor
}

int DescriptorLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 1 << 20;
  return static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 1 << 20));
}

bool OutOfResources(int err) {
  return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
}

}  // namespace

absl::StatusOr<int> Acceptor::Listen(const std::string& ip, int port) {
  const std::string requested = absl::StrCat(ip, ":", port);
  in6_addr addr6{};
  in_addr addr4{};
  const bool v6 = inet_pton(AF_INET6, ip.c_str(), &addr6) == 1;
  if (!v6 && inet_pton(AF_INET, ip.c_str(), &addr4) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot listen on ", requested, ": the IP address is not valid"));
  }
  listen_fd_ = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", requested, ": ", strerror(errno)));
  }
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  int rc;
  if (v6) {
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_addr = addr6;
    sa.sin6_port = htons(static_cast<uint16_t>(port));
    rc = bind(listen_fd_, reinterpret_cast<sockaddr*>(&sa), sizeof(sa));
  } else {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr = addr4;
    sa.sin_port = htons(static_cast<uint16_t>(port));
    rc = bind(listen_fd_, reinterpret_cast<sockaddr*>(&sa), sizeof(sa));
  }
  if (rc != 0 || listen(listen_fd_, 1024) != 0) {
    const int err = errno;
    close(listen_fd_);
    listen_fd_ = -1;
    return absl::UnavailableError(absl::StrCat("cannot listen on ", requested, ": ",
                                               err == EADDRINUSE ? "the address is in use"
                                                                 : strerror(err)));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  return v6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
            : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

void Acceptor::Start(grpc::experimental::ExternalConnectionAcceptor* handoff, int max_connections) {
  handoff_ = handoff;
  max_connections_ = max_connections;
  connections_.clear();
  if (pipe2(wake_pipe_, O_CLOEXEC) != 0) wake_pipe_[0] = wake_pipe_[1] = -1;
  thread_ = std::thread([this] { Loop(); });
}

void Acceptor::Stop() {
  if (wake_pipe_[1] >= 0) {
    const char byte = 1;
    (void)!write(wake_pipe_[1], &byte, 1);
  }
  if (thread_.joinable()) thread_.join();
  for (int* fd : {&listen_fd_, &wake_pipe_[0], &wake_pipe_[1]}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

bool Acceptor::Admit(int fd) {
  if (!DescriptorsToSpare(fd)) return false;
  if (static_cast<int>(connections_.size()) >= max_connections_ ||
      absl::Now() - last_sweep_ >= kRecountEvery) {
    ForgetClosed();
  }
  if (static_cast<int>(connections_.size()) >= max_connections_) return false;
  struct stat st {};
  if (fstat(fd, &st) != 0) return false;
  connections_.push_back({fd, st.st_dev, st.st_ino});
  return true;
}

void Acceptor::ForgetClosed() {
  std::erase_if(connections_, [](const Connection& c) {
    struct stat st {};
    return fstat(c.fd, &st) != 0 || st.st_dev != c.device || st.st_ino != c.inode;
  });
  last_sweep_ = absl::Now();
}

bool Acceptor::DescriptorsToSpare(int fd) {
  const int limit = DescriptorLimit();
  // accept4 returns the lowest free number, so at least `fd` descriptors are open.
  if (fd + kReservedDescriptors >= limit) return false;
  ++accepted_since_count_;
  const bool near = counted_descriptors_ + accepted_since_count_ + kReservedDescriptors >= limit;
  if (near || absl::Now() - counted_at_ >= kRecountEvery) {
    counted_descriptors_ = OpenDescriptors();
    counted_at_ = absl::Now();
    accepted_since_count_ = 0;
    if (counted_descriptors_ < 0) {  // cannot tell: keep the reserve rather than risk it
      counted_descriptors_ = limit;
      return false;
    }
  }
  return counted_descriptors_ + accepted_since_count_ + kReservedDescriptors < limit;
}

void Acceptor::Loop() {
  absl::Duration backoff = kFirstBackoff;
  absl::Time last_log = absl::InfinitePast();
  int64_t refused_since_log = 0, errors_since_log = 0;
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}};
    if (poll(fds, wake_pipe_[0] >= 0 ? 2 : 1, -1) < 0 && errno != EINTR) break;
    if (fds[1].revents != 0) break;  // Stop
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR || err == ECONNABORTED) continue;
      ++accept_errors_;
      ++errors_since_log;
      if (absl::Now() - last_log >= kLogEvery) {
        logger_.Warn("accepting a connection failed; retrying",
                     {{"error", strerror(err)},
                      {"failures", absl::StrCat(errors_since_log)},
                      {"retry_in", absl::FormatDuration(backoff)}});
        last_log = absl::Now();
        errors_since_log = 0;
      }
      if (OutOfResources(err)) {
        // The connection waits in the backlog; try again when descriptors may be free.
        absl::SleepFor(backoff);
        backoff = std::min(backoff * 2, kMaxBackoff);
      }
      continue;
    }
    backoff = kFirstBackoff;
    if (!Admit(fd)) {
      close(fd);
      ++refused_;
      ++refused_since_log;
      if (absl::Now() - last_log >= kLogEvery) {
        logger_.Warn("connection refused: too many open connections or descriptors",
                     {{"max_connections", absl::StrCat(max_connections_)},
                      {"refused", absl::StrCat(refused_since_log)}});
        last_log = absl::Now();
        refused_since_log = 0;
      }
      continue;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    // gRPC owns the descriptor from here (it closes it, also when the handshake fails).
    grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters connection;
    connection.listener_fd = listen_fd_;
    connection.fd = fd;
    handoff_->HandleNewConnection(&connection);
    ++accepted_;
  }
}

}  // namespace tock::server::rpc
