// The PostgreSQL ArchivalQueueStore: sqlite_archival_queue_store.cc's statements over the
// pool. Each call is one autocommit statement; Put is an upsert, so two hosts writing the
// same row leave one of the two rows whole, as SQLite's INSERT OR REPLACE does.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/postgres/pg_stores.h"

namespace tock::persistence {
namespace {

constexpr char kColumns[] =
    "namespace_id, run_id, workflow_id, close_ms, visibility_step, history_step, run_deleted, "
    "attempts, last_error, next_attempt_ms";

std::vector<ArchivalQueueRow> Rows(const PgResult& q) {
  std::vector<ArchivalQueueRow> out;
  out.reserve(q.rows());
  for (int i = 0; i < q.rows(); ++i) {
    ArchivalQueueRow r;
    r.namespace_id = q.Text(i, 0);
    r.run_id = q.Text(i, 1);
    r.workflow_id = q.Text(i, 2);
    r.close_time = absl::FromUnixMillis(q.Int(i, 3));
    r.visibility = static_cast<ArchivalStep>(q.Int(i, 4));
    r.history = static_cast<ArchivalStep>(q.Int(i, 5));
    r.run_deleted = q.Int(i, 6) != 0;
    r.attempts = static_cast<int32_t>(q.Int(i, 7));
    r.last_error = q.Text(i, 8);
    r.next_attempt = absl::FromUnixMillis(q.Int(i, 9));
    out.push_back(std::move(r));
  }
  return out;
}

absl::StatusOr<std::vector<ArchivalQueueRow>> RowsOf(absl::StatusOr<PgResult> q) {
  if (!q.ok()) return q.status();
  return Rows(*q);
}

class PgArchivalQueueStore : public ArchivalQueueStore {
 public:
  explicit PgArchivalQueueStore(PgPool& pool) : pool_(pool) {}

  absl::StatusOr<std::vector<ArchivalQueueRow>> VisibilityDue(absl::Time now,
                                                              int32_t limit) override {
    return RowsOf(pool_.Query(
        absl::StrCat("SELECT ", kColumns,
                     " FROM archival_queue WHERE visibility_step = 0 AND next_attempt_ms <= $1 "
                     "ORDER BY close_ms LIMIT $2"),
        {PgParam::Int(absl::ToUnixMillis(now)), PgParam::Int(limit)}));
  }

  absl::StatusOr<std::vector<ArchivalQueueRow>> RetentionDue(const std::string& namespace_id,
                                                             absl::Time closed_before,
                                                             absl::Time now,
                                                             int32_t limit) override {
    return RowsOf(pool_.Query(
        absl::StrCat("SELECT ", kColumns,
                     " FROM archival_queue WHERE namespace_id = $1 AND run_deleted = 0 AND "
                     "close_ms < $2 AND next_attempt_ms <= $3 ORDER BY close_ms LIMIT $4"),
        {PgParam::Text(namespace_id), PgParam::Int(absl::ToUnixMillis(closed_before)),
         PgParam::Int(absl::ToUnixMillis(now)), PgParam::Int(limit)}));
  }

  absl::StatusOr<std::vector<std::string>> NamespacesWithLiveRuns() override {
    absl::StatusOr<PgResult> q = pool_.Query(
        "SELECT DISTINCT namespace_id FROM archival_queue WHERE run_deleted = 0 "
        "ORDER BY namespace_id");
    if (!q.ok()) return q.status();
    std::vector<std::string> out;
    for (int i = 0; i < q->rows(); ++i) out.push_back(q->Text(i, 0));
    return out;
  }

  absl::StatusOr<std::optional<ArchivalQueueRow>> Get(const std::string& namespace_id,
                                                      const std::string& run_id) override {
    absl::StatusOr<std::vector<ArchivalQueueRow>> rows = RowsOf(pool_.Query(
        absl::StrCat("SELECT ", kColumns,
                     " FROM archival_queue WHERE namespace_id = $1 AND run_id = $2"),
        {PgParam::Text(namespace_id), PgParam::Text(run_id)}));
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return std::nullopt;
    return std::move(rows->front());
  }

  absl::Status Put(const ArchivalQueueRow& r) override {
    return pool_
        .Query(absl::StrCat(
                   "INSERT INTO archival_queue(", kColumns,
                   ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "
                   "ON CONFLICT (namespace_id, run_id) DO UPDATE SET "
                   "workflow_id = EXCLUDED.workflow_id, close_ms = EXCLUDED.close_ms, "
                   "visibility_step = EXCLUDED.visibility_step, "
                   "history_step = EXCLUDED.history_step, run_deleted = EXCLUDED.run_deleted, "
                   "attempts = EXCLUDED.attempts, last_error = EXCLUDED.last_error, "
                   "next_attempt_ms = EXCLUDED.next_attempt_ms"),
               {PgParam::Text(r.namespace_id), PgParam::Text(r.run_id),
                PgParam::Text(r.workflow_id), PgParam::Int(absl::ToUnixMillis(r.close_time)),
                PgParam::Int(static_cast<int64_t>(r.visibility)),
                PgParam::Int(static_cast<int64_t>(r.history)),
                PgParam::Int(r.run_deleted ? 1 : 0), PgParam::Int(r.attempts),
                PgParam::Text(r.last_error), PgParam::Int(absl::ToUnixMillis(r.next_attempt))})
        .status();
  }

  absl::StatusOr<ArchivalCounts> Counts(const std::string& namespace_id) override {
    absl::StatusOr<PgResult> q = pool_.Query(
        "SELECT visibility_step, history_step, run_deleted, last_error <> '', COUNT(*) "
        "FROM archival_queue WHERE namespace_id = $1 GROUP BY 1, 2, 3, 4",
        {PgParam::Text(namespace_id)});
    if (!q.ok()) return q.status();
    ArchivalCounts c;
    for (int i = 0; i < q->rows(); ++i) {
      const int64_t n = q->Int(i, 4);
      c.visibility[std::clamp<int64_t>(q->Int(i, 0), 0, 2)] += n;
      c.history[std::clamp<int64_t>(q->Int(i, 1), 0, 2)] += n;
      if (q->Int(i, 2) != 0) c.runs_deleted += n;
      if (q->Int(i, 3) != 0) c.failing += n;
    }
    return c;
  }

  absl::StatusOr<std::vector<ArchivalQueueRow>> Failing(const std::string& namespace_id,
                                                        int32_t limit) override {
    return RowsOf(pool_.Query(
        absl::StrCat("SELECT ", kColumns,
                     " FROM archival_queue WHERE namespace_id = $1 AND last_error <> '' "
                     "ORDER BY close_ms DESC LIMIT $2"),
        {PgParam::Text(namespace_id), PgParam::Int(limit)}));
  }

 private:
  PgPool& pool_;
};

}  // namespace

std::unique_ptr<ArchivalQueueStore> NewPostgresArchivalQueueStore(PgPool& pool) {
  return std::make_unique<PgArchivalQueueStore>(pool);
}

}  // namespace tock::persistence
