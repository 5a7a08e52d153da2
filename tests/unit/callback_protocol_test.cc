// The seed's callback protocol as pure functions: the POST body, and how every kind of
// answer is classified (server-core/timers/callback_protocol.h).
#include "server-core/timers/callback_protocol.h"

#include <gtest/gtest.h>

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
  EXPECT_NE(bad.error.find("tomorrow"), std::string::npos) << bad.error;
}

TEST(ClassifyAnswer, BadBodiesRetryNamingTheProblem) {
  for (const char* body : {"", "not json", "[true]", R"({"ok": "yes"})", R"({"status": "ok"})", "{\"ok\": tr"}) {
    const CallbackOutcome o = ClassifyCallbackAnswer(200, body, false);
    EXPECT_EQ(o.kind, Kind::kRetry) << body;
    EXPECT_NE(o.error.find("HTTP 200"), std::string::npos) << o.error;
  }
  EXPECT_EQ(ClassifyCallbackAnswer(200, R"({"ok": true})", /*body_truncated=*/true).kind, Kind::kRetry);
}

TEST(ClassifyAnswer, FourHundredsStopWithTheStatusAndBody) {
  for (int status : {400, 404, 409, 422, 499}) {
    const CallbackOutcome o = ClassifyCallbackAnswer(status, R"({"error": "no such order"})", false);
    EXPECT_EQ(o.kind, Kind::kStop) << status;
    EXPECT_EQ(o.http_status, status);
    EXPECT_NE(o.error.find(std::to_string(status)), std::string::npos) << o.error;
    EXPECT_NE(o.error.find("no such order"), std::string::npos) << o.error;
  }
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

}  // namespace
}  // namespace tock::server::timers
