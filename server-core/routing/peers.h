// Connections to the other hosts sharing the database, one channel per address, reused by
// every call. Every call between hosts (Forward, and HostService calls prepared with Prepare)
// carries the database's host secret (peer_credential.h), so that a host receiving one runs it
// itself (answering "not owned" if the ring moved on) and never sends it further: a call is
// forwarded at most once per attempt, whatever the hosts' views. It also tells the receiving
// host that the call was authorized and counted against the rate limits by the host that took
// it from its client, so a forwarded call carries no token of its own.
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
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "lib/common/metrics.h"
#include "server-core/routing/peer_credential.h"
#include "server-core/rpc/dialer.h"
#include "tock/cluster/v1/host_service.grpc.pb.h"

namespace tock::server::routing {

class Peers {
 public:
  // Channels come from `dialer` (TLS with tls.internode); calls are stamped with
  // `credential` and with `self`, this host's address on the ring. Both must outlive this.
  Peers(const rpc::Dialer& dialer, const PeerCredential& credential, std::string self)
      : dialer_(dialer), credential_(credential), self_(std::move(self)) {}

  using Done = std::function<void(const grpc::Status&, grpc::ByteBuffer*)>;

  // Sends a call (its request as received) to the host at `address`; `done` runs once, on
  // a gRPC thread, with the peer's answer. Returns a cancel function (safe to call after
  // `done` ran).
  std::function<void()> Forward(const std::string& address, const std::string& method,
                                const grpc::ByteBuffer& request, absl::Time deadline, Done done);

  // The host service of a peer, and a context for a call to it (stamped, with `deadline`).
  tock::cluster::v1::HostService::Stub& HostService(const std::string& address);
  void Prepare(grpc::ClientContext& context, absl::Time deadline) const;

  // Counts every call this host makes to another (Forward and Prepare): set once at start.
  void CountCallsWith(metrics::Counter calls) { calls_ = calls; }

  // Whether a call this host received came from another host (peer_credential.h).
  bool FromPeer(const rpc::CallContext& ctx) const { return credential_.FromPeer(ctx); }
  // The address of the host that sent such a call (none for a client's call).
  std::optional<std::string> Origin(const rpc::CallContext& ctx) const;
  static constexpr char kOriginHeader[] = "tock-origin-host";

 private:
  struct Peer {
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<tock::cluster::v1::HostService::Stub> host_service;
  };
  Peer& Get(const std::string& address);

  const rpc::Dialer& dialer_;
  const PeerCredential& credential_;
  const std::string self_;
  metrics::Counter calls_;
  std::mutex mu_;
  std::map<std::string, Peer> peers_;
};

}  // namespace tock::server::routing
