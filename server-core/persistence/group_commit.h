// Group commit: concurrent ExecutionStore::Write calls share one database transaction.
//
// A backend implements CommitBatchWriter (how to write several commits in one transaction);
// its ExecutionStore::Write hands each commit to a GroupCommitter, which does the rest, the
// same for every backend:
//
//   - Leader and followers. Commits queue per group key (the shard, or one key for a
//     database that has a single writer anyway). The first caller to find no group of its
//     key being written leads: it takes every commit queued for the key (at most
//     max_group), writes them in ONE transaction and answers each caller with its own
//     status, only after the transaction committed. Commits arriving meanwhile queue and form
//     the next group, led by the first of them. A lone caller therefore writes at once (no
//     waiting to fill a group); under load a group holds what arrived during the previous
//     group's transaction.
//   - The fence, once per transaction: the range id of each shard in the group is read (and
//     kept from a steal until the end, as the backend's fence requires). A commit whose range
//     id differs fails with FAILED_PRECONDITION and writes nothing: when the shard was
//     stolen, that is the whole group.
//   - Isolation: the commits are written together (a backend may merge them into a few
//     statements) after a savepoint. When one fails (ABORTED db_version or current run,
//     ALREADY_EXISTS, ...), the transaction rolls back to the savepoint and the others are
//     written again without it; so a commit that fails changes nothing and the others still
//     commit. When the backend cannot tell which commit failed, they are written again one per
//     savepoint. A group of one commit takes no savepoint (its failure rolls back everything).
//   - An exception thrown by the backend fails every commit of the group with INTERNAL (its
//     outcome unknown when COMMIT threw) and the lead passes on: no commit waits for ever.
//   - BEGIN, a fence read or a savepoint's rollback failing fails every commit of the group
//     with that error; COMMIT failing fails every commit that was to be committed with it (a
//     commit that failed on its own keeps its own error: nothing of it was written either
//     way), as each would have failed in its own transaction.
//
// For each caller this is Write's contract (execution_store.h): all of its commit or none,
// task and timer ids filled in on success.
//
// Thread safety: Write is safe from any number of threads; the backend's transaction is
// used by one thread (the group's leader) at a time.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server-core/persistence/execution_store.h"

namespace tock::persistence {

// What a backend prepares for a commit in its caller's thread, before it queues (the
// serialized messages), so that a group's transaction holds the database for the database
// work alone. Backends derive their own.
class PreparedCommit {
 public:
  virtual ~PreparedCommit() = default;
};

// One commit of a group: the caller's commit and what the backend prepared for it.
struct GroupItem {
  Commit* commit = nullptr;
  PreparedCommit* prepared = nullptr;
};

// One group's transaction, opened by CommitBatchWriter::Begin on a connection of its own.
// Destroying it rolls back unless Commit succeeded.
class CommitBatchTransaction {
 public:
  virtual ~CommitBatchTransaction() = default;
  // The range id of `shard_id` (-1 when the shard has no row), read so that no steal of the
  // shard can commit before this transaction ends. Called once per shard, before any Write.
  virtual absl::StatusOr<int64_t> RangeId(int32_t shard_id) = 0;
  // Writes `items` (every row of their commits; the fence has been checked), filling in
  // their task and timer ids. On failure, sets `failed` to the index in `items` of the
  // commit that failed, or to -1 when the backend cannot tell which one; the caller then
  // rolls back to the savepoint, after which the transaction is usable again.
  virtual absl::Status Write(absl::Span<const GroupItem> items, int& failed) = 0;
  // Sets the savepoint (replacing the one set before), and rolls back to it.
  virtual absl::Status Savepoint() = 0;
  virtual absl::Status RollbackToSavepoint() = 0;
  virtual absl::Status Commit() = 0;
};

class CommitBatchWriter {
 public:
  virtual ~CommitBatchWriter() = default;
  // In the caller's thread, before it queues; may return null.
  virtual std::unique_ptr<PreparedCommit> Prepare(const Commit& commit) = 0;
  // Opens a group's transaction.
  virtual absl::StatusOr<std::unique_ptr<CommitBatchTransaction>> Begin() = 0;
};

struct GroupCommitOptions {
  // Group by shard (each shard's group runs in its own transaction, in parallel with the
  // other shards'), or every shard of the host in one group (one transaction at a time, as
  // large as what arrived during the previous one). A database with a single writer (SQLite)
  // gains nothing from parallel groups. PostgreSQL could run them, but measured on one host
  // with 16 shards and 16 concurrent callers, groups by shard held about one commit each
  // (10,400 transactions for 7,000 state transitions plus task deletions) and one group per
  // host was 20-60 % faster (workflow_bench: 190-250 against 145-175 workflows/s): the
  // database's cost is per transaction, and its round trips on a LAN are short next to it.
  bool group_by_shard = true;
  // At most this many commits in one transaction.
  int max_group = 64;
};

class GroupCommitter {
 public:
  // `writer` must outlive this.
  explicit GroupCommitter(CommitBatchWriter& writer, GroupCommitOptions options = {});
  ~GroupCommitter();

  // Writes `commit` in the transaction of its group; returns its own status once that
  // transaction is over (see the top of this file).
  absl::Status Write(Commit& commit);

  // How many commits of `shard_id`'s group key wait for a group now (for tests).
  size_t Queued(int32_t shard_id);

  // Told of each transaction that committed (execution_store.h); set once before any Write.
  void SetObserver(WriteObserver* observer) { observer_ = observer; }

 private:
  struct Waiter;
  struct Queue;
  Queue& QueueOf(int32_t shard_id);
  // Writes `group` in one transaction; sets each waiter's status.
  void WriteGroup(absl::Span<Waiter* const> group);
  // WriteGroup, with an exception out of it turned into INTERNAL for every waiter.
  void WriteGroupOrFail(absl::Span<Waiter* const> group) noexcept;

  CommitBatchWriter& writer_;
  const GroupCommitOptions options_;
  WriteObserver* observer_ = nullptr;
  std::mutex queues_mu_;
  std::unordered_map<int32_t, std::unique_ptr<Queue>> queues_;
};

}  // namespace tock::persistence
