#include "server-core/security/authz_jwks.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace tock::server::security {
namespace {

using nlohmann::json;

template <auto F>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    F(p);
  }
};
using BigNum = std::unique_ptr<BIGNUM, Deleter<BN_free>>;
using ParamBuild = std::unique_ptr<OSSL_PARAM_BLD, Deleter<OSSL_PARAM_BLD_free>>;
using Params = std::unique_ptr<OSSL_PARAM, Deleter<OSSL_PARAM_free>>;
using PkeyCtx = std::unique_ptr<EVP_PKEY_CTX, Deleter<EVP_PKEY_CTX_free>>;
using Pkey = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using Bio = std::unique_ptr<BIO, Deleter<BIO_free>>;

// The bytes of a base64url field (RFC 7518 writes them unpadded; padding is tolerated).
std::optional<std::string> Base64Url(const json& key, const char* field) {
  auto it = key.find(field);
  if (it == key.end() || !it->is_string()) return std::nullopt;
  std::string text = it->get<std::string>();
  while (!text.empty() && text.back() == '=') text.pop_back();
  std::string out;
  if (!absl::WebSafeBase64Unescape(text, &out) || out.empty()) return std::nullopt;
  return out;
}

BigNum ToBigNum(const std::string& bytes) {
  return BigNum(BN_bin2bn(reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()), nullptr));
}

absl::StatusOr<std::string> ToPem(const Pkey& pkey) {
  Bio bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || PEM_write_bio_PUBKEY(bio.get(), pkey.get()) != 1) {
    return absl::InternalError("the key could not be written as PEM");
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

absl::StatusOr<Pkey> FromData(const char* type, ParamBuild& build) {
  Params params(OSSL_PARAM_BLD_to_param(build.get()));
  PkeyCtx ctx(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
  EVP_PKEY* raw = nullptr;
  if (params == nullptr || ctx == nullptr || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &raw, EVP_PKEY_PUBLIC_KEY, params.get()) != 1) {
    return absl::InvalidArgumentError("OpenSSL does not accept it as a public key");
  }
  return Pkey(raw);
}

// kty RSA: n and e; 2048 bits at least (NIST's floor for RSA signatures since 2013).
absl::StatusOr<std::string> RsaPem(const json& key) {
  std::optional<std::string> n = Base64Url(key, "n");
  std::optional<std::string> e = Base64Url(key, "e");
  if (!n) return absl::InvalidArgumentError("n must be a base64url string");
  if (!e || e->size() > 8) return absl::InvalidArgumentError("e must be a base64url string of 1 to 8 bytes");
  BigNum bn_n = ToBigNum(*n);
  BigNum bn_e = ToBigNum(*e);
  if (bn_n == nullptr || bn_e == nullptr) return absl::InternalError("out of memory");
  if (BN_num_bits(bn_n.get()) < 2048 || BN_num_bits(bn_n.get()) > 16384) {
    return absl::InvalidArgumentError(
        absl::StrCat("n has ", BN_num_bits(bn_n.get()), " bits; 2048 to 16384 are accepted"));
  }
  ParamBuild build(OSSL_PARAM_BLD_new());
  if (build == nullptr || OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) != 1 ||
      OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) != 1) {
    return absl::InternalError("out of memory");
  }
  absl::StatusOr<Pkey> pkey = FromData("RSA", build);
  if (!pkey.ok()) return pkey.status();
  return ToPem(*pkey);
}

// kty EC, crv P-256: the point (x, y), 32 bytes each.
absl::StatusOr<std::string> P256Pem(const json& key) {
  std::optional<std::string> x = Base64Url(key, "x");
  std::optional<std::string> y = Base64Url(key, "y");
  if (!x || x->size() != 32) return absl::InvalidArgumentError("x must be 32 base64url bytes");
  if (!y || y->size() != 32) return absl::InvalidArgumentError("y must be 32 base64url bytes");
  std::string point = "\x04" + *x + *y;  // SEC 1 uncompressed point
  ParamBuild build(OSSL_PARAM_BLD_new());
  if (build == nullptr ||
      OSSL_PARAM_BLD_push_utf8_string(build.get(), OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) != 1 ||
      OSSL_PARAM_BLD_push_octet_string(build.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                       point.size()) != 1) {
    return absl::InternalError("out of memory");
  }
  // fromdata checks that the point is on the curve.
  absl::StatusOr<Pkey> pkey = FromData("EC", build);
  if (!pkey.ok()) return pkey.status();
  return ToPem(*pkey);
}

std::string StringField(const json& key, const char* field) {
  auto it = key.find(field);
  return it != key.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

absl::string_view KeyAlgName(KeyAlg alg) { return alg == KeyAlg::kRs256 ? "RS256" : "ES256"; }

absl::StatusOr<Jwks> ParseJwks(absl::string_view text, absl::string_view source) {
  auto fail = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("JWKS ", source, ": ", what));
  };
  if (text.size() > kMaxJwksBytes) {
    return fail(absl::StrCat("longer than ", kMaxJwksBytes, " bytes"));
  }
  // Bounded depth: a key set is three levels deep; anything deeper is not one.
  int depth_exceeded = 0;
  json doc = json::parse(
      text,
      [&](int depth, json::parse_event_t, json&) {
        if (depth > 8) ++depth_exceeded;
        return depth <= 8;
      },
      /*allow_exceptions=*/false);
  if (depth_exceeded > 0) return fail("nested deeper than 8 levels");
  if (doc.is_discarded() || !doc.is_object()) return fail("not a JSON object");
  auto keys = doc.find("keys");
  if (keys == doc.end() || !keys->is_array()) return fail("\"keys\" must be an array");
  if (keys->size() > kMaxKeys) {
    return fail(absl::StrCat("more than ", kMaxKeys, " keys (", keys->size(), ")"));
  }
  Jwks out;
  for (size_t i = 0; i < keys->size(); ++i) {
    const json& key = (*keys)[i];
    if (!key.is_object()) return fail(absl::StrCat("keys[", i, "] is not an object"));
    const std::string kty = StringField(key, "kty");
    const std::string alg = StringField(key, "alg");
    const std::string use = StringField(key, "use");
    const bool rsa = kty == "RSA" && (alg.empty() || alg == "RS256");
    const bool p256 = kty == "EC" && StringField(key, "crv") == "P-256" && (alg.empty() || alg == "ES256");
    if ((!use.empty() && use != "sig") || (!rsa && !p256)) {
      ++out.skipped;
      continue;
    }
    const std::string kid = StringField(key, "kid");
    if (kid.empty() || kid.size() > kMaxKidBytes) {
      return fail(absl::StrCat("keys[", i, "]: kid must be a string of 1 to ", kMaxKidBytes,
                               " bytes (tokens choose their key by it)"));
    }
    absl::StatusOr<std::string> pem = rsa ? RsaPem(key) : P256Pem(key);
    if (!pem.ok()) {
      return fail(absl::StrCat("keys[", i, "] (kid \"", absl::CHexEscape(kid), "\"): ",
                               pem.status().message()));
    }
    if (!out.keys.emplace(kid, VerificationKey{rsa ? KeyAlg::kRs256 : KeyAlg::kEs256, *pem}).second) {
      return fail(absl::StrCat("keys[", i, "]: kid \"", absl::CHexEscape(kid),
                               "\" is used by an earlier key too"));
    }
  }
  if (out.keys.empty()) {
    return fail(absl::StrCat("no RS256 or ES256 signing key (", out.skipped, " other keys skipped)"));
  }
  return out;
}

}  // namespace tock::server::security
