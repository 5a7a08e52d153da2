// Signed callbacks (review P2-6): with a secret configured for its namespace, every callback
// carries a header that only a holder of the secret can make, so that a receiver can tell a
// callback of this server from anyone else's POST.
//
//   Tock-Signature: t=1795000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd
//
// t is when it was sent (Unix seconds, the sender's real clock); v1 is the lower-case hex
// HMAC-SHA256, keyed with the secret, of "<t>.<body>" (the decimal t, a dot, then the request
// body byte for byte). A receiver recomputes it from the body it read and compares in
// constant time, and refuses a t too far from its own clock (a replayed callback): see
// VerifyCallbackSignature, which this server's tests use as a receiver would. The body carries
// the namespace, timer id and attempt, so a signature also covers them.
//
// Secrets come from the config, per namespace name, "*" for every namespace without its own:
//   timers:
//     callbacks:
//       signing_secrets:
//         orders: "a long random string"
//         "*": "another one"
// Each at least kMinSigningSecretBytes; a namespace with no secret (and no "*") sends unsigned
// callbacks, as before.
//
// Thread safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace tock::server::timers {

inline constexpr char kSignatureHeader[] = "Tock-Signature";
inline constexpr size_t kMinSigningSecretBytes = 16;
inline constexpr size_t kMaxSigningSecretBytes = 1024;
inline constexpr char kSigningSecretsKey[] = "timers.callbacks.signing_secrets";

// The header's value for `body` sent at `at`.
std::string CallbackSignature(std::string_view secret, absl::Time at, std::string_view body);

// OK when `header_value` is a signature of `body` with `secret` made within `tolerance` of
// `now`; UNAUTHENTICATED saying which check failed otherwise (never echoing the header).
absl::Status VerifyCallbackSignature(std::string_view secret, std::string_view header_value,
                                     std::string_view body, absl::Time now,
                                     absl::Duration tolerance = absl::Minutes(5));

// The secret of `namespace_name` among `secrets` (its own, else "*"); nullptr: unsigned.
const std::string* SigningSecretFor(const std::map<std::string, std::string>& secrets,
                                    const std::string& namespace_name);

// INVALID_ARGUMENT naming the key (never the secret) when a secret is too short or too long.
absl::Status ValidateSigningSecrets(const std::map<std::string, std::string>& secrets);

}  // namespace tock::server::timers
