// The timer service black-box: tock-server processes (real gRPC, the real libcurl callback
// sender) firing at a real HTTP receiver (tests/support/callback_receiver.h).
//  - kill -9 with 1,000 timers due around the kill (SQLite file): after a restart on the same
//    file every timer was received at least once, none before its time, and a timer received
//    twice is one whose callback was in flight at the kill (first received before it, then
//    sent again as the next attempt);
//  - fencing (PostgreSQL): the shards of some timers are taken from the server by another
//    owner (their range ids bumped in the database, as a second server does): the server
//    fires the timers of the shards it still owns and records and sends nothing for the
//    others, whose rows stay as they were.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "server-core/persistence/persistence.h"
#include "server-core/timers/callback_signature.h"
#include "tests/support/callback_receiver.h"
#include "tests/support/postgres_server.h"
#include "tests/support/process.h"
#include "tock/admin/v1/service.grpc.pb.h"
#include "tock/timer/v1/service.grpc.pb.h"

namespace tock::testing {
namespace {

namespace tv1 = tock::timer::v1;

std::unique_ptr<tv1::TimerService::Stub> Stub(const std::string& address) {
  return tv1::TimerService::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}

grpc::Status CreateTimer(tv1::TimerService::Stub& stub, const std::string& id, absl::Time at,
                         const std::string& url) {
  tv1::CreateTimerRequest req;
  req.set_namespace_("default");
  req.set_id(id);
  *req.mutable_execute_at() = ToProtoTime(at);
  req.set_callback_url(url);
  req.set_payload_json(absl::StrCat(R"({"n":")", id, R"("})"));
  req.set_callback_timeout_seconds(5);
  tv1::CreateTimerResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  return stub.CreateTimer(&ctx, req, &resp);
}

// AdminService.AdvanceTime by `d` on a server started with --enable-time-skipping: it answers
// once the server's timer engine has looked at every timer due by its clock's new now
// (timers_settled), each attempt it made recorded and handed to its sender. A check that
// something was NOT done by then, made after it, needs no sleep.
bool AdvanceAndSettleTimers(const std::string& address, absl::Duration d) {
  auto admin = tock::admin::v1::AdminService::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  tock::admin::v1::AdvanceTimeRequest req;
  *req.mutable_duration() = ToProtoDuration(d);
  tock::admin::v1::AdvanceTimeResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  grpc::Status s = admin->AdvanceTime(&ctx, req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return s.ok() && resp.timers_settled();
}

absl::StatusOr<tv1::Timer> GetTimer(tv1::TimerService::Stub& stub, const std::string& id) {
  tv1::GetTimerRequest req;
  req.set_namespace_("default");
  req.set_id(id);
  tv1::GetTimerResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  grpc::Status s = stub.GetTimer(&ctx, req, &resp);
  if (!s.ok()) return absl::UnknownError(s.error_message());
  return resp.timer();
}

TEST(TimerServer, KillNineWithAThousandTimersDueAroundTheKill) {
  CallbackReceiver::Options ro;
  ro.threads = 64;
  CallbackReceiver receiver(ro);
  ASSERT_TRUE(receiver.Start().ok());
  // A receiver that takes a while: callbacks are in flight when the server is killed (and
  // it keeps up with the firing rate, so no callback times out and is retried).
  receiver.SetDefault(CallbackAnswer::Slow(absl::Milliseconds(20)));
  TempDir dir;
  const std::string db = dir.File("timers.db");
  const std::string config = dir.Write("timers.yaml", kAllowLoopbackCallbacksYaml);
  auto server = std::make_unique<ServerProcess>(TOCK_SERVER_BIN);
  ASSERT_TRUE(server->Start({"--db-file", db, "--config", config})) << server->error();
  auto stub = Stub(server->address());

  constexpr int kTimers = 1000;
  // Due over 3 s starting 2 s from now; the kill comes 1.5 s into that spread.
  const absl::Time start = absl::Now() + absl::Seconds(2);
  std::map<std::string, absl::Time> due;
  for (int i = 0; i < kTimers; ++i) {
    const std::string id = absl::StrCat("t", i);
    const absl::Time at = start + absl::Milliseconds(3 * i);
    due[id] = at;
    grpc::Status s = CreateTimer(*stub, id, at, receiver.Url());
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  absl::SleepFor(start + absl::Milliseconds(1500) - absl::Now());
  server->Kill();
  const absl::Time killed_at = absl::Now();
  const size_t before_restart = receiver.count();
  server = std::make_unique<ServerProcess>(TOCK_SERVER_BIN);
  ASSERT_TRUE(server->Start({"--db-file", db, "--config", config})) << server->error();
  stub = Stub(server->address());
  const absl::Time restarted_at = absl::Now();

  // Every timer at least once (bounded wait: a deadline, not a speed claim).
  const absl::Time deadline = absl::Now() + absl::Seconds(90);
  std::set<std::string> seen;
  while (absl::Now() < deadline) {
    seen.clear();
    for (const ReceivedCallback& r : receiver.Received()) seen.insert(r.id);
    if (seen.size() == static_cast<size_t>(kTimers)) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_EQ(seen.size(), static_cast<size_t>(kTimers)) << "every timer fires at least once";
  EXPECT_GT(before_restart, 0u) << "some fired before the kill";
  EXPECT_LT(before_restart, static_cast<size_t>(kTimers)) << "some were due after the kill";

  std::map<std::string, std::vector<ReceivedCallback>> by_id;
  for (const ReceivedCallback& r : receiver.Received()) {
    ASSERT_TRUE(r.parsed) << r.body;
    EXPECT_GE(r.arrived_at, due.at(r.id)) << r.id << " arrived before its time";
    EXPECT_EQ(FormatTimestamp(r.execute_at), FormatTimestamp(due.at(r.id)));
    by_id[r.id].push_back(r);
  }
  int duplicates = 0;
  for (auto& [id, got] : by_id) {
    if (got.size() == 1) continue;
    ++duplicates;
    ASSERT_EQ(got.size(), 2u) << id << ": at most the in-flight attempt and its resend";
    std::sort(got.begin(), got.end(),
              [](const auto& a, const auto& b) { return a.attempt < b.attempt; });
    // The first copy was the killed server's attempt (received before the new server was
    // up), the second the new server's resend of that recorded attempt.
    EXPECT_EQ(got[0].attempt, 1) << id;
    EXPECT_LT(got[0].arrived_at, restarted_at) << id << ": the duplicate was in flight at the kill";
    EXPECT_EQ(got[1].attempt, 2) << id;
    EXPECT_GT(got[1].arrived_at, killed_at) << id;
  }
  // Each timer ends SUCCEEDED.
  for (int i = 0; i < kTimers; i += 37) {
    const std::string id = absl::StrCat("t", i);
    absl::StatusOr<tv1::Timer> t;
    for (int tries = 0; tries < 200; ++tries) {
      t = GetTimer(*stub, id);
      if (t.ok() && t->state() == tv1::TIMER_STATE_SUCCEEDED) break;
      absl::SleepFor(absl::Milliseconds(50));
    }
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->state(), tv1::TIMER_STATE_SUCCEEDED) << id;
  }
  std::cerr << "[timer kill -9] " << before_restart << " received before the kill, "
            << duplicates << " sent again after the restart\n";
  server->Stop();
}

// tock-server signs the callbacks of a namespace given a secret in its config; the receiver
// verifies the header with that secret and the body it read (review P2-6).
TEST(TimerServer, CallbacksAreSignedWithTheNamespacesSecret) {
  CallbackReceiver receiver;
  ASSERT_TRUE(receiver.Start().ok());
  TempDir dir;
  const std::string secret = "default-namespace-secret-42";
  const std::string config = dir.Write(
      "signed.yaml", absl::StrCat(kAllowLoopbackCallbacksYaml, "    signing_secrets:\n      default: \"",
                                  secret, "\"\n"));
  ServerProcess server(TOCK_SERVER_BIN);
  ASSERT_TRUE(server.Start({"--config", config})) << server.error();
  auto stub = Stub(server.address());
  grpc::Status s = CreateTimer(*stub, "signed", absl::Now(), receiver.Url("/hooks"));
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(receiver.WaitFor("signed", 1, absl::Seconds(60)));
  const std::vector<ReceivedCallback> got = receiver.ReceivedFor("signed");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(server::timers::VerifyCallbackSignature(secret, got[0].signature, got[0].body,
                                                      absl::Now())
                  .ok())
      << got[0].signature;
  EXPECT_FALSE(server::timers::VerifyCallbackSignature("not-the-secret-000000", got[0].signature,
                                                       got[0].body, absl::Now())
                   .ok());
  server.Stop();
}

// A server does not start with an allow-list entry or a secret it cannot use, and says which.
TEST(TimerServer, ABadCallbackConfigIsRefusedNamingTheKey) {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"timers:\n  callbacks:\n    allow: [\"10.0.0.0/33\"]\n",
       "timers.callbacks.allow: \"10.0.0.0/33\" has a prefix length out of 0..32"},
      {"timers:\n  callbacks:\n    signing_secrets: {orders: short}\n",
       "timers.callbacks.signing_secrets.orders must be 16 to 1024 bytes"},
      {"timers:\n  callbacks:\n    allowed: []\n", "allowed"},
  };
  for (const auto& [yaml, message] : cases) {
    ProcessResult r = RunProcess({TOCK_SERVER_BIN, "--port", "0", "--config",
                                  dir.Write("bad.yaml", yaml)});
    EXPECT_NE(r.exit_code, 0) << yaml;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("short\n"), std::string::npos) << "a secret is never printed";
  }
}

TEST(TimerServer, AStaleOwnerWritesAndSendsNothing) {
  FreshPostgresDatabase db;
  ASSERT_TRUE(db.Create(TOCK_POSTGRES_FIXTURE_FILE, "tock_timers")) << db.error();
  TempDir dir;
  const std::string config = dir.Write(
      "host.yaml", "persistence:\n  engine: postgres\n  postgres:\n    url: \"" + db.url() +
                       "\"\n    max_connections: 8\n"
                       // A host whose write finds its shard taken looks at the membership
                       // again at its next heartbeat and, the ring still giving it the
                       // shard (the taker below is no member), takes it back: heartbeats
                       // far apart keep the server a stale owner for the whole test.
                       "membership:\n  heartbeat: 2m\n  cutoff: 5m\n"
                       "history:\n  shards: 8\n" + kAllowLoopbackCallbacksYaml);
  CallbackReceiver receiver;
  ASSERT_TRUE(receiver.Start().ok());
  ServerProcess server(TOCK_SERVER_BIN);
  // Time skipping for its AdvanceTime, which answers once the due timers were looked at.
  ASSERT_TRUE(server.Start({"--config", config, "--enable-time-skipping"})) << server.error();
  auto stub = Stub(server.address());

  persistence::PersistenceConfig pc;
  pc.engine = "postgres";
  pc.postgres_url = db.url();
  pc.postgres_max_connections = 2;
  auto opened = persistence::OpenPersistence(pc);
  ASSERT_TRUE(opened.ok()) << opened.status();
  persistence::Persistence& p = **opened;
  auto ns = p.namespaces().GetNamespaceByName("default");
  ASSERT_TRUE(ns.ok()) << ns.status();
  const std::string ns_id = ns->record.info().id();

  constexpr int kTimers = 60;
  const absl::Time at = absl::Now() + absl::Seconds(4);
  for (int i = 0; i < kTimers; ++i) {
    grpc::Status s = CreateTimer(*stub, absl::StrCat("f", i), at, receiver.Url());
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  // Another owner takes the shards of the even-numbered shard ids: the server's range ids
  // for them are now older than the stored ones.
  std::set<int32_t> taken;
  for (int32_t shard = 2; shard <= 8; shard += 2) {
    auto range = p.executions().AcquireShard(shard, "another-server:7233");
    ASSERT_TRUE(range.ok()) << range.status();
    taken.insert(shard);
  }
  std::set<std::string> on_taken, on_kept;
  std::map<std::string, persistence::StoredTimer> before;
  for (int i = 0; i < kTimers; ++i) {
    const std::string id = absl::StrCat("f", i);
    auto row = p.timers().Get(ns_id, id);
    ASSERT_TRUE(row.ok()) << row.status();
    before[id] = *row;
    (taken.count(row->shard_id) ? on_taken : on_kept).insert(id);
  }
  ASSERT_FALSE(on_taken.empty());
  ASSERT_FALSE(on_kept.empty());

  // The timers of the shards kept fire (all are due at the same instant, so the server
  // reached the others' time too) ...
  ASSERT_TRUE(receiver.WaitForCount(on_kept.size(), absl::Seconds(60)));
  // What the engine does in the next 10 s of its clock (a retry, a timer armed again) is done
  // when the advance answers: an attempt on a taken shard would be recorded and handed to the
  // sender by then. (Shard ownership keeps real time: the heartbeat is 2 m away.)
  ASSERT_TRUE(AdvanceAndSettleTimers(server.address(), absl::Seconds(10)));
  for (const ReceivedCallback& r : receiver.Received()) {
    EXPECT_TRUE(on_kept.count(r.id)) << r.id << " was sent by a server that lost its shard";
    EXPECT_GE(r.arrived_at, at);
  }
  // ... and the stale owner wrote nothing to the others.
  for (const std::string& id : on_taken) {
    auto row = p.timers().Get(ns_id, id);
    ASSERT_TRUE(row.ok());
    EXPECT_EQ(row->revision, before[id].revision) << id;
    EXPECT_EQ(row->record.state(), tv1::TIMER_STATE_PENDING) << id;
    EXPECT_EQ(row->record.attempts(), 0) << id;
  }
  server.Stop();
  opened->reset();
}

}  // namespace
}  // namespace tock::testing
