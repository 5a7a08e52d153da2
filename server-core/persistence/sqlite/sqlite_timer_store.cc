// Timers of the timer service on SQLite: a batch of fenced compare-and-swap writes in one
// IMMEDIATE transaction (SQLite's write lock), each checked against the shard's range id read
// in that transaction.
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/execution_store.h"
#include "server-core/persistence/sqlite/sqlite_stores.h"
#include "server-core/persistence/timer_store.h"

namespace tock::persistence {
namespace {

constexpr char kColumns[] = "namespace_id, timer_id, shard_id, revision, due_ms, record";

absl::StatusOr<std::vector<StoredTimer>> Rows(Statement& q) {
  std::vector<StoredTimer> out;
  absl::Status read = q.ForEachRow([&] {
    StoredTimer& t = out.emplace_back();
    t.namespace_id = q.Text(0);
    t.timer_id = q.Text(1);
    t.shard_id = static_cast<int32_t>(q.Int(2));
    t.revision = q.Int(3);
    t.due = q.IsNull(4) ? absl::InfiniteFuture() : TimerDueFromMillis(q.Int(4));
    const std::string_view bytes = q.BlobView(5);
    return t.record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))
               ? absl::OkStatus()
               : absl::DataLossError("a stored timer cannot be parsed");
  });
  if (!read.ok()) return read;
  return out;
}

class SqliteTimerStore : public TimerStore {
 public:
  explicit SqliteTimerStore(SqliteDb& db) : db_(db) {}

  std::vector<absl::Status> Write(std::vector<TimerWrite>& writes) override {
    std::vector<absl::Status> out(writes.size());
    std::lock_guard lock(db_.mutex());
    Transaction tx(db_);
    absl::Status s = tx.Begin();
    // The shard's range id, read once per shard: the write lock is held from BEGIN
    // IMMEDIATE to COMMIT, so it cannot move in between.
    std::map<int32_t, int64_t> ranges;
    for (size_t i = 0; s.ok() && i < writes.size(); ++i) {
      absl::StatusOr<absl::Status> one = WriteOne(writes[i], ranges);
      if (!one.ok()) s = one.status();
      else out[i] = *one;
    }
    if (s.ok()) s = tx.Commit();
    if (!s.ok()) {
      for (absl::Status& o : out) o = s;
    }
    return out;
  }

  absl::StatusOr<StoredTimer> Get(const std::string& namespace_id,
                                  const std::string& timer_id) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(absl::StrCat("SELECT ", kColumns,
                                            " FROM timers WHERE namespace_id = ? AND timer_id = ?")));
    q.Bind(1, namespace_id).Bind(2, timer_id);
    absl::StatusOr<std::vector<StoredTimer>> found = Rows(q);
    if (!found.ok()) return found.status();
    if (found->empty()) return absl::NotFoundError("no such timer");
    return std::move(found->front());
  }

  absl::StatusOr<std::vector<StoredTimer>> List(const std::string& namespace_id,
                                                const std::string& after_id, int state,
                                                int32_t limit) override {
    std::lock_guard lock(db_.mutex());
    if (state == 0) {
      ASSIGN_STMT(q, db_.Prepare(absl::StrCat("SELECT ", kColumns,
                                              " FROM timers WHERE namespace_id = ? AND timer_id > ? "
                                              "ORDER BY timer_id LIMIT ?")));
      q.Bind(1, namespace_id).Bind(2, after_id).Bind(3, int64_t{limit});
      return Rows(q);
    }
    ASSIGN_STMT(q, db_.Prepare(absl::StrCat(
                       "SELECT ", kColumns,
                       " FROM timers WHERE namespace_id = ? AND listed_state = ? AND state = ? "
                       "AND timer_id > ? ORDER BY timer_id LIMIT ?")));
    q.Bind(1, namespace_id).Bind(2, int64_t{ListedState(state)}).Bind(3, int64_t{state});
    q.Bind(4, after_id).Bind(5, int64_t{limit});
    return Rows(q);
  }

  absl::StatusOr<std::vector<StoredTimer>> LoadDue(int32_t shard_id, const TimerDueCursor& after,
                                                   absl::Time until, int32_t limit) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(absl::StrCat(
                       "SELECT ", kColumns,
                       " FROM timers WHERE shard_id = ? AND due_ms IS NOT NULL AND due_ms < ? "
                       "AND (due_ms, namespace_id, timer_id) > (?, ?, ?) "
                       "ORDER BY due_ms, namespace_id, timer_id LIMIT ?")));
    q.Bind(1, int64_t{shard_id})
        .Bind(2, TimerDueMillis(until))
        .Bind(3, TimerDueMillis(after.due))
        .Bind(4, after.namespace_id)
        .Bind(5, after.timer_id)
        .Bind(6, int64_t{limit});
    return Rows(q);
  }

 private:
  // The write's own status, or the error that fails the whole transaction.
  absl::StatusOr<absl::Status> WriteOne(TimerWrite& w, std::map<int32_t, int64_t>& ranges) {
    StoredTimer& t = w.timer;
    auto range = ranges.find(t.shard_id);
    if (range == ranges.end()) {
      ASSIGN_STMT(fence, db_.Prepare("SELECT range_id FROM shards WHERE shard_id = ?"));
      fence.Bind(1, int64_t{t.shard_id});
      int64_t stored = std::numeric_limits<int64_t>::min();  // no row: nobody's range
      RETURN_IF_ERROR(fence.ForEachRow([&] {
        stored = fence.Int(0);
        return absl::OkStatus();
      }));
      range = ranges.emplace(t.shard_id, stored).first;
    }
    if (range->second != w.range_id) {
      return FencedOut(w);
    }
    if (absl::Status misused = CheckAttemptRecord(w); !misused.ok()) return misused;
    const int64_t revision = w.expected_revision + 1;
    if (w.remove) {
      ASSIGN_STMT(q, db_.Prepare(
                         "DELETE FROM timers WHERE namespace_id = ? AND timer_id = ? AND revision = ?"));
      q.Bind(1, t.namespace_id).Bind(2, t.timer_id).Bind(3, w.expected_revision);
      RETURN_IF_ERROR(q.Run());
      if (db_.Changes() == 0) return ChangedConcurrently(w);
      return absl::OkStatus();
    }
    const std::string record = t.record.SerializeAsString();
    const int64_t listed = ListedState(t.record.state());
    if (w.expected_revision == 0) {
      ASSIGN_STMT(q, db_.Prepare(
                         "INSERT INTO timers(namespace_id, timer_id, shard_id, revision, state, "
                         "listed_state, due_ms, record) VALUES (?, ?, ?, 1, ?, ?, ?, ?) "
                         "ON CONFLICT DO NOTHING"));
      q.Bind(1, t.namespace_id).Bind(2, t.timer_id).Bind(3, int64_t{t.shard_id});
      q.Bind(4, int64_t{t.record.state()}).Bind(5, listed);
      BindDue(q, 6, t.due);
      q.BindBlob(7, record);
      RETURN_IF_ERROR(q.Run());
    } else if (w.attempt) {
      // Neither due_ms nor listed_state is named: SQLite leaves an index alone only when the
      // SET names none of its columns.
      ASSIGN_STMT(q, db_.Prepare("UPDATE timers SET revision = ?, state = ?, record = ? "
                                 "WHERE namespace_id = ? AND timer_id = ? AND revision = ?"));
      q.Bind(1, revision).Bind(2, int64_t{t.record.state()});
      q.BindBlob(3, record).Bind(4, t.namespace_id).Bind(5, t.timer_id);
      q.Bind(6, w.expected_revision);
      RETURN_IF_ERROR(q.Run());
    } else {
      ASSIGN_STMT(q, db_.Prepare(
                         "UPDATE timers SET revision = ?, state = ?, listed_state = ?, "
                         "due_ms = ?, record = ? "
                         "WHERE namespace_id = ? AND timer_id = ? AND revision = ?"));
      q.Bind(1, revision).Bind(2, int64_t{t.record.state()});
      q.Bind(3, listed);
      BindDue(q, 4, t.due);
      q.BindBlob(5, record).Bind(6, t.namespace_id).Bind(7, t.timer_id);
      q.Bind(8, w.expected_revision);
      RETURN_IF_ERROR(q.Run());
    }
    if (db_.Changes() == 0) return ChangedConcurrently(w);
    t.revision = revision;
    return absl::OkStatus();
  }

  static void BindDue(Statement& q, int index, absl::Time due) {
    if (due == absl::InfiniteFuture()) {
      q.BindNull(index);
    } else {
      q.Bind(index, TimerDueMillis(due));
    }
  }

  SqliteDb& db_;
};

}  // namespace

std::unique_ptr<TimerStore> NewSqliteTimerStore(SqliteDb& db) {
  return std::make_unique<SqliteTimerStore>(db);
}

}  // namespace tock::persistence
