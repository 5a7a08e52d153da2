#include "server-core/persistence/archival_queue_store.h"
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/sqlite/sqlite_stores.h"

namespace tock::persistence {
namespace {

constexpr char kColumns[] =
    "namespace_id, run_id, workflow_id, close_ms, visibility_step, history_step, run_deleted, "
    "attempts, last_error, next_attempt_ms";

ArchivalQueueRow RowOf(const Statement& q) {
  ArchivalQueueRow r;
  r.namespace_id = q.Text(0);
  r.run_id = q.Text(1);
  r.workflow_id = q.Text(2);
  r.close_time = absl::FromUnixMillis(q.Int(3));
  r.visibility = static_cast<ArchivalStep>(q.Int(4));
  r.history = static_cast<ArchivalStep>(q.Int(5));
  r.run_deleted = q.Int(6) != 0;
  r.attempts = static_cast<int32_t>(q.Int(7));
  r.last_error = q.Text(8);
  r.next_attempt = absl::FromUnixMillis(q.Int(9));
  return r;
}

class SqliteArchivalQueueStore : public ArchivalQueueStore {
 public:
  explicit SqliteArchivalQueueStore(SqliteDb& db) : db_(db) {}

  absl::StatusOr<std::vector<ArchivalQueueRow>> VisibilityDue(absl::Time now,
                                                              int32_t limit) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(absl::StrCat(
                       "SELECT ", kColumns,
                       " FROM archival_queue WHERE visibility_step = 0 AND next_attempt_ms <= ? "
                       "ORDER BY close_ms LIMIT ?")));
    q.Bind(1, absl::ToUnixMillis(now)).Bind(2, int64_t{limit});
    return Rows(q);
  }

  absl::StatusOr<std::vector<ArchivalQueueRow>> RetentionDue(const std::string& namespace_id,
                                                             absl::Time closed_before,
                                                             absl::Time now,
                                                             int32_t limit) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(absl::StrCat(
                       "SELECT ", kColumns,
                       " FROM archival_queue WHERE namespace_id = ? AND run_deleted = 0 AND "
                       "close_ms < ? AND next_attempt_ms <= ? ORDER BY close_ms LIMIT ?")));
    q.Bind(1, namespace_id)
        .Bind(2, absl::ToUnixMillis(closed_before))
        .Bind(3, absl::ToUnixMillis(now))
        .Bind(4, int64_t{limit});
    return Rows(q);
  }

  absl::StatusOr<std::vector<std::string>> NamespacesWithLiveRuns() override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
                       "SELECT DISTINCT namespace_id FROM archival_queue WHERE run_deleted = 0"));
    std::vector<std::string> out;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      out.push_back(q.Text(0));
      return absl::OkStatus();
    }));
    return out;
  }

  absl::StatusOr<std::optional<ArchivalQueueRow>> Get(const std::string& namespace_id,
                                                      const std::string& run_id) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(absl::StrCat("SELECT ", kColumns,
                                            " FROM archival_queue WHERE namespace_id = ? AND "
                                            "run_id = ?")));
    q.Bind(1, namespace_id).Bind(2, run_id);
    absl::StatusOr<std::vector<ArchivalQueueRow>> rows = Rows(q);
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return std::nullopt;
    return std::move(rows->front());
  }

  absl::Status Put(const ArchivalQueueRow& r) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(absl::StrCat("INSERT OR REPLACE INTO archival_queue(", kColumns,
                                            ") VALUES (?,?,?,?,?,?,?,?,?,?)")));
    return q.Bind(1, r.namespace_id)
        .Bind(2, r.run_id)
        .Bind(3, r.workflow_id)
        .Bind(4, absl::ToUnixMillis(r.close_time))
        .Bind(5, static_cast<int64_t>(r.visibility))
        .Bind(6, static_cast<int64_t>(r.history))
        .Bind(7, int64_t{r.run_deleted ? 1 : 0})
        .Bind(8, int64_t{r.attempts})
        .Bind(9, r.last_error)
        .Bind(10, absl::ToUnixMillis(r.next_attempt))
        .Run();
  }

  absl::StatusOr<ArchivalCounts> Counts(const std::string& namespace_id) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
                       "SELECT visibility_step, history_step, run_deleted, last_error != '', "
                       "COUNT(*) FROM archival_queue WHERE namespace_id = ? "
                       "GROUP BY 1, 2, 3, 4"));
    q.Bind(1, namespace_id);
    ArchivalCounts c;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      const int64_t n = q.Int(4);
      c.visibility[std::clamp<int64_t>(q.Int(0), 0, 2)] += n;
      c.history[std::clamp<int64_t>(q.Int(1), 0, 2)] += n;
      if (q.Int(2) != 0) c.runs_deleted += n;
      if (q.Int(3) != 0) c.failing += n;
      return absl::OkStatus();
    }));
    return c;
  }

  absl::StatusOr<std::vector<ArchivalQueueRow>> Failing(const std::string& namespace_id,
                                                        int32_t limit) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(absl::StrCat(
                       "SELECT ", kColumns,
                       " FROM archival_queue WHERE namespace_id = ? AND last_error != '' "
                       "ORDER BY close_ms DESC LIMIT ?")));
    q.Bind(1, namespace_id).Bind(2, int64_t{limit});
    return Rows(q);
  }

 private:
  static absl::StatusOr<std::vector<ArchivalQueueRow>> Rows(Statement& q) {
    std::vector<ArchivalQueueRow> out;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      out.push_back(RowOf(q));
      return absl::OkStatus();
    }));
    return out;
  }

  SqliteDb& db_;
};

}  // namespace

std::unique_ptr<ArchivalQueueStore> NewSqliteArchivalQueueStore(SqliteDb& db) {
  return std::make_unique<SqliteArchivalQueueStore>(db);
}

}  // namespace tock::persistence
