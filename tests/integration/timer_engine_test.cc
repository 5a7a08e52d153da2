// The timer service and its engine in process, on a real SQLite store with real shard
// ownership, a ManualClock and a scripted CallbackSender (the fault/time fake the design
// allows in engine tests; the black-box tests use the libcurl sender and a real receiver):
//  - every field is checked with a message naming it and its limit, nothing stored on refusal;
//  - create / idempotent create / replace / update / delete / list with paging and a filter;
//  - a timer is never sent before its time; timers due together go out in key order;
//  - outcomes: succeeded, rescheduled, 4xx failed with its error, 5xx retried with the
//    policy's backoff then succeeded, failed when the policy runs out;
//  - an attempt is recorded before it is sent, so a new owner sends an unanswered one again;
//  - a stale owner (its range id taken by another controller) writes and sends nothing;
//  - a store error on an attempt's record (whether or not the write landed) loses nothing:
//    the timer is read again from the store and sent.
#include "server-core/timers/timer_engine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/str_format.h"
#include "lib/common/log.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "nlohmann/json.hpp"
#include "server-core/history/shard_controller.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/persistence/persistence.h"
#include "server-core/timers/timer_service.h"
#include "tests/support/eventually.h"
#include "tests/support/namespace_fixture.h"

namespace tock::server::timers {
namespace {

using ::testing::HasSubstr;
using Kind = CallbackOutcome::Kind;

constexpr int32_t kShards = 4;

// Answers callbacks on its own thread as scripted per timer id (the last answer repeats; no
// script: success), or never (hold = true: an attempt in flight at a crash). Records each
// request with the clock's time when it was handed over.
class ScriptedSender : public CallbackSender {
 public:
  struct Sent {
    std::string id;
    int attempt = 0;
    absl::Time at;        // the clock's time at Send
    absl::Time execute_at;
    absl::Duration timeout;
  };
  explicit ScriptedSender(Clock& clock) : clock_(clock), thread_([this] { Loop(); }) {}
  ~ScriptedSender() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  void Script(const std::string& id, std::vector<CallbackOutcome> outcomes) {
    std::lock_guard lock(mu_);
    scripts_[id] = std::move(outcomes);
  }
  void Hold(bool hold) {
    std::lock_guard lock(mu_);
    hold_ = hold;
  }

  void Send(CallbackRequest request, std::function<void(CallbackOutcome)> done) override {
    nlohmann::json body = nlohmann::json::parse(request.body_json);
    Sent s{body.at("id").get<std::string>(), body.at("attempt").get<int>(), clock_.Now(),
           absl::Time(), request.timeout};
    absl::Time at;
    std::string err;
    if (absl::ParseTime(absl::RFC3339_full, body.at("executeAt").get<std::string>(), &at, &err)) {
      s.execute_at = at;
    }
    std::lock_guard lock(mu_);
    sent_.push_back(s);
    if (hold_) return;  // never answered: `done` is dropped
    std::vector<CallbackOutcome>& script = scripts_[s.id];
    CallbackOutcome outcome;
    outcome.kind = Kind::kSucceeded;
    outcome.http_status = 200;
    if (!script.empty()) {
      outcome = script.front();
      if (script.size() > 1) script.erase(script.begin());
    }
    pending_.push_back({std::move(done), outcome});
    cv_.notify_all();
  }

  void Prepare() override { prepared_.fetch_add(1); }
  int prepared() const { return prepared_.load(); }

  std::vector<Sent> sent() const {
    std::lock_guard lock(mu_);
    return sent_;
  }
  std::vector<Sent> SentFor(const std::string& id) const {
    std::vector<Sent> out;
    for (const Sent& s : sent()) {
      if (s.id == id) out.push_back(s);
    }
    return out;
  }

 private:
  void Loop() {
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait(lock, [&] { return stop_ || !pending_.empty(); });
      if (stop_) return;
      auto [done, outcome] = std::move(pending_.front());
      pending_.pop_front();
      lock.unlock();
      done(outcome);
      lock.lock();
    }
  }

  Clock& clock_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::vector<CallbackOutcome>> scripts_;
  std::deque<std::pair<std::function<void(CallbackOutcome)>, CallbackOutcome>> pending_;
  std::vector<Sent> sent_;
  bool hold_ = false;
  bool stop_ = false;
  std::atomic<int> prepared_{0};
  std::thread thread_;  // last
};

// The real store, whose next writes can be made to fail (a fault, as the design allows):
// either before they reach it (nothing written) or after (written, but the caller is told
// it failed, as when a commit's answer is lost).
class FaultyTimerStore : public persistence::TimerStore {
 public:
  explicit FaultyTimerStore(persistence::TimerStore& real) : real_(real) {}
  // The next write (one transaction) fails as a whole with `error`: UNAVAILABLE by default,
  // or, say, PostgreSQL's ABORTED for a deadlock (SQLSTATE 40P01).
  void FailNextWrite(bool landed,
                     absl::Status error = absl::UnavailableError("injected: the database is unavailable")) {
    std::lock_guard lock(mu_);
    fail_next_ = true;
    landed_ = landed;
    error_ = std::move(error);
  }
  // Whether one write (one transaction) recorded both attempts and outcomes.
  bool WroteAttemptsWithOutcomes() const {
    std::lock_guard lock(mu_);
    return wrote_both_;
  }
  std::vector<absl::Status> Write(std::vector<persistence::TimerWrite>& writes) override {
    bool fail = false, landed = false;
    absl::Status error;
    {
      std::lock_guard lock(mu_);
      std::swap(fail, fail_next_);
      landed = landed_;
      error = error_;
      const auto attempt = [](const persistence::TimerWrite& w) { return w.attempt; };
      const auto outcome = [](const persistence::TimerWrite& w) {
        return !w.attempt && !w.remove && w.expected_revision > 0;
      };
      wrote_both_ = wrote_both_ || (std::any_of(writes.begin(), writes.end(), attempt) &&
                                    std::any_of(writes.begin(), writes.end(), outcome));
    }
    if (!fail) return real_.Write(writes);
    std::vector<absl::Status> out(writes.size());
    if (landed) out = real_.Write(writes);
    for (absl::Status& s : out) s = error;
    return out;
  }
  absl::StatusOr<persistence::StoredTimer> Get(const std::string& ns, const std::string& id) override {
    return real_.Get(ns, id);
  }
  absl::StatusOr<std::vector<persistence::StoredTimer>> List(const std::string& ns,
                                                             const std::string& after, int state,
                                                             int32_t limit) override {
    return real_.List(ns, after, state, limit);
  }
  absl::StatusOr<std::vector<persistence::StoredTimer>> LoadDue(int32_t shard,
                                                                const persistence::TimerDueCursor& after,
                                                                absl::Time until, int32_t limit) override {
    return real_.LoadDue(shard, after, until, limit);
  }

 private:
  persistence::TimerStore& real_;
  mutable std::mutex mu_;
  bool fail_next_ = false;
  bool landed_ = false;
  absl::Status error_;
  bool wrote_both_ = false;
};

CallbackOutcome Outcome(Kind kind, int status, std::string error = "",
                        absl::Time at = absl::InfinitePast()) {
  CallbackOutcome o;
  o.kind = kind;
  o.http_status = status;
  o.error = std::move(error);
  o.next_execute_at = at;
  return o;
}

using tock::testing::Eventually;

class TimerEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = persistence::OpenPersistence({});
    ASSERT_TRUE(opened.ok()) << opened.status();
    persistence_ = std::move(*opened);
    namespaces_ = tock::testing::SingleClusterNamespaces(persistence_->namespaces(), clock_);
    ASSERT_TRUE(namespaces_->EnsureRegistered("default").ok());
    shards_ = std::make_unique<history::ShardController>(persistence_->executions(), kShards, "host-a");
    faulty_ = std::make_unique<FaultyTimerStore>(persistence_->timers());
    ASSERT_TRUE(shards_->AcquireAll().ok());
    sender_ = std::make_unique<ScriptedSender>(clock_);
    MakeService();
    retention_ = std::make_unique<TimerRetention>(
        [this](const std::string& id) -> absl::StatusOr<absl::Duration> {
          if (failing_lookups_.load() > 0) {  // a fault of the namespace store
            failing_lookups_.fetch_sub(1);
            return absl::UnavailableError("injected: the namespace store is unavailable");
          }
          auto ns = persistence_->namespaces().GetNamespaceById(id);
          if (!ns.ok()) return ns.status();
          return FromProtoDuration(ns->record.config().workflow_execution_retention_ttl());
        },
        clock_);
    service_->SetRetention(retention_.get());
    StartEngine();
  }
  void TearDown() override {
    if (engine_) engine_->Stop();
  }

  // The service; its callbacks may reach loopback, where the tests' URLs point (nothing is
  // sent there: the scripted sender answers).
  void MakeService() {
    service_ = std::make_unique<TimerService>(persistence_->timers(), *shards_, *namespaces_, clock_);
    service_->SetCallbackPolicy(*CallbackAddressPolicy::Parse({"127.0.0.0/8"}));
  }

  void StartEngine(TimerEngine::Options options = {}) {
    options.load_interval = absl::Milliseconds(20);
    options.retention = retention_.get();
    engine_ = std::make_unique<TimerEngine>(*faulty_, *shards_, *sender_, clock_, NullLogger(),
                                            options);
    service_->SetOnWritten([e = engine_.get()](const persistence::StoredTimer& t) { e->OnWritten(t); });
    engine_->Start();
  }

  void Advance(absl::Duration d) {
    clock_.Advance(d);
    engine_->Wake();
  }

  // Returns once every timer due by the clock's now has been looked at (TimerEngine::
  // WaitForDue, which `tock server advance-time` waits on too). A check that something has
  // NOT happened, made after this, fails when the engine is wrong however slow the machine.
  void WaitForDue() { ASSERT_TRUE(engine_->WaitForDue(absl::Seconds(20))); }

  tv1::CreateTimerRequest Request(const std::string& id, absl::Duration in) {
    tv1::CreateTimerRequest r;
    r.set_namespace_("default");
    r.set_id(id);
    *r.mutable_execute_at() = ToProtoTime(clock_.Now() + in);
    r.set_callback_url("http://127.0.0.1:9/callback");
    r.set_payload_json(R"({"order":42})");
    return r;
  }
  tv1::Timer Create(const tv1::CreateTimerRequest& r) {
    auto created = service_->Create(r);
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? created->timer() : tv1::Timer();
  }
  tv1::Timer Get(const std::string& id) {
    tv1::GetTimerRequest g;
    g.set_namespace_("default");
    g.set_id(id);
    auto got = service_->Get(g);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? got->timer() : tv1::Timer();
  }
  bool StateIs(const std::string& id, tv1::TimerState state) { return Get(id).state() == state; }

  ManualClock clock_{absl::FromUnixSeconds(1'800'000'000)};
  std::unique_ptr<persistence::Persistence> persistence_;
  std::unique_ptr<namespaces::NamespaceEngine> namespaces_;
  std::unique_ptr<history::ShardController> shards_;
  std::unique_ptr<FaultyTimerStore> faulty_;  // the engine's store
  std::unique_ptr<ScriptedSender> sender_;
  std::unique_ptr<TimerService> service_;
  std::unique_ptr<TimerRetention> retention_;
  std::atomic<int> failing_lookups_{0};  // retention lookups still to fail
  std::unique_ptr<TimerEngine> engine_;
};

// PostgreSQL's answer to a deadlock (SQLSTATE 40P01), as pg_db.cc maps it: the whole
// transaction is rolled back; no row of it was "changed concurrently".
absl::Status Deadlock() {
  return absl::AbortedError("postgres: deadlock detected (SQLSTATE 40P01)");
}

TEST_F(TimerEngineTest, EveryFieldIsCheckedAndNothingStoredOnRefusal) {
  struct Case {
    std::function<void(tv1::CreateTimerRequest&)> change;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](auto& r) { r.clear_namespace_(); }, "namespace is required"},
      {[](auto& r) { r.clear_id(); }, "id is required"},
      {[](auto& r) { r.set_id(std::string(256, 'x')); }, "id must be at most 255 bytes, got 256"},
      {[](auto& r) { r.set_id("a\nb"); }, "id must be UTF-8 text without control characters"},
      {[](auto& r) { r.clear_execute_at(); }, "execute_at is required"},
      {[](auto& r) { r.mutable_execute_at()->set_seconds(r.execute_at().seconds() + 11LL * 366 * 86400); },
       "execute_at must be within 10 years of now"},
      {[](auto& r) { r.mutable_execute_at()->set_nanos(-1); }, "execute_at is not a valid time"},
      {[](auto& r) { r.clear_callback_url(); }, "callback_url is required"},
      {[](auto& r) { r.set_callback_url("ftp://x/y"); },
       "callback_url must be an http:// or https:// URL"},
      {[](auto& r) { r.set_callback_url("http://" + std::string(2048, 'h')); },
       "callback_url must be at most 2048 bytes, got 2055"},
      {[](auto& r) { r.set_callback_url("http:///path"); }, "callback_url must name a host"},
      {[](auto& r) { r.set_callback_url("http://a b/"); },
       "callback_url must not contain spaces or control characters"},
      {[](auto& r) { r.set_payload_json("{not json"); }, "payload_json must be valid JSON"},
      {[](auto& r) { r.set_payload_json("\"" + std::string(100 * 1024, 'p') + "\""); },
       "payload_json must be at most 102400 bytes of JSON, got 102402"},
      {[](auto& r) { r.set_payload_json(std::string(65, '[') + std::string(65, ']')); },
       "payload_json must be nested at most 64 levels deep"},
      {[](auto& r) { r.set_callback_timeout_seconds(61); },
       "callback_timeout_seconds must be between 1 and 60 (0 or unset: 10), got 61"},
      {[](auto& r) { r.mutable_retry_policy()->set_max_attempts(5000); },
       "retry_policy.max_attempts must be between 0 and 1000"},
  };
  for (const Case& c : cases) {
    tv1::CreateTimerRequest r = Request("t", absl::Seconds(5));
    c.change(r);
    auto created = service_->Create(r);
    EXPECT_EQ(created.status().code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(created.status().message(), HasSubstr(c.message));
  }
  tv1::CreateTimerRequest unknown = Request("t", absl::Seconds(5));
  unknown.set_namespace_("nope");
  EXPECT_EQ(service_->Create(unknown).status().code(), absl::StatusCode::kNotFound);

  tv1::ListTimersRequest list;
  list.set_namespace_("default");
  auto listed = service_->List(list);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->timers_size(), 0) << "nothing stored on refusal";

  // The JSON API's names.
  tv1::CreateTimerRequest r = Request("t", absl::Seconds(5));
  r.set_callback_url("mailto:x");
  EXPECT_THAT(service_->Create(r, FieldNaming::kJson).status().message(),
              HasSubstr("callbackUrl must be an http:// or https:// URL"));
}

// A callback URL whose host is a restricted address is refused when the timer is created or
// updated, with the config key that would allow it; nothing is stored (review P2-2).
TEST_F(TimerEngineTest, ARestrictedCallbackAddressIsRefusedAtCreateAndUpdate) {
  service_->SetCallbackPolicy(CallbackAddressPolicy());  // the default: loopback refused too
  struct Case {
    std::string url;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"http://169.254.169.254/latest/meta-data/", "\"169.254.169.254\" is a link-local address"},
      {"http://127.0.0.1:9090/metrics", "\"127.0.0.1\" is a loopback address"},
      {"http://2130706433/", "\"2130706433\" is a loopback address"},
      {"http://localhost:7233/", "\"localhost\" is a loopback address"},
      {"https://10.1.2.3/hook", "\"10.1.2.3\" is a private address"},
      {"http://[::1]:8080/", "\"::1\" is a loopback address"},
      {"http://[::ffff:192.168.0.1]/", "is a private address"},
      {"http://[fd00:ec2::254]/", "\"fd00:ec2::254\" is a private address"},
      {"http://0.0.0.0:7233/", "is an unspecified address"},
  };
  for (const Case& c : cases) {
    tv1::CreateTimerRequest r = Request("t", absl::Seconds(5));
    r.set_callback_url(c.url);
    absl::Status refused = service_->Create(r).status();
    EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << c.url;
    EXPECT_THAT(refused.message(), HasSubstr("callback_url's host " + std::string()));
    EXPECT_THAT(refused.message(), HasSubstr(c.message));
    EXPECT_THAT(refused.message(), HasSubstr("timers.callbacks.allow"));
  }
  EXPECT_EQ(service_->Create(Request("t", absl::Seconds(5))).status().code(),
            absl::StatusCode::kInvalidArgument)
      << "127.0.0.1 too";
  tv1::ListTimersRequest list;
  list.set_namespace_("default");
  EXPECT_EQ(service_->List(list)->timers_size(), 0) << "nothing stored on refusal";

  tv1::CreateTimerRequest public_host = Request("t", absl::Seconds(5));
  public_host.set_callback_url("https://hooks.example.com/timer");
  ASSERT_TRUE(service_->Create(public_host).ok()) << "a name is checked once resolved";
  tv1::UpdateTimerRequest u;
  u.set_namespace_("default");
  u.set_id("t");
  u.set_callback_url("http://169.254.169.254/");
  EXPECT_THAT(service_->Update(u, FieldNaming::kJson).status().message(),
              HasSubstr("callbackUrl's host \"169.254.169.254\" is a link-local address"));
  EXPECT_EQ(Get("t").callback_url(), "https://hooks.example.com/timer");

  // What the config allows is accepted.
  service_->SetCallbackPolicy(*CallbackAddressPolicy::Parse({"169.254.169.254", "10.0.0.0/8"}));
  EXPECT_TRUE(service_->Update(u).ok());
  public_host.set_callback_url("https://10.1.2.3/hook");
  EXPECT_TRUE(service_->Create(public_host).ok());
}

TEST_F(TimerEngineTest, CreateIsIdempotentReplacesAndOnlyPendingChanges) {
  tv1::Timer t = Create(Request("t1", absl::Minutes(5)));
  EXPECT_EQ(t.state(), tv1::TIMER_STATE_PENDING);
  EXPECT_EQ(t.callback_timeout_seconds(), kDefaultCallbackTimeoutSeconds);
  auto again = service_->Create(Request("t1", absl::Minutes(5)));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->created()) << "the same content again changes nothing";
  tv1::CreateTimerRequest other = Request("t1", absl::Minutes(6));
  auto replaced = service_->Create(other);
  ASSERT_TRUE(replaced.ok());
  EXPECT_TRUE(replaced->created());
  EXPECT_EQ(FromProtoTime(replaced->timer().execute_at()), clock_.Now() + absl::Minutes(6));

  tv1::UpdateTimerRequest u;
  u.set_namespace_("default");
  u.set_id("t1");
  u.set_payload_json(R"({"order":43})");
  auto updated = service_->Update(u);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(updated->timer().payload_json(), R"({"order":43})");
  EXPECT_EQ(FromProtoTime(updated->timer().execute_at()), clock_.Now() + absl::Minutes(6))
      << "fields not set stay";
  u.set_id("missing");
  EXPECT_EQ(service_->Update(u).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(service_->Update(u).status().message(), "timer 'missing' not found in namespace default");

  tv1::DeleteTimerRequest d;
  d.set_namespace_("default");
  d.set_id("t1");
  auto deleted = service_->Delete(d);
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->timer().state(), tv1::TIMER_STATE_DELETED);
  absl::Status again_deleted = service_->Delete(d).status();
  EXPECT_EQ(again_deleted.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(again_deleted.message(), "timer 't1' is deleted; only a pending timer can be deleted");
  u.set_id("t1");
  EXPECT_EQ(service_->Update(u).status().message(),
            "timer 't1' is deleted; only a pending timer can be updated");
  Advance(absl::Minutes(10));
  // A deleted timer never fires; creating it again makes it pending.
  Create(Request("t2", absl::ZeroDuration()));
  ASSERT_TRUE(Eventually([&] { return StateIs("t2", tv1::TIMER_STATE_SUCCEEDED); }));
  WaitForDue();
  EXPECT_TRUE(sender_->SentFor("t1").empty());
  EXPECT_EQ(Create(Request("t1", absl::Minutes(1))).state(), tv1::TIMER_STATE_PENDING);
}

TEST_F(TimerEngineTest, ListPagesAndFiltersByState) {
  for (int i = 0; i < 5; ++i) Create(Request(absl::StrCat("t", i), absl::Hours(1)));
  tv1::DeleteTimerRequest d;
  d.set_namespace_("default");
  d.set_id("t3");
  ASSERT_TRUE(service_->Delete(d).ok());
  tv1::ListTimersRequest l;
  l.set_namespace_("default");
  l.set_page_size(2);
  std::vector<std::string> ids;
  for (int page = 0; page < 5; ++page) {
    auto got = service_->List(l);
    ASSERT_TRUE(got.ok()) << got.status();
    for (const tv1::Timer& t : got->timers()) ids.push_back(t.id());
    if (got->next_page_token().empty()) break;
    l.set_next_page_token(got->next_page_token());
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"t0", "t1", "t2", "t3", "t4"}));
  l.clear_next_page_token();
  l.set_page_size(0);
  l.set_state(tv1::TIMER_STATE_DELETED);
  auto deleted = service_->List(l);
  ASSERT_TRUE(deleted.ok());
  ASSERT_EQ(deleted->timers_size(), 1);
  EXPECT_EQ(deleted->timers(0).id(), "t3");
  l.set_page_size(1001);
  EXPECT_THAT(service_->List(l).status().message(),
              HasSubstr("page_size must be between 1 and 1000 (0: 100), got 1001"));
}

TEST_F(TimerEngineTest, NeverSentBeforeItsTime) {
  Create(Request("early", absl::Seconds(5)));
  Create(Request("late", absl::Seconds(10)));
  Advance(absl::Seconds(5) - absl::Milliseconds(1));
  Advance(absl::Milliseconds(1));  // exactly "early"'s time
  ASSERT_TRUE(Eventually([&] { return StateIs("early", tv1::TIMER_STATE_SUCCEEDED); }));
  WaitForDue();
  EXPECT_TRUE(sender_->SentFor("late").empty()) << "due 5 s later";
  Advance(absl::Seconds(5) - absl::Microseconds(1));
  WaitForDue();
  EXPECT_EQ(engine_->stats().attempts, 1u);
  EXPECT_TRUE(sender_->SentFor("late").empty()) << "1 us before its time";
  Advance(absl::Microseconds(1));
  ASSERT_TRUE(Eventually([&] { return StateIs("late", tv1::TIMER_STATE_SUCCEEDED); }));
  for (const ScriptedSender::Sent& s : sender_->sent()) {
    EXPECT_GE(s.at, s.execute_at) << s.id;
  }
  tv1::Timer early = Get("early");
  EXPECT_EQ(early.attempts(), 1);
  EXPECT_EQ(FromProtoTime(early.executed_at()), FromProtoTime(early.execute_at()));
}

// The sender gets ready (loads libcurl, in tock-server) once the engine holds a timer, not
// at the first callback, whose timers would wait for it; and not before: a server whose
// timer service has no timer never loads it.
TEST_F(TimerEngineTest, TheSenderIsPreparedOnceATimerIsHeldBeforeItIsDue) {
  auto passes = [&](int n) {
    const uint64_t from = engine_->stats().load_passes;
    return Eventually([&] { return engine_->stats().load_passes >= from + n; });
  };
  ASSERT_TRUE(passes(3));
  EXPECT_EQ(sender_->prepared(), 0) << "prepared with no timer held";
  Create(Request("in-an-hour", absl::Hours(1)));
  ASSERT_TRUE(passes(3));
  EXPECT_EQ(sender_->prepared(), 0) << "prepared for a timer beyond the loaded window (30 s)";
  Create(Request("soon", absl::Seconds(10)));
  ASSERT_TRUE(Eventually([&] { return sender_->prepared() == 1; }));
  WaitForDue();
  EXPECT_TRUE(sender_->sent().empty()) << "due in 10 s";
  ASSERT_TRUE(passes(3));
  EXPECT_EQ(sender_->prepared(), 1) << "prepared once";
}

// Timers due in the same millisecond go out in key order (the store's index order, so that
// their writes touch neighbouring rows), whatever order they were created in.
TEST_F(TimerEngineTest, TimersDueTogetherAreFiredInKeyOrder) {
  std::vector<std::string> ids;
  for (int i = 0; i < 200; ++i) ids.push_back(absl::StrFormat("burst-%03d", (i * 37) % 200));
  for (const std::string& id : ids) Create(Request(id, absl::Seconds(3)));
  // All armed before they are due (a shard the loader had not read yet arms its timers at
  // its first pass), so that they go out together.
  ASSERT_TRUE(Eventually([&] { return engine_->held() == ids.size(); }));
  Advance(absl::Seconds(3));
  ASSERT_TRUE(Eventually([&] { return sender_->sent().size() == ids.size(); }));
  std::vector<std::string> order;
  for (const ScriptedSender::Sent& s : sender_->sent()) order.push_back(s.id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(order, ids);
}

TEST_F(TimerEngineTest, AnAttemptWhoseRecordFailedIsReadAgainAndSent) {
  Create(Request("lost", absl::Seconds(1)));
  faulty_->FailNextWrite(/*landed=*/false);
  Advance(absl::Seconds(1));
  // The failed record sent nothing; the loader reads the shard again and the timer fires.
  ASSERT_TRUE(Eventually([&] { return StateIs("lost", tv1::TIMER_STATE_SUCCEEDED); }));
  EXPECT_EQ(engine_->stats().store_errors, 1u);
  ASSERT_EQ(sender_->SentFor("lost").size(), 1u);
  EXPECT_EQ(sender_->SentFor("lost")[0].attempt, 1);
  EXPECT_EQ(Get("lost").attempts(), 1);
}

TEST_F(TimerEngineTest, AnAttemptRecordedDespiteAnErrorIsSentAsStored) {
  Create(Request("landed", absl::Seconds(1)));
  faulty_->FailNextWrite(/*landed=*/true);
  Advance(absl::Seconds(1));
  // Stored as FIRING with attempt 1 though the engine was told it failed: read again, it is
  // an attempt whose outcome was never recorded, and is sent as attempt 2 (at least once).
  ASSERT_TRUE(Eventually([&] { return StateIs("landed", tv1::TIMER_STATE_SUCCEEDED); }));
  EXPECT_EQ(engine_->stats().store_errors, 1u);
  ASSERT_EQ(sender_->SentFor("landed").size(), 1u);
  EXPECT_EQ(sender_->SentFor("landed")[0].attempt, 2);
  EXPECT_EQ(Get("landed").attempts(), 2);
}

// A transaction aborted as a whole (a deadlock, a serialization failure) is a store error,
// not "these timers changed": every timer of the batch is read again and fired (review P1-10:
// they were dropped as superseded and stayed pending until the shard moved).
TEST_F(TimerEngineTest, AnAbortedTransactionDropsNoTimer) {
  constexpr int kTimers = 10;
  for (int i = 0; i < kTimers; ++i) Create(Request(absl::StrCat("t", i), absl::Seconds(1)));
  ASSERT_TRUE(Eventually([&] { return engine_->held() == kTimers; }));
  faulty_->FailNextWrite(/*landed=*/false, Deadlock());
  Advance(absl::Seconds(1));
  for (int i = 0; i < kTimers; ++i) {
    const std::string id = absl::StrCat("t", i);
    ASSERT_TRUE(Eventually([&] { return StateIs(id, tv1::TIMER_STATE_SUCCEEDED); })) << id;
    EXPECT_EQ(sender_->SentFor(id).size(), 1u) << id;
  }
  EXPECT_EQ(engine_->stats().superseded, 0u);
  EXPECT_GE(engine_->stats().store_errors, 1u);
}

// A finished timer whose namespace's retention could not be read is not given the two-day
// default: the engine looks again a minute later and keeps it for the namespace's 30 days
// (review P1-11: the failure was cached as 48 h and the timer removed after two days).
TEST_F(TimerEngineTest, AFailedRetentionLookupIsTriedAgainNotTakenForTheDefault) {
  temporal::api::workflowservice::v1::UpdateNamespaceRequest update;
  update.set_namespace_("default");
  update.mutable_config()->mutable_workflow_execution_retention_ttl()->set_seconds(30 * 86400);
  ASSERT_TRUE(namespaces_->Update(update).ok());
  auto ns = persistence_->namespaces().GetNamespaceByName("default");
  ASSERT_TRUE(ns.ok()) << ns.status();
  const std::string ns_id = ns->record.info().id();
  auto stored_due = [&] {
    auto row = persistence_->timers().Get(ns_id, "monthly");
    return row.ok() ? row->due : absl::InfinitePast();
  };

  failing_lookups_ = 1;  // the lookup when the timer finishes
  Create(Request("monthly", absl::Seconds(1)));
  Advance(absl::Seconds(1));
  ASSERT_TRUE(Eventually([&] { return StateIs("monthly", tv1::TIMER_STATE_SUCCEEDED); }));
  const absl::Time finished = FromProtoTime(Get("monthly").updated_at());
  EXPECT_EQ(stored_due(), finished + TimerRetention::kRetryAfterError) << "looked at again soon";
  EXPECT_EQ(failing_lookups_.load(), 0);

  Advance(TimerRetention::kRetryAfterError);
  ASSERT_TRUE(Eventually([&] { return engine_->stats().retention_postponed == 1; }));
  EXPECT_EQ(stored_due(), finished + absl::Hours(24 * 30)) << "the namespace's retention";
  EXPECT_EQ(engine_->stats().expired, 0u);
  EXPECT_TRUE(Eventually([&] { return engine_->held() == 0u; }))
      << "due in 30 days: beyond the loaded window";

  Advance(finished + absl::Hours(24 * 30) - clock_.Now());
  ASSERT_TRUE(Eventually([&] { return engine_->stats().expired == 1; }));
  EXPECT_EQ(stored_due(), absl::InfinitePast()) << "removed at the end of its retention";
  EXPECT_EQ(sender_->SentFor("monthly").size(), 1u);
}

// While the firer fires, the outcomes waiting are recorded in its transaction, with its next
// attempts: the writer leaves them to it (for a minute here, so that the test decides when
// they are taken), and the firer never waits behind a commit of the writer's.
class FirerRecordsOutcomesTest : public TimerEngineTest {
 protected:
  void SetUp() override {
    TimerEngineTest::SetUp();
    engine_->Stop();
    engine_.reset();
    TimerEngine::Options options;
    options.outcome_interval = absl::Minutes(1);
    options.store_retry = absl::Milliseconds(10);
    StartEngine(options);
  }
  // "first" fired and answered, its outcome waiting; "second" due one second after it.
  void FireFirst() {
    Create(Request("first", absl::Seconds(1)));
    Create(Request("second", absl::Seconds(2)));
    ASSERT_TRUE(Eventually([&] { return engine_->held() == 2; }));
    Advance(absl::Seconds(1));
    ASSERT_TRUE(Eventually([&] { return engine_->unrecorded_outcomes() == 1; }));
    EXPECT_TRUE(StateIs("first", tv1::TIMER_STATE_FIRING));
  }
};

TEST_F(FirerRecordsOutcomesTest, TheNextFiringRecordsTheOutcomesWaiting) {
  FireFirst();
  Advance(absl::Seconds(1));
  ASSERT_TRUE(Eventually([&] { return StateIs("first", tv1::TIMER_STATE_SUCCEEDED); }));
  EXPECT_TRUE(faulty_->WroteAttemptsWithOutcomes());
  // "second" is sent, and the outcome counted, just after the commit that "first"'s state is
  // read from: waited for, not read at once.
  ASSERT_TRUE(Eventually([&] { return sender_->SentFor("second").size() == 1; }));
  EXPECT_EQ(Get("first").attempts(), 1);
  EXPECT_EQ(engine_->stats().succeeded, 1u);
}

TEST_F(FirerRecordsOutcomesTest, AnOutcomeItsTransactionLostIsWrittenAgain) {
  FireFirst();
  faulty_->FailNextWrite(/*landed=*/false);
  Advance(absl::Seconds(1));
  // Nothing of the transaction was written: "second" is read again from the store and sent,
  // and the writer writes "first"'s outcome again after store_retry (on the engine's clock).
  ASSERT_TRUE(Eventually([&] { return sender_->SentFor("second").size() == 1; }));
  ASSERT_TRUE(Eventually([&] {
    Advance(absl::Milliseconds(10));
    return StateIs("first", tv1::TIMER_STATE_SUCCEEDED);
  }));
  EXPECT_EQ(sender_->SentFor("first").size(), 1u);
  EXPECT_EQ(sender_->SentFor("second")[0].attempt, 1);
  EXPECT_GE(engine_->stats().store_errors, 2u);  // the attempt and the outcome
}

// An outcome whose transaction was aborted as a whole (a deadlock) is written again, and the
// attempt recorded in the same transaction is read again and sent (review P1-10).
TEST_F(FirerRecordsOutcomesTest, AnOutcomeItsTransactionAbortedIsWrittenAgain) {
  FireFirst();
  faulty_->FailNextWrite(/*landed=*/false, Deadlock());
  Advance(absl::Seconds(1));
  ASSERT_TRUE(Eventually([&] { return sender_->SentFor("second").size() == 1; }));
  ASSERT_TRUE(Eventually([&] {
    Advance(absl::Milliseconds(10));
    return StateIs("first", tv1::TIMER_STATE_SUCCEEDED);
  }));
  EXPECT_EQ(sender_->SentFor("first").size(), 1u);
  EXPECT_EQ(engine_->stats().superseded, 0u);
  EXPECT_GE(engine_->stats().store_errors, 2u);  // the attempt and the outcome
}

TEST_F(TimerEngineTest, OutcomesOfTheCallbackProtocol) {
  const absl::Time t0 = clock_.Now();
  sender_->Script("reschedule", {Outcome(Kind::kReschedule, 200, "", t0 + absl::Minutes(30)),
                                 Outcome(Kind::kSucceeded, 200)});
  sender_->Script("refused", {Outcome(Kind::kStop, 404, "the callback answered HTTP 404: gone")});
  Create(Request("ok", absl::Seconds(1)));
  Create(Request("reschedule", absl::Seconds(1)));
  Create(Request("refused", absl::Seconds(1)));
  Advance(absl::Seconds(1));
  ASSERT_TRUE(Eventually([&] { return StateIs("ok", tv1::TIMER_STATE_SUCCEEDED); }));
  ASSERT_TRUE(Eventually([&] { return StateIs("refused", tv1::TIMER_STATE_FAILED); }));
  EXPECT_EQ(Get("refused").last_error(), "the callback answered HTTP 404: gone");
  EXPECT_EQ(sender_->SentFor("refused").size(), 1u) << "4xx: no retry";
  ASSERT_TRUE(Eventually([&] {
    tv1::Timer r = Get("reschedule");
    return r.state() == tv1::TIMER_STATE_PENDING && r.attempts() == 0;
  }));
  tv1::Timer r = Get("reschedule");
  EXPECT_EQ(FromProtoTime(r.execute_at()), t0 + absl::Minutes(30));
  EXPECT_EQ(FromProtoTime(r.next_attempt_at()), t0 + absl::Minutes(30));
  Advance(t0 + absl::Minutes(30) - absl::Milliseconds(1) - clock_.Now());
  ASSERT_TRUE(Eventually([&] { return engine_->stats().attempts == 3; }));
  EXPECT_EQ(sender_->SentFor("reschedule").size(), 1u) << "not before the new time";
  Advance(absl::Milliseconds(1));
  ASSERT_TRUE(Eventually([&] { return StateIs("reschedule", tv1::TIMER_STATE_SUCCEEDED); }));
  EXPECT_EQ(sender_->SentFor("reschedule").size(), 2u);
  EXPECT_EQ(sender_->SentFor("reschedule")[1].at, t0 + absl::Minutes(30));
}

TEST_F(TimerEngineTest, RetriesWithBackoffThenSucceeds) {
  sender_->Script("flaky", {Outcome(Kind::kRetry, 503, "HTTP 503"),
                            Outcome(Kind::kRetry, 0, "timed out after 10s"),
                            Outcome(Kind::kSucceeded, 200)});
  tv1::CreateTimerRequest req = Request("flaky", absl::Seconds(1));
  req.mutable_retry_policy()->mutable_initial_interval()->set_seconds(10);
  req.mutable_retry_policy()->set_backoff_multiplier(3);
  Create(req);
  Advance(absl::Seconds(1));
  const absl::Time first = clock_.Now();
  ASSERT_TRUE(Eventually([&] { return Get("flaky").last_error() == "HTTP 503"; }));
  tv1::Timer after1 = Get("flaky");
  EXPECT_EQ(after1.state(), tv1::TIMER_STATE_PENDING);
  EXPECT_EQ(after1.attempts(), 1);
  // Retry 0: 10 s jittered into [8 s, 10 s), rounded up to the millisecond.
  const absl::Duration d1 = FromProtoTime(after1.next_attempt_at()) - first;
  EXPECT_GE(d1, absl::Seconds(8));
  EXPECT_LE(d1, absl::Seconds(10));
  EXPECT_EQ(d1 % absl::Milliseconds(1), absl::ZeroDuration());
  Advance(d1 - absl::Milliseconds(1));
  ASSERT_TRUE(Eventually([&] { return engine_->held() == 1; }));
  EXPECT_EQ(sender_->SentFor("flaky").size(), 1u) << "not before the backoff ran out";
  Advance(absl::Milliseconds(1));
  ASSERT_TRUE(Eventually([&] { return Get("flaky").last_error() == "timed out after 10s"; }));
  tv1::Timer after2 = Get("flaky");
  EXPECT_EQ(after2.attempts(), 2);
  // Retry 1: 30 s jittered into [24 s, 30 s), rounded up to the millisecond.
  const absl::Duration d2 = FromProtoTime(after2.next_attempt_at()) - clock_.Now();
  EXPECT_GE(d2, absl::Seconds(24));
  EXPECT_LE(d2, absl::Seconds(30));
  Advance(d2);
  ASSERT_TRUE(Eventually([&] { return StateIs("flaky", tv1::TIMER_STATE_SUCCEEDED); }));
  EXPECT_EQ(Get("flaky").attempts(), 3);
  EXPECT_EQ(Get("flaky").last_error(), "");
  std::vector<ScriptedSender::Sent> sent = sender_->SentFor("flaky");
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[0].attempt, 1);
  EXPECT_EQ(sent[2].attempt, 3);
  EXPECT_EQ(sent[0].timeout, absl::Seconds(kDefaultCallbackTimeoutSeconds));
}

TEST_F(TimerEngineTest, FailsWithTheLastErrorWhenThePolicyRunsOut) {
  sender_->Script("doomed", {Outcome(Kind::kRetry, 500, "HTTP 500: boom")});
  tv1::CreateTimerRequest req = Request("doomed", absl::ZeroDuration());
  req.mutable_retry_policy()->set_max_attempts(2);
  Create(req);
  Advance(absl::Milliseconds(1));
  ASSERT_TRUE(Eventually([&] { return Get("doomed").attempts() == 1 &&
                                      Get("doomed").state() == tv1::TIMER_STATE_PENDING; }));
  Advance(absl::Seconds(1));
  ASSERT_TRUE(Eventually([&] { return StateIs("doomed", tv1::TIMER_STATE_FAILED); }));
  tv1::Timer t = Get("doomed");
  EXPECT_EQ(t.attempts(), 2);
  EXPECT_EQ(t.last_error(), "HTTP 500: boom (no retry left after 2 attempts)");
  EXPECT_FALSE(t.has_next_attempt_at());
  EXPECT_EQ(sender_->SentFor("doomed").size(), 2u);
}

// SUCCEEDED, FAILED and DELETED timers stay readable for their namespace's retention (two
// days for "default") after they finished, then their owner removes them.
TEST_F(TimerEngineTest, FinishedTimersAreRemovedAfterTheirNamespacesRetention) {
  sender_->Script("bad", {Outcome(Kind::kStop, 404, "gone")});
  Create(Request("ok", absl::Seconds(1)));
  Create(Request("bad", absl::Seconds(1)));
  Create(Request("deleted", absl::Hours(1)));
  tv1::DeleteTimerRequest del;
  del.set_namespace_("default");
  del.set_id("deleted");
  ASSERT_TRUE(service_->Delete(del).ok());
  const absl::Time t0 = clock_.Now();
  Advance(absl::Seconds(1));
  ASSERT_TRUE(Eventually([&] { return StateIs("ok", tv1::TIMER_STATE_SUCCEEDED); }));
  ASSERT_TRUE(Eventually([&] { return StateIs("bad", tv1::TIMER_STATE_FAILED); }));
  auto gone = [&](const std::string& id) {
    tv1::GetTimerRequest g;
    g.set_namespace_("default");
    g.set_id(id);
    return service_->Get(g).status().code() == absl::StatusCode::kNotFound;
  };
  const absl::Duration retention = absl::Hours(48);
  Advance(t0 + retention - absl::Milliseconds(1) - clock_.Now());
  WaitForDue();
  EXPECT_FALSE(gone("deleted") || gone("ok") || gone("bad")) << "removed before the retention";
  EXPECT_EQ(engine_->stats().expired, 0u);
  Advance(absl::Milliseconds(1));
  WaitForDue();
  EXPECT_TRUE(gone("deleted"));
  EXPECT_FALSE(gone("ok") || gone("bad")) << "they finished a second later";
  Advance(absl::Seconds(1));
  ASSERT_TRUE(Eventually([&] { return gone("ok") && gone("bad"); }));
  // The engine counts a removal (and lets go of its timer) once the store has answered it,
  // just after the rows are gone.
  Eventually([&] { return engine_->stats().expired == 3u && engine_->held() == 0u; });
  EXPECT_EQ(engine_->stats().expired, 3u);
  EXPECT_EQ(sender_->SentFor("ok").size(), 1u) << "a finished timer is never sent again";
  EXPECT_EQ(engine_->held(), 0u);
}

TEST_F(TimerEngineTest, AnUnansweredAttemptIsSentAgainByTheNextOwner) {
  sender_->Hold(true);  // the callback is in flight when the owner "crashes"
  Create(Request("inflight", absl::Seconds(1)));
  Advance(absl::Seconds(1));
  ASSERT_TRUE(Eventually([&] { return StateIs("inflight", tv1::TIMER_STATE_FIRING); }))
      << "the attempt is recorded before the callback is sent";
  EXPECT_EQ(Get("inflight").attempts(), 1);
  engine_->Stop();
  engine_.reset();
  // The next owner: the shards taken again (new range ids), a new engine.
  shards_ = std::make_unique<history::ShardController>(persistence_->executions(), kShards, "host-b");
  ASSERT_TRUE(shards_->AcquireAll().ok());
  MakeService();
  sender_->Hold(false);
  StartEngine();
  ASSERT_TRUE(Eventually([&] { return StateIs("inflight", tv1::TIMER_STATE_SUCCEEDED); }));
  std::vector<ScriptedSender::Sent> sent = sender_->SentFor("inflight");
  ASSERT_EQ(sent.size(), 2u) << "sent again: at least once";
  EXPECT_EQ(sent[1].attempt, 2);
}

TEST_F(TimerEngineTest, AStaleOwnerWritesAndSendsNothing) {
  constexpr int kTimers = 60;  // on every one of the 4 shards (all but certainly)
  for (int i = 0; i < kTimers; ++i) Create(Request(absl::StrCat("t", i), absl::Seconds(5)));
  ASSERT_TRUE(Eventually([&] { return engine_->held() == kTimers; }));
  // Another owner takes every shard: this host's range ids are stale, though its engine
  // still holds the timers and its controller still believes it owns the shards.
  history::ShardController other(persistence_->executions(), kShards, "host-b");
  ASSERT_TRUE(other.AcquireAll().ok());
  Advance(absl::Seconds(5));
  ASSERT_TRUE(Eventually([&] { return engine_->stats().fenced >= kTimers; }));
  EXPECT_TRUE(sender_->sent().empty()) << "fenced out: nothing recorded, nothing sent";
  EXPECT_EQ(engine_->stats().attempts, 0u);
  for (int i = 0; i < kTimers; ++i) {
    tv1::Timer t = Get(absl::StrCat("t", i));
    EXPECT_EQ(t.state(), tv1::TIMER_STATE_PENDING);
    EXPECT_EQ(t.attempts(), 0);
  }
  EXPECT_TRUE(shards_->OwnedShards().empty()) << "the stale owner gave the shards up";
  // Nor can its API write.
  auto refused = service_->Create(Request("new", absl::Seconds(1)));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(refused.status().message(), HasSubstr("is not owned by this host"));
}

}  // namespace
}  // namespace tock::server::timers
