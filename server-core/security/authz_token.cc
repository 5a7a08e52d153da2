#include "server-core/security/authz_token.h"

#include <jwt.h>

#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server-core/security/authz_libjwt_stubs.h"

namespace tock::server::security {
namespace {

using nlohmann::json;

absl::Status Refused(absl::string_view why) {
  return absl::UnauthenticatedError(absl::StrCat("the bearer token ", why));
}

bool Base64UrlChars(absl::string_view part) {
  for (char c : part) {
    if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) return false;
  }
  return true;
}

json ParseBounded(absl::string_view text) {
  // Claims are a flat object with short arrays; deeper nesting is refused, not recursed.
  return json::parse(
      text, [](int depth, json::parse_event_t, json&) { return depth <= 16; },
      /*allow_exceptions=*/false);
}

// A NumericDate (RFC 7519: seconds since the epoch, possibly fractional).
bool ReadTime(const json& claims, const char* name, absl::Time* out) {
  auto it = claims.find(name);
  if (it == claims.end() || !it->is_number()) return false;
  const double seconds = it->get<double>();
  if (!(seconds > -1e11 && seconds < 1e11)) return false;  // about ±3000 years
  *out = absl::FromUnixSeconds(0) + absl::Seconds(seconds);
  return true;
}

struct JwtDeleter {
  void operator()(jwt_t* jwt) const { jwt_free(jwt); }
};

}  // namespace

absl::StatusOr<VerifiedToken> TokenVerifier::Verify(absl::string_view token, const Jwks& keys,
                                                     absl::Time now) const {
  if (token.empty()) return Refused("is empty");
  if (token.size() > kMaxTokenBytes) {
    return Refused(absl::StrCat("is longer than ", kMaxTokenBytes, " bytes"));
  }
  std::vector<absl::string_view> parts = absl::StrSplit(token, '.');
  if (parts.size() != 3 || parts[0].empty() || parts[1].empty() || parts[2].empty() ||
      !Base64UrlChars(parts[0]) || !Base64UrlChars(parts[1]) || !Base64UrlChars(parts[2])) {
    return Refused("is not a signed JWT (three base64url parts)");
  }

  // The header, read before any verification only to choose the key.
  std::string header_text;
  if (!absl::WebSafeBase64Unescape(parts[0], &header_text)) return Refused("has a bad header");
  const json header = ParseBounded(header_text);
  if (!header.is_object()) return Refused("has a header that is not a JSON object");
  const std::string alg = header.value("alg", json()).is_string() ? header["alg"].get<std::string>() : "";
  if (alg != "RS256" && alg != "ES256") {
    return Refused(absl::StrCat("is signed with alg \"", absl::CHexEscape(alg.substr(0, 16)),
                                "\"; only RS256 and ES256 are accepted"));
  }
  if (!header.contains("kid") || !header["kid"].is_string()) {
    return Refused("has no kid in its header (it names the key that signed it)");
  }
  const std::string kid = header["kid"].get<std::string>();
  if (kid.size() > kMaxKidBytes) return Refused("has a kid longer than 256 bytes");
  auto key = keys.keys.find(kid);
  if (key == keys.keys.end()) {
    return Refused(absl::StrCat("names key \"", absl::CHexEscape(kid),
                                "\", which is not in the configured JWKS"));
  }
  if (KeyAlgName(key->second.alg) != alg) {
    return Refused(absl::StrCat("is signed with ", alg, " but key \"", absl::CHexEscape(kid),
                                "\" is a ", KeyAlgName(key->second.alg), " key"));
  }

  // The signature (libjwt checks it with the key for the header's alg).
  if (absl::Status loaded = Libjwt().Load(); !loaded.ok()) {
    return absl::InternalError(absl::StrCat("tokens cannot be verified: ", loaded.message()));
  }
  const std::string nul_terminated(token);
  jwt_t* raw = nullptr;
  const int rc = jwt_decode(&raw, nul_terminated.c_str(),
                            reinterpret_cast<const unsigned char*>(key->second.pem.data()),
                            static_cast<int>(key->second.pem.size()));
  std::unique_ptr<jwt_t, JwtDeleter> jwt(raw);
  if (rc != 0 || jwt == nullptr) {
    return Refused(absl::StrCat("does not verify with key \"", absl::CHexEscape(kid),
                                "\" (wrong key or altered token)"));
  }
  const jwt_alg_t verified_alg = jwt_get_alg(jwt.get());
  if (verified_alg != (alg == "RS256" ? JWT_ALG_RS256 : JWT_ALG_ES256)) {
    return Refused("was verified with another algorithm than its header names");
  }
  char* claims_text = jwt_get_grants_json(jwt.get(), nullptr);
  if (claims_text == nullptr) return Refused("has no claims");
  const json claims = ParseBounded(claims_text);
  free(claims_text);  // libjwt's allocation (malloc by default)
  if (!claims.is_object()) return Refused("has claims that are not a JSON object");

  VerifiedToken out;
  if (!ReadTime(claims, "exp", &out.expires)) {
    return Refused("has no exp (expiry) claim, or one that is not a number");
  }
  if (now > out.expires + kClockSkew) {
    return Refused(absl::StrCat("expired at ", absl::FormatTime(absl::RFC3339_sec, out.expires,
                                                                 absl::UTCTimeZone())));
  }
  if (claims.contains("nbf")) {
    absl::Time not_before;
    if (!ReadTime(claims, "nbf", &not_before)) return Refused("has an nbf claim that is not a number");
    if (now + kClockSkew < not_before) {
      return Refused(absl::StrCat("is not valid before ",
                                  absl::FormatTime(absl::RFC3339_sec, not_before, absl::UTCTimeZone())));
    }
  }
  if (!checks_.issuer.empty()) {
    auto iss = claims.find("iss");
    if (iss == claims.end() || !iss->is_string() || iss->get<std::string>() != checks_.issuer) {
      return Refused(absl::StrCat("was not issued by \"", checks_.issuer, "\" (iss)"));
    }
  }
  if (!checks_.audience.empty()) {
    bool found = false;
    if (auto aud = claims.find("aud"); aud != claims.end()) {
      if (aud->is_string()) found = aud->get<std::string>() == checks_.audience;
      if (aud->is_array()) {
        for (const json& a : *aud) found = found || (a.is_string() && a.get<std::string>() == checks_.audience);
      }
    }
    if (!found) return Refused(absl::StrCat("is not for audience \"", checks_.audience, "\" (aud)"));
  }
  if (auto p = claims.find(checks_.permissions_claim); p != claims.end()) {
    if (!p->is_array()) {
      return Refused(absl::StrCat("has a \"", checks_.permissions_claim,
                                  "\" claim that is not an array of strings"));
    }
    std::vector<std::string> entries;
    for (const json& entry : *p) {
      if (entry.is_string()) entries.push_back(entry.get<std::string>());  // others ignored
    }
    out.permissions = MapPermissions(entries);
  }
  return out;
}

}  // namespace tock::server::security
