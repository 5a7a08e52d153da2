// GroupCommitter (server-core/persistence/group_commit.h) over a scripted backend: which
// commits form a group, what the group's transaction does (fence, savepoints, retries,
// COMMIT) and what each caller is answered. The real backends are in
// tests/conformance/group_commit_conformance_test.cc.
#include "server-core/persistence/group_commit.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tock::persistence {
namespace {

// A commit's name travels in its first run's run id; what the scripted backend does with it
// is in the fields below.
Commit Named(const std::string& name, int32_t shard = 1, int64_t range_id = 7) {
  Commit c;
  c.shard_id = shard;
  c.range_id = range_id;
  c.runs.emplace_back().state.mutable_execution()->set_run_id(name);
  return c;
}

std::string NameOf(const GroupItem& item) {
  return item.commit->runs.front().state.execution().run_id();
}

class ScriptedBackend : public CommitBatchWriter {
 public:
  // What happened, in order: "begin", "range 1,2", "savepoint", "write a,b", "rollback",
  // "commit".
  std::vector<std::string> log;
  std::vector<std::string> fail;           // commits whose write fails (ABORTED)
  bool name_the_failed = true;             // else the failure is not traced to a commit
  absl::Status commit_status;              // what COMMIT answers
  int64_t range_id = 7;                    // what the fence reads
  bool hold_first_begin = false;           // Begin waits for Release() the first time
  std::vector<std::string> throw_on;       // commits whose write throws (a backend's bug)
  bool at_once = false;                    // offers WriteAllAtOnce ("at once a,b")

  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  size_t LogSize() {
    std::lock_guard lock(mu_);
    return log.size();
  }
  void WaitUntilBegun() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return begun_; });
  }

  std::unique_ptr<PreparedCommit> Prepare(const Commit&) override { return nullptr; }

  absl::StatusOr<std::unique_ptr<CommitBatchTransaction>> Begin() override {
    {
      std::unique_lock lock(mu_);
      const bool first = !begun_;
      begun_ = true;
      cv_.notify_all();
      if (first && hold_first_begin) cv_.wait(lock, [&] { return released_; });
    }
    Log("begin");
    return std::make_unique<Tx>(*this);
  }

 private:
  class Tx : public CommitBatchTransaction {
   public:
    explicit Tx(ScriptedBackend& b) : b_(b) {}
    absl::StatusOr<std::vector<int64_t>> RangeIds(const std::vector<int32_t>& shards) override {
      b_.Log(absl::StrCat("range ", absl::StrJoin(shards, ",")));
      return std::vector<int64_t>(shards.size(), b_.range_id);
    }
    absl::Status Write(absl::Span<const GroupItem> items, int& failed) override {
      std::vector<std::string> names;
      for (const GroupItem& item : items) names.push_back(NameOf(item));
      b_.Log(absl::StrCat("write ", absl::StrJoin(names, ",")));
      for (const std::string& name : names) {
        for (const std::string& t : b_.throw_on) {
          if (name == t) throw std::runtime_error(absl::StrCat("cannot serialize ", t));
        }
      }
      for (size_t i = 0; i < items.size(); ++i) {
        for (const std::string& f : b_.fail) {
          if (names[i] != f) continue;
          failed = b_.name_the_failed ? static_cast<int>(i) : -1;
          return absl::AbortedError(absl::StrCat(f, " was changed concurrently"));
        }
        for (TimerTaskRow& t : items[i].commit->new_timers) {
          if (t.task_id == 0) t.task_id = ++b_.next_id_;
        }
      }
      return absl::OkStatus();
    }
    // Draws its timer ids from 900 on, so that a test can tell them from the careful way's.
    AtOnce WriteAllAtOnce(absl::Span<const GroupItem> items, const std::vector<int32_t>& shards,
                          const std::vector<int64_t>& ranges) override {
      if (!b_.at_once) return {};
      std::vector<std::string> names;
      for (const GroupItem& item : items) names.push_back(NameOf(item));
      b_.Log(absl::StrCat("at once ", absl::StrJoin(names, ",")));
      bool passes = ranges == std::vector<int64_t>(shards.size(), b_.range_id);
      for (size_t i = 0; i < items.size(); ++i) {
        for (const std::string& f : b_.fail) passes &= names[i] != f;
        for (TimerTaskRow& t : items[i].commit->new_timers) {
          if (t.task_id == 0) t.task_id = 900 + i;
        }
      }
      if (!passes) return {AtOnce::kDidNotPass, {}};
      b_.Log("commit");
      return {AtOnce::kWritten, b_.commit_status};
    }
    absl::Status Savepoint() override {
      b_.Log("savepoint");
      return absl::OkStatus();
    }
    absl::Status RollbackToSavepoint() override {
      b_.Log("rollback");
      return absl::OkStatus();
    }
    absl::Status Commit() override {
      b_.Log("commit");
      return b_.commit_status;
    }

   private:
    ScriptedBackend& b_;
  };

  void Log(std::string entry) {
    std::lock_guard lock(mu_);
    log.push_back(std::move(entry));
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool begun_ = false;
  bool released_ = false;
  int64_t next_id_ = 100;
};

// Runs commit "a" alone (its leader blocks in Begin), queues `rest` behind it and lets them
// go: "a" is one group, `rest` the next. Returns each caller's status, "a" first.
std::vector<absl::Status> AloneThenTogether(ScriptedBackend& backend, GroupCommitter& group,
                                            std::vector<Commit>& rest) {
  backend.hold_first_begin = true;
  std::vector<absl::Status> results(rest.size() + 1);
  Commit a = Named("a");
  {
    std::vector<std::jthread> threads;
    threads.emplace_back([&] { results[0] = group.Write(a); });
    backend.WaitUntilBegun();
    for (size_t i = 0; i < rest.size(); ++i) {  // queued in this order
      threads.emplace_back([&, i] { results[i + 1] = group.Write(rest[i]); });
      while (group.Queued() < i + 1) std::this_thread::yield();
    }
    backend.Release();
  }
  return results;
}

TEST(GroupCommitTest, ALoneCommitIsWrittenAtOnceWithoutASavepoint) {
  ScriptedBackend backend;
  GroupCommitter group(backend);
  Commit a = Named("a");
  EXPECT_TRUE(group.Write(a).ok());
  EXPECT_EQ(backend.log, (std::vector<std::string>{"begin", "range 1", "write a", "commit"}));
}

TEST(GroupCommitTest, CommitsArrivingDuringAGroupFormTheNextOneWrittenTogether) {
  ScriptedBackend backend;
  GroupCommitter group(backend);
  std::vector<Commit> rest = {Named("b"), Named("c"), Named("d")};
  for (const absl::Status& s : AloneThenTogether(backend, group, rest)) EXPECT_TRUE(s.ok()) << s;
  ASSERT_EQ(backend.log.size(), 9u);
  EXPECT_EQ(backend.log[4], "begin");
  EXPECT_EQ(backend.log[5], "range 1") << "the fence once for the group";
  EXPECT_EQ(backend.log[6], "savepoint");
  EXPECT_EQ(backend.log[7], "write b,c,d");
  EXPECT_EQ(backend.log[8], "commit");
}

TEST(GroupCommitTest, AFailedCommitRollsBackAloneAndTheOthersAreWrittenAgain) {
  ScriptedBackend backend;
  backend.fail = {"c"};
  GroupCommitter group(backend);
  std::vector<Commit> rest = {Named("b"), Named("c"), Named("d")};
  rest[0].new_timers.emplace_back();  // id chosen by the store
  std::vector<absl::Status> results = AloneThenTogether(backend, group, rest);
  EXPECT_TRUE(results[1].ok()) << results[1];
  EXPECT_EQ(results[2].code(), absl::StatusCode::kAborted) << results[2];
  EXPECT_TRUE(results[3].ok()) << results[3];
  EXPECT_EQ(std::vector<std::string>(backend.log.begin() + 4, backend.log.end()),
            (std::vector<std::string>{"begin", "range 1", "savepoint", "write b,c,d", "rollback",
                                      "savepoint", "write b,d", "commit"}));
  EXPECT_EQ(rest[0].new_timers[0].task_id, 102) << "drawn again after the rollback";
}

TEST(GroupCommitTest, AFailureNotTracedToACommitWritesThemOneBySavepoint) {
  ScriptedBackend backend;
  backend.fail = {"c"};
  backend.name_the_failed = false;
  GroupCommitter group(backend);
  std::vector<Commit> rest = {Named("b"), Named("c"), Named("d")};
  std::vector<absl::Status> results = AloneThenTogether(backend, group, rest);
  EXPECT_TRUE(results[1].ok()) << results[1];
  EXPECT_EQ(results[2].code(), absl::StatusCode::kAborted) << results[2];
  EXPECT_TRUE(results[3].ok()) << results[3];
  EXPECT_EQ(std::vector<std::string>(backend.log.begin() + 4, backend.log.end()),
            (std::vector<std::string>{"begin", "range 1", "savepoint", "write b,c,d", "rollback",
                                      "savepoint", "write b", "savepoint", "write c", "rollback",
                                      "savepoint", "write d", "commit"}));
}

TEST(GroupCommitTest, AFailedCommitOfTheTransactionFailsEveryWrittenCommit) {
  ScriptedBackend backend;
  backend.fail = {"c"};
  backend.commit_status = absl::UnavailableError("the connection was lost");
  GroupCommitter group(backend);
  std::vector<Commit> rest = {Named("b"), Named("c"), Named("d")};
  std::vector<absl::Status> results = AloneThenTogether(backend, group, rest);
  EXPECT_EQ(results[0].code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(results[1].code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(results[2].code(), absl::StatusCode::kAborted) << "its own error: nothing written";
  EXPECT_EQ(results[3].code(), absl::StatusCode::kUnavailable);
}

TEST(GroupCommitTest, AThrowFailsItsGroupAndTheNextGroupIsWritten) {
  ScriptedBackend backend;
  backend.throw_on = {"a"};
  GroupCommitter group(backend);
  // "a" throws while b, c and d wait behind it: the lead passes to them.
  std::vector<Commit> rest = {Named("b"), Named("c"), Named("d")};
  std::vector<absl::Status> results = AloneThenTogether(backend, group, rest);
  EXPECT_EQ(results[0].code(), absl::StatusCode::kInternal) << results[0];
  EXPECT_EQ(results[0].message(),
            "writing the commit failed with an exception (cannot serialize a); whether it was "
            "written is unknown: read it back");
  for (size_t i = 1; i < results.size(); ++i) EXPECT_TRUE(results[i].ok()) << results[i];
  EXPECT_EQ(backend.log, (std::vector<std::string>{"begin", "range 1", "write a", "begin",
                                                    "range 1", "savepoint", "write b,c,d",
                                                    "commit"}))
      << "no COMMIT for the group that threw";

  // A group that throws with nobody behind it leaves the queue free for the next commit.
  backend.throw_on = {"c"};
  Commit c = Named("c");
  EXPECT_EQ(group.Write(c).code(), absl::StatusCode::kInternal);
  backend.throw_on.clear();
  Commit e = Named("e");
  EXPECT_TRUE(group.Write(e).ok()) << "a later commit is not left waiting";
}

TEST(GroupCommitTest, AMovedRangeIdFailsTheGroupAndWritesNothing) {
  ScriptedBackend backend;
  backend.range_id = 8;
  GroupCommitter group(backend);
  std::vector<Commit> rest = {Named("b"), Named("c")};
  for (const absl::Status& s : AloneThenTogether(backend, group, rest)) {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_EQ(s.message(),
              "shard 1 is owned by another server (range id 8, ours 7); nothing was written");
  }
  EXPECT_EQ(backend.log, (std::vector<std::string>{"begin", "range 1", "begin", "range 1"}));
}

TEST(GroupCommitTest, EveryShardOfTheHostGoesIntoTheSameGroup) {
  ScriptedBackend backend;
  GroupCommitter group(backend);
  std::vector<Commit> rest = {Named("c", 1), Named("b", 2)};
  for (const absl::Status& s : AloneThenTogether(backend, group, rest)) EXPECT_TRUE(s.ok()) << s;
  const std::string joined = absl::StrJoin(backend.log, "|");
  EXPECT_NE(joined.find("range 1,2|savepoint|write c,b|commit"), std::string::npos)
      << joined;
}

TEST(GroupCommitTest, AGroupThatPassesIsWrittenAtOnceWhenTheBackendCan) {
  ScriptedBackend backend;
  backend.at_once = true;
  GroupCommitter group(backend);
  std::vector<Commit> rest = {Named("b", 1), Named("c", 2)};
  for (const absl::Status& s : AloneThenTogether(backend, group, rest)) EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(backend.log, (std::vector<std::string>{"begin", "at once a", "commit", "begin",
                                                   "at once b,c", "commit"}));
}

TEST(GroupCommitTest, AGroupThatDoesNotPassAtOnceGoesTheCarefulWayDrawingItsIdsAgain) {
  ScriptedBackend backend;
  backend.at_once = true;
  backend.fail = {"b"};
  GroupCommitter group(backend);
  std::vector<Commit> rest = {Named("b"), Named("c")};
  rest[1].new_timers.emplace_back();
  const std::vector<absl::Status> results = AloneThenTogether(backend, group, rest);
  EXPECT_TRUE(results[0].ok()) << results[0];
  EXPECT_EQ(results[1].code(), absl::StatusCode::kAborted) << results[1];
  EXPECT_TRUE(results[2].ok()) << results[2];
  const std::string joined = absl::StrJoin(backend.log, "|");
  EXPECT_NE(joined.find("at once b,c|range 1|savepoint|write b,c|rollback|savepoint|write c|"
                        "commit"),
            std::string::npos)
      << joined;
  EXPECT_GT(rest[1].new_timers[0].task_id, 100) << "drawn by the careful write";
  EXPECT_LT(rest[1].new_timers[0].task_id, 900) << "not the id of the write rolled back";
}

TEST(GroupCommitTest, CommitsOfAShardExpectingDifferentRangeIdsAreNotWrittenAtOnce) {
  ScriptedBackend backend;
  backend.at_once = true;
  GroupCommitter group(backend);
  std::vector<Commit> rest = {Named("b", 1, 7), Named("c", 1, 6)};
  const std::vector<absl::Status> results = AloneThenTogether(backend, group, rest);
  EXPECT_TRUE(results[1].ok()) << results[1];
  EXPECT_EQ(results[2].code(), absl::StatusCode::kFailedPrecondition) << results[2];
  const std::string joined = absl::StrJoin(backend.log, "|");
  EXPECT_EQ(joined.find("at once b"), std::string::npos) << joined;
  EXPECT_NE(joined.find("range 1|write b|commit"), std::string::npos) << joined;
}

TEST(GroupCommitTest, WriteAsyncReturnsAtOnceAndAnswersOnTheCommittersThreadAfterCommit) {
  ScriptedBackend backend;
  backend.hold_first_begin = true;
  GroupCommitter group(backend);
  Commit a = Named("a");
  std::mutex mu;
  std::condition_variable cv;
  std::optional<absl::Status> answer;
  std::thread::id answered_on;
  group.WriteAsync(a, [&](absl::Status s) {
    std::lock_guard lock(mu);
    answer = std::move(s);
    answered_on = std::this_thread::get_id();
    cv.notify_all();
  });
  // Returned while the committer is held in BEGIN: nothing is answered before the commit.
  backend.WaitUntilBegun();
  {
    std::lock_guard lock(mu);
    EXPECT_FALSE(answer.has_value());
  }
  backend.Release();
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return answer.has_value(); });
  EXPECT_TRUE(answer->ok()) << *answer;
  EXPECT_NE(answered_on, std::this_thread::get_id());
  EXPECT_EQ(backend.log.back(), "commit") << "answered after COMMIT";
}

TEST(GroupCommitTest, AWriteFromACompletionIsRefusedRatherThanWaitingForItself) {
  ScriptedBackend backend;
  GroupCommitter group(backend);
  Commit a = Named("a"), b = Named("b");
  std::mutex mu;
  std::condition_variable cv;
  std::optional<absl::Status> nested;
  group.WriteAsync(a, [&](absl::Status) {
    absl::Status s = group.Write(b);
    std::lock_guard lock(mu);
    nested = s;
    cv.notify_all();
  });
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return nested.has_value(); });
  EXPECT_EQ(nested->code(), absl::StatusCode::kInternal) << *nested;
  EXPECT_EQ(backend.log, (std::vector<std::string>{"begin", "range 1", "write a", "commit"}))
      << "b was not written";
}

TEST(GroupCommitTest, StoppingWritesWhatIsQueuedFirst) {
  ScriptedBackend backend;
  backend.hold_first_begin = true;
  std::vector<Commit> commits = {Named("a"), Named("b"), Named("c")};
  std::atomic<int> answered{0};
  {
    GroupCommitter group(backend);
    for (Commit& c : commits) {
      group.WriteAsync(c, [&](absl::Status s) {
        EXPECT_TRUE(s.ok()) << s;
        ++answered;
      });
    }
    backend.WaitUntilBegun();
    backend.Release();
  }  // destroyed with b and c possibly still queued
  EXPECT_EQ(answered.load(), 3);
}

}  // namespace
}  // namespace tock::persistence
