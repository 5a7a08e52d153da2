// The timer service's HTTP/JSON API black-box (seed 003's api.yaml shape): a real
// tock-server started with --http-port 0, called with libcurl over real HTTP; timers fired
// at a real receiver (tests/support/callback_receiver.h). Answers, the seed's error bodies,
// field checks naming the JSON fields, idempotent create, pending-only changes, paging.
#include <curl/curl.h>
#include <gtest/gtest.h>

#include <regex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "tests/cli/cli_fixture.h"
#include "tests/support/curl_call.h"
#include "lib/common/time_format.h"
#include "tests/support/callback_receiver.h"

namespace tock::testing {
namespace {

class TimerHttpApiTest : public CliTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(receiver_.Start().ok());
    // The receiver listens on 127.0.0.1, which callbacks reach only when allowed.
    std::vector<std::string> flags = {
        "--http-port", "0", "--config",
        dir_.Write("timers.yaml", kAllowLoopbackCallbacksYaml)};
    for (const std::string& f : ExtraServerFlags()) flags.push_back(f);
    StartServer(flags);
    std::smatch match;
    const std::string& banner = server_->banner();
    ASSERT_TRUE(std::regex_search(banner, match, std::regex(R"(\n  timers:     (http://\S+/api/v1/timers)\n)")))
        << "no timers line in the banner:\n" << banner;
    base_ = match[1];
  }

  // POSTs /api/v1/timers/<op>; the answer's JSON (null for an empty body).
  json Call(const std::string& op, const json& body, long expected_status) {
    return CallRaw(op, body.dump(), expected_status);
  }
  json CallRaw(const std::string& op, const std::string& body, long expected_status) {
    HttpAnswer a = CurlCall("POST", absl::StrCat(base_, "/", op), body);
    EXPECT_EQ(a.error, "");
    EXPECT_EQ(a.status, expected_status) << op << " " << body.substr(0, 300) << " -> " << a.body;
    if (a.body.empty()) return json();
    json parsed = json::parse(a.body, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << a.body;
    return parsed;
  }
  // A 400 INVALID_INPUT whose message names `field`; returns the message.
  std::string ExpectInvalid(const std::string& op, const json& body, const std::string& field) {
    json e = Call(op, body, 400);
    EXPECT_EQ(e.value("error", ""), "INVALID_INPUT") << e.dump();
    const std::string message = e.value("message", "");
    EXPECT_NE(message.find(field), std::string::npos) << "message does not name " << field << ": " << message;
    EXPECT_TRUE(e.contains("details")) << e.dump();
    EXPECT_GT(TimestampNanos(e["timestamp"]), 0) << e.dump();
    return message;
  }
  json Timer(const std::string& id, const std::string& url, const std::string& at = "2030-01-02T03:04:05Z") {
    return {{"namespace", "default"}, {"id", id}, {"executeAt", at}, {"callbackUrl", url}};
  }
  json WaitForState(const std::string& id, const std::string& state) {
    json t;
    for (int i = 0; i < 300; ++i) {
      t = Call("get", {{"namespace", "default"}, {"timerId", id}}, 200);
      if (t.value("state", "") == state) return t;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << id << " never reached " << state << ": " << t.dump();
    return t;
  }

  virtual std::vector<std::string> ExtraServerFlags() const { return {}; }

  CallbackReceiver receiver_;
  std::string base_;
};

TEST_F(TimerHttpApiTest, CreateGetUpdateDeleteInTheSeedsShape) {
  json req = Timer("reminder-7", "https://api.example.com/hooks/timer");
  req["payload"] = {{"user", 7}, {"tags", {"a", "b"}}};
  req["retryPolicy"] = {{"maxAttempts", 5},
                        {"maxAttemptsDuration", "1h"},
                        {"initialInterval", "30s"},
                        {"backoffMultiplier", 1.5},
                        {"maxInterval", "5m"}};
  req["callbackTimeoutSeconds"] = 20;
  json t = Call("create", req, 200);
  EXPECT_EQ(t.value("id", ""), "reminder-7");
  EXPECT_EQ(t.value("namespace", ""), "default");
  EXPECT_EQ(t.value("executeAt", ""), "2030-01-02T03:04:05Z");
  EXPECT_EQ(t.value("callbackUrl", ""), "https://api.example.com/hooks/timer");
  EXPECT_EQ(t["payload"], req["payload"]);
  EXPECT_EQ(t["retryPolicy"], req["retryPolicy"]);
  EXPECT_EQ(t.value("callbackTimeoutSeconds", 0), 20);
  EXPECT_EQ(t.value("state", ""), "PENDING");
  EXPECT_EQ(t.value("attempts", -1), 0);
  EXPECT_GT(TimestampNanos(t["createdAt"]), 0);
  EXPECT_GT(TimestampNanos(t["updatedAt"]), 0);
  EXPECT_FALSE(t.contains("executedAt"));

  // The same create again is idempotent: the stored timer is unchanged.
  json again = Call("create", req, 200);
  EXPECT_EQ(again["updatedAt"], t["updatedAt"]);

  json got = Call("get", {{"namespace", "default"}, {"timerId", "reminder-7"}}, 200);
  EXPECT_EQ(got, again);

  json updated = Call("update",
                      {{"namespace", "default"}, {"timerId", "reminder-7"}, {"executeAt", "2031-05-06T07:08:09.5+02:00"},
                       {"payload", "just text"}},
                      200);
  EXPECT_EQ(updated.value("executeAt", ""), "2031-05-06T05:08:09.500Z");
  EXPECT_EQ(updated["payload"], "just text");
  EXPECT_EQ(updated.value("callbackUrl", ""), "https://api.example.com/hooks/timer");  // kept
  EXPECT_EQ(updated["retryPolicy"], req["retryPolicy"]);

  EXPECT_TRUE(Call("delete", {{"namespace", "default"}, {"timerId", "reminder-7"}}, 204).is_null());
  EXPECT_EQ(Call("get", {{"namespace", "default"}, {"timerId", "reminder-7"}}, 200).value("state", ""), "DELETED");
  // Only pending timers can be updated or deleted.
  json e = Call("update", {{"namespace", "default"}, {"timerId", "reminder-7"}, {"callbackUrl", "http://x.example/"}}, 400);
  EXPECT_EQ(e.value("error", ""), "INVALID_INPUT") << e.dump();
  e = Call("delete", {{"namespace", "default"}, {"timerId", "reminder-7"}}, 400);
  EXPECT_EQ(e.value("error", ""), "INVALID_INPUT") << e.dump();
  // Creating the id again replaces the deleted timer.
  EXPECT_EQ(Call("create", Timer("reminder-7", "http://127.0.0.1:9/cb"), 200).value("state", ""), "PENDING");
}

// A client creating timers one after another keeps its connection: cpp-httplib's default
// closed it after every fifth request, a TCP handshake per five timers.
TEST_F(TimerHttpApiTest, AClientKeepsItsConnectionForManyRequests) {
  CURL* curl = curl_easy_init();
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  std::string answer;
  const std::string url = absl::StrCat(base_, "/create");
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendToString);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 30'000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  long connections = 0;
  constexpr int kRequests = 50;
  for (int i = 0; i < kRequests; ++i) {
    const std::string body = Timer(absl::StrCat("kept-", i), "http://127.0.0.1:9/cb").dump();
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    answer.clear();
    ASSERT_EQ(curl_easy_perform(curl), CURLE_OK);
    long status = 0, opened = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &opened);
    EXPECT_EQ(status, 200) << answer;
    connections += opened;
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  EXPECT_EQ(connections, 1) << "new connections for " << kRequests << " requests on one handle";
}

TEST_F(TimerHttpApiTest, NotFoundIsTheSeeds404) {
  for (const char* op : {"get", "update", "delete"}) {
    json body = {{"namespace", "default"}, {"timerId", "nope"}};
    if (std::string(op) == "update") body["executeAt"] = "2030-01-01T00:00:00Z";
    json e = Call(op, body, 404);
    EXPECT_EQ(e.value("error", ""), "TIMER_NOT_FOUND") << e.dump();
    EXPECT_EQ(e.value("message", ""), "timer 'nope' not found in namespace default");
    EXPECT_TRUE(e["details"].is_object());
    EXPECT_GT(TimestampNanos(e["timestamp"]), 0) << e.dump();
  }
}

TEST_F(TimerHttpApiTest, EveryFieldIsCheckedByItsJsonNameAndNothingIsStored) {
  const std::string url = "http://127.0.0.1:9/cb";
  ExpectInvalid("create", Timer(std::string(256, 'x'), url), "id");
  ExpectInvalid("create", Timer("", url), "id");
  ExpectInvalid("create", Timer("a", "ftp://example.com/x"), "callbackUrl");
  ExpectInvalid("create", Timer("a", "http://example.com/" + std::string(2100, 'p')), "callbackUrl");
  ExpectInvalid("create", Timer("a", url, "tomorrow"), "executeAt");
  ExpectInvalid("create", Timer("a", url, "2500-01-01T00:00:00Z"), "executeAt");
  json no_time = Timer("a", url);
  no_time.erase("executeAt");
  ExpectInvalid("create", no_time, "executeAt");
  json bad = Timer("a", url);
  bad["callbackTimeoutSeconds"] = 3.5;
  ExpectInvalid("create", bad, "callbackTimeoutSeconds");
  bad["callbackTimeoutSeconds"] = 600;
  ExpectInvalid("create", bad, "callbackTimeoutSeconds");
  bad = Timer("a", url);
  bad["retryPolicy"] = {{"initialInterval", "fast"}};
  ExpectInvalid("create", bad, "retryPolicy.initialInterval");
  bad["retryPolicy"] = {{"maxAttempts", 5000}};
  ExpectInvalid("create", bad, "retryPolicy.maxAttempts");
  bad["retryPolicy"] = {{"maxRetries", 3}};  // the seed's other documents' name
  const std::string m = ExpectInvalid("create", bad, "retryPolicy.maxRetries");
  EXPECT_NE(m.find("maxAttempts"), std::string::npos) << m;  // says what the fields are
  bad["retryPolicy"] = "3 times";
  ExpectInvalid("create", bad, "retryPolicy");
  bad = Timer("a", url);
  bad["payload"] = json::parse(R"({"a":{"b":{"c":1}}})");
  std::string deep = "1";
  for (int i = 0; i < 100; ++i) deep = "[" + deep + "]";
  bad["payload"] = json::parse(deep);
  ExpectInvalid("create", bad, "nested");
  bad = Timer("a", url);
  bad["id"] = 7;
  ExpectInvalid("create", bad, "id");
  bad = Timer("a", url);
  bad["namespace"] = "no-such-namespace";
  json e = Call("create", bad, 400);
  EXPECT_EQ(e.value("error", ""), "INVALID_INPUT");
  EXPECT_EQ(At(e, "/details/field"), "namespace") << e.dump();
  ExpectInvalid("get", {{"namespace", "default"}, {"id", "a"}}, "\"id\"");  // selections say timerId
  // Not JSON, not an object, too big: refused before anything else.
  json raw = CallRaw("create", "{\"namespace\": ", 400);
  EXPECT_EQ(raw.value("error", ""), "INVALID_INPUT");
  EXPECT_NE(raw.value("message", "").find("not valid JSON"), std::string::npos) << raw.dump();
  raw = CallRaw("create", "[1, 2]", 400);
  EXPECT_NE(raw.value("message", "").find("JSON object"), std::string::npos) << raw.dump();
  raw = CallRaw("create", std::string(600 * 1024, ' '), 400);
  EXPECT_NE(raw.value("message", "").find("524288 bytes"), std::string::npos) << raw.dump();
  // Nothing was stored by any refusal.
  EXPECT_EQ(Call("get", {{"namespace", "default"}, {"timerId", "a"}}, 404).value("error", ""), "TIMER_NOT_FOUND");
}

TEST_F(TimerHttpApiTest, ListPagesAndFilters) {
  for (int i = 0; i < 5; ++i) Call("create", Timer(absl::StrCat("t-", i), "http://127.0.0.1:9/cb"), 200);
  Call("delete", {{"namespace", "default"}, {"timerId", "t-3"}}, 204);
  json page = Call("list", {{"namespace", "default"}, {"pageSize", 2}}, 200);
  ASSERT_EQ(page["timers"].size(), 2u);
  EXPECT_EQ(page["timers"][0].value("id", ""), "t-0");
  ASSERT_TRUE(page.contains("nextPageToken"));
  std::vector<std::string> ids;
  for (int pages = 0; pages < 10; ++pages) {
    for (const json& t : page["timers"]) ids.push_back(t.value("id", ""));
    if (!page.contains("nextPageToken")) break;
    page = Call("list", {{"namespace", "default"}, {"pageSize", 2}, {"nextPageToken", page["nextPageToken"]}}, 200);
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"t-0", "t-1", "t-2", "t-3", "t-4"}));
  json deleted = Call("list", {{"namespace", "default"}, {"state", "DELETED"}}, 200);
  ASSERT_EQ(deleted["timers"].size(), 1u);
  EXPECT_EQ(deleted["timers"][0].value("id", ""), "t-3");
  ExpectInvalid("list", {{"namespace", "default"}, {"state", "ASLEEP"}}, "state");
  ExpectInvalid("list", {{"namespace", "default"}, {"nextPageToken", "!!!"}}, "nextPageToken");
}

TEST_F(TimerHttpApiTest, FiresWithTheSeedsCallbackAndOutcomes) {
  receiver_.FailThenSucceed("t-flaky", 1, 503);
  // In whole milliseconds, as the answer's RFC 3339 text carries it: the arrival is compared
  // with the time the server was told.
  const absl::Time next = absl::FromUnixMillis(absl::ToUnixMillis(absl::Now() + absl::Seconds(2)));
  receiver_.Script("t-later", {CallbackAnswer::RescheduleTo(next), CallbackAnswer::Ok()});
  const std::string at = FormatTimestamp(absl::Now() + absl::Seconds(1));
  json flaky = Timer("t-flaky", receiver_.Url("/cb"), at);
  flaky["payload"] = {{"order", 7}};
  flaky["retryPolicy"] = {{"initialInterval", "100ms"}, {"maxAttempts", 3}};
  Call("create", flaky, 200);
  Call("create", Timer("t-later", receiver_.Url("/cb"), at), 200);

  json ok = WaitForState("t-flaky", "SUCCEEDED");
  EXPECT_EQ(ok.value("attempts", 0), 2);
  const auto got = receiver_.ReceivedFor("t-flaky");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].attempt, 1);
  EXPECT_EQ(got[1].attempt, 2);
  EXPECT_EQ(got[0].namespace_name, "default");
  EXPECT_EQ(json::parse(got[0].payload_json), flaky["payload"]);
  EXPECT_GE(got[0].arrived_at, got[0].execute_at);

  json later = WaitForState("t-later", "SUCCEEDED");
  const auto calls = receiver_.ReceivedFor("t-later");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_GE(calls[1].arrived_at, next);  // rescheduled, never before the new time
}

// Bodies over the API's limit (512 KiB) and over the HTTP server's own (4 MiB, refused before
// any handler runs) both get the seed's error body, and nothing is stored.
TEST_F(TimerHttpApiTest, OversizedBodiesGetTheSeedsError) {
  for (size_t size : {size_t{600} * 1024, size_t{5} * 1024 * 1024}) {
    json t = Timer("t-big", receiver_.Url("/cb"));
    t["payload"] = std::string(size, 'x');
    json e = Call("create", t, 400);
    EXPECT_EQ(e.value("error", ""), "INVALID_INPUT") << size << ": " << e.dump();
    EXPECT_NE(e.value("message", "").find("the request body is over 524288 bytes"), std::string::npos)
        << size << ": " << e.dump();
    EXPECT_GT(TimestampNanos(e["timestamp"]), 0) << e.dump();
  }
  json missing = Call("get", {{"namespace", "default"}, {"timerId", "t-big"}}, 404);
  EXPECT_EQ(missing.value("error", ""), "TIMER_NOT_FOUND");
}

// The retry policy's timing on a time-skipping server (--enable-time-skipping): the server's
// clock is moved by `tock server advance-time`, and every attempt must come exactly when the
// policy says on that clock: not before the timer's time, then after each backoff (jittered
// into [0.8, 1] of the interval, as the seed's), never before it.
class TimerTimeSkippingTest : public TimerHttpApiTest {
 protected:
  std::vector<std::string> ExtraServerFlags() const override { return {"--enable-time-skipping"}; }

  // Moves the server's clock by `d` (whole milliseconds); its time after the move. The server
  // answers once its timer engine has looked at every timer due by then and recorded the
  // attempts it made (timersSettled), so what has not fired by the answer was not due.
  absl::Time Advance(absl::Duration d) {
    const std::string ms = absl::StrCat(absl::ToInt64Milliseconds(d), "ms");
    json moved = TockJson({"server", "advance-time", ms});
    EXPECT_TRUE(moved.value("timersSettled", false)) << moved.dump();
    absl::StatusOr<absl::Time> at = ParseTimestamp(moved.value("serverTime", ""), absl::Now());
    EXPECT_TRUE(at.ok()) << moved.dump();
    return at.ok() ? *at : absl::InfinitePast();
  }
  absl::Time Field(const json& timer, const std::string& name) {
    absl::StatusOr<absl::Time> at = ParseTimestamp(timer.value(name, ""), absl::Now());
    EXPECT_TRUE(at.ok()) << name << " in " << timer.dump();
    return at.ok() ? *at : absl::InfinitePast();
  }
  // Waits (real time, bounded) until the timer shows `attempts` attempts and no longer FIRING.
  json AfterAttempt(const std::string& id, int attempts) {
    json t;
    for (int i = 0; i < 200; ++i) {
      t = Call("get", {{"namespace", "default"}, {"timerId", id}}, 200);
      if (t.value("attempts", 0) == attempts && t.value("state", "") != "FIRING") return t;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << id << " never finished attempt " << attempts << ": " << t.dump();
    return t;
  }
};

TEST_F(TimerTimeSkippingTest, RetryTimingFollowsThePolicyOnTheServersClock) {
  // Attempt 1 answers 503; attempt 2 answers after 3 s, past the 1 s callback timeout;
  // attempt 3 succeeds.
  receiver_.Script("t-retry", {CallbackAnswer::Status(503), CallbackAnswer::Slow(absl::Seconds(3)),
                               CallbackAnswer::Ok()});
  const absl::Time start = Advance(absl::Milliseconds(1));
  const absl::Time due = start + absl::Hours(1);
  json t = Timer("t-retry", receiver_.Url("/cb"), FormatTimestamp(due));
  t["retryPolicy"] = {{"initialInterval", "10m"}, {"backoffMultiplier", 2}, {"maxInterval", "1h"},
                      {"maxAttemptsDuration", "2h"}, {"maxAttempts", 5}};
  t["callbackTimeoutSeconds"] = 1;
  Call("create", t, 200);

  // An hour less a second on the server's clock: not due yet, no attempt recorded (an
  // attempt is recorded before its callback is sent), nothing sent.
  Advance(due - absl::Seconds(1) - start);
  json before1 = Call("get", {{"namespace", "default"}, {"timerId", "t-retry"}}, 200);
  EXPECT_EQ(before1.value("attempts", 0), 0) << "sent before its time: " << before1.dump();
  EXPECT_EQ(receiver_.ReceivedFor("t-retry").size(), 0u) << "sent before its time";
  Advance(absl::Seconds(1));
  json after1 = AfterAttempt("t-retry", 1);
  EXPECT_EQ(after1.value("state", ""), "PENDING");
  EXPECT_NE(after1.value("lastError", "").find("503"), std::string::npos) << after1.dump();
  const absl::Time first = Field(after1, "executedAt");
  EXPECT_GE(first, due);
  // Backoff 1: 10 minutes jittered into [8 m, 10 m] after the attempt.
  const absl::Time next1 = Field(after1, "nextAttemptAt");
  EXPECT_GE(next1 - first, absl::Minutes(8)) << after1.dump();
  EXPECT_LE(next1 - first, absl::Minutes(10) + absl::Seconds(1)) << after1.dump();

  absl::Time now = Advance(absl::Milliseconds(1));
  now = Advance(next1 - absl::Seconds(1) - now);
  json before2 = Call("get", {{"namespace", "default"}, {"timerId", "t-retry"}}, 200);
  EXPECT_EQ(before2.value("attempts", 0), 1)
      << "retried before the backoff ran out: " << before2.dump();
  EXPECT_EQ(receiver_.ReceivedFor("t-retry").size(), 1u) << "retried before the backoff ran out";
  now = Advance(absl::Seconds(1));
  json after2 = AfterAttempt("t-retry", 2);
  EXPECT_EQ(after2.value("state", ""), "PENDING");
  EXPECT_NE(after2.value("lastError", "").find("timed out"), std::string::npos) << after2.dump();
  // Backoff 2: 20 minutes (10 m x 2) jittered into [16 m, 20 m] after the second attempt.
  const absl::Time next2 = Field(after2, "nextAttemptAt");
  EXPECT_GE(next2 - now, absl::Minutes(16)) << after2.dump();
  EXPECT_LE(next2 - now, absl::Minutes(20) + absl::Seconds(5)) << after2.dump();

  now = Advance(absl::Milliseconds(1));
  Advance(next2 - now);
  json done = WaitForState("t-retry", "SUCCEEDED");
  EXPECT_EQ(done.value("attempts", 0), 3);
  const auto got = receiver_.ReceivedFor("t-retry");
  ASSERT_EQ(got.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(got[i].attempt, i + 1);
  EXPECT_FALSE(done.contains("lastError")) << done.dump();
}

}  // namespace
}  // namespace tock::testing
