// The seed's callback protocol as pure functions: the POST body, and how every kind of
// answer is classified (server-core/timers/callback_protocol.h).
#include "server-core/timers/callback_protocol.h"

#include <gtest/gtest.h>

#include "server-core/timers/callback_address_policy.h"
#include "server-core/timers/callback_signature.h"

#include <nlohmann/json.hpp>

namespace tock::server::timers {
namespace {

using Kind = CallbackOutcome::Kind;

const absl::Time kAt = absl::FromUnixSeconds(1'795'000'000);  // 2026-11-18T...Z

TEST(CallbackBody, CarriesNamespaceIdPayloadTimeAndAttempt) {
  const std::string body = CallbackBodyJson("orders", "t-1", R"({"sku": 42, "tags": ["a"]})", kAt, 3);
  const nlohmann::json j = nlohmann::json::parse(body);
  EXPECT_EQ(j["namespace"], "orders");
  EXPECT_EQ(j["id"], "t-1");
  EXPECT_EQ(j["payload"]["sku"], 42);
  EXPECT_EQ(j["payload"]["tags"][0], "a");
  EXPECT_EQ(j["attempt"], 3);
  absl::Time parsed;
  std::string err;
  ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, j["executeAt"].get<std::string>(), &parsed, &err));
  EXPECT_EQ(parsed, kAt);
}

TEST(CallbackBody, NoPayloadIsNullAndTextIsEscaped) {
  const nlohmann::json j = nlohmann::json::parse(CallbackBodyJson("ns", "a\"b\\c\n", "", kAt, 1));
  EXPECT_TRUE(j["payload"].is_null());
  EXPECT_EQ(j["id"], "a\"b\\c\n");
}

TEST(CallbackBody, PayloadThatIsNotJsonTravelsAsAString) {
  const nlohmann::json j = nlohmann::json::parse(CallbackBodyJson("ns", "id", "{not json", kAt, 1));
  EXPECT_EQ(j["payload"], "{not json");
}

TEST(CallbackBody, PlainAndEscapedNamesAreTheSameJson) {
  // Printable ASCII is quoted as it is; anything else goes through the JSON library.
  const nlohmann::json plain = nlohmann::json::parse(CallbackBodyJson("orders-eu", "id 7/x", "", kAt, 1));
  EXPECT_EQ(plain.at("namespace"), "orders-eu");
  EXPECT_EQ(plain.at("id"), "id 7/x");
  const nlohmann::json escaped = nlohmann::json::parse(CallbackBodyJson("ns", "tab\there \u00e9", "", kAt, 1));
  EXPECT_EQ(escaped.at("id"), "tab\there \u00e9");
}

TEST(CallbackBody, InvalidUtf8InIdStillMakesValidJson) {
  const std::string body = CallbackBodyJson("ns", std::string("a\xff", 2), "1", kAt, 1);
  EXPECT_TRUE(nlohmann::json::accept(body)) << body;
}

TEST(ClassifyAnswer, OkTrueSucceeds) {
  const CallbackOutcome o = ClassifyCallbackAnswer(200, R"({"ok": true})", false);
  EXPECT_EQ(o.kind, Kind::kSucceeded);
  EXPECT_EQ(o.http_status, 200);
  EXPECT_EQ(o.error, "");
}

// The plain {"ok": true} is recognised without a JSON parse; every other spelling of a success
// still goes through the parser, and near misses are not successes.
TEST(ClassifyAnswer, EverySpellingOfOkTrueSucceedsAndNearMissesDoNot) {
  for (const char* body : {R"({"ok":true})", " {\t\"ok\" :\ntrue\r} \n", R"({"ok": true, "id": "x"})",
                           R"({"id": 1, "ok": true})", R"({"o\u006b": true})"}) {
    EXPECT_EQ(ClassifyCallbackAnswer(200, body, false).kind, Kind::kSucceeded) << body;
  }
  for (const char* body : {R"({"o k":true})", R"({"ok":truex})", R"({"ok":true}})", R"({"ok":true} x)",
                           R"({"OK":true})", R"({"ok":True})", R"({"ok":true,})"}) {
    EXPECT_EQ(ClassifyCallbackAnswer(200, body, false).kind, Kind::kRetry) << body;
  }
}

TEST(ClassifyAnswer, OkFalseWithTimeReschedules) {
  const CallbackOutcome o =
      ClassifyCallbackAnswer(200, R"({"ok": false, "nextExecuteAt": "2026-12-01T10:00:00.250+01:00"})", false);
  ASSERT_EQ(o.kind, Kind::kReschedule);
  EXPECT_EQ(o.next_execute_at, absl::FromCivil(absl::CivilSecond(2026, 12, 1, 9, 0, 0), absl::UTCTimeZone()) +
                                   absl::Milliseconds(250));
}

TEST(ClassifyAnswer, OkFalseWithoutTimeRetries) {
  EXPECT_EQ(ClassifyCallbackAnswer(200, R"({"ok": false})", false).kind, Kind::kRetry);
  EXPECT_EQ(ClassifyCallbackAnswer(200, R"({"ok": false, "nextExecuteAt": null})", false).kind, Kind::kRetry);
  const CallbackOutcome bad = ClassifyCallbackAnswer(200, R"({"ok": false, "nextExecuteAt": "tomorrow"})", false);
  EXPECT_EQ(bad.kind, Kind::kRetry);
  EXPECT_NE(bad.error.find("nextExecuteAt"), std::string::npos) << bad.error;
  EXPECT_EQ(bad.error.find("tomorrow"), std::string::npos) << "the answer's text: " << bad.error;
}

TEST(ClassifyAnswer, BadBodiesRetryNamingTheProblem) {
  for (const char* body : {"", "not json", "[true]", R"({"ok": "yes"})", R"({"status": "ok"})", "{\"ok\": tr"}) {
    const CallbackOutcome o = ClassifyCallbackAnswer(200, body, false);
    EXPECT_EQ(o.kind, Kind::kRetry) << body;
    EXPECT_NE(o.error.find("HTTP 200"), std::string::npos) << o.error;
  }
  EXPECT_EQ(ClassifyCallbackAnswer(200, R"({"ok": true})", /*body_truncated=*/true).kind, Kind::kRetry);
}

TEST(ClassifyAnswer, FourHundredsStopWithTheStatusAndNotTheBody) {
  for (int status : {400, 404, 409, 422, 499}) {
    const CallbackOutcome o = ClassifyCallbackAnswer(status, R"({"error": "no such order"})", false);
    EXPECT_EQ(o.kind, Kind::kStop) << status;
    EXPECT_EQ(o.http_status, status);
    EXPECT_NE(o.error.find(std::to_string(status)), std::string::npos) << o.error;
    EXPECT_EQ(o.error.find("no such order"), std::string::npos) << o.error;
  }
  EXPECT_EQ(ClassifyCallbackAnswer(404, "secret", false).error,
            "callback answered HTTP 404 Not Found (no retry)");
  EXPECT_EQ(ClassifyCallbackAnswer(499, "secret", false).error, "callback answered HTTP 499 (no retry)");
  // A 4xx is final whatever its body, even one longer than read.
  EXPECT_EQ(ClassifyCallbackAnswer(404, std::string(500, 'x'), true).kind, Kind::kStop);
}

TEST(ClassifyAnswer, EverythingElseRetries) {
  for (int status : {100, 201, 204, 301, 302, 500, 502, 503, 599}) {
    const CallbackOutcome o = ClassifyCallbackAnswer(status, R"({"ok": true})", false);
    EXPECT_EQ(o.kind, Kind::kRetry) << status;
    EXPECT_EQ(o.http_status, status);
  }
}

// What a receiver answers never reaches last_error, which the timer's creator reads: the
// callback could be aimed at an internal service (review P2-2). Only the status line's
// status, with its standard reason phrase.
TEST(ClassifyAnswer, NoTextOfTheAnswerReachesTheError) {
  const std::string secret = "ami-id: i-0123456789 aws_secret_access_key=AKIA";
  for (int status : {200, 201, 302, 400, 403, 404, 500, 503, 599}) {
    for (const std::string& body : {secret, R"({"secret": ")" + secret + R"("})",
                                    R"({"ok": ")" + secret + R"("})",
                                    R"({"ok": false, "nextExecuteAt": ")" + secret + R"("})"}) {
      for (bool truncated : {false, true}) {
        const CallbackOutcome o = ClassifyCallbackAnswer(status, body, truncated);
        EXPECT_EQ(o.error.find("ami-id"), std::string::npos) << status << ": " << o.error;
        EXPECT_EQ(o.error.find("secret"), std::string::npos) << status << ": " << o.error;
      }
    }
  }
  EXPECT_EQ(ClassifyCallbackAnswer(503, secret, false).error,
            "callback answered HTTP 503 Service Unavailable");
  EXPECT_EQ(ClassifyCallbackAnswer(200, secret, false).error,
            "callback answered HTTP 200 with a body that is not a JSON object");
}

TEST(ClassifyAnswer, ErrorIsBoundedAndPrintable) {
  const CallbackOutcome o = ClassifyCallbackAnswer(500, std::string(100'000, 'x') + "\n", false);
  EXPECT_LE(o.error.size(), CallbackOutcome::kMaxErrorBytes);
  const CallbackOutcome ctl = ClassifyCallbackAnswer(503, "line1\nline2\r\t\x01", false);
  EXPECT_EQ(ctl.error.find('\n'), std::string::npos);
  EXPECT_EQ(ctl.error.find('\x01'), std::string::npos);
}

TEST(BoundedErrorText, CutsAtUtf8BoundaryAndMarksTheCut) {
  const std::string e_acute = "\xc3\xa9";  // two bytes
  std::string text;
  for (int i = 0; i < 10; ++i) text += e_acute;
  const std::string cut = BoundedErrorText(text, 8);  // 5 bytes of text at most, then "..."
  EXPECT_LE(cut.size(), 8u);
  EXPECT_EQ(cut, e_acute + e_acute + "...");
  EXPECT_EQ(BoundedErrorText("short", 8), "short");
}

// ---------------------------------------------------------------------------------------
// The callback address policy (review P2-2).

IpAddress Ip(const std::string& text) {
  std::optional<IpAddress> ip = IpAddress::Parse(text);
  EXPECT_TRUE(ip.has_value()) << text;
  return ip.value_or(IpAddress());
}

TEST(CallbackAddressPolicy, RestrictedRangesAreNamed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"127.0.0.1", "loopback"},     {"127.255.0.9", "loopback"},  {"::1", "loopback"},
      {"0.0.0.0", "unspecified"},    {"::", "unspecified"},        {"10.0.0.1", "private"},
      {"172.16.0.1", "private"},     {"172.31.255.255", "private"}, {"192.168.1.1", "private"},
      {"100.64.0.1", "private"},     {"fc00::1", "private"},       {"fd00:ec2::254", "private"},
      {"fec0::1", "private"},        {"169.254.169.254", "link-local"}, {"fe80::1", "link-local"},
      {"224.0.0.1", "reserved"},     {"255.255.255.255", "reserved"}, {"ff02::1", "reserved"},
      {"198.18.0.1", "reserved"},    {"192.0.0.192", "reserved"},
      // IPv4 inside IPv6, and the spellings the resolver reads as IPv4.
      {"::ffff:127.0.0.1", "loopback"}, {"::ffff:169.254.169.254", "link-local"},
      {"64:ff9b::10.0.0.1", "private"}, {"::127.0.0.1", "loopback"}, {"127.1", "loopback"},
      {"2130706433", "loopback"},    {"0x7f.0.0.1", "loopback"},   {"0251.0376.0251.0376", "link-local"},
  };
  for (const auto& [address, range] : cases) {
    const char* got = RestrictedRange(Ip(address));
    ASSERT_NE(got, nullptr) << address;
    EXPECT_EQ(std::string(got), range) << address;
  }
  for (const std::string& public_address :
       {"8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"}) {
    EXPECT_EQ(RestrictedRange(Ip(public_address)), nullptr) << public_address;
  }
}

TEST(CallbackAddressPolicy, TheAllowListOpensRangesAddressesAndNames) {
  absl::StatusOr<CallbackAddressPolicy> policy = CallbackAddressPolicy::Parse(
      {"10.1.0.0/16", "::1", "hooks.internal", "*.svc.cluster.local", "::ffff:192.168.0.0/112"});
  ASSERT_TRUE(policy.ok()) << policy.status();
  const std::string any = "http://example.com/";
  EXPECT_EQ(policy->RefusedRange(any, Ip("10.1.200.3")), nullptr);
  EXPECT_STREQ(policy->RefusedRange(any, Ip("10.2.0.1")), "private");
  EXPECT_EQ(policy->RefusedRange(any, Ip("::1")), nullptr);
  EXPECT_STREQ(policy->RefusedRange(any, Ip("127.0.0.1")), "loopback");
  EXPECT_EQ(policy->RefusedRange(any, Ip("192.168.3.4")), nullptr) << "a mapped range is IPv4";
  EXPECT_EQ(policy->RefusedRange(any, Ip("8.8.8.8")), nullptr) << "public: always";
  // Names: exact, under a domain (not the domain itself), case and a trailing dot aside.
  EXPECT_EQ(policy->RefusedRange("http://HOOKS.internal.:8080/x", Ip("10.9.9.9")), nullptr);
  EXPECT_EQ(policy->RefusedRange("https://a.b.svc.cluster.local/x", Ip("169.254.1.1")), nullptr);
  EXPECT_STREQ(policy->RefusedRange("https://svc.cluster.local/x", Ip("10.9.9.9")), "private");
  EXPECT_STREQ(policy->RefusedRange("http://hooks.internal.evil.com/", Ip("10.9.9.9")), "private");
  // Only a plain authority is matched by name.
  EXPECT_STREQ(policy->RefusedRange("http://hooks.internal@10.9.9.9/", Ip("10.9.9.9")), "private");
  EXPECT_STREQ(policy->RefusedRange("http://x@hooks.internal/", Ip("10.9.9.9")), "private");
}

TEST(CallbackAddressPolicy, BadEntriesAreRefusedNamingTheKeyAndTheForms) {
  for (const std::string& bad : {"", "10.0.0.0/33", "::/129", "10.0.0.0/x", "not a host", "http://x/"}) {
    absl::Status s = CallbackAddressPolicy::Parse({bad}).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("timers.callbacks.allow"), std::string::npos) << s;
    EXPECT_NE(s.message().find("each entry is a range (10.0.0.0/8, fd00::/8)"), std::string::npos) << s;
  }
}

TEST(CallbackAddressPolicy, CheckUrlRefusesRestrictedLiteralsAndLocalhostOnly) {
  const CallbackAddressPolicy policy;
  EXPECT_EQ(policy.CheckUrl("http://169.254.169.254/latest", "callback_url").message(),
            "callback_url's host \"169.254.169.254\" is a link-local address; timer callbacks may "
            "reach it only if the server's config allows it in timers.callbacks.allow (a range "
            "such as 10.0.0.0/8, an address, or a host name)");
  EXPECT_FALSE(policy.CheckUrl("http://localhost:9/", "f").ok());
  EXPECT_FALSE(policy.CheckUrl("http://api.localhost/", "f").ok());
  EXPECT_FALSE(policy.CheckUrl("http://user:pw@[::1]:80/", "f").ok());
  EXPECT_TRUE(policy.CheckUrl("https://hooks.example.com/x", "f").ok()) << "names: once resolved";
  EXPECT_TRUE(policy.CheckUrl("https://8.8.8.8/x", "f").ok());
}

TEST(CallbackUrlHost, ReadsTheHostOfEveryForm) {
  bool plain = false;
  EXPECT_EQ(CallbackUrlHost("http://Example.COM:80/a?b#c", &plain), "example.com");
  EXPECT_TRUE(plain);
  EXPECT_EQ(CallbackUrlHost("https://[fe80::1%25eth0]:8443/", &plain), "fe80::1%25eth0");
  EXPECT_FALSE(plain);
  EXPECT_EQ(CallbackUrlHost("http://u:p@host.example/", &plain), "host.example");
  EXPECT_FALSE(plain);
  EXPECT_EQ(CallbackUrlHost("http://host.example./x"), "host.example");
  EXPECT_EQ(CallbackUrlHost("no-scheme"), "");
}

// ---------------------------------------------------------------------------------------
// Signed callbacks (review P2-6).

TEST(CallbackSignature, IsTheHmacOfTimeDotBodyAndVerifies) {
  const std::string secret = "0123456789abcdef";
  const absl::Time at = absl::FromUnixSeconds(1'795'000'000);
  const std::string body = R"({"namespace":"orders","id":"t-1"})";
  const std::string header = CallbackSignature(secret, at, body);
  // HMAC-SHA256("0123456789abcdef", "1795000000.<body>"), computed independently with
  // `printf '%s' "1795000000.$body" | openssl dgst -sha256 -hmac 0123456789abcdef`.
  EXPECT_EQ(header,
            "t=1795000000,v1=264484dbf5f9fe2acd8c63d0d7d6d74407436f2d71482984d6780f2b114b718e");
  EXPECT_TRUE(VerifyCallbackSignature(secret, header, body, at + absl::Minutes(4)).ok());
  EXPECT_FALSE(VerifyCallbackSignature(secret, header, body, at + absl::Minutes(6)).ok()) << "stale";
  EXPECT_FALSE(VerifyCallbackSignature(secret, header, body + "x", at).ok());
  EXPECT_FALSE(VerifyCallbackSignature("0123456789abcdeX", header, body, at).ok());
  EXPECT_FALSE(VerifyCallbackSignature(secret, "t=1795000000", body, at).ok());
  EXPECT_FALSE(VerifyCallbackSignature(secret, "garbage", body, at).ok());
  // The time is covered too: the same v1 with another t does not verify.
  std::string moved = header;
  moved.replace(2, 10, "1795000001");
  EXPECT_FALSE(VerifyCallbackSignature(secret, moved, body, at).ok());
}

TEST(CallbackSignature, SecretsPerNamespaceWithADefault) {
  const std::map<std::string, std::string> secrets = {{"orders", "orders-secret-0001"},
                                                      {"*", "default-secret-001"}};
  EXPECT_EQ(*SigningSecretFor(secrets, "orders"), "orders-secret-0001");
  EXPECT_EQ(*SigningSecretFor(secrets, "billing"), "default-secret-001");
  EXPECT_EQ(SigningSecretFor({{"orders", "orders-secret-0001"}}, "billing"), nullptr);
  EXPECT_TRUE(ValidateSigningSecrets(secrets).ok());
  absl::Status short_secret = ValidateSigningSecrets({{"orders", "short"}});
  EXPECT_EQ(short_secret.message(),
            "timers.callbacks.signing_secrets.orders must be 16 to 1024 bytes (a long random "
            "string); got 5");
}

}  // namespace
}  // namespace tock::server::timers
