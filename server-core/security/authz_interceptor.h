// Authorization of every call tock-server answers: the dispatcher's admission of every
// method (rpc::Dispatcher::Admit), which runs before any wrapper (rate limits, routing
// between hosts, redirection to another cluster) and before the call is queued for a handler
// thread; for a method that names no namespace, before its message is even read. It decides
// from
//   - the bearer token of the `authorization` header (authz_token.h, keys from
//     authz_jwks_source.h), and
//   - the subject of a verified client certificate (mTLS), mapped by `subjects:`;
// the caller holds the roles of both. The call's rule (authz_rules.h) and, for a namespace
// call, the request's `namespace` field (read from the payload as it arrived) say what it
// needs. Refusals:
//   UNAUTHENTICATED    no token and no mapped certificate, or a token that does not verify:
//                      "<Method>[ on namespace "<ns>"] needs the <role> role: <why>"
//   PERMISSION_DENIED  the caller's roles fall short:
//                      "<Method> on namespace "<ns>" needs the <role> role" or
//                      "<Method> needs the temporal-system:<role> role"
// The token itself is never logged nor echoed.
//
// A call from another host of the database (it bears the host secret,
// routing/peer_credential.h) is let through unchecked: a call forwarded to the owner of its
// shard or queue was authorized by the host that took it from its client (this check runs
// first there), and HostService calls are the hosts' own. Nor is a batch's or schedule's
// call to its own frontend (marked with the secret too): the batch or schedule was
// authorized when created. A client sending those headers without the secret is checked
// like any other. Calls a server makes of another cluster (replication, DC redirection)
// carry no token: they need a client certificate mapped to temporal-system:admin
// (tls.internode with `subjects:`; authz_internode.h checks the mapping at start).
//
// Verified tokens are cached (by their SHA-256, per key set, until they expire; at most
// kMaxCachedTokens, all dropped when full), so a client's every call does not cost a
// signature check.
//
// Thread safety: Install before the server starts; calls are then checked from any thread.
#pragma once

#include <grpcpp/support/byte_buffer.h>

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "server-core/routing/peer_credential.h"
#include "server-core/rpc/dispatcher.h"
#include "server-core/security/authz_claims.h"
#include "server-core/security/authz_config.h"
#include "server-core/security/authz_jwks_source.h"
#include "server-core/security/authz_rules.h"
#include "server-core/security/authz_token.h"

namespace tock::server::security {

class Authorizer {
 public:
  static constexpr size_t kMaxCachedTokens = 4096;
  static constexpr size_t kMaxHeaderBytes = kMaxTokenBytes + 16;  // "Bearer " and the token

  // Reads the JWKS (when configured); its errors stop the start. `clock` is wall time for
  // the tokens' exp and nbf (not a test server's skipped time).
  static absl::StatusOr<std::unique_ptr<Authorizer>> Create(const AuthorizationConfig& config,
                                                            Clock& clock, Logger& logger);

  // Admits the calls of every registered method (rpc::Dispatcher::Admit: before the message
  // is read for a cluster or open method, before it is queued or parsed for a namespace
  // method). FAILED_PRECONDITION naming the methods that have no rule
  // (or whose namespace cannot be read): a server must not start with a call nobody decided
  // about. `peers` (null: none; else it must outlive the server) recognizes the calls of the
  // other hosts of the database, which are not checked again.
  absl::Status Install(rpc::Dispatcher& dispatcher, const routing::PeerCredential* peers = nullptr);

  // What a call needs, resolved once per method.
  struct Compiled {
    MethodRule rule;
    int namespace_field = 0;  // the request's `namespace` field number (namespace rules)
  };
  static absl::StatusOr<Compiled> Compile(const std::string& method);

  // The decision on one call. `authorization`: the header's value (empty: none); `subject`:
  // the verified client certificate's subject (empty: none).
  absl::Status Check(const Compiled& method, absl::string_view authorization,
                     absl::string_view subject, const grpc::ByteBuffer& payload);
  // The same, with the header and the subject of the call `ctx`.
  absl::Status Check(const Compiled& method, const rpc::CallContext& ctx,
                     const grpc::ByteBuffer& payload);

  // The roles of a caller with this header and certificate subject (the same reading as
  // Check's). UNAUTHENTICATED with the reason alone when neither identifies it.
  absl::StatusOr<Permissions> Identify(absl::string_view authorization, absl::string_view subject);
  absl::StatusOr<Permissions> Identify(const rpc::CallContext& ctx);
  // The call's authorization header (empty: none) and verified client certificate subject
  // (empty: none), as Check reads them.
  static std::pair<absl::string_view, std::string> Credentials(const rpc::CallContext& ctx);

 private:
  Authorizer(const AuthorizationConfig& config, Clock& clock, Logger& logger);
  absl::StatusOr<Permissions> FromToken(absl::string_view token);

  struct Cached {
    Permissions permissions;
    absl::Time expires;
  };
  const TokenVerifier verifier_;
  std::map<std::string, Permissions, std::less<>> subjects_;
  Clock& clock_;
  Logger& logger_;
  std::unique_ptr<JwksSource> jwks_;  // null: no tokens accepted
  std::mutex cache_mu_;
  uint64_t cache_generation_ = 0;
  std::unordered_map<std::string, Cached> cache_;  // by SHA-256 of the token
};

// The `namespace` string field `field_number` at the top level of a serialized message; ""
// when absent, unreadable, or longer than 1,000 bytes. Other fields are skipped by length,
// nothing else is copied.
std::string ReadNamespaceField(const grpc::ByteBuffer& payload, int field_number);

}  // namespace tock::server::security
