// Raises the listen backlog of this process's listening TCP socket on `port`.
//
// cpp-httplib (Debian's compiled 0.11) listens with a backlog of 5, fixed when the library
// was built. When a client opens dozens of connections at once (a callback sender after the
// receiver closed its idle ones, a pool of API clients), the kernel drops the SYNs beyond
// the backlog and the clients resend them after 1 s, then 3 s: whole seconds of stall for
// nothing. Linux lets listen() be called again on a listening socket to change its backlog;
// the socket is found among this process's descriptors by its port (cpp-httplib keeps it
// private).
#pragma once

#include "absl/status/status.h"

namespace tock {

inline constexpr int kListenBacklog = 1024;  // capped by net.core.somaxconn

// NOT_FOUND when no listening socket of this process has that local port.
absl::Status RaiseListenBacklog(int port, int backlog = kListenBacklog);

}  // namespace tock
