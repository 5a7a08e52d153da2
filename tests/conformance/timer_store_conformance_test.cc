// The TimerStore contract (timer_store.h) on every backend: fenced writes (a writer whose range
// id is not the shard's writes nothing, in a batch too), compare-and-swap on the revision,
// due timers paged per shard by (due, namespace id, timer id) with due times rounded up to
// the millisecond, lists by namespace with a state filter (a FIRING timer, listed with the
// PENDING ones in the index, told apart), and timers that outlive a reopen.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "server-core/persistence/timer_store.h"
#include "tests/conformance/backends.h"

namespace tock::persistence {
namespace {

using tock::timer::v1::TimerState;

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);

StoredTimer Timer(const std::string& ns, const std::string& id, int32_t shard, absl::Time due,
                  TimerState state = tock::timer::v1::TIMER_STATE_PENDING) {
  StoredTimer t;
  t.namespace_id = ns;
  t.timer_id = id;
  t.shard_id = shard;
  t.due = due;
  t.record.set_namespace_(absl::StrCat("name-", ns));
  t.record.set_id(id);
  t.record.set_callback_url("http://127.0.0.1:9/cb");
  t.record.set_payload_json(R"({"k":1})");
  t.record.set_state(state);
  return t;
}

TimerWrite Write(StoredTimer t, int64_t range_id, int64_t expected_revision) {
  TimerWrite w;
  w.timer = std::move(t);
  w.range_id = range_id;
  w.expected_revision = expected_revision;
  return w;
}

absl::Status WriteOne(TimerStore& store, TimerWrite w) {
  std::vector<TimerWrite> batch = {std::move(w)};
  return store.Write(batch)[0];
}

std::vector<std::string> Ids(const std::vector<StoredTimer>& timers) {
  std::vector<std::string> ids;
  for (const StoredTimer& t : timers) ids.push_back(t.timer_id);
  return ids;
}

class TimerStoreTest : public BackendTest {};

TEST_P(TimerStoreTest, CreateThenCompareAndSwap) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto range = p->executions().AcquireShard(3, "host-a");
  ASSERT_TRUE(range.ok()) << range.status();
  TimerStore& store = p->timers();

  ASSERT_TRUE(WriteOne(store, Write(Timer("ns", "t1", 3, kT0), *range, 0)).ok());
  EXPECT_EQ(TimerWriteRefusalOf(WriteOne(store, Write(Timer("ns", "t1", 3, kT0), *range, 0))),
            TimerWriteRefusal::kChanged)
      << "expected revision 0: none may be stored yet";
  ASSERT_TRUE(WriteOne(store, Write(Timer("other", "t1", 3, kT0), *range, 0)).ok())
      << "ids are per namespace";

  absl::StatusOr<StoredTimer> got = store.Get("ns", "t1");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->revision, 1);
  EXPECT_EQ(got->shard_id, 3);
  EXPECT_EQ(got->due, kT0);
  EXPECT_EQ(got->record.payload_json(), R"({"k":1})");

  StoredTimer firing = *got;
  firing.record.set_state(tock::timer::v1::TIMER_STATE_FIRING);
  firing.record.set_attempts(1);
  std::vector<TimerWrite> batch = {Write(firing, *range, 1)};
  ASSERT_TRUE(store.Write(batch)[0].ok());
  EXPECT_EQ(batch[0].timer.revision, 2) << "the written revision is reported";
  // A second writer that read revision 1 loses.
  StoredTimer stale = *got;
  stale.record.set_last_error("stale");
  EXPECT_EQ(TimerWriteRefusalOf(WriteOne(store, Write(stale, *range, 1))), TimerWriteRefusal::kChanged);
  EXPECT_EQ(TimerWriteRefusalOf(WriteOne(store, Write(Timer("ns", "gone", 3, kT0), *range, 4))),
            TimerWriteRefusal::kChanged)
      << "a timer that is not stored is not at any revision";

  got = store.Get("ns", "t1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->revision, 2);
  EXPECT_EQ(got->record.state(), tock::timer::v1::TIMER_STATE_FIRING);
  EXPECT_EQ(got->record.attempts(), 1);
  EXPECT_EQ(got->record.last_error(), "");
  EXPECT_EQ(store.Get("ns", "nope").status().code(), absl::StatusCode::kNotFound);
}

// An attempt's record keeps the stored due time (the engine's FIRING write): the timer is
// still loaded as due at it, whatever timer.due says.
TEST_P(TimerStoreTest, KeepDueLeavesTheStoredDueTime) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto range = p->executions().AcquireShard(5, "host-a");
  ASSERT_TRUE(range.ok()) << range.status();
  TimerStore& store = p->timers();
  ASSERT_TRUE(WriteOne(store, Write(Timer("ns", "kd", 5, kT0), *range, 0)).ok());

  StoredTimer firing = Timer("ns", "kd", 5, kT0 + absl::Hours(5));  // not read
  firing.record.set_state(tock::timer::v1::TIMER_STATE_FIRING);
  firing.record.set_attempts(1);
  TimerWrite w = Write(firing, *range, 1);
  w.attempt = true;
  ASSERT_TRUE(WriteOne(store, w).ok());

  absl::StatusOr<StoredTimer> got = store.Get("ns", "kd");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->revision, 2);
  EXPECT_EQ(got->due, kT0) << "the stored due time is kept";
  EXPECT_EQ(got->record.state(), tock::timer::v1::TIMER_STATE_FIRING);
  auto due = store.LoadDue(5, TimerDueCursor(), kT0 + absl::Seconds(1), 10);
  ASSERT_TRUE(due.ok()) << due.status();
  ASSERT_EQ(due->size(), 1u);
  EXPECT_EQ(due->front().timer_id, "kd");
  EXPECT_EQ(due->front().record.attempts(), 1);
}

// A finished timer past its retention is removed by a fenced write at its revision.
TEST_P(TimerStoreTest, RemoveIsFencedAtTheRevision) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  ExecutionStore& shards = p->executions();
  auto range = shards.AcquireShard(4, "host-a");
  ASSERT_TRUE(range.ok());
  TimerStore& store = p->timers();
  ASSERT_TRUE(WriteOne(store, Write(Timer("ns", "done", 4, kT0), *range, 0)).ok());
  ASSERT_TRUE(WriteOne(store, Write(Timer("ns", "kept", 4, kT0), *range, 0)).ok());

  TimerWrite stale_revision = Write(Timer("ns", "done", 4, kT0), *range, 2);
  stale_revision.remove = true;
  EXPECT_EQ(TimerWriteRefusalOf(WriteOne(store, stale_revision)), TimerWriteRefusal::kChanged);
  EXPECT_TRUE(store.Get("ns", "done").ok()) << "removed at another revision";

  auto taken = shards.AcquireShard(4, "host-b");
  ASSERT_TRUE(taken.ok());
  TimerWrite stale_owner = Write(Timer("ns", "done", 4, kT0), *range, 1);
  stale_owner.remove = true;
  EXPECT_EQ(TimerWriteRefusalOf(WriteOne(store, stale_owner)), TimerWriteRefusal::kFenced);
  EXPECT_TRUE(store.Get("ns", "done").ok()) << "removed by a stale owner";

  TimerWrite removal = Write(Timer("ns", "done", 4, kT0), *taken, 1);
  removal.remove = true;
  std::vector<TimerWrite> batch = {removal, Write(Timer("ns", "new", 4, kT0), *taken, 0)};
  std::vector<absl::Status> statuses = store.Write(batch);
  EXPECT_TRUE(statuses[0].ok()) << statuses[0];
  EXPECT_TRUE(statuses[1].ok()) << statuses[1];
  EXPECT_EQ(store.Get("ns", "done").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store.Get("ns", "kept").ok());
  EXPECT_TRUE(store.Get("ns", "new").ok());
  EXPECT_EQ(TimerWriteRefusalOf(WriteOne(store, removal)), TimerWriteRefusal::kChanged) << "gone: no revision";
  auto due = store.LoadDue(4, TimerDueCursor(), kT0 + absl::Hours(1), 10);
  ASSERT_TRUE(due.ok());
  EXPECT_EQ(Ids(*due), (std::vector<std::string>{"kept", "new"}));
}

TEST_P(TimerStoreTest, StaleRangeIdWritesNothing) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  ExecutionStore& shards = p->executions();
  auto old_range = shards.AcquireShard(5, "host-a");
  ASSERT_TRUE(old_range.ok());
  TimerStore& store = p->timers();
  ASSERT_TRUE(WriteOne(store, Write(Timer("ns", "t1", 5, kT0), *old_range, 0)).ok());

  // Another host steals the shard: the old range id writes nothing from now on.
  auto new_range = shards.AcquireShard(5, "host-b");
  ASSERT_TRUE(new_range.ok());
  ASSERT_GT(*new_range, *old_range);
  StoredTimer changed = Timer("ns", "t1", 5, kT0 + absl::Hours(1));
  absl::Status s = WriteOne(store, Write(changed, *old_range, 1));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_EQ(TimerWriteRefusalOf(s), TimerWriteRefusal::kFenced) << s;
  EXPECT_NE(s.message().find("shard 5 is owned by another server"), std::string::npos) << s;
  EXPECT_EQ(TimerWriteRefusalOf(WriteOne(store, Write(Timer("ns", "t2", 5, kT0), *old_range, 0))),
            TimerWriteRefusal::kFenced);
  // A shard nobody took refuses every range id.
  EXPECT_EQ(TimerWriteRefusalOf(WriteOne(store, Write(Timer("ns", "t3", 6, kT0), 1, 0))),
            TimerWriteRefusal::kFenced);

  auto got = store.Get("ns", "t1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->revision, 1);
  EXPECT_EQ(got->due, kT0) << "the stale owner's change was not written";
  EXPECT_EQ(store.Get("ns", "t2").status().code(), absl::StatusCode::kNotFound);

  // In one batch: each write stands on its own fence and revision.
  auto other = shards.AcquireShard(7, "host-a");
  ASSERT_TRUE(other.ok());
  std::vector<TimerWrite> batch = {Write(Timer("ns", "b1", 7, kT0), *other, 0),
                                   Write(Timer("ns", "b2", 5, kT0), *old_range, 0),
                                   Write(Timer("ns", "t1", 5, kT0), *new_range, 7),
                                   Write(changed, *new_range, 1)};
  std::vector<absl::Status> statuses = store.Write(batch);
  ASSERT_EQ(statuses.size(), 4u);
  EXPECT_TRUE(statuses[0].ok()) << statuses[0];
  EXPECT_EQ(TimerWriteRefusalOf(statuses[1]), TimerWriteRefusal::kFenced);
  EXPECT_EQ(TimerWriteRefusalOf(statuses[2]), TimerWriteRefusal::kChanged);
  EXPECT_TRUE(statuses[3].ok()) << statuses[3];
  EXPECT_TRUE(store.Get("ns", "b1").ok());
  EXPECT_EQ(store.Get("ns", "b2").status().code(), absl::StatusCode::kNotFound);
  got = store.Get("ns", "t1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->revision, 2);
  EXPECT_EQ(got->due, kT0 + absl::Hours(1)) << "the new owner's write went through";
}

TEST_P(TimerStoreTest, LoadDuePagesAShardInOrder) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto r1 = p->executions().AcquireShard(1, "host-a");
  auto r2 = p->executions().AcquireShard(2, "host-a");
  ASSERT_TRUE(r1.ok() && r2.ok());
  TimerStore& store = p->timers();
  std::vector<TimerWrite> batch = {
      Write(Timer("b", "x", 1, kT0 + absl::Seconds(2)), *r1, 0),
      Write(Timer("a", "z", 1, kT0 + absl::Seconds(1)), *r1, 0),
      Write(Timer("a", "y", 1, kT0 + absl::Seconds(1)), *r1, 0),
      Write(Timer("a", "w", 1, kT0 + absl::Seconds(3)), *r1, 0),
      // Due 0.3 ms after a whole millisecond: stored rounded up, never loaded early.
      Write(Timer("a", "frac", 1, kT0 + absl::Seconds(4) + absl::Microseconds(300)), *r1, 0),
      Write(Timer("a", "done", 1, absl::InfiniteFuture(), tock::timer::v1::TIMER_STATE_SUCCEEDED),
            *r1, 0),
      Write(Timer("a", "elsewhere", 2, kT0), *r2, 0),
  };
  for (const absl::Status& s : store.Write(batch)) ASSERT_TRUE(s.ok()) << s;

  auto first = store.LoadDue(1, TimerDueCursor{}, kT0 + absl::Hours(1), 2);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(Ids(*first), (std::vector<std::string>{"y", "z"}));
  const StoredTimer& last = first->back();
  auto second = store.LoadDue(1, TimerDueCursor{last.due, last.namespace_id, last.timer_id},
                              kT0 + absl::Hours(1), 10);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(Ids(*second), (std::vector<std::string>{"x", "w", "frac"}))
      << "no timer without anything to do, none of another shard";
  EXPECT_EQ(second->back().due, kT0 + absl::Seconds(4) + absl::Milliseconds(1));

  // `until` is exclusive, and the rounded-up time counts.
  auto until = store.LoadDue(1, TimerDueCursor{}, kT0 + absl::Seconds(3), 10);
  ASSERT_TRUE(until.ok());
  EXPECT_EQ(Ids(*until), (std::vector<std::string>{"y", "z", "x"}));
  until = store.LoadDue(1, TimerDueCursor{}, kT0 + absl::Seconds(4) + absl::Milliseconds(1), 10);
  ASSERT_TRUE(until.ok());
  EXPECT_EQ(until->size(), 4u);

  // A timer moved to later (a retry) leaves the earlier page.
  StoredTimer y = (*first)[0];
  y.due = kT0 + absl::Seconds(10);
  ASSERT_TRUE(WriteOne(store, Write(y, *r1, y.revision)).ok());
  until = store.LoadDue(1, TimerDueCursor{}, kT0 + absl::Seconds(3), 10);
  ASSERT_TRUE(until.ok());
  EXPECT_EQ(Ids(*until), (std::vector<std::string>{"z", "x"}));
}

TEST_P(TimerStoreTest, ListByNamespaceAndState) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto r = p->executions().AcquireShard(1, "host-a");
  ASSERT_TRUE(r.ok());
  TimerStore& store = p->timers();
  std::vector<TimerWrite> batch;
  for (int i = 0; i < 7; ++i) {
    batch.push_back(Write(Timer("ns", absl::StrCat("t", i), 1, kT0,
                                i % 2 == 0 ? tock::timer::v1::TIMER_STATE_PENDING
                                           : tock::timer::v1::TIMER_STATE_FAILED),
                          *r, 0));
  }
  batch.push_back(Write(Timer("other", "t0", 1, kT0), *r, 0));
  for (const absl::Status& s : store.Write(batch)) ASSERT_TRUE(s.ok()) << s;

  std::vector<std::string> all;
  std::string after;
  for (int page = 0; page < 10; ++page) {
    auto got = store.List("ns", after, 0, 3);
    ASSERT_TRUE(got.ok()) << got.status();
    if (got->empty()) break;
    for (const StoredTimer& t : *got) all.push_back(t.timer_id);
    after = got->back().timer_id;
  }
  EXPECT_EQ(all, (std::vector<std::string>{"t0", "t1", "t2", "t3", "t4", "t5", "t6"}));
  auto failed = store.List("ns", "", tock::timer::v1::TIMER_STATE_FAILED, 100);
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(Ids(*failed), (std::vector<std::string>{"t1", "t3", "t5"}));
  auto after_t1 = store.List("ns", "t1", tock::timer::v1::TIMER_STATE_FAILED, 100);
  ASSERT_TRUE(after_t1.ok());
  EXPECT_EQ(Ids(*after_t1), (std::vector<std::string>{"t3", "t5"}));
}

// An attempt's record leaves the timer where the state index lists PENDING ones, yet a list
// by state still tells FIRING from PENDING, page after page; and an attempt's record that is
// not FIRING is refused and writes nothing.
TEST_P(TimerStoreTest, ListsTellFiringFromPending) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto r = p->executions().AcquireShard(2, "host-a");
  ASSERT_TRUE(r.ok()) << r.status();
  TimerStore& store = p->timers();
  std::vector<TimerWrite> created;
  for (int i = 0; i < 8; ++i) created.push_back(Write(Timer("ns", absl::StrCat("f", i), 2, kT0), *r, 0));
  for (const absl::Status& s : store.Write(created)) ASSERT_TRUE(s.ok()) << s;
  std::vector<TimerWrite> attempts;
  for (int i = 1; i < 8; i += 2) {
    StoredTimer t = Timer("ns", absl::StrCat("f", i), 2, kT0, tock::timer::v1::TIMER_STATE_FIRING);
    t.record.set_attempts(1);
    TimerWrite w = Write(t, *r, 1);
    w.attempt = true;
    attempts.push_back(w);
  }
  for (const absl::Status& s : store.Write(attempts)) ASSERT_TRUE(s.ok()) << s;

  auto list = [&](TimerState state) {
    std::vector<std::string> ids;
    std::string after;
    for (int page = 0; page < 10; ++page) {
      auto got = store.List("ns", after, state, 2);
      EXPECT_TRUE(got.ok()) << got.status();
      if (!got.ok() || got->empty()) break;
      for (const StoredTimer& t : *got) {
        EXPECT_EQ(t.record.state(), state) << t.timer_id;
        ids.push_back(t.timer_id);
      }
      after = got->back().timer_id;
    }
    return ids;
  };
  EXPECT_EQ(list(tock::timer::v1::TIMER_STATE_PENDING),
            (std::vector<std::string>{"f0", "f2", "f4", "f6"}));
  EXPECT_EQ(list(tock::timer::v1::TIMER_STATE_FIRING),
            (std::vector<std::string>{"f1", "f3", "f5", "f7"}));

  // The outcome moves it out of the PENDING group: listed as SUCCEEDED only.
  StoredTimer done = Timer("ns", "f1", 2, absl::InfiniteFuture(),
                           tock::timer::v1::TIMER_STATE_SUCCEEDED);
  ASSERT_TRUE(WriteOne(store, Write(done, *r, 2)).ok());
  EXPECT_EQ(list(tock::timer::v1::TIMER_STATE_FIRING),
            (std::vector<std::string>{"f3", "f5", "f7"}));
  EXPECT_EQ(list(tock::timer::v1::TIMER_STATE_SUCCEEDED), (std::vector<std::string>{"f1"}));
  // A retry's outcome moves it back to PENDING.
  StoredTimer again = Timer("ns", "f3", 2, kT0 + absl::Seconds(5));
  again.record.set_attempts(1);
  ASSERT_TRUE(WriteOne(store, Write(again, *r, 2)).ok());
  EXPECT_EQ(list(tock::timer::v1::TIMER_STATE_PENDING),
            (std::vector<std::string>{"f0", "f2", "f3", "f4", "f6"}));

  TimerWrite misused = Write(Timer("ns", "f0", 2, kT0, tock::timer::v1::TIMER_STATE_FAILED), *r, 1);
  misused.attempt = true;
  EXPECT_EQ(WriteOne(store, misused).code(), absl::StatusCode::kInvalidArgument);
  auto f0 = store.Get("ns", "f0");
  ASSERT_TRUE(f0.ok()) << f0.status();
  EXPECT_EQ(f0->revision, 1) << "nothing written";
  EXPECT_EQ(f0->record.state(), tock::timer::v1::TIMER_STATE_PENDING);
}

// Timers stored before the state index listed FIRING with PENDING (the migration before the
// newest, transfer rows' shard) are listed under their own state after the upgrade.
TEST_P(TimerStoreTest, AnUpgradeListsStoredTimersUnderTheirState) {
  if (!Durable()) GTEST_SKIP() << "an in-memory database cannot be prepared beforehand";
  MigrateBefore(/*sqlite: FIRING listed with PENDING*/ 15, /*postgres*/ 16);
  std::string rows;
  for (TimerState state : {tock::timer::v1::TIMER_STATE_PENDING, tock::timer::v1::TIMER_STATE_FIRING,
                           tock::timer::v1::TIMER_STATE_SUCCEEDED}) {
    StoredTimer t = Timer("ns", absl::StrCat("u", static_cast<int>(state)), 3, kT0, state);
    const std::string hex = absl::BytesToHexString(t.record.SerializeAsString());
    absl::StrAppend(&rows, rows.empty() ? "" : ", ", "('ns', '", t.timer_id, "', 3, 1, ",
                    static_cast<int>(state), ", ", TimerDueMillis(kT0), ", ",
                    IsPostgres() ? absl::StrCat("'\\x", hex, "'::bytea") : absl::StrCat("X'", hex, "'"),
                    ")");
  }
  RunRaw(absl::StrCat("INSERT INTO timers(namespace_id, timer_id, shard_id, revision, state, due_ms, "
                      "record) VALUES ", rows));

  auto p = Open();
  ASSERT_NE(p, nullptr);
  for (TimerState state : {tock::timer::v1::TIMER_STATE_PENDING, tock::timer::v1::TIMER_STATE_FIRING,
                           tock::timer::v1::TIMER_STATE_SUCCEEDED}) {
    auto got = p->timers().List("ns", "", state, 10);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(Ids(*got), (std::vector<std::string>{absl::StrCat("u", static_cast<int>(state))}))
        << static_cast<int>(state);
  }
}

TEST_P(TimerStoreTest, TimersOutliveAReopen) {
  if (!Durable()) GTEST_SKIP() << "in-memory database";
  int64_t range = 0;
  {
    auto p = Open();
    ASSERT_NE(p, nullptr);
    auto r = p->executions().AcquireShard(2, "host-a");
    ASSERT_TRUE(r.ok());
    range = *r;
    ASSERT_TRUE(WriteOne(p->timers(), Write(Timer("ns", "kept", 2, kT0), range, 0)).ok());
  }
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto got = p->timers().Get("ns", "kept");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->due, kT0);
  auto due = p->timers().LoadDue(2, TimerDueCursor{}, kT0 + absl::Seconds(1), 10);
  ASSERT_TRUE(due.ok());
  EXPECT_EQ(Ids(*due), (std::vector<std::string>{"kept"}));
  // The range id of before the restart still fences until someone takes the shard.
  EXPECT_TRUE(WriteOne(p->timers(), Write(*got, range, 1)).ok());
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(TimerStoreTest);

}  // namespace
}  // namespace tock::persistence
