// gRPC credentials built from TLS files (the `tls:` section of the server configuration):
// the frontend's server credentials and the channel credentials of calls to other hosts and
// clusters.
//
// Both watch their files with gRPC's file watcher (FileWatcherCertificateProvider): a
// certificate, key or CA replaced on disk is used for new handshakes within `reload`,
// without a restart. gRPC reads the files again only when their contents changed, and keeps
// the previous ones when the new certificate and key do not match (a half-written rotation);
// connections already open keep the certificate they were set up with.
//
// gRPC's TLS stack (1.51) negotiates TLS 1.2 or 1.3 only: nothing older is accepted.
//
// Thread safety: the credentials are immutable and shared by every connection.
#pragma once

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <optional>
#include <string>

#include "absl/time/time.h"

namespace tock::server::rpc {

// `tls.frontend`: what clients connect to.
struct FrontendTls {
  std::string cert_file;       // PEM certificate chain served to clients
  std::string key_file;        // PEM private key of cert_file
  std::string client_ca_file;  // PEM CAs client certificates must chain to; "": none asked for
  // Clients must present a certificate from client_ca_file. Unset: true when
  // client_ca_file is set. False with a CA: a certificate is asked for and checked when sent.
  std::optional<bool> require_client_auth;

  bool RequiresClientCertificate() const {
    return require_client_auth.value_or(!client_ca_file.empty());
  }
};

// `tls.internode`: how this server calls other hosts of its database, other clusters'
// frontends and its own frontend (batches, schedules).
struct InternodeTls {
  std::string cert_file;    // PEM client certificate for mutual TLS; "": none sent
  std::string key_file;     // its key (both or neither)
  std::string ca_file;      // PEM CAs the servers' certificates must chain to; "": system roots
  std::string server_name;  // checked against the servers' certificates instead of the host
};

// Frontend TLS credentials per `tls` (files checked beforehand, see config/tls_config.h);
// plaintext when `tls` is unset.
std::shared_ptr<grpc::ServerCredentials> FrontendCredentials(const std::optional<FrontendTls>& tls,
                                                             absl::Duration reload);

// Channel credentials per `tls`; plaintext when unset. The server name override is not part
// of the credentials: it is a channel argument (Dialer sets it).
std::shared_ptr<grpc::ChannelCredentials> InternodeCredentials(
    const std::optional<InternodeTls>& tls, absl::Duration reload);

}  // namespace tock::server::rpc
