// The one place where tock-server makes a gRPC channel to another server: the hosts of its
// database (routing), other clusters' frontends (replication, DC redirection) and its own
// frontend (batches, schedules). With `tls.internode` configured every such channel is TLS
// (its CA, a client certificate for mutual TLS, an optional server name); otherwise
// plaintext, as clients reach the frontend then.
//
// Thread safety: immutable; Dial from any thread.
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/support/channel_arguments.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "server-core/rpc/tls_credentials.h"

namespace tock::server::rpc {

class Dialer {
 public:
  // Plaintext.
  Dialer();
  // TLS per `tls` when set (files checked beforehand: config/tls_config.h), reloaded from
  // disk every `reload` when they change.
  Dialer(const std::optional<InternodeTls>& tls, absl::Duration reload);

  // A channel to `address` (HOST:PORT), connected lazily, whose messages may be as large
  // as the server's own (kMaxMessageBytes both ways: a forwarded call or answer is never
  // refused for a size its first hop accepted). Channels are not cached here: callers keep
  // theirs.
  std::shared_ptr<grpc::Channel> Dial(const std::string& address) const;

  // This dialer, its channels adding the metadata `key: value` to every call (a client
  // interceptor; routing/peer_credential.h marks the server's calls to its own frontend so).
  Dialer WithMetadata(std::string key, std::string value) const;

  bool tls() const { return tls_; }

 private:
  std::shared_ptr<grpc::ChannelCredentials> credentials_;
  std::string server_name_;
  bool tls_ = false;
  std::vector<std::pair<std::string, std::string>> metadata_;
};

}  // namespace tock::server::rpc
