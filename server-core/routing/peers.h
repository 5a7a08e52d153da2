// Connections to the other hosts sharing the database, one channel per address, reused by
// every call. Calls between hosts carry the metadata `tock-forwarded: 1`, so that a host
// receiving one runs it itself (answering "not owned" if the ring moved on) and never sends
// it further: a call is forwarded at most once per attempt, whatever the hosts' views.
//
// Thread safety: safe from any thread.
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/support/byte_buffer.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/time/time.h"
#include "server-core/rpc/dialer.h"
#include "tock/cluster/v1/host_service.grpc.pb.h"

namespace tock::server::routing {

constexpr char kForwardedHeader[] = "tock-forwarded";

class Peers {
 public:
  // Channels come from `dialer` (TLS with tls.internode), which must outlive this.
  explicit Peers(const rpc::Dialer& dialer) : dialer_(dialer) {}

  using Done = std::function<void(const grpc::Status&, grpc::ByteBuffer*)>;

  // Sends a call (its request as received) to the host at `address`; `done` runs once, on
  // a gRPC thread, with the peer's answer. Returns a cancel function (safe to call after
  // `done` ran).
  // `authorization`: the caller's header of that name (empty: none), sent on so that the
  // owner authorizes the call as the caller's (security/authz_interceptor.h).
  std::function<void()> Forward(const std::string& address, const std::string& method,
                                const grpc::ByteBuffer& request, absl::Time deadline, Done done,
                                const std::string& authorization = {});

  // The host service of a peer, and a context for a call to it (forwarded, with `deadline`).
  tock::cluster::v1::HostService::Stub& HostService(const std::string& address);
  static void Prepare(grpc::ClientContext& context, absl::Time deadline);

 private:
  struct Peer {
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<tock::cluster::v1::HostService::Stub> host_service;
  };
  Peer& Get(const std::string& address);

  const rpc::Dialer& dialer_;
  std::mutex mu_;
  std::map<std::string, Peer> peers_;
};

}  // namespace tock::server::routing
