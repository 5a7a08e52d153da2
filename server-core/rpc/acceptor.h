// The frontend's listening socket, accepted by a thread of ours and handed to gRPC.
//
// Why not gRPC's own listener (AddListeningPort): in gRPC 1.51 (Debian 12) an accept4 that
// fails with EMFILE ("Too many open files") ends that listener for good, so one burst of
// connections past the descriptor limit left the server deaf while descriptors were free
// again. Here an accept that fails for want of descriptors or memory is retried with
// backoff (10 ms doubling to 1 s), and connections are capped: past `max_connections`, or
// when fewer than kReservedDescriptors descriptors are left for the database and archives,
// a new connection is closed at once. gRPC serves each accepted connection exactly as it
// would its own, through the server's external connection acceptor (ServerBuilder::
// experimental().AddExternalConnectionAcceptor): the server's channel arguments and its
// credentials, TLS included (grpc_server_add_channel_from_fd takes plaintext ones only).
//
// Counting: the acceptor keeps the connections it handed over (descriptor and socket inode,
// as gRPC reuses descriptor numbers once it closes them) and drops the closed ones when the
// count reaches the limit or a second has passed, so an accept costs O(1) amortised and
// database files, peer channels and callback sockets never count as connections. The
// descriptor reserve is checked against /proc/self/fd at most once a second (and again when
// the estimate nears the limit); when /proc cannot be read, the reserve fails closed.
//
// Thread safety: Start and Stop from one thread; the counters from any.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"

#include <grpcpp/server_builder.h>

#include "absl/status/statusor.h"
#include "lib/common/log.h"

namespace tock::server::rpc {

class Acceptor {
 public:
  // Descriptors kept free for everything but client connections.
  static constexpr int kReservedDescriptors = 64;

  explicit Acceptor(Logger& logger) : logger_(logger) {}
  ~Acceptor() { Stop(); }
  Acceptor(const Acceptor&) = delete;
  Acceptor& operator=(const Acceptor&) = delete;

  // Binds and listens on ip:port (0: a free port). UNAVAILABLE naming the address when it
  // is in use or not available. No SO_REUSEPORT: a second server on the same port is an error.
  absl::StatusOr<int> Listen(const std::string& ip, int port);
  // Accepts until Stop, handing connections to `handoff`, the external connection acceptor
  // of a server built and started without ports of its own (it must outlive Stop).
  // Past `max_connections` client connections still open, a new one is closed at once.
  void Start(grpc::experimental::ExternalConnectionAcceptor* handoff, int max_connections);
  // Closes the listening socket and joins the thread. Idempotent.
  void Stop();

  int64_t accepted() const { return accepted_; }
  int64_t refused() const { return refused_; }
  int64_t accept_errors() const { return accept_errors_; }

 private:
  // An accepted connection, known by its socket's inode: its descriptor number alone is
  // reused after gRPC closes it.
  struct Connection {
    int fd;
    dev_t device;
    ino_t inode;
  };

  void Loop();
  // Whether the connection just accepted on `fd` may be kept (it is recorded if so).
  bool Admit(int fd);
  // Drops the recorded connections whose sockets gRPC has closed.
  void ForgetClosed();
  // Whether kReservedDescriptors descriptors stay free with `fd` open.
  bool DescriptorsToSpare(int fd);

  Logger& logger_;
  grpc::experimental::ExternalConnectionAcceptor* handoff_ = nullptr;
  int max_connections_ = 0;
  // Only the accept thread touches these.
  std::vector<Connection> connections_;
  absl::Time last_sweep_ = absl::InfinitePast();
  int counted_descriptors_ = 0;  // from /proc/self/fd at counted_at_
  int accepted_since_count_ = 0;
  absl::Time counted_at_ = absl::InfinitePast();
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  std::thread thread_;
  std::atomic<int64_t> accepted_{0}, refused_{0}, accept_errors_{0};
};

}  // namespace tock::server::rpc
