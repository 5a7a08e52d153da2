#include "server-core/timers/callback_signature.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdint>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tock::server::timers {
namespace {

// This Abseil's string_view is its own type, not std's.
absl::string_view A(std::string_view s) { return absl::string_view(s.data(), s.size()); }

std::string HexHmac(std::string_view secret, std::string_view t, std::string_view body) {
  const std::string message = absl::StrCat(A(t), ".", A(body));
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &len);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(mac), len));
}

}  // namespace

std::string CallbackSignature(std::string_view secret, absl::Time at, std::string_view body) {
  const std::string t = absl::StrCat(absl::ToUnixSeconds(at));
  return absl::StrCat("t=", t, ",v1=", HexHmac(secret, t, body));
}

absl::Status VerifyCallbackSignature(std::string_view secret, std::string_view header_value,
                                     std::string_view body, absl::Time now,
                                     absl::Duration tolerance) {
  std::string_view t, v1;
  for (absl::string_view part : absl::StrSplit(A(header_value), ',')) {
    if (part.substr(0, 2) == "t=") t = std::string_view(part.data() + 2, part.size() - 2);
    if (part.substr(0, 3) == "v1=") v1 = std::string_view(part.data() + 3, part.size() - 3);
  }
  int64_t seconds = 0;
  if (t.empty() || v1.empty() || !absl::SimpleAtoi(A(t), &seconds)) {
    return absl::UnauthenticatedError(
        absl::StrCat(kSignatureHeader, " must be t=<unix seconds>,v1=<hex HMAC-SHA256>"));
  }
  if (absl::AbsDuration(now - absl::FromUnixSeconds(seconds)) > tolerance) {
    return absl::UnauthenticatedError(absl::StrCat(kSignatureHeader, "'s time is more than ",
                                                   absl::FormatDuration(tolerance),
                                                   " from now: a replayed or delayed callback"));
  }
  const std::string expected = HexHmac(secret, t, body);
  if (v1.size() != expected.size() ||
      CRYPTO_memcmp(v1.data(), expected.data(), expected.size()) != 0) {
    return absl::UnauthenticatedError(
        absl::StrCat(kSignatureHeader, " does not match the body and the secret"));
  }
  return absl::OkStatus();
}

const std::string* SigningSecretFor(const std::map<std::string, std::string>& secrets,
                                    const std::string& namespace_name) {
  if (auto it = secrets.find(namespace_name); it != secrets.end()) return &it->second;
  if (auto it = secrets.find("*"); it != secrets.end()) return &it->second;
  return nullptr;
}

absl::Status ValidateSigningSecrets(const std::map<std::string, std::string>& secrets) {
  for (const auto& [name, secret] : secrets) {
    if (secret.size() < kMinSigningSecretBytes || secret.size() > kMaxSigningSecretBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          kSigningSecretsKey, ".", name.substr(0, 255), " must be ", kMinSigningSecretBytes,
          " to ", kMaxSigningSecretBytes, " bytes (a long random string); got ", secret.size()));
    }
  }
  return absl::OkStatus();
}

}  // namespace tock::server::timers
