// `authorization:` of tock-server's YAML: who may call what (authz_rules.h), from bearer
// tokens verified against a JWKS and from client certificates' subjects.
//
//   authorization:
//     jwks: /etc/tock/jwks.json    # or https://idp.example/.well-known/jwks.json
//     jwks_refresh: 5m             # how often the JWKS is read again (file or URL)
//     issuer: https://idp.example  # optional: tokens must carry this iss
//     audience: tock               # optional: tokens' aud must hold this
//     permissions_claim: permissions
//     subjects:                    # mTLS: a verified client certificate's subject (RFC 2253,
//       "CN=worker-1": ["orders:worker"]   #  as gRPC reports it) and its permissions
//     plaintext_host_calls: false  # true: allow hosts of a shared database to call each
//                                  #   other without tls.internode (see below)
//
// Absent: no authorization (the default, and `tock server start-dev`). Present, it needs a
// jwks or at least one subject.
//
// Hosts sharing a database (PostgreSQL) call each other with the database's host secret,
// which skips authorization (routing/peer_credential.h): without tls.internode it crosses the
// network in clear, and whoever reads it once may call anything. So `authorization:` on a
// shared database needs tls.internode; a deployment whose hosts talk over a network no one
// else can read may say so with plaintext_host_calls: true.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace tock::server::security {

struct AuthorizationConfig {
  static constexpr size_t kMaxSubjects = 10'000;
  static constexpr size_t kMaxPermissionsPerSubject = 1'000;
  static constexpr size_t kMaxStringBytes = 1024;  // a subject, permission, issuer, ...

  std::string jwks;  // a file path or an http(s) URL; empty: tokens are not accepted
  absl::Duration jwks_refresh = absl::Minutes(5);
  std::string issuer;
  std::string audience;
  std::string permissions_claim = "permissions";
  std::map<std::string, std::vector<std::string>> subjects;
  bool plaintext_host_calls = false;

  // True when `jwks` is an http:// or https:// URL.
  bool JwksIsUrl() const;
};

// Reads `authorization:` into `*out` (left unset when the node is absent). INVALID_ARGUMENT
// "config authorization.KEY: ..." naming the key and what it must be.
absl::Status ParseAuthorizationConfig(const YAML::Node& node,
                                      std::optional<AuthorizationConfig>* out);

}  // namespace tock::server::security
