// Verifies a bearer token (a JWS in compact form) against a key set, and reads the caller's
// permissions from it.
//
// Checks, each failure UNAUTHENTICATED with a message saying which (never the token):
//   - at most kMaxTokenBytes, three base64url parts;
//   - the header's alg is RS256 or ES256 (none and HS* are refused: a public key must never
//     be usable as an HMAC secret), its kid names a key of the set, of that algorithm;
//   - the signature verifies (libjwt, OpenSSL);
//   - exp is present and not past, nbf (when present) is reached, both with kClockSkew of
//     allowance for clocks that disagree a little;
//   - iss equals the configured issuer and aud (a string or an array) holds the configured
//     audience, when those are configured.
// The permissions claim (by default "permissions") is an array of strings, mapped by
// authz_claims.h; absent, the caller has no role (and is refused PERMISSION_DENIED later).
//
// Thread safety: Verify is const and safe from any thread.
#pragma once

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server-core/security/authz_claims.h"
#include "server-core/security/authz_jwks.h"

namespace tock::server::security {

inline constexpr size_t kMaxTokenBytes = 16 * 1024;
inline constexpr absl::Duration kClockSkew = absl::Seconds(60);

struct TokenChecks {
  std::string issuer;    // empty: not checked
  std::string audience;  // empty: not checked
  std::string permissions_claim = "permissions";
};

struct VerifiedToken {
  Permissions permissions;
  absl::Time expires;  // exp
};

class TokenVerifier {
 public:
  explicit TokenVerifier(TokenChecks checks) : checks_(std::move(checks)) {}

  absl::StatusOr<VerifiedToken> Verify(absl::string_view token, const Jwks& keys,
                                       absl::Time now) const;

 private:
  TokenChecks checks_;
};

}  // namespace tock::server::security
