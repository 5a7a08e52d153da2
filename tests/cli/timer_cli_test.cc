// `tock timer create|get|update|delete|list` black-box: the built tock against a real
// tock-server, whose engine fires the timers at a real HTTP receiver
// (tests/support/callback_receiver.h). Output formats, exit codes, every flag check, and a
// timer created from the CLI seen through to Succeeded or Failed.
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "tests/cli/cli_fixture.h"
#include "tests/support/callback_receiver.h"

namespace tock::testing {
namespace {

class TimerCliTest : public CliTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(receiver_.Start().ok());
    // The receiver listens on 127.0.0.1, which callbacks reach only when allowed.
    StartServer({"--config", dir_.Write("timers.yaml", kAllowLoopbackCallbacksYaml)});
  }
  // Polls `tock timer get` until the state is `state` (bounded).
  json WaitForState(const std::string& id, const std::string& state) {
    json timer;
    for (int i = 0; i < 300; ++i) {
      timer = TockJson({"timer", "get", id});
      if (timer.value("state", "") == state) return timer;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << id << " never reached " << state << ": " << timer.dump();
    return timer;
  }
  CallbackReceiver receiver_;
};

TEST_F(TimerCliTest, CreateGetUpdateDeleteAsJson) {
  json created = TockJson({"timer", "create", "reminder-7", "--in", "1h", "--callback-url",
                           "https://api.example.com/hooks/timer", "--payload", R"({"user": 7})",
                           "--max-attempts", "5", "--initial-interval", "30s", "--max-interval", "10m",
                           "--callback-timeout", "20s"});
  EXPECT_EQ(created.value("id", ""), "reminder-7");
  EXPECT_EQ(created.value("namespace", ""), "default");
  EXPECT_EQ(created.value("state", ""), "TIMER_STATE_PENDING");
  EXPECT_EQ(json::parse(created.value("payloadJson", "null")), json::parse(R"({"user": 7})"));
  EXPECT_EQ(At(created, "/retryPolicy/maxAttempts"), 5);
  EXPECT_EQ(At(created, "/retryPolicy/initialInterval"), "30s");
  EXPECT_EQ(At(created, "/retryPolicy/maxInterval"), "600s");
  EXPECT_EQ(created.value("callbackTimeoutSeconds", 0), 20);
  const int64_t due = TimestampNanos(created["executeAt"]);
  ASSERT_GT(due, 0);

  json got = TockJson({"timer", "get", "reminder-7"});
  EXPECT_EQ(got["executeAt"], created["executeAt"]);
  EXPECT_EQ(got["callbackUrl"], "https://api.example.com/hooks/timer");

  json updated = TockJson({"timer", "update", "reminder-7", "--in", "2h", "--payload", "[1, 2]"});
  EXPECT_GT(TimestampNanos(updated["executeAt"]), due);
  EXPECT_EQ(json::parse(updated.value("payloadJson", "null")), json::parse("[1,2]"));
  EXPECT_EQ(At(updated, "/retryPolicy/maxAttempts"), 5);  // not given: kept

  json deleted = TockJson({"timer", "delete", "reminder-7", "--yes"});
  EXPECT_EQ(deleted.value("state", ""), "TIMER_STATE_DELETED");
  EXPECT_EQ(TockJson({"timer", "get", "reminder-7"}).value("state", ""), "TIMER_STATE_DELETED");
}

TEST_F(TimerCliTest, CardShowsStateAndResult) {
  ProcessResult r = Tock({"timer", "create", "t-card", "--at", "2030-01-02T03:04:05Z", "--callback-url",
                          "http://127.0.0.1:9/cb", "-o", "card"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("Result"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("created"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2030-01-02T03:04:05Z"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Pending"), std::string::npos) << r.out;
  // The same content again: nothing changes.
  r = Tock({"timer", "create", "t-card", "--at", "2030-01-02T03:04:05Z", "--callback-url",
            "http://127.0.0.1:9/cb", "-o", "card"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("unchanged"), std::string::npos) << r.out;
}

TEST_F(TimerCliTest, FlagChecksExitTwoAndSendNothing) {
  const std::vector<std::string> url = {"--callback-url", "http://127.0.0.1:9/cb"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), url.begin(), url.end());
    return args;
  };
  ExpectError(with({"timer", "create", "a"}), kExitUsage, "give the time to fire: --at TIME or --in DURATION");
  ExpectError(with({"timer", "create", "a", "--at", "now", "--in", "1m"}), kExitUsage, "give --at or --in, not both");
  ExpectError({"timer", "create", "a", "--in", "1m"}, kExitUsage, "--callback-url is required (http:// or https://)");
  ExpectError(with({"timer", "create", "a", "--in", "1m", "--payload", "{oops"}), kExitUsage,
              "--payload must be JSON (a string needs its quotes: '\"text\"')");
  ExpectError(with({"timer", "create", "a", "--in", "1m", "--callback-timeout", "1500ms"}), kExitUsage,
              "--callback-timeout must be whole seconds from 1s to 60s");
  ExpectError(with({"timer", "create", "a", "--in", "-5m"}), kExitUsage,
              "--in must not be negative (use --at for a past time)");
  ExpectError(with({"timer", "create", "a", "--in", "1m", "--payload", "1", "--payload-file", "x.json"}),
              kExitUsage, "give --payload or --payload-file, not both");
  ExpectError({"timer", "update", "a"}, kExitUsage,
              "nothing to change: give --at/--in, --callback-url, --payload/--payload-file, a retry flag or "
              "--callback-timeout");
  ProcessResult r = Tock(with({"timer", "create", "a", "--in", "soon"}));
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
  EXPECT_TRUE(absl::StartsWith(r.err, "error: --in: ")) << r.err;
  // Checked by the server, which names the field.
  r = Tock({"timer", "create", "a", "--in", "1m", "--callback-url", "ftp://example.com/x"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("callback_url"), std::string::npos) << r.err;
  r = Tock(with({"timer", "create", std::string(256, 'x'), "--in", "1m"}));
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("255"), std::string::npos) << r.err;
  // Nothing was stored by any of these.
  EXPECT_EQ(Tock({"timer", "get", "a"}).exit_code, kExitNotFound);
}

TEST_F(TimerCliTest, PayloadFileAndItsBound) {
  const std::string file = dir_.Write("payload.json", R"({"invoice": 42, "lines": [1, 2, 3]})");
  json created = TockJson({"timer", "create", "inv-42", "--in", "1h", "--callback-url", "http://127.0.0.1:9/cb",
                           "--payload-file", file});
  EXPECT_EQ(json::parse(created.value("payloadJson", "null")), json::parse(R"({"invoice": 42, "lines": [1, 2, 3]})"));
  const std::string big = dir_.Write("big.json", "\"" + std::string(110 * 1024, 'x') + "\"");
  ExpectError({"timer", "create", "inv-43", "--in", "1h", "--callback-url", "http://127.0.0.1:9/cb",
               "--payload-file", big},
              kExitUsage, "--payload-file: more than 102400 bytes (the payload limit)");
  // From standard input.
  std::vector<std::string> args = {"timer", "create", "inv-44", "--in", "1h", "--callback-url",
                                   "http://127.0.0.1:9/cb", "--payload-file", "-", "-o", "json"};
  ProcessResult r = Tock(args, R"({"from": "stdin"})");
  ASSERT_EQ(r.exit_code, kExitOk) << Describe(args, r);
  EXPECT_EQ(json::parse(json::parse(r.out).value("payloadJson", "null")), json::parse(R"({"from": "stdin"})"));
}

TEST_F(TimerCliTest, NotFoundPendingOnlyAndConfirmation) {
  ProcessResult r = Tock({"timer", "get", "nope"});
  EXPECT_EQ(r.exit_code, kExitNotFound) << r.err;
  EXPECT_EQ(r.err, "error: timer 'nope' not found in namespace default\n");
  EXPECT_EQ(Tock({"timer", "update", "nope", "--in", "1m"}).exit_code, kExitNotFound);
  EXPECT_EQ(Tock({"timer", "delete", "nope", "--yes"}).exit_code, kExitNotFound);

  TockJson({"timer", "create", "t-1", "--in", "1h", "--callback-url", "http://127.0.0.1:9/cb"});
  // Off a terminal, delete needs --yes and sends nothing without it.
  r = Tock({"timer", "delete", "t-1"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("--yes"), std::string::npos) << r.err;
  EXPECT_EQ(TockJson({"timer", "get", "t-1"}).value("state", ""), "TIMER_STATE_PENDING");
  TockJson({"timer", "delete", "t-1", "--yes"});
  // Only a pending timer changes.
  r = Tock({"timer", "update", "t-1", "--in", "5m"});
  EXPECT_EQ(r.exit_code, kExitError) << r.err;
  r = Tock({"timer", "delete", "t-1", "--yes"});
  EXPECT_EQ(r.exit_code, kExitError) << r.err;
  // An unknown namespace.
  EXPECT_EQ(Tock({"timer", "get", "t-1", "-n", "no-such-namespace"}).exit_code, kExitNotFound);
}

TEST_F(TimerCliTest, ListPagesFiltersAndPrintsTables) {
  for (int i = 0; i < 105; ++i) {  // more than one page of the CLI's (100)
    ProcessResult r = Tock({"timer", "create", absl::StrCat("t-", 1000 + i), "--in", "1h", "--callback-url",
                            "http://127.0.0.1:9/cb", "-o", "json"});
    ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  }
  TockJson({"timer", "delete", "t-1000", "--yes"});
  std::vector<json> all = TockJsonLines({"timer", "list"});
  ASSERT_EQ(all.size(), 105u);
  EXPECT_EQ(all[0].value("id", ""), "t-1000");
  EXPECT_EQ(all[104].value("id", ""), "t-1104");
  EXPECT_EQ(TockJsonLines({"timer", "list", "--state", "pending"}).size(), 104u);
  std::vector<json> deleted = TockJsonLines({"timer", "list", "--state", "DELETED"});
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_EQ(deleted[0].value("id", ""), "t-1000");
  EXPECT_EQ(TockJsonLines({"timer", "list", "--limit", "3"}).size(), 3u);
  ProcessResult r = Tock({"timer", "list", "--limit", "2", "-o", "table"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("ID"), std::string::npos);
  EXPECT_NE(r.out.find("NEXT ATTEMPT"), std::string::npos);
  EXPECT_NE(r.out.find("Deleted"), std::string::npos) << r.out;
  r = Tock({"timer", "list", "-n", "default", "--state", "failed", "-o", "table"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("No timers."), std::string::npos) << r.out;
  EXPECT_EQ(Tock({"timer", "list", "--state", "sleeping"}).exit_code, kExitUsage);
}

// A callback URL the server's policy refuses: refused at create, naming the config key that
// would allow it (this server allows only 127.0.0.0/8).
TEST_F(TimerCliTest, ARestrictedCallbackAddressIsRefusedWithTheConfigKey) {
  ProcessResult r = Tock({"timer", "create", "t-meta", "--in", "1h", "--callback-url",
                          "http://169.254.169.254/latest/meta-data/"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("\"169.254.169.254\" is a link-local address"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("timers.callbacks.allow"), std::string::npos) << r.err;
}

// `tock server start-dev` is for a developer's machine: its callbacks may reach loopback
// without any config (a receiver on localhost), while private addresses stay refused.
TEST_F(TimerCliTest, StartDevLetsCallbacksReachLoopback) {
  ServerProcess dev(TOCK_CLI_BIN);
  ASSERT_TRUE(dev.Start({"server", "start-dev"})) << dev.error();
  auto tock = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {TOCK_CLI_BIN, "--address", dev.address()});
    return RunProcess(args, {}, "", std::chrono::seconds(30));
  };
  ProcessResult r = tock({"timer", "create", "t-dev", "--in", "0s", "--callback-url", receiver_.Url("/dev")});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_TRUE(receiver_.WaitFor("t-dev", 1, absl::Seconds(30)));
  r = tock({"timer", "create", "t-private", "--in", "1h", "--callback-url", "http://10.0.0.1/cb"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("is a private address"), std::string::npos) << r.err;
  dev.Stop();
}

TEST_F(TimerCliTest, FiresToSucceededAndFourHundredToFailed) {
  receiver_.Script("t-gone", {CallbackAnswer::Status(410, R"({"error":"order cancelled"})")});
  TockJson({"timer", "create", "t-ok", "--in", "1s", "--callback-url", receiver_.Url("/hooks"),
            "--payload", R"({"order": 7})"});
  TockJson({"timer", "create", "t-gone", "--in", "1s", "--callback-url", receiver_.Url("/hooks")});
  json ok = WaitForState("t-ok", "TIMER_STATE_SUCCEEDED");
  EXPECT_EQ(ok.value("attempts", 0), 1);
  EXPECT_GE(TimestampNanos(ok["executedAt"]), TimestampNanos(ok["executeAt"]));
  const auto got = receiver_.ReceivedFor("t-ok");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].path, "/hooks");
  EXPECT_EQ(json::parse(got[0].payload_json), json::parse(R"({"order": 7})"));
  EXPECT_GE(got[0].arrived_at, got[0].execute_at);  // never before its time

  json gone = WaitForState("t-gone", "TIMER_STATE_FAILED");
  EXPECT_NE(gone.value("lastError", "").find("410"), std::string::npos) << gone.dump();
  EXPECT_EQ(receiver_.ReceivedFor("t-gone").size(), 1u);  // a 4xx is not retried
  ProcessResult r = Tock({"timer", "get", "t-gone", "-o", "card"});
  EXPECT_NE(r.out.find("HTTP 410 Gone"), std::string::npos) << r.out;
  // Never the receiver's answer: the timer's creator reads it.
  EXPECT_EQ(r.out.find("order cancelled"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tock::testing
