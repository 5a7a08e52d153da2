#include "server-core/persistence/group_commit.h"

#include <algorithm>
#include <deque>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tock::persistence {
namespace {

absl::Status ShardLost(int32_t shard_id, int64_t stored, int64_t ours) {
  return ShardOwnedElsewhere(
      shard_id,
      absl::StrCat("range id ", stored < 0 ? std::string("none") : absl::StrCat(stored), ", ours ",
                   ours),
      "nothing was written");
}

// The positions of the timers whose ids a write draws (the caller left them at 0), so that
// a write rolled back to its savepoint and tried again draws them again: an id drawn in a
// rolled-back savepoint may be drawn again by the database (SQLite's sequence row is rolled
// back with it).
std::vector<std::pair<Commit*, size_t>> UnsetTimerIds(absl::Span<const GroupItem> items) {
  std::vector<std::pair<Commit*, size_t>> unset;
  for (const GroupItem& item : items) {
    for (size_t i = 0; i < item.commit->new_timers.size(); ++i) {
      if (item.commit->new_timers[i].task_id == 0) unset.emplace_back(item.commit, i);
    }
  }
  return unset;
}

}  // namespace

struct GroupCommitter::Waiter {
  enum class State { kQueued, kLead, kDone };
  GroupItem item;
  std::unique_ptr<PreparedCommit> prepared;
  absl::Status status;
  State state = State::kQueued;
  std::condition_variable wake;  // state left kQueued
};

// Invariant: `writing` is false only while `waiting` is empty; a leader that finds commits
// queued when its group is done hands the lead to the first of them.
struct GroupCommitter::Queue {
  std::mutex mu;
  std::deque<Waiter*> waiting;
  bool writing = false;
};

GroupCommitter::GroupCommitter(CommitBatchWriter& writer, GroupCommitOptions options)
    : writer_(writer), options_(options) {}

GroupCommitter::~GroupCommitter() = default;

GroupCommitter::Queue& GroupCommitter::QueueOf(int32_t shard_id) {
  const int32_t key = options_.group_by_shard ? shard_id : 0;
  std::lock_guard lock(queues_mu_);
  std::unique_ptr<Queue>& queue = queues_[key];
  if (queue == nullptr) queue = std::make_unique<Queue>();
  return *queue;
}

size_t GroupCommitter::Queued(int32_t shard_id) {
  Queue& queue = QueueOf(shard_id);
  std::lock_guard lock(queue.mu);
  return queue.waiting.size();
}

absl::Status GroupCommitter::Write(Commit& commit) {
  Waiter me;
  me.prepared = writer_.Prepare(commit);
  me.item = GroupItem{&commit, me.prepared.get()};
  Queue& queue = QueueOf(commit.shard_id);
  std::unique_lock lock(queue.mu);
  queue.waiting.push_back(&me);
  if (queue.writing) {
    me.wake.wait(lock, [&] { return me.state != Waiter::State::kQueued; });
    if (me.state == Waiter::State::kDone) return me.status;
  }
  // The lead: this commit is first in the queue.
  queue.writing = true;
  const size_t size =
      std::min(queue.waiting.size(), static_cast<size_t>(std::max(1, options_.max_group)));
  std::vector<Waiter*> group(queue.waiting.begin(), queue.waiting.begin() + size);
  queue.waiting.erase(queue.waiting.begin(), queue.waiting.begin() + size);
  lock.unlock();
  WriteGroupOrFail(group);
  lock.lock();
  // Each waiter reads its status after it wakes, under the lock; it cannot leave (and
  // destroy its condition variable) before this leader lets go of the lock.
  for (Waiter* w : group) {
    if (w == &me) continue;
    w->state = Waiter::State::kDone;
    w->wake.notify_one();
  }
  if (queue.waiting.empty()) {
    queue.writing = false;
  } else {
    Waiter* next = queue.waiting.front();
    next->state = Waiter::State::kLead;
    next->wake.notify_one();
  }
  return me.status;
}

void GroupCommitter::WriteGroupOrFail(absl::Span<Waiter* const> group) noexcept {
  // A throw out of the backend (protobuf, an allocation) must not leave the queue marked as
  // being written with its waiters asleep: every later commit of the key would wait for ever.
  // The group fails instead (its transaction, destroyed while unwinding, rolled back unless
  // COMMIT itself threw, hence "unknown"), and the caller hands the lead on as after any group.
  std::string what;
  try {
    WriteGroup(group);
    return;
  } catch (const std::exception& e) {
    what = std::string(e.what()).substr(0, 200);
  } catch (...) {
    what = "not a std::exception";
  }
  const absl::Status failed = absl::InternalError(absl::StrCat(
      "writing the commit failed with an exception (", what,
      "); whether it was written is unknown: read it back"));
  for (Waiter* w : group) w->status = failed;
}

void GroupCommitter::WriteGroup(absl::Span<Waiter* const> group) {
  auto fail_all = [&](const absl::Status& s) {
    for (Waiter* w : group) w->status = s;
  };
  absl::StatusOr<std::unique_ptr<CommitBatchTransaction>> opened = writer_.Begin();
  if (!opened.ok()) return fail_all(opened.status());
  CommitBatchTransaction& tx = **opened;

  // The fence, once per shard of the group (usually one).
  std::vector<std::pair<int32_t, int64_t>> ranges;
  std::vector<Waiter*> todo;
  for (Waiter* w : group) {
    const Commit& c = *w->item.commit;
    auto known = std::find_if(ranges.begin(), ranges.end(),
                              [&](const auto& r) { return r.first == c.shard_id; });
    if (known == ranges.end()) {
      absl::StatusOr<int64_t> range = tx.RangeId(c.shard_id);
      if (!range.ok()) return fail_all(range.status());
      known = ranges.emplace(ranges.end(), c.shard_id, *range);
    }
    if (known->second != c.range_id) {
      w->status = ShardLost(c.shard_id, known->second, c.range_id);
    } else {
      todo.push_back(w);
    }
  }
  if (todo.empty()) return;  // rolled back by the transaction's destructor

  // Everything together after a savepoint; a failed commit is dropped and the rest written
  // again; when the backend cannot say which failed, one commit per savepoint.
  const bool alone = todo.size() == 1;  // its failure is the transaction's: no savepoint
  bool one_by_one = false;
  std::vector<Waiter*> written;
  while (!todo.empty()) {
    const size_t n = one_by_one ? 1 : todo.size();
    std::vector<GroupItem> items;
    for (size_t i = 0; i < n; ++i) items.push_back(todo[i]->item);
    const std::vector<std::pair<Commit*, size_t>> unset = UnsetTimerIds(items);
    if (!alone) {
      if (absl::Status s = tx.Savepoint(); !s.ok()) return fail_all(s);
    }
    int failed = -1;
    absl::Status s = tx.Write(items, failed);
    if (s.ok()) {
      written.insert(written.end(), todo.begin(), todo.begin() + n);
      todo.erase(todo.begin(), todo.begin() + n);
      continue;
    }
    if (alone) {
      todo.front()->status = s;
      return;  // rolled back by the transaction's destructor
    }
    if (absl::Status u = tx.RollbackToSavepoint(); !u.ok()) return fail_all(u);
    for (const auto& [commit, timer] : unset) commit->new_timers[timer].task_id = 0;
    if (failed < 0 || static_cast<size_t>(failed) >= n) {
      if (n > 1) {
        one_by_one = true;
        continue;
      }
      failed = 0;
    }
    todo[failed]->status = s;
    todo.erase(todo.begin() + failed);
  }
  if (written.empty()) return;
  // The commits that failed keep their own error (nothing of theirs was written, whatever
  // COMMIT answers); the others get COMMIT's answer.
  const absl::Status committed = tx.Commit();
  for (Waiter* w : written) w->status = committed;
  if (committed.ok() && observer_ != nullptr) observer_->TransactionCommitted(written.size());
}

}  // namespace tock::persistence
