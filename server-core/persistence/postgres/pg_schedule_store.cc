// Schedules on PostgreSQL: one autocommit statement per call; updates compare-and-swap on
// the row's revision.
#include "absl/strings/str_cat.h"
#include "server-core/persistence/postgres/pg_stores.h"
#include "server-core/persistence/schedule_store.h"

namespace tock::persistence {
namespace {

absl::StatusOr<std::vector<StoredSchedule>> Rows(absl::StatusOr<PgResult> r) {
  if (!r.ok()) return r.status();
  std::vector<StoredSchedule> out;
  for (int i = 0; i < r->rows(); ++i) {
    StoredSchedule& s = out.emplace_back();
    s.revision = r->Int(i, 0);
    const std::string_view bytes = r->View(i, 1);
    if (!s.record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      return absl::DataLossError("a stored schedule cannot be parsed");
    }
  }
  return out;
}

class PgScheduleStore : public ScheduleStore {
 public:
  explicit PgScheduleStore(PgPool& pool) : pool_(pool) {}

  absl::Status Create(const ScheduleRecord& r) override {
    const std::string record = r.SerializeAsString();
    absl::StatusOr<PgResult> q = pool_.Query(
        "INSERT INTO schedules(namespace_id, schedule_id, revision, record) "
        "VALUES ($1, $2, 1, $3) ON CONFLICT DO NOTHING RETURNING 1",
        {PgParam::Text(r.namespace_id()), PgParam::Text(r.schedule_id()), PgParam::Bytes(record)});
    if (!q.ok()) return q.status();
    if (q->rows() == 0) {
      return absl::AlreadyExistsError(absl::StrCat("schedule ", r.schedule_id(), " exists"));
    }
    return absl::OkStatus();
  }

  absl::Status Update(const ScheduleRecord& r, int64_t revision) override {
    const std::string record = r.SerializeAsString();
    // One statement tells the three cases apart: updated, changed by another, or gone.
    absl::StatusOr<PgResult> q = pool_.Query(
        "WITH u AS (UPDATE schedules SET revision = revision + 1, record = $1 "
        "WHERE namespace_id = $2 AND schedule_id = $3 AND revision = $4 RETURNING 1) "
        "SELECT (SELECT count(*) FROM u), "
        "(SELECT count(*) FROM schedules WHERE namespace_id = $2 AND schedule_id = $3)",
        {PgParam::Bytes(record), PgParam::Text(r.namespace_id()), PgParam::Text(r.schedule_id()),
         PgParam::Int(revision)});
    if (!q.ok()) return q.status();
    if (q->Int(0, 0) == 1) return absl::OkStatus();
    if (q->Int(0, 1) == 0) return absl::NotFoundError("the schedule is not stored");
    return absl::AbortedError("the schedule was changed concurrently");
  }

  absl::StatusOr<StoredSchedule> Get(const std::string& namespace_id,
                                     const std::string& schedule_id) override {
    absl::StatusOr<std::vector<StoredSchedule>> found = Rows(pool_.Query(
        "SELECT revision, record FROM schedules WHERE namespace_id = $1 AND schedule_id = $2",
        {PgParam::Text(namespace_id), PgParam::Text(schedule_id)}));
    if (!found.ok()) return found.status();
    if (found->empty()) return absl::NotFoundError("no such schedule");
    return std::move(found->front());
  }

  absl::Status Delete(const std::string& namespace_id, const std::string& schedule_id) override {
    absl::StatusOr<PgResult> q = pool_.Query(
        "DELETE FROM schedules WHERE namespace_id = $1 AND schedule_id = $2 RETURNING 1",
        {PgParam::Text(namespace_id), PgParam::Text(schedule_id)});
    if (!q.ok()) return q.status();
    if (q->rows() == 0) return absl::NotFoundError("no such schedule");
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<StoredSchedule>> List(const std::string& namespace_id,
                                                   const std::string& after_id,
                                                   int32_t limit) override {
    return Rows(pool_.Query(
        "SELECT revision, record FROM schedules WHERE namespace_id = $1 AND schedule_id > $2 "
        "ORDER BY schedule_id LIMIT $3",
        {PgParam::Text(namespace_id), PgParam::Text(after_id), PgParam::Int(limit)}));
  }

  absl::StatusOr<std::vector<StoredSchedule>> ListAll(const std::string& after_namespace_id,
                                                      const std::string& after_id,
                                                      int32_t limit) override {
    return Rows(pool_.Query(
        "SELECT revision, record FROM schedules WHERE (namespace_id, schedule_id) > ($1, $2) "
        "ORDER BY namespace_id, schedule_id LIMIT $3",
        {PgParam::Text(after_namespace_id), PgParam::Text(after_id), PgParam::Int(limit)}));
  }

 private:
  PgPool& pool_;
};

}  // namespace

std::unique_ptr<ScheduleStore> NewPostgresScheduleStore(PgPool& pool) {
  return std::make_unique<PgScheduleStore>(pool);
}

}  // namespace tock::persistence
