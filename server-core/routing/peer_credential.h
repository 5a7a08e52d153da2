// How the hosts sharing a database recognize each other's calls: a host secret, 32 random
// bytes (64 hex characters) written once in the database's cluster_metadata by the first host
// to start (ClusterMetadataStore::InitHostSecret) and read by every host at start. A call one
// host makes of another (a call forwarded to the owner of its shard or queue, and every
// HostService call; routing/peers.h) carries it as the metadata `tock-forwarded: <secret>`.
//
// A call bearing it was taken from its client by another host, which authorized it, counted
// it against the rate limits and chose its owner: the receiving host runs it as it is, and
// never forwards it again. A call with the header missing or holding anything else is an
// ordinary client call (authorized, rate limited, routed), whatever it claims: the header
// alone used to be trusted, so any client could skip the rate limits and routing.
//
// The same secret, under the header `tock-own-call`, marks the calls a server makes of its
// own frontend (a batch's terminations, a schedule's starts: OwnCallsDialer). Those are
// routed and rate limited like client calls, but not authorized again: the batch or
// schedule they carry out was authorized when a client created it (write on its namespace),
// and they carry no token of their own.
//
// The secret is never logged, echoed nor put in an error message. It protects against
// clients of the frontend port, not against readers of the database (who can do anything).
//
// Thread safety: immutable after construction; safe from any thread.
#pragma once

#include <grpcpp/client_context.h>

#include <string>

#include "absl/status/statusor.h"
#include "server-core/rpc/dialer.h"
#include "server-core/rpc/dispatcher.h"

namespace tock::server::routing {

constexpr char kForwardedHeader[] = "tock-forwarded";
constexpr char kOwnCallHeader[] = "tock-own-call";

class PeerCredential {
 public:
  static constexpr size_t kSecretBytes = 32;

  // A fresh secret: kSecretBytes from OpenSSL's CSPRNG, lowercase hex. INTERNAL when the
  // generator fails (never a weak secret).
  static absl::StatusOr<std::string> NewSecret();

  // The credential of `secret` as the database holds it; FAILED_PRECONDITION when it is not
  // 2 * kSecretBytes hex characters (the message does not quote it).
  static absl::StatusOr<PeerCredential> FromSecret(std::string secret);

  // Marks an outgoing call to another host of the database.
  void Stamp(grpc::ClientContext& context) const;

  // Whether the call came from another host of the database: the header present and equal to
  // the secret, compared in constant time. False for a call without gRPC context.
  bool FromPeer(const rpc::CallContext& ctx) const;

  // `dialer`, its channels marking every call as this server's own (for the batch and
  // schedule runners' channels to the frontend).
  rpc::Dialer OwnCallsDialer(const rpc::Dialer& dialer) const;

  // Whether the call is a server's own call to its frontend (kOwnCallHeader equal to the
  // secret, compared in constant time).
  bool OwnCall(const rpc::CallContext& ctx) const;

 private:
  explicit PeerCredential(std::string secret) : secret_(std::move(secret)) {}
  bool Bears(const rpc::CallContext& ctx, const char* header) const;
  std::string secret_;
};

}  // namespace tock::server::routing
