// Schedules on SQLite: one row per schedule, updated by compare-and-swap on its revision.
#include "absl/strings/str_cat.h"
#include "server-core/persistence/schedule_store.h"
#include "server-core/persistence/sqlite/sqlite_stores.h"

namespace tock::persistence {
namespace {

// Rows of (revision, record).
absl::StatusOr<std::vector<StoredSchedule>> Rows(Statement& q) {
  std::vector<StoredSchedule> out;
  absl::Status read = q.ForEachRow([&] {
    StoredSchedule& s = out.emplace_back();
    s.revision = q.Int(0);
    const std::string_view bytes = q.BlobView(1);
    return s.record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))
               ? absl::OkStatus()
               : absl::DataLossError("a stored schedule cannot be parsed");
  });
  if (!read.ok()) return read;
  return out;
}

class SqliteScheduleStore : public ScheduleStore {
 public:
  explicit SqliteScheduleStore(SqliteDb& db) : db_(db) {}

  absl::Status Create(const ScheduleRecord& r) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("INSERT INTO schedules(namespace_id, schedule_id, revision, record) "
                               "VALUES (?,?,1,?) ON CONFLICT DO NOTHING"));
    RETURN_IF_ERROR(q.Bind(1, r.namespace_id())
                        .Bind(2, r.schedule_id())
                        .BindBlob(3, r.SerializeAsString())
                        .Run());
    if (db_.Changes() == 0) {
      return absl::AlreadyExistsError(absl::StrCat("schedule ", r.schedule_id(), " exists"));
    }
    return absl::OkStatus();
  }

  absl::Status Update(const ScheduleRecord& r, int64_t revision) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("UPDATE schedules SET revision = revision + 1, record = ? "
                               "WHERE namespace_id = ? AND schedule_id = ? AND revision = ?"));
    RETURN_IF_ERROR(q.BindBlob(1, r.SerializeAsString())
                        .Bind(2, r.namespace_id())
                        .Bind(3, r.schedule_id())
                        .Bind(4, revision)
                        .Run());
    if (db_.Changes() != 0) return absl::OkStatus();
    ASSIGN_STMT(e, db_.Prepare(
                       "SELECT 1 FROM schedules WHERE namespace_id = ? AND schedule_id = ?"));
    e.Bind(1, r.namespace_id()).Bind(2, r.schedule_id());
    bool exists = false;
    RETURN_IF_ERROR(e.ForEachRow([&] {
      exists = true;
      return absl::OkStatus();
    }));
    if (!exists) return absl::NotFoundError("the schedule is not stored");
    return absl::AbortedError("the schedule was changed concurrently");
  }

  absl::StatusOr<StoredSchedule> Get(const std::string& namespace_id,
                                     const std::string& schedule_id) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT revision, record FROM schedules "
                               "WHERE namespace_id = ? AND schedule_id = ?"));
    q.Bind(1, namespace_id).Bind(2, schedule_id);
    absl::StatusOr<std::vector<StoredSchedule>> found = Rows(q);
    if (!found.ok()) return found.status();
    if (found->empty()) return absl::NotFoundError("no such schedule");
    return std::move(found->front());
  }

  absl::Status Delete(const std::string& namespace_id, const std::string& schedule_id) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("DELETE FROM schedules WHERE namespace_id = ? AND schedule_id = ?"));
    RETURN_IF_ERROR(q.Bind(1, namespace_id).Bind(2, schedule_id).Run());
    if (db_.Changes() == 0) return absl::NotFoundError("no such schedule");
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<StoredSchedule>> List(const std::string& namespace_id,
                                                   const std::string& after_id,
                                                   int32_t limit) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT revision, record FROM schedules WHERE namespace_id = ? "
                               "AND schedule_id > ? ORDER BY schedule_id LIMIT ?"));
    q.Bind(1, namespace_id).Bind(2, after_id).Bind(3, int64_t{limit});
    return Rows(q);
  }

  absl::StatusOr<std::vector<StoredSchedule>> ListAll(const std::string& after_namespace_id,
                                                      const std::string& after_id,
                                                      int32_t limit) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
                       "SELECT revision, record FROM schedules WHERE namespace_id > ? OR "
                       "(namespace_id = ? AND schedule_id > ?) "
                       "ORDER BY namespace_id, schedule_id LIMIT ?"));
    q.Bind(1, after_namespace_id).Bind(2, after_namespace_id).Bind(3, after_id).Bind(4, int64_t{limit});
    return Rows(q);
  }

 private:
  SqliteDb& db_;
};

}  // namespace

std::unique_ptr<ScheduleStore> NewSqliteScheduleStore(SqliteDb& db) {
  return std::make_unique<SqliteScheduleStore>(db);
}

}  // namespace tock::persistence
