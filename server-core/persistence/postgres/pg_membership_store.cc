// Membership on PostgreSQL: the statements of sqlite_membership_store.cc, with the
// database's clock read as clock_timestamp() so that every host measures heartbeat ages on
// the same clock, whatever its own says.
#include "absl/strings/str_cat.h"
#include "server-core/persistence/membership_store.h"
#include "server-core/persistence/postgres/pg_stores.h"

namespace tock::persistence {
namespace {

constexpr char kNowMs[] = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

class PgMembershipStore : public MembershipStore {
 public:
  explicit PgMembershipStore(PgPool& pool) : pool_(pool) {}

  absl::Status Heartbeat(const std::string& host_id, const std::string& address,
                         absl::Time session_start) override {
    return pool_
        .Query(absl::StrCat(
                   "INSERT INTO cluster_membership(host_id, address, session_start_ms, "
                   "last_heartbeat_ms) VALUES ($1, $2, $3, ", kNowMs,
                   ") ON CONFLICT (host_id) DO UPDATE SET address = EXCLUDED.address, "
                   "last_heartbeat_ms = EXCLUDED.last_heartbeat_ms"),
               {PgParam::Text(host_id), PgParam::Text(address),
                PgParam::Int(absl::ToUnixMillis(session_start))})
        .status();
  }

  absl::StatusOr<std::vector<HostRecord>> ListHosts(absl::Duration forget_after) override {
    absl::StatusOr<PgPool::Lease> lease = pool_.Acquire();
    if (!lease.ok()) return lease.status();
    absl::StatusOr<PgResult> forget = (*lease)->Query(
        absl::StrCat("DELETE FROM cluster_membership WHERE last_heartbeat_ms < ", kNowMs,
                     " - $1"),
        {PgParam::Int(absl::ToInt64Milliseconds(forget_after))});
    if (!forget.ok()) return forget.status();
    absl::StatusOr<PgResult> q = (*lease)->Query(absl::StrCat(
        "SELECT host_id, address, session_start_ms, last_heartbeat_ms, ", kNowMs,
        " - last_heartbeat_ms FROM cluster_membership ORDER BY last_heartbeat_ms DESC, "
        "host_id"));
    if (!q.ok()) return q.status();
    std::vector<HostRecord> hosts;
    for (int i = 0; i < q->rows(); ++i) {
      HostRecord& h = hosts.emplace_back();
      h.host_id = q->Text(i, 0);
      h.address = q->Text(i, 1);
      h.session_start = absl::FromUnixMillis(q->Int(i, 2));
      h.last_heartbeat = absl::FromUnixMillis(q->Int(i, 3));
      h.heartbeat_age = absl::Milliseconds(q->Int(i, 4));
    }
    return hosts;
  }

  absl::Status Leave(const std::string& host_id) override {
    return pool_
        .Query("DELETE FROM cluster_membership WHERE host_id = $1", {PgParam::Text(host_id)})
        .status();
  }

  absl::StatusOr<std::vector<ShardRecord>> ListShards() override {
    absl::StatusOr<PgResult> q =
        pool_.Query("SELECT shard_id, range_id, owner, claimed_ms FROM shards ORDER BY shard_id");
    if (!q.ok()) return q.status();
    std::vector<ShardRecord> shards;
    for (int i = 0; i < q->rows(); ++i) {
      ShardRecord& s = shards.emplace_back();
      s.shard_id = static_cast<int32_t>(q->Int(i, 0));
      s.range_id = q->Int(i, 1);
      s.owner = q->Text(i, 2);
      s.claimed = absl::FromUnixMillis(q->Int(i, 3));
    }
    return shards;
  }

 private:
  PgPool& pool_;
};

}  // namespace

std::unique_ptr<MembershipStore> NewPostgresMembershipStore(PgPool& pool) {
  return std::make_unique<PgMembershipStore>(pool);
}

}  // namespace tock::persistence
