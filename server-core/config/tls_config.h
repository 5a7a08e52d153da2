// The `tls:` section of the server configuration: TLS on the frontend port (what clients,
// and other hosts, connect to) and on the calls this server makes to other hosts, other
// clusters and its own frontend.
//
//   tls:
//     frontend:
//       cert_file: /etc/tock/server.pem      # required: the certificate chain served
//       key_file: /etc/tock/server.key       # required: its key (unencrypted PEM)
//       client_ca_file: /etc/tock/clients.pem  # optional: client certificates must chain to it
//       require_client_auth: true            # default: true when client_ca_file is set
//     internode:
//       cert_file: /etc/tock/node.pem        # client certificate (required when the frontend
//       key_file: /etc/tock/node.key         #   requires client certificates)
//       ca_file: /etc/tock/ca.pem            # CAs of the servers dialed; absent: system roots
//       server_name: tock.internal           # optional: the name their certificates must carry
//     reload_interval: 1m                    # how often the files are checked for changes
//
// Hosts of one database and this server's own batch and schedule runners call the frontend
// port, so frontend and internode go together: both or neither.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server-core/rpc/tls_credentials.h"

namespace tock::server {

struct TlsConfig {
  std::optional<rpc::FrontendTls> frontend;    // unset: the frontend is plaintext
  std::optional<rpc::InternodeTls> internode;  // unset: calls to other servers are plaintext
  absl::Duration reload_interval = absl::Minutes(1);

  bool enabled() const { return frontend.has_value() || internode.has_value(); }

  // Every file readable, PEM of the right kind (a key matching its certificate), and the
  // combination allowed. INVALID_ARGUMENT "config tls.<key>: ..." naming the key; the
  // files' contents are never quoted.
  absl::Status Validate() const;
};

// Reads `tls:` into `config`; INVALID_ARGUMENT naming a bad or unknown key.
absl::Status ParseTlsConfig(const YAML::Node& node, TlsConfig& config);

}  // namespace tock::server
