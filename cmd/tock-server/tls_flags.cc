#include "cmd/tock-server/tls_flags.h"

namespace tock::server {

void TlsFlags::Add(CLI::App& app) {
  app.add_option("--tls-cert-file", cert_file_,
                 "Serve TLS on the port with this PEM certificate chain (tls.frontend.cert_file); "
                 "needs --tls-key-file and the internode flags (or tls.internode)");
  app.add_option("--tls-key-file", key_file_,
                 "The certificate's PEM private key, unencrypted (tls.frontend.key_file)");
  app.add_option("--tls-client-ca-file", client_ca_file_,
                 "Ask clients for a certificate chaining to these PEM CAs, required unless "
                 "--tls-require-client-auth false (tls.frontend.client_ca_file)");
  app.add_option("--tls-require-client-auth", require_client_auth_,
                 "true or false: whether a client without a certificate is refused "
                 "(tls.frontend.require_client_auth; default true with --tls-client-ca-file)");
  app.add_option("--tls-internode-cert-file", internode_cert_file_,
                 "Client certificate of this server's calls to other hosts, other clusters and "
                 "its own port (tls.internode.cert_file); required when client certificates are");
  app.add_option("--tls-internode-key-file", internode_key_file_,
                 "Its PEM private key (tls.internode.key_file)");
  app.add_option("--tls-internode-ca-file", internode_ca_file_,
                 "PEM CAs the servers dialed must chain to; default: the system's "
                 "(tls.internode.ca_file)");
  app.add_option("--tls-internode-server-name", internode_server_name_,
                 "Name the servers' certificates must carry instead of the address dialed "
                 "(tls.internode.server_name)");
}

void TlsFlags::ApplyTo(TlsConfig& config) const {
  if (cert_file_ || key_file_ || client_ca_file_ || require_client_auth_) {
    if (!config.frontend) config.frontend.emplace();
    if (cert_file_) config.frontend->cert_file = *cert_file_;
    if (key_file_) config.frontend->key_file = *key_file_;
    if (client_ca_file_) config.frontend->client_ca_file = *client_ca_file_;
    if (require_client_auth_) config.frontend->require_client_auth = *require_client_auth_;
  }
  if (internode_cert_file_ || internode_key_file_ || internode_ca_file_ || internode_server_name_) {
    if (!config.internode) config.internode.emplace();
    if (internode_cert_file_) config.internode->cert_file = *internode_cert_file_;
    if (internode_key_file_) config.internode->key_file = *internode_key_file_;
    if (internode_ca_file_) config.internode->ca_file = *internode_ca_file_;
    if (internode_server_name_) config.internode->server_name = *internode_server_name_;
  }
}

}  // namespace tock::server
