// A JSON Web Key Set (RFC 7517) read into the public keys that verify tokens: RSA keys
// (kty RSA, n and e, at least 2048 bits) for RS256 and P-256 keys (kty EC, crv P-256, x and
// y) for ES256, each turned into a PEM public key with OpenSSL 3 (what libjwt verifies with).
//
// Limits: the document at most kMaxJwksBytes, at most kMaxKeys keys, a kid at most
// kMaxKidBytes. Every key needs a kid (tokens choose their key by it; two keys may not share
// one). Keys that cannot sign tokens we accept (use "enc", kty oct or OKP, alg other than
// RS256/ES256, another curve) are skipped, not refused: identity providers publish them
// beside their signing keys. A set with no usable key is refused.
//
// Thread safety: a value type.
#pragma once

#include <map>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace tock::server::security {

inline constexpr size_t kMaxJwksBytes = 1 << 20;
inline constexpr size_t kMaxKeys = 100;
inline constexpr size_t kMaxKidBytes = 256;

enum class KeyAlg { kRs256, kEs256 };

absl::string_view KeyAlgName(KeyAlg alg);  // "RS256", "ES256"

struct VerificationKey {
  KeyAlg alg;
  std::string pem;  // "-----BEGIN PUBLIC KEY-----\n..."
};

struct Jwks {
  std::map<std::string, VerificationKey, std::less<>> keys;  // by kid
  int skipped = 0;  // keys left out (see above)
};

// INVALID_ARGUMENT naming the key (by index and kid) and the field at fault; `source` (the
// file or URL) starts the message.
absl::StatusOr<Jwks> ParseJwks(absl::string_view json, absl::string_view source);

}  // namespace tock::server::security
