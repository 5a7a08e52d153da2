// Membership on SQLite. A SQLite database serves one tock-server process (a second one is
// refused at open), so this table holds that host's row and those of its earlier runs; it
// exists so that `tock cluster members` and `shards` answer the same on every backend.
#include "absl/strings/str_cat.h"
#include "server-core/persistence/membership_store.h"
#include "server-core/persistence/sqlite/sqlite_stores.h"

namespace tock::persistence {
namespace {

// The database's now in milliseconds (julianday keeps milliseconds; strftime('%s') does not).
constexpr char kNowMs[] = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";

class SqliteMembershipStore : public MembershipStore {
 public:
  explicit SqliteMembershipStore(SqliteDb& db) : db_(db) {}

  absl::Status Heartbeat(const std::string& host_id, const std::string& address,
                         absl::Time session_start) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(upsert, db_.Prepare(absl::StrCat(
        "INSERT INTO cluster_membership(host_id, address, session_start_ms, last_heartbeat_ms) "
        "VALUES (?, ?, ?, ", kNowMs, ") ON CONFLICT(host_id) DO UPDATE SET "
        "address = excluded.address, last_heartbeat_ms = excluded.last_heartbeat_ms")));
    return upsert.Bind(1, host_id)
        .Bind(2, address)
        .Bind(3, absl::ToUnixMillis(session_start))
        .Run();
  }

  absl::StatusOr<std::vector<HostRecord>> ListHosts(absl::Duration forget_after) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(forget, db_.Prepare(absl::StrCat(
        "DELETE FROM cluster_membership WHERE last_heartbeat_ms < ", kNowMs, " - ?")));
    RETURN_IF_ERROR(forget.Bind(1, absl::ToInt64Milliseconds(forget_after)).Run());
    ASSIGN_STMT(q, db_.Prepare(absl::StrCat(
        "SELECT host_id, address, session_start_ms, last_heartbeat_ms, ", kNowMs,
        " - last_heartbeat_ms FROM cluster_membership ORDER BY last_heartbeat_ms DESC, host_id")));
    std::vector<HostRecord> hosts;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      HostRecord& h = hosts.emplace_back();
      h.host_id = q.Text(0);
      h.address = q.Text(1);
      h.session_start = absl::FromUnixMillis(q.Int(2));
      h.last_heartbeat = absl::FromUnixMillis(q.Int(3));
      h.heartbeat_age = absl::Milliseconds(q.Int(4));
      return absl::OkStatus();
    }));
    return hosts;
  }

  absl::Status Leave(const std::string& host_id) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(del, db_.Prepare("DELETE FROM cluster_membership WHERE host_id = ?"));
    return del.Bind(1, host_id).Run();
  }

  absl::StatusOr<std::vector<ShardRecord>> ListShards() override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
        "SELECT shard_id, range_id, owner, claimed_ms FROM shards ORDER BY shard_id"));
    std::vector<ShardRecord> shards;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      ShardRecord& s = shards.emplace_back();
      s.shard_id = static_cast<int32_t>(q.Int(0));
      s.range_id = q.Int(1);
      s.owner = q.Text(2);
      s.claimed = absl::FromUnixMillis(q.Int(3));
      return absl::OkStatus();
    }));
    return shards;
  }

 private:
  SqliteDb& db_;
};

}  // namespace

std::unique_ptr<MembershipStore> NewSqliteMembershipStore(SqliteDb& db) {
  return std::make_unique<SqliteMembershipStore>(db);
}

}  // namespace tock::persistence
