// Group commit: concurrent ExecutionStore writes share one database transaction.
//
// A backend implements CommitBatchWriter (how to write several commits in one transaction);
// its ExecutionStore::Write and WriteAsync hand each commit to a GroupCommitter, which does
// the rest, the same for every backend:
//
//   - The committer's thread. Commits queue; one thread of the committer's own takes every
//     commit queued (at most max_group), writes them in ONE transaction and answers each
//     with its own status, only after the transaction committed. Commits arriving meanwhile
//     queue and form the next group. A lone commit is therefore written at once (no waiting
//     to fill a group); under load a group holds what arrived during the previous group's
//     transaction. No caller's thread waits for the database: WriteAsync returns at once and
//     its completion is called on the committer's thread (which is why a completion must
//     not wait for another write). Write, for callers that can wait, is WriteAsync and a
//     wait for the completion. Every shard of the host goes into the same group: measured
//     on PostgreSQL with 16 shards and 16 callers, groups by shard held about one commit
//     each and one group per host was 20-60 % faster (the database's cost is per
//     transaction); SQLite has one writer anyway.
//   - The fence, once per transaction: the range id of each shard in the group is read (and
//     kept from a steal until the end, as the backend's fence requires). A backend whose
//     statements are round trips first tries the group at once (WriteAllAtOnce: the fence
//     and the checks raised as errors, BEGIN to COMMIT in one round trip on PostgreSQL);
//     only when something did not pass does the group go the careful way below. A commit
//     whose range id differs fails with FAILED_PRECONDITION and writes nothing: when the
//     shard was stolen, that is every commit of it in the group.
//   - Isolation: the commits are written together (a backend may merge them into a few
//     statements) after a savepoint. When one fails (ABORTED db_version or current run,
//     ALREADY_EXISTS, ...), the transaction rolls back to the savepoint and the others are
//     written again without it; so a commit that fails changes nothing and the others still
//     commit. When the backend cannot tell which commit failed, they are written again one per
//     savepoint. A group of one commit takes no savepoint (its failure rolls back everything).
//   - An exception thrown by the backend fails every commit of the group with INTERNAL (its
//     outcome unknown when COMMIT threw) and the next group is written as usual.
//   - BEGIN, a fence read or a savepoint's rollback failing fails every commit of the group
//     with that error; COMMIT failing fails every commit that was to be committed with it (a
//     commit that failed on its own keeps its own error: nothing of it was written either
//     way), as each would have failed in its own transaction.
//
// For each caller this is Write's contract (execution_store.h): all of its commit or none,
// task and timer ids filled in on success.
//
// Thread safety: Write and WriteAsync are safe from any thread but the committer's own (a
// completion that wrote again would wait for itself: Write refuses it with INTERNAL).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

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
  // The range ids of `shards` (distinct), in their order (-1 for a shard with no row), read
  // so that no steal of those shards can commit before this transaction ends. Called once
  // per group, before any Write: one round trip to a database server for all of them.
  virtual absl::StatusOr<std::vector<int64_t>> RangeIds(const std::vector<int32_t>& shards) = 0;
  // Writes `items` (every row of their commits; the fence has been checked), filling in
  // their task and timer ids. On failure, sets `failed` to the index in `items` of the
  // commit that failed, or to -1 when the backend cannot tell which one; the caller then
  // rolls back to the savepoint, after which the transaction is usable again.
  virtual absl::Status Write(absl::Span<const GroupItem> items, int& failed) = 0;
  // Optional, for a backend whose every statement costs a round trip: BEGIN, the fence,
  // every row of `items` and COMMIT in as few round trips as it can, for the usual group in
  // which every commit passes. `ranges` are the range ids the commits expect of `shards`.
  //   kWritten: everything was sent and `status` is COMMIT's answer;
  //   kDidNotPass: the fence, a commit's check or a statement failed: nothing was written;
  //   kNotTried: the backend has no such path (for these commits).
  // Unless kWritten, the transaction is as Begin left it, and the caller goes the careful
  // way (RangeIds, Write after savepoints), which tells which commit fails.
  struct AtOnce {
    enum Outcome { kNotTried, kDidNotPass, kWritten } outcome = kNotTried;
    absl::Status status;
  };
  virtual AtOnce WriteAllAtOnce(absl::Span<const GroupItem> items,
                                const std::vector<int32_t>& shards,
                                const std::vector<int64_t>& ranges) {
    return {};
  }
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
  // At most this many commits in one transaction.
  int max_group = 64;
};

class GroupCommitter {
 public:
  // Called once with a commit's status, on the committer's thread, after its transaction.
  // It must not wait for another write (the committer would wait for itself): hand longer
  // work to another thread.
  using Written = std::function<void(absl::Status)>;

  // `writer` must outlive this. Starts the committer's thread.
  explicit GroupCommitter(CommitBatchWriter& writer, GroupCommitOptions options = {});
  // Writes what is queued, then ends the thread.
  ~GroupCommitter();

  // Queues `commit` for the next group and returns; `written` gets its status (see the top
  // of this file). `commit` must stay alive and untouched until then.
  void WriteAsync(Commit& commit, Written written);
  // WriteAsync, and waits for the status.
  absl::Status Write(Commit& commit);

  // How many commits wait for a group now (for tests).
  size_t Queued();

  // Told of each transaction that committed (execution_store.h); set once before any Write.
  void SetObserver(WriteObserver* observer) { observer_ = observer; }

 private:
  struct Pending;
  using Group = absl::Span<const std::unique_ptr<Pending>>;
  // The committer's thread: groups until stopped and nothing is queued.
  void Run();
  // Writes `group` in one transaction; sets each one's status.
  void WriteGroup(Group group);
  // The backend's CommitBatchTransaction::WriteAllAtOnce for `group`, when its commits agree
  // on each shard's range id; nullopt to go the careful way.
  std::optional<absl::Status> WriteAllAtOnce(CommitBatchTransaction& tx, const Group& group,
                                             const std::vector<int32_t>& shards);
  // WriteGroup, with an exception out of it turned into INTERNAL for every commit.
  void WriteGroupOrFail(Group group) noexcept;

  CommitBatchWriter& writer_;
  const GroupCommitOptions options_;
  WriteObserver* observer_ = nullptr;
  std::mutex mu_;
  std::condition_variable queued_;  // a commit was queued, or stopping_ set
  std::deque<std::unique_ptr<Pending>> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the rest is ready
};

}  // namespace tock::persistence
