#include "tests/support/test_jwt.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <chrono>
#include <stdexcept>
#include <vector>

namespace tock::testing {
namespace {

std::string Bytes(const BIGNUM* bn, int width = 0) {
  std::vector<unsigned char> out(width > 0 ? width : BN_num_bytes(bn));
  if (width > 0) {
    BN_bn2binpad(bn, out.data(), width);
  } else {
    BN_bn2bin(bn, out.data());
  }
  return std::string(out.begin(), out.end());
}

std::string BnParam(EVP_PKEY* pkey, const char* name) {
  BIGNUM* bn = nullptr;
  if (EVP_PKEY_get_bn_param(pkey, name, &bn) != 1) throw std::runtime_error(name);
  std::string out = Bytes(bn);
  BN_free(bn);
  return out;
}

std::string SigningInput(const nlohmann::json& header, const nlohmann::json& claims) {
  return Base64UrlEncode(header.dump()) + "." + Base64UrlEncode(claims.dump());
}

}  // namespace

std::string Base64UrlEncode(const std::string& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
  }
  if (bytes.size() - i == 1) {
    const uint32_t v = uint8_t(bytes[i]) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
  } else if (bytes.size() - i == 2) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
  }
  return out;
}

TestSigningKey::TestSigningKey(Kind kind, std::string kid) : kind_(kind), kid_(std::move(kid)) {
  pkey_ = kind == Kind::kRsa ? EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048})
                             : EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  if (pkey_ == nullptr) throw std::runtime_error("key generation failed");
}

TestSigningKey::~TestSigningKey() { EVP_PKEY_free(pkey_); }

nlohmann::json TestSigningKey::Jwk() const {
  nlohmann::json jwk = {{"kid", kid_}, {"use", "sig"}, {"alg", alg()}};
  if (kind_ == Kind::kRsa) {
    jwk["kty"] = "RSA";
    jwk["n"] = Base64UrlEncode(BnParam(pkey_, OSSL_PKEY_PARAM_RSA_N));
    jwk["e"] = Base64UrlEncode(BnParam(pkey_, OSSL_PKEY_PARAM_RSA_E));
  } else {
    unsigned char point[65];
    size_t len = 0;
    EVP_PKEY_get_octet_string_param(pkey_, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof point, &len);
    if (len != 65) throw std::runtime_error("unexpected P-256 point");
    jwk["kty"] = "EC";
    jwk["crv"] = "P-256";
    jwk["x"] = Base64UrlEncode(std::string(reinterpret_cast<char*>(point) + 1, 32));
    jwk["y"] = Base64UrlEncode(std::string(reinterpret_cast<char*>(point) + 33, 32));
  }
  return jwk;
}

std::string TestSigningKey::Sign(const nlohmann::json& claims, const nlohmann::json& extra) const {
  nlohmann::json header = {{"alg", alg()}, {"typ", "JWT"}, {"kid", kid_}};
  if (extra.is_object()) header.update(extra);
  const std::string input = SigningInput(header, claims);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  size_t len = 0;
  EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, pkey_);
  EVP_DigestSign(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()), input.size());
  std::string sig(len, '\0');
  EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                 reinterpret_cast<const unsigned char*>(input.data()), input.size());
  EVP_MD_CTX_free(ctx);
  sig.resize(len);
  if (kind_ == Kind::kP256) {
    // OpenSSL signs ECDSA in DER; JWS wants R || S, 32 bytes each (RFC 7518 §3.4).
    const unsigned char* p = reinterpret_cast<const unsigned char*>(sig.data());
    ECDSA_SIG* ecdsa = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(sig.size()));
    sig = Bytes(ECDSA_SIG_get0_r(ecdsa), 32) + Bytes(ECDSA_SIG_get0_s(ecdsa), 32);
    ECDSA_SIG_free(ecdsa);
  }
  return input + "." + Base64UrlEncode(sig);
}

std::string JwksOf(const std::initializer_list<const TestSigningKey*>& keys) {
  nlohmann::json doc = {{"keys", nlohmann::json::array()}};
  for (const TestSigningKey* key : keys) doc["keys"].push_back(key->Jwk());
  return doc.dump();
}

std::string UnsignedToken(const nlohmann::json& claims, const std::string& kid) {
  return SigningInput({{"alg", "none"}, {"typ", "JWT"}, {"kid", kid}}, claims) + ".";
}

std::string Hs256Token(const nlohmann::json& claims, const std::string& kid, const std::string& secret) {
  const std::string input = SigningInput({{"alg", "HS256"}, {"typ", "JWT"}, {"kid", kid}}, claims);
  unsigned char mac[32];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &len);
  return input + "." + Base64UrlEncode(std::string(reinterpret_cast<char*>(mac), len));
}

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace tock::testing
