// Keys and tokens made in tests: RSA-2048 and P-256 key pairs generated with OpenSSL, the
// JWKS that publishes their public halves, and compact JWS tokens signed with them (RS256,
// ES256), or crafted wrong on purpose (alg none, an HMAC signature, a foreign kid).
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

typedef struct evp_pkey_st EVP_PKEY;

namespace tock::testing {

class TestSigningKey {
 public:
  enum class Kind { kRsa, kP256 };
  // A fresh key pair named `kid`.
  TestSigningKey(Kind kind, std::string kid);
  ~TestSigningKey();
  TestSigningKey(const TestSigningKey&) = delete;
  TestSigningKey& operator=(const TestSigningKey&) = delete;

  const std::string& kid() const { return kid_; }
  const char* alg() const { return kind_ == Kind::kRsa ? "RS256" : "ES256"; }
  // The public key as a JWK object (kty, kid, use, alg, n/e or crv/x/y).
  nlohmann::json Jwk() const;
  // A token with `claims`, signed by this key; the header is {alg, typ, kid} plus `header`.
  std::string Sign(const nlohmann::json& claims, const nlohmann::json& header = {}) const;

 private:
  Kind kind_;
  std::string kid_;
  EVP_PKEY* pkey_ = nullptr;
};

// {"keys": [jwk...]}
std::string JwksOf(const std::initializer_list<const TestSigningKey*>& keys);

// base64url without padding.
std::string Base64UrlEncode(const std::string& bytes);

// A token whose header says alg "none" (and no signature), or "HS256" signed with `secret`.
std::string UnsignedToken(const nlohmann::json& claims, const std::string& kid);
std::string Hs256Token(const nlohmann::json& claims, const std::string& kid, const std::string& secret);

// Seconds since the epoch, now (the tests' tokens are checked against the wall clock).
int64_t UnixNow();

}  // namespace tock::testing
