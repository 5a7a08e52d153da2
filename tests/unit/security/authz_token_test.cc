// Token verification (authz_token.h) and JWKS reading (authz_jwks.h) with keys generated here
// and tokens signed here: what is accepted, and the reason given for each refusal.
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "server-core/security/authz_jwks.h"
#include "server-core/security/authz_token.h"
#include "tests/support/test_jwt.h"

namespace tock::server::security {
namespace {

using nlohmann::json;
using testing::TestSigningKey;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

json Claims(int64_t exp_offset = 3600) {
  return {{"sub", "alice"},
          {"iss", "https://idp.test"},
          {"aud", "tock"},
          {"iat", 1'800'000'000 - 10},
          {"exp", 1'800'000'000 + exp_offset},
          {"permissions", {"orders:write", "billing:read"}}};
}

class TokenTest : public ::testing::Test {
 protected:
  TokenTest()
      : rsa_(TestSigningKey::Kind::kRsa, "rsa-1"),
        ec_(TestSigningKey::Kind::kP256, "ec-1"),
        other_(TestSigningKey::Kind::kRsa, "rsa-1") {  // same kid, another key
    absl::StatusOr<Jwks> jwks = ParseJwks(testing::JwksOf({&rsa_, &ec_}), "test");
    EXPECT_TRUE(jwks.ok()) << jwks.status();
    if (jwks.ok()) jwks_ = *jwks;
  }

  absl::StatusOr<VerifiedToken> Verify(const std::string& token, TokenChecks checks = {}) {
    return TokenVerifier(std::move(checks)).Verify(token, jwks_, kNow);
  }
  void ExpectRefused(const std::string& token, const std::string& why, TokenChecks checks = {}) {
    absl::StatusOr<VerifiedToken> v = Verify(token, std::move(checks));
    ASSERT_FALSE(v.ok()) << "accepted, expected: " << why;
    EXPECT_EQ(v.status().code(), absl::StatusCode::kUnauthenticated);
    EXPECT_TRUE(absl::StrContains(v.status().message(), why)) << v.status();
    // The token never appears in the refusal.
    if (token.size() > 8) EXPECT_FALSE(absl::StrContains(v.status().message(), token.substr(0, 20)));
  }

  TestSigningKey rsa_, ec_, other_;
  Jwks jwks_;
};

TEST_F(TokenTest, AcceptsRs256AndEs256AndMapsPermissions) {
  for (const TestSigningKey* key : {&rsa_, &ec_}) {
    TokenChecks checks{"https://idp.test", "tock", "permissions"};
    absl::StatusOr<VerifiedToken> v = Verify(key->Sign(Claims()), checks);
    ASSERT_TRUE(v.ok()) << key->alg() << ": " << v.status();
    EXPECT_EQ(v->expires, kNow + absl::Hours(1));
    EXPECT_EQ(v->permissions.On("orders"), Role::kWrite);
    EXPECT_EQ(v->permissions.On("billing"), Role::kRead);
    EXPECT_EQ(v->permissions.On("other"), Role::kNone);
    EXPECT_EQ(v->permissions.system, Role::kNone);
  }
}

TEST_F(TokenTest, AudienceMayBeAnArray) {
  json claims = Claims();
  claims["aud"] = {"other", "tock"};
  EXPECT_TRUE(Verify(rsa_.Sign(claims), {"", "tock", "permissions"}).ok());
}

TEST_F(TokenTest, ChecksTimesWithAMinuteOfSkew) {
  ExpectRefused(rsa_.Sign(Claims(-61)), "expired at");
  EXPECT_TRUE(Verify(rsa_.Sign(Claims(-59))).ok()) << "within the skew allowance";
  json future = Claims();
  future["nbf"] = 1'800'000'000 + 61;
  ExpectRefused(ec_.Sign(future), "is not valid before");
  future["nbf"] = 1'800'000'000 + 59;
  EXPECT_TRUE(Verify(ec_.Sign(future)).ok());
  json no_exp = Claims();
  no_exp.erase("exp");
  ExpectRefused(rsa_.Sign(no_exp), "has no exp");
  no_exp["exp"] = "tomorrow";
  ExpectRefused(rsa_.Sign(no_exp), "has no exp");
}

TEST_F(TokenTest, RefusesAWrongKeyOrKid) {
  ExpectRefused(other_.Sign(Claims()), "does not verify with key \"rsa-1\"");
  ExpectRefused(rsa_.Sign(Claims(), {{"kid", "rsa-2"}}), "names key \"rsa-2\", which is not in the configured JWKS");
}

TEST_F(TokenTest, RefusesAlgNoneHmacAndAlgorithmMismatch) {
  ExpectRefused(testing::UnsignedToken(Claims(), "rsa-1"), "is not a signed JWT");
  ExpectRefused(testing::UnsignedToken(Claims(), "rsa-1") + "AAAA", "alg \"none\"");
  // An HMAC over the token with the RSA key's PEM as the secret: the classic confusion.
  ExpectRefused(testing::Hs256Token(Claims(), "rsa-1", "secret"), "alg \"HS256\"");
  // The EC key's kid in an RS256 token.
  ExpectRefused(rsa_.Sign(Claims(), {{"kid", "ec-1"}}), "is signed with RS256 but key \"ec-1\" is a ES256 key");
}

TEST_F(TokenTest, ChecksIssuerAndAudienceWhenConfigured) {
  ExpectRefused(rsa_.Sign(Claims()), "was not issued by \"https://other\"", {"https://other", "", "permissions"});
  ExpectRefused(rsa_.Sign(Claims()), "is not for audience \"billing\"", {"", "billing", "permissions"});
  json no_aud = Claims();
  no_aud.erase("aud");
  ExpectRefused(rsa_.Sign(no_aud), "is not for audience", {"", "tock", "permissions"});
  EXPECT_TRUE(Verify(rsa_.Sign(no_aud)).ok()) << "aud is not checked unless configured";
}

TEST_F(TokenTest, RefusesOversizedAndMalformedTokens) {
  json big = Claims();
  big["pad"] = std::string(kMaxTokenBytes, 'x');
  ExpectRefused(rsa_.Sign(big), "longer than 16384 bytes");
  ExpectRefused("", "is empty");
  ExpectRefused("a.b", "is not a signed JWT");
  ExpectRefused("a.b.c$", "is not a signed JWT");
  std::string token = rsa_.Sign(Claims());
  token[token.rfind('.') - 3] ^= 1;  // the claims altered after signing
  absl::StatusOr<VerifiedToken> v = Verify(token);
  EXPECT_FALSE(v.ok());
}

TEST_F(TokenTest, ThePermissionsClaimIsConfigurable) {
  json claims = Claims();
  claims["roles"] = {"temporal-system:admin"};
  absl::StatusOr<VerifiedToken> v = Verify(rsa_.Sign(claims), {"", "", "roles"});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->permissions.system, Role::kAdmin);
  EXPECT_EQ(v->permissions.On("anything"), Role::kAdmin);
  claims["roles"] = "temporal-system:admin";
  ExpectRefused(rsa_.Sign(claims), "not an array of strings", {"", "", "roles"});
}

TEST(JwksTest, SkipsKeysItCannotUseAndRefusesBadOnes) {
  TestSigningKey rsa(TestSigningKey::Kind::kRsa, "a");
  json doc = json::parse(testing::JwksOf({&rsa}));
  doc["keys"].push_back({{"kty", "oct"}, {"kid", "h"}, {"k", "c2VjcmV0"}});
  doc["keys"].push_back({{"kty", "RSA"}, {"kid", "enc"}, {"use", "enc"}, {"n", "AQAB"}, {"e", "AQAB"}});
  absl::StatusOr<Jwks> jwks = ParseJwks(doc.dump(), "f.json");
  ASSERT_TRUE(jwks.ok()) << jwks.status();
  EXPECT_EQ(jwks->keys.size(), 1u);
  EXPECT_EQ(jwks->skipped, 2);
  EXPECT_TRUE(absl::StartsWith(jwks->keys.at("a").pem, "-----BEGIN PUBLIC KEY-----"));

  auto refused = [](const std::string& text, const std::string& why) {
    absl::StatusOr<Jwks> j = ParseJwks(text, "f.json");
    ASSERT_FALSE(j.ok()) << why;
    EXPECT_EQ(j.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(j.status().message(), "JWKS f.json: " + why)) << j.status();
  };
  refused("[]", "not a JSON object");
  refused("{\"keys\": {}}", "\"keys\" must be an array");
  refused("{\"keys\": [{\"kty\": \"oct\"}]}", "no RS256 or ES256 signing key (1 other keys skipped)");
  json twice = json::parse(testing::JwksOf({&rsa, &rsa}));
  refused(twice.dump(), "keys[1]: kid \"a\" is used by an earlier key too");
  json no_kid = json::parse(testing::JwksOf({&rsa}));
  no_kid["keys"][0].erase("kid");
  refused(no_kid.dump(), "keys[0]: kid must be a string");
  json small = json::parse(testing::JwksOf({&rsa}));
  small["keys"][0]["n"] = testing::Base64UrlEncode(std::string(128, '\xff'));
  refused(small.dump(), "keys[0] (kid \"a\"): n has 1024 bits; 2048 to 16384 are accepted");
  TestSigningKey ec(TestSigningKey::Kind::kP256, "e");
  json off_curve = json::parse(testing::JwksOf({&ec}));
  off_curve["keys"][0]["y"] = testing::Base64UrlEncode(std::string(32, '\x01'));
  refused(off_curve.dump(), "keys[0] (kid \"e\"): OpenSSL does not accept it");
  refused(std::string(kMaxJwksBytes + 1, ' '), "longer than 1048576 bytes");
  std::string deep = std::string(20, '[') + std::string(20, ']');
  refused(deep, "nested deeper than 8 levels");
}

}  // namespace
}  // namespace tock::server::security
