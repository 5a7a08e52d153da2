#include "server-core/persistence/group_commit.h"

#include <pthread.h>

#include <algorithm>
#include <exception>
#include <optional>
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

struct GroupCommitter::Pending {
  GroupItem item;
  std::unique_ptr<PreparedCommit> prepared;
  absl::Status status;
  Written written;
};

GroupCommitter::GroupCommitter(CommitBatchWriter& writer, GroupCommitOptions options)
    : writer_(writer), options_(options), thread_([this] { Run(); }) {}

GroupCommitter::~GroupCommitter() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  queued_.notify_one();
  thread_.join();
}

size_t GroupCommitter::Queued() {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void GroupCommitter::WriteAsync(Commit& commit, Written written) {
  auto pending = std::make_unique<Pending>();
  pending->prepared = writer_.Prepare(commit);
  pending->item = GroupItem{&commit, pending->prepared.get()};
  pending->written = std::move(written);
  bool was_empty;
  {
    std::lock_guard lock(mu_);
    was_empty = queue_.empty();
    queue_.push_back(std::move(pending));
  }
  // The thread sleeps only with nothing queued: a commit queued behind others finds it awake.
  if (was_empty) queued_.notify_one();
}

absl::Status GroupCommitter::Write(Commit& commit) {
  if (std::this_thread::get_id() == thread_.get_id()) {
    return absl::InternalError(
        "a write from the committer's own thread (a completion that writes) would wait for "
        "itself; nothing was written");
  }
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  absl::Status status;
  WriteAsync(commit, [&](absl::Status s) {
    // Notified under the lock: the waiter cannot return (and destroy cv) before this ends.
    std::lock_guard lock(mu);
    status = std::move(s);
    done = true;
    cv.notify_one();
  });
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return done; });
  return status;
}

void GroupCommitter::Run() {
  pthread_setname_np(pthread_self(), "tock-committer");
  const size_t max_group = static_cast<size_t>(std::max(1, options_.max_group));
  std::vector<std::unique_ptr<Pending>> group;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued was written
      const size_t size = std::min(queue_.size(), max_group);
      for (size_t i = 0; i < size; ++i) group.push_back(std::move(queue_[i]));
      queue_.erase(queue_.begin(), queue_.begin() + size);
    }
    WriteGroupOrFail(group);
    for (const auto& p : group) p->written(std::move(p->status));
    group.clear();
  }
}

void GroupCommitter::WriteGroupOrFail(Group group) noexcept {
  // A throw out of the backend (protobuf, an allocation) must not end the committer's thread:
  // every later commit would wait for ever. The group fails instead (its transaction,
  // destroyed while unwinding, rolled back unless COMMIT itself threw, hence "unknown").
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
  for (const auto& w : group) w->status = failed;
}

std::optional<absl::Status> GroupCommitter::WriteAllAtOnce(CommitBatchTransaction& tx,
                                                           const Group& group,
                                                           const std::vector<int32_t>& shards) {
  // The range id each shard's commits expect; commits of one shard expecting different
  // ones (a stale writer's among them) go the careful way, which fails the stale one alone.
  std::vector<int64_t> ranges(shards.size(), 0);
  std::vector<bool> seen(shards.size(), false);
  std::vector<GroupItem> items;
  for (const auto& pending : group) {
    const Commit& c = *pending->item.commit;
    const size_t at = std::find(shards.begin(), shards.end(), c.shard_id) - shards.begin();
    if (seen[at] && ranges[at] != c.range_id) return std::nullopt;
    seen[at] = true;
    ranges[at] = c.range_id;
    items.push_back(pending->item);
  }
  const std::vector<std::pair<Commit*, size_t>> unset = UnsetTimerIds(items);
  const CommitBatchTransaction::AtOnce all = tx.WriteAllAtOnce(items, shards, ranges);
  if (all.outcome == CommitBatchTransaction::AtOnce::kWritten) return all.status;
  for (const auto& [commit, timer] : unset) commit->new_timers[timer].task_id = 0;
  if (all.outcome == CommitBatchTransaction::AtOnce::kDidNotPass && observer_ != nullptr) {
    observer_->GroupWrittenAgain();
  }
  return std::nullopt;
}

void GroupCommitter::WriteGroup(Group group) {
  auto answer_all = [&](const absl::Status& s) {
    for (const auto& w : group) w->status = s;
  };
  absl::StatusOr<std::unique_ptr<CommitBatchTransaction>> opened = writer_.Begin();
  if (!opened.ok()) return answer_all(opened.status());
  CommitBatchTransaction& tx = **opened;

  // The fence: every shard of the group at once, in the order they first appear.
  std::vector<int32_t> shards;
  for (const auto& pending : group) {
    const int32_t shard = pending->item.commit->shard_id;
    if (std::find(shards.begin(), shards.end(), shard) == shards.end()) shards.push_back(shard);
  }
  if (std::optional<absl::Status> all = WriteAllAtOnce(tx, group, shards)) {
    if (all->ok() && observer_ != nullptr) observer_->TransactionCommitted(group.size());
    return answer_all(*all);
  }
  absl::StatusOr<std::vector<int64_t>> ranges = tx.RangeIds(shards);
  if (!ranges.ok()) return answer_all(ranges.status());
  if (ranges->size() != shards.size()) {
    return answer_all(absl::InternalError("the store answered the fence for other shards"));
  }
  std::vector<Pending*> todo;
  for (const auto& pending : group) {
    Pending* w = pending.get();
    const Commit& c = *w->item.commit;
    const int64_t range =
        (*ranges)[std::find(shards.begin(), shards.end(), c.shard_id) - shards.begin()];
    if (range != c.range_id) {
      w->status = ShardLost(c.shard_id, range, c.range_id);
    } else {
      todo.push_back(w);
    }
  }
  if (todo.empty()) return;  // rolled back by the transaction's destructor

  // Everything together after a savepoint; a failed commit is dropped and the rest written
  // again; when the backend cannot say which failed, one commit per savepoint.
  const bool alone = todo.size() == 1;  // its failure is the transaction's: no savepoint
  bool one_by_one = false;
  std::vector<Pending*> written;
  while (!todo.empty()) {
    const size_t n = one_by_one ? 1 : todo.size();
    std::vector<GroupItem> items;
    for (size_t i = 0; i < n; ++i) items.push_back(todo[i]->item);
    const std::vector<std::pair<Commit*, size_t>> unset = UnsetTimerIds(items);
    if (!alone) {
      if (absl::Status s = tx.Savepoint(); !s.ok()) return answer_all(s);
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
    if (absl::Status u = tx.RollbackToSavepoint(); !u.ok()) return answer_all(u);
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
  for (Pending* w : written) w->status = committed;
  if (committed.ok() && observer_ != nullptr) observer_->TransactionCommitted(written.size());
}

}  // namespace tock::persistence
