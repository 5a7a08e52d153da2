#include "lib/common/listen_backlog.h"

#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace tock {
namespace {

// The local port of `fd` when it is a listening TCP socket over IPv4 or IPv6, else 0.
int ListeningPort(int fd) {
  int accepting = 0;
  socklen_t len = sizeof(accepting);
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0 || accepting == 0) return 0;
  sockaddr_storage addr{};
  len = sizeof(addr);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return 0;
}

}  // namespace

absl::Status RaiseListenBacklog(int port, int backlog) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot list /proc/self/fd: ", std::strerror(errno)));
  }
  bool found = false;
  absl::Status status = absl::OkStatus();
  // Bounded: one pass over this process's descriptors.
  while (dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd < 0 || fd == dirfd(dir)) continue;
    if (ListeningPort(static_cast<int>(fd)) != port) continue;
    found = true;
    if (listen(static_cast<int>(fd), backlog) != 0) {
      status = absl::InternalError(absl::StrCat("listen(port ", port, ", backlog ", backlog,
                                                "): ", std::strerror(errno)));
    }
  }
  closedir(dir);
  if (!found) return absl::NotFoundError(absl::StrCat("no listening socket on port ", port));
  return status;
}

}  // namespace tock
