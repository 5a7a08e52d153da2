// Why a connection to a server failed at the transport, in words an operator can act on.
//
// gRPC reports a TLS client meeting a plaintext server, a plaintext client meeting a TLS
// server, and most refused handshakes alike: "failed to connect to all addresses ...
// Socket closed". After such a failure the client opens one connection of its own to the
// server and runs a TLS handshake with the same options (OpenSSL), to say which it was:
// "the server at ADDR answered TLS; use --tls", "... answered without TLS", a certificate
// the server did not accept, a client certificate it wants or refused.
//
// Thread safety: stateless; any thread.
#pragma once

#include <optional>
#include <string>

#include "absl/time/time.h"
#include "lib/client/connection.h"

namespace tock::client {

// The explanation of a transport failure with `address` (HOST:PORT) under `tls`, or nullopt
// when the probe finds nothing to say: the server cannot be reached over TCP, or the TLS
// handshake (or its absence) works. Gives up after `timeout`.
std::optional<std::string> ExplainTransportFailure(const std::string& address,
                                                   const TlsOptions& tls, absl::Duration timeout);

}  // namespace tock::client
