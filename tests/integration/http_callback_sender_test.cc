// HttpCallbackSender against a real HTTP receiver (tests/support/callback_receiver): every
// outcome of the seed's protocol over the wire, timeouts, refused connections, bounded
// answers, many callbacks in flight on kept-alive connections, and stopping with callbacks
// still in flight or queued. No timing assertions: slow answers are scripted far beyond the
// timeouts they exercise, and waits are bounded condition-variable waits.
#include "server-core/timers/http_callback_sender.h"
#include "server-core/timers/lazy_callback_sender.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "server-core/timers/callback_protocol.h"
#include "server-core/timers/callback_signature.h"
#include "tests/support/callback_receiver.h"

namespace tock::server::timers {
namespace {

using Kind = CallbackOutcome::Kind;
using testing::CallbackAnswer;
using testing::CallbackReceiver;

constexpr absl::Duration kWait = absl::Seconds(30);  // a bound, never expected to be reached

// Collects outcomes as `done` callbacks deliver them (on the sender's thread).
class Outcomes {
 public:
  std::function<void(CallbackOutcome)> Slot(size_t index) {
    {
      std::lock_guard lock(mu_);
      if (outcomes_.size() <= index) {
        outcomes_.resize(index + 1);
        calls_.resize(index + 1, 0);
      }
    }
    return [this, index](CallbackOutcome o) {
      std::lock_guard lock(mu_);
      outcomes_[index] = std::move(o);
      ++calls_[index];
      ++total_;
      threads_.insert(std::this_thread::get_id());
      changed_.notify_all();
    };
  }
  bool WaitFor(size_t n) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, absl::ToChronoMilliseconds(kWait), [&] { return total_ >= n; });
  }
  CallbackOutcome Get(size_t i) {
    std::lock_guard lock(mu_);
    return outcomes_.at(i);
  }
  int Calls(size_t i) {
    std::lock_guard lock(mu_);
    return calls_.at(i);
  }
  size_t total() {
    std::lock_guard lock(mu_);
    return total_;
  }
  std::set<std::thread::id> threads() {
    std::lock_guard lock(mu_);
    return threads_;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<CallbackOutcome> outcomes_;
  std::vector<int> calls_;
  size_t total_ = 0;
  std::set<std::thread::id> threads_;
};

const absl::Time kExecuteAt = absl::FromUnixSeconds(1'795'000'000);

CallbackRequest Request(const CallbackReceiver& receiver, const std::string& id, int attempt = 1,
                        absl::Duration timeout = absl::Seconds(10)) {
  CallbackRequest r;
  r.url = receiver.Url("/hooks/timer");
  r.body_json = CallbackBodyJson("orders", id, R"({"order": 7})", kExecuteAt, attempt);
  r.timeout = timeout;
  return r;
}

// The receivers here listen on 127.0.0.1: a sender that may reach loopback (and no other
// restricted range), as tock server start-dev's.
CallbackAddressPolicy LoopbackAllowed() { return *CallbackAddressPolicy::Parse({"127.0.0.0/8"}); }

std::unique_ptr<HttpCallbackSender> MakeSender(HttpCallbackSenderOptions options = {}) {
  options.address_policy = LoopbackAllowed();
  auto sender = HttpCallbackSender::Create(options);
  EXPECT_TRUE(sender.ok()) << sender.status();
  return sender.ok() ? std::move(*sender) : nullptr;
}

// A port of 127.0.0.1 where nothing listens: bound (so no one else takes it) but not listening.
class ClosedPort {
 public:
  ClosedPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~ClosedPort() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

class HttpCallbackSenderTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(receiver_.Start().ok()); }
  CallbackReceiver receiver_;
  Outcomes outcomes_;
};

TEST_F(HttpCallbackSenderTest, OkTrueSucceedsAndTheReceiverGetsTheBody) {
  auto sender = MakeSender();
  ASSERT_NE(sender, nullptr);
  sender->Send(Request(receiver_, "t-ok", 2), outcomes_.Slot(0));
  ASSERT_TRUE(outcomes_.WaitFor(1));
  const CallbackOutcome o = outcomes_.Get(0);
  EXPECT_EQ(o.kind, Kind::kSucceeded) << o.error;
  EXPECT_EQ(o.http_status, 200);
  EXPECT_EQ(o.error, "");

  const auto got = receiver_.ReceivedFor("t-ok");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].path, "/hooks/timer");
  EXPECT_EQ(got[0].namespace_name, "orders");
  EXPECT_EQ(got[0].attempt, 2);
  EXPECT_EQ(got[0].execute_at, kExecuteAt);
  EXPECT_EQ(nlohmann::json::parse(got[0].payload_json), nlohmann::json::parse(R"({"order": 7})"));
  // done ran on the sender's thread, not the caller's.
  EXPECT_EQ(outcomes_.threads().count(std::this_thread::get_id()), 0u);
}

TEST_F(HttpCallbackSenderTest, OkFalseWithATimeReschedules) {
  const absl::Time next = kExecuteAt + absl::Hours(2) + absl::Milliseconds(125);
  receiver_.Script("t-later", {CallbackAnswer::RescheduleTo(next)});
  auto sender = MakeSender();
  sender->Send(Request(receiver_, "t-later"), outcomes_.Slot(0));
  ASSERT_TRUE(outcomes_.WaitFor(1));
  const CallbackOutcome o = outcomes_.Get(0);
  ASSERT_EQ(o.kind, Kind::kReschedule) << o.error;
  EXPECT_EQ(o.next_execute_at, next);
}

// The error names the status, never the answer's text (the timer's creator reads it).
TEST_F(HttpCallbackSenderTest, FourHundredStopsWithTheStatusAndNotTheBody) {
  receiver_.Script("t-gone", {CallbackAnswer::Status(410, R"({"error":"order cancelled"})")});
  auto sender = MakeSender();
  sender->Send(Request(receiver_, "t-gone"), outcomes_.Slot(0));
  ASSERT_TRUE(outcomes_.WaitFor(1));
  const CallbackOutcome o = outcomes_.Get(0);
  EXPECT_EQ(o.kind, Kind::kStop);
  EXPECT_EQ(o.http_status, 410);
  EXPECT_EQ(o.error, "callback answered HTTP 410 Gone (no retry)");
}

TEST_F(HttpCallbackSenderTest, FiveHundredsRetryThenSuccess) {
  receiver_.FailThenSucceed("t-flaky", 2, 503);
  auto sender = MakeSender();
  for (int attempt = 1; attempt <= 3; ++attempt) {
    sender->Send(Request(receiver_, "t-flaky", attempt), outcomes_.Slot(attempt - 1));
    ASSERT_TRUE(outcomes_.WaitFor(attempt));
  }
  EXPECT_EQ(outcomes_.Get(0).kind, Kind::kRetry);
  EXPECT_EQ(outcomes_.Get(0).http_status, 503);
  EXPECT_NE(outcomes_.Get(0).error.find("HTTP 503"), std::string::npos) << outcomes_.Get(0).error;
  EXPECT_EQ(outcomes_.Get(1).kind, Kind::kRetry);
  EXPECT_EQ(outcomes_.Get(2).kind, Kind::kSucceeded);
  const auto got = receiver_.ReceivedFor("t-flaky");
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[2].attempt, 3);
}

TEST_F(HttpCallbackSenderTest, SlowBeyondTheTimeoutRetries) {
  receiver_.Script("t-slow", {CallbackAnswer::Slow(absl::Seconds(60))});
  auto sender = MakeSender();
  sender->Send(Request(receiver_, "t-slow", 1, absl::Milliseconds(300)), outcomes_.Slot(0));
  ASSERT_TRUE(outcomes_.WaitFor(1));
  const CallbackOutcome o = outcomes_.Get(0);
  EXPECT_EQ(o.kind, Kind::kRetry);
  EXPECT_EQ(o.http_status, 0);
  EXPECT_NE(o.error.find("timed out after 300ms"), std::string::npos) << o.error;
  EXPECT_EQ(receiver_.ReceivedFor("t-slow").size(), 1u);  // it arrived; the answer was late
}

TEST_F(HttpCallbackSenderTest, RefusedConnectionRetries) {
  ClosedPort closed;
  auto sender = MakeSender();
  CallbackRequest r = Request(receiver_, "t-refused");
  r.url = absl::StrCat("http://127.0.0.1:", closed.port(), "/cb");
  sender->Send(std::move(r), outcomes_.Slot(0));
  ASSERT_TRUE(outcomes_.WaitFor(1));
  const CallbackOutcome o = outcomes_.Get(0);
  EXPECT_EQ(o.kind, Kind::kRetry);
  EXPECT_EQ(o.http_status, 0);
  EXPECT_NE(o.error.find("connect"), std::string::npos) << o.error;
}

TEST_F(HttpCallbackSenderTest, BadBodiesRetry) {
  receiver_.Script("t-text", {CallbackAnswer::Body("done!")});
  receiver_.Script("t-nook", {CallbackAnswer::Body(R"({"ok": false})")});
  receiver_.Script("t-huge", {CallbackAnswer::Body(R"({"ok":true,"pad":")" + std::string(10'000, 'x') + "\"}")});
  HttpCallbackSenderOptions options;
  options.max_response_bytes = 1024;
  auto sender = MakeSender(options);
  sender->Send(Request(receiver_, "t-text"), outcomes_.Slot(0));
  sender->Send(Request(receiver_, "t-nook"), outcomes_.Slot(1));
  sender->Send(Request(receiver_, "t-huge"), outcomes_.Slot(2));
  ASSERT_TRUE(outcomes_.WaitFor(3));
  EXPECT_EQ(outcomes_.Get(0).kind, Kind::kRetry);
  EXPECT_NE(outcomes_.Get(0).error.find("not a JSON object"), std::string::npos) << outcomes_.Get(0).error;
  EXPECT_EQ(outcomes_.Get(1).kind, Kind::kRetry);
  EXPECT_NE(outcomes_.Get(1).error.find("without nextExecuteAt"), std::string::npos);
  EXPECT_EQ(outcomes_.Get(2).kind, Kind::kRetry);
  EXPECT_NE(outcomes_.Get(2).error.find("body longer than the 1024 bytes read"), std::string::npos) << outcomes_.Get(2).error;
  for (size_t i = 0; i < 3; ++i) EXPECT_LE(outcomes_.Get(i).error.size(), CallbackOutcome::kMaxErrorBytes);
}

TEST_F(HttpCallbackSenderTest, ManyInFlightReuseKeptAliveConnections) {
  constexpr int kInFlight = 16;
  constexpr int kCallbacks = 600;
  HttpCallbackSenderOptions options;
  options.max_in_flight = kInFlight;
  auto sender = MakeSender(options);
  for (int i = 0; i < kCallbacks; ++i) sender->Send(Request(receiver_, absl::StrCat("t-", i)), outcomes_.Slot(i));
  ASSERT_TRUE(outcomes_.WaitFor(kCallbacks));
  for (int i = 0; i < kCallbacks; ++i) {
    EXPECT_EQ(outcomes_.Get(i).kind, Kind::kSucceeded) << i << ": " << outcomes_.Get(i).error;
    EXPECT_EQ(outcomes_.Calls(i), 1) << i;  // exactly once
  }
  const auto got = receiver_.Received();
  ASSERT_EQ(got.size(), static_cast<size_t>(kCallbacks));
  std::set<int> ports;
  for (const auto& r : got) ports.insert(r.remote_port);
  // At most one connection per transfer slot: the other requests reused kept connections.
  EXPECT_LE(ports.size(), static_cast<size_t>(kInFlight));
  EXPECT_LE(sender->stats().connections_opened, static_cast<uint64_t>(kInFlight));
  EXPECT_EQ(sender->stats().sent, static_cast<uint64_t>(kCallbacks));
}

TEST_F(HttpCallbackSenderTest, CallbacksAreInFlightTogetherOnOneThread) {
  // Every answer is held far longer than the test: all kInFlight requests reaching the
  // receiver while none has been answered shows they were on the wire at the same time.
  constexpr int kInFlight = 40;
  receiver_.SetDefault(CallbackAnswer::Slow(absl::Seconds(120)));
  HttpCallbackSenderOptions options;
  options.max_in_flight = kInFlight;
  auto sender = MakeSender(options);
  for (int i = 0; i < kInFlight; ++i) {
    sender->Send(Request(receiver_, absl::StrCat("t-", i), 1, absl::Seconds(120)), outcomes_.Slot(i));
  }
  ASSERT_TRUE(receiver_.WaitForCount(kInFlight, kWait));
  EXPECT_EQ(outcomes_.total(), 0u);
  receiver_.Stop();  // cuts the held answers short
  ASSERT_TRUE(outcomes_.WaitFor(kInFlight));
  EXPECT_EQ(outcomes_.threads().size(), 1u);
}

TEST_F(HttpCallbackSenderTest, StopAnswersInFlightAndQueuedOnceAndLaterSendsAtOnce) {
  receiver_.SetDefault(CallbackAnswer::Slow(absl::Seconds(120)));
  HttpCallbackSenderOptions options;
  options.max_in_flight = 1;
  auto sender = MakeSender(options);
  sender->Send(Request(receiver_, "t-0", 1, absl::Seconds(120)), outcomes_.Slot(0));
  ASSERT_TRUE(receiver_.WaitForCount(1, kWait));
  for (int i = 1; i <= 4; ++i) sender->Send(Request(receiver_, absl::StrCat("t-", i)), outcomes_.Slot(i));
  sender->Stop();
  ASSERT_EQ(outcomes_.total(), 5u);  // Stop returns after answering everything
  for (int i = 0; i <= 4; ++i) {
    EXPECT_EQ(outcomes_.Calls(i), 1);
    EXPECT_EQ(outcomes_.Get(i).kind, Kind::kRetry);
    EXPECT_NE(outcomes_.Get(i).error.find("stopped"), std::string::npos) << outcomes_.Get(i).error;
  }
  sender->Send(Request(receiver_, "t-late"), outcomes_.Slot(5));
  EXPECT_EQ(outcomes_.Calls(5), 1);
  EXPECT_NE(outcomes_.Get(5).error.find("stopped"), std::string::npos);
  sender->Stop();  // idempotent
}

TEST_F(HttpCallbackSenderTest, AFullQueueAnswersRetryWithoutSending) {
  receiver_.SetDefault(CallbackAnswer::Slow(absl::Seconds(120)));
  HttpCallbackSenderOptions options;
  options.max_in_flight = 1;
  options.max_queued = 2;
  auto sender = MakeSender(options);
  sender->Send(Request(receiver_, "t-0", 1, absl::Seconds(120)), outcomes_.Slot(0));
  ASSERT_TRUE(receiver_.WaitForCount(1, kWait));
  for (int i = 1; i <= 4; ++i) sender->Send(Request(receiver_, absl::StrCat("t-", i)), outcomes_.Slot(i));
  ASSERT_TRUE(outcomes_.WaitFor(2));  // the two beyond the queue's bound
  EXPECT_NE(outcomes_.Get(3).error.find("queue is full"), std::string::npos) << outcomes_.Get(3).error;
  EXPECT_NE(outcomes_.Get(4).error.find("queue is full"), std::string::npos);
  EXPECT_EQ(outcomes_.Get(3).kind, Kind::kRetry);
  sender->Stop();
  EXPECT_EQ(outcomes_.total(), 5u);
  EXPECT_EQ(receiver_.count(), 1u);
}

// The address is checked when the connection is opened, after the name is resolved: a URL
// whose host resolves to a refused address (as a rebound DNS name would) reaches nothing and
// fails without a retry, saying which config key allows it (review P2-2).
TEST_F(HttpCallbackSenderTest, ARefusedAddressIsNotConnectedToAndNotRetried) {
  auto sender = HttpCallbackSender::Create(HttpCallbackSenderOptions());  // the default policy
  ASSERT_TRUE(sender.ok()) << sender.status();
  CallbackRequest literal = Request(receiver_, "t-literal");
  CallbackRequest name = Request(receiver_, "t-name");
  name.url = absl::StrCat("http://localhost:", receiver_.port(), "/hooks/timer");
  (*sender)->Send(std::move(literal), outcomes_.Slot(0));
  (*sender)->Send(std::move(name), outcomes_.Slot(1));
  ASSERT_TRUE(outcomes_.WaitFor(2));
  for (size_t i = 0; i < 2; ++i) {
    const CallbackOutcome o = outcomes_.Get(i);
    EXPECT_EQ(o.kind, Kind::kStop) << i << ": " << o.error;
    EXPECT_EQ(o.http_status, 0);
    EXPECT_EQ(o.error,
              "callback not sent: its host resolves to a loopback address, which timer callbacks "
              "may reach only if the server's config allows it in timers.callbacks.allow (no retry)");
  }
  EXPECT_EQ(receiver_.count(), 0u) << "nothing reached the receiver";
  EXPECT_EQ((*sender)->stats().connections_opened, 0u);
}

// A host name in the allow-list lets its URLs reach whatever it resolves to; a range lets in
// its addresses whatever the name.
TEST_F(HttpCallbackSenderTest, AnAllowedNameOrRangeIsReached) {
  for (const std::vector<std::string>& allow :
       {std::vector<std::string>{"localhost"}, std::vector<std::string>{"127.0.0.1", "::1"},
        std::vector<std::string>{"*.localhost", "localhost"}}) {
    HttpCallbackSenderOptions options;
    options.address_policy = *CallbackAddressPolicy::Parse(allow);
    auto sender = HttpCallbackSender::Create(options);
    ASSERT_TRUE(sender.ok()) << sender.status();
    Outcomes outcomes;
    CallbackRequest r = Request(receiver_, "t-allowed");
    r.url = absl::StrCat("http://localhost:", receiver_.port(), "/hooks/timer");
    (*sender)->Send(std::move(r), outcomes.Slot(0));
    ASSERT_TRUE(outcomes.WaitFor(1));
    EXPECT_EQ(outcomes.Get(0).kind, Kind::kSucceeded) << allow[0] << ": " << outcomes.Get(0).error;
  }
  // A name with user info is not matched by name (two parsers could read its host apart).
  HttpCallbackSenderOptions options;
  options.address_policy = *CallbackAddressPolicy::Parse({"localhost"});
  auto sender = HttpCallbackSender::Create(options);
  ASSERT_TRUE(sender.ok());
  CallbackRequest r = Request(receiver_, "t-userinfo");
  r.url = absl::StrCat("http://user@localhost:", receiver_.port(), "/hooks/timer");
  (*sender)->Send(std::move(r), outcomes_.Slot(0));
  ASSERT_TRUE(outcomes_.WaitFor(1));
  EXPECT_EQ(outcomes_.Get(0).kind, Kind::kStop) << outcomes_.Get(0).error;
  EXPECT_EQ(receiver_.ReceivedFor("t-userinfo").size(), 0u);
}

// A proxy named by the environment is not used: the address checked is the receiver's.
TEST_F(HttpCallbackSenderTest, NoProxyFromTheEnvironment) {
  ClosedPort proxy;
  const std::string proxy_url = absl::StrCat("http://127.0.0.1:", proxy.port());
  setenv("http_proxy", proxy_url.c_str(), 1);
  setenv("HTTP_PROXY", proxy_url.c_str(), 1);
  auto sender = MakeSender();
  sender->Send(Request(receiver_, "t-direct"), outcomes_.Slot(0));
  ASSERT_TRUE(outcomes_.WaitFor(1));
  unsetenv("http_proxy");
  unsetenv("HTTP_PROXY");
  EXPECT_EQ(outcomes_.Get(0).kind, Kind::kSucceeded) << outcomes_.Get(0).error;
  EXPECT_EQ(receiver_.ReceivedFor("t-direct").size(), 1u);
}

// With a secret for its namespace a callback carries Tock-Signature, which the receiver
// verifies with the secret and the body it read; other namespaces' callbacks are unsigned.
TEST_F(HttpCallbackSenderTest, SignedCallbacksVerifyAtTheReceiver) {
  const std::string secret = "orders-secret-0123456789";
  HttpCallbackSenderOptions options;
  options.signing_secrets = {{"orders", secret}};
  auto sender = MakeSender(options);
  CallbackRequest signed_request = Request(receiver_, "t-signed");
  signed_request.namespace_name = "orders";
  CallbackRequest unsigned_request = Request(receiver_, "t-unsigned");
  unsigned_request.namespace_name = "billing";
  sender->Send(std::move(signed_request), outcomes_.Slot(0));
  sender->Send(std::move(unsigned_request), outcomes_.Slot(1));
  ASSERT_TRUE(outcomes_.WaitFor(2));
  EXPECT_EQ(outcomes_.Get(0).kind, Kind::kSucceeded) << outcomes_.Get(0).error;

  const auto got = receiver_.ReceivedFor("t-signed");
  ASSERT_EQ(got.size(), 1u);
  ASSERT_FALSE(got[0].signature.empty());
  EXPECT_TRUE(VerifyCallbackSignature(secret, got[0].signature, got[0].body, absl::Now()).ok());
  // Anyone else's: another secret, another body, an old time.
  EXPECT_EQ(VerifyCallbackSignature("another-secret-0123456789", got[0].signature, got[0].body,
                                    absl::Now())
                .code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_FALSE(VerifyCallbackSignature(secret, got[0].signature, got[0].body + " ", absl::Now()).ok());
  EXPECT_FALSE(
      VerifyCallbackSignature(secret, got[0].signature, got[0].body, absl::Now() + absl::Hours(1)).ok());
  const auto plain = receiver_.ReceivedFor("t-unsigned");
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].signature, "");
}

TEST(HttpCallbackSenderOptionsTest, OutOfRangeOptionsAreRefused) {
  HttpCallbackSenderOptions options;
  options.max_in_flight = 0;
  EXPECT_EQ(HttpCallbackSender::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.max_in_flight = 1;
  options.max_response_bytes = 0;
  EXPECT_EQ(HttpCallbackSender::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tock::server::timers

namespace tock::server::timers {
namespace {

// Counts what it is asked to log (the lazy sender must log a failure once, not per callback).
class CountingLogger : public Logger {
 public:
  bool Enabled(LogLevel) const override { return true; }
  void Write(LogLevel level, absl::string_view message, std::initializer_list<LogField>) override {
    std::lock_guard lock(mu);
    if (level == LogLevel::kError) errors.emplace_back(message);
  }
  std::mutex mu;
  std::vector<std::string> errors;
};

// A receiver, and a lazy sender of libcurl senders (the default factory) counting in `made`
// the senders it makes.
struct LazyHttpSender {
  testing::CallbackReceiver receiver;
  int made = 0;
  CountingLogger logger;
  LazyCallbackSender lazy{[this] {
                            ++made;
                            HttpCallbackSenderOptions options;
                            options.address_policy = LoopbackAllowed();
                            return LazyCallbackSender::MakeHttpSenderWith(options);
                          },
                          logger};
};

// Sends one callback and waits for its outcome (none after 20 s).
std::optional<CallbackOutcome> SendAndWait(CallbackSender& sender, const std::string& url) {
  auto answered = std::make_shared<std::promise<CallbackOutcome>>();
  std::future<CallbackOutcome> f = answered->get_future();
  sender.Send({url, R"({"id":"x"})", absl::Seconds(10)},
              [answered](CallbackOutcome o) { answered->set_value(std::move(o)); });
  if (f.wait_for(std::chrono::seconds(20)) != std::future_status::ready) return std::nullopt;
  return f.get();
}

TEST(LazyCallbackSenderTest, MadeAtTheFirstCallbackNotBefore) {
  LazyHttpSender t;
  ASSERT_TRUE(t.receiver.Start().ok());
  auto& [receiver, made, logger, lazy] = t;
  EXPECT_EQ(made, 0) << "made before any callback";
  for (int i = 0; i < 2; ++i) {
    std::optional<CallbackOutcome> outcome = SendAndWait(lazy, receiver.Url("/cb"));
    ASSERT_TRUE(outcome.has_value()) << "no outcome within 20 s";
    EXPECT_EQ(outcome->kind, Kind::kSucceeded);
  }
  EXPECT_EQ(made, 1);
  lazy.Stop();
  std::promise<CallbackOutcome> after;
  lazy.Send({receiver.Url("/cb"), "{}", absl::Seconds(1)}, [&](CallbackOutcome o) { after.set_value(o); });
  CallbackOutcome stopped = after.get_future().get();
  EXPECT_EQ(stopped.kind, Kind::kRetry);
  EXPECT_EQ(stopped.error, "the callback sender stopped");
  EXPECT_TRUE(logger.errors.empty());
}

TEST(LazyCallbackSenderTest, PrepareMakesItOnceAheadOfTheFirstCallback) {
  LazyHttpSender t;
  ASSERT_TRUE(t.receiver.Start().ok());
  auto& [receiver, made, logger, lazy] = t;
  lazy.Prepare();
  EXPECT_EQ(made, 1) << "made by Prepare, before any callback";
  lazy.Prepare();
  std::optional<CallbackOutcome> outcome = SendAndWait(lazy, receiver.Url("/cb"));
  ASSERT_TRUE(outcome.has_value()) << "no outcome within 20 s";
  EXPECT_EQ(outcome->kind, Kind::kSucceeded);
  EXPECT_EQ(made, 1) << "the sender Prepare made sends the callbacks";
  EXPECT_TRUE(logger.errors.empty());
}

TEST(LazyCallbackSenderTest, ASenderThatCannotBeMadeFailsEachCallbackWithTheReasonLoggedOnce) {
  int made = 0;
  CountingLogger logger;
  LazyCallbackSender lazy(
      [&]() -> absl::StatusOr<std::unique_ptr<CallbackSender>> {
        ++made;
        return absl::FailedPreconditionError("libcurl is not installed (Debian package libcurl4)");
      },
      logger);
  lazy.Prepare();  // fails as the first callback would, and counts as the minute's try
  for (int i = 0; i < 3; ++i) {
    CallbackOutcome got;
    lazy.Send({"http://127.0.0.1:1/cb", "{}", absl::Seconds(1)}, [&](CallbackOutcome o) { got = o; });
    EXPECT_EQ(got.kind, Kind::kRetry) << "retried by the timer's policy, not dropped";
    EXPECT_EQ(got.error, "libcurl is not installed (Debian package libcurl4)");
  }
  EXPECT_EQ(made, 1) << "tried again at most once a minute";
  EXPECT_EQ(logger.errors.size(), 1u);
}

}  // namespace
}  // namespace tock::server::timers
