// Timers of the timer service on PostgreSQL. A batch of writes is one transaction (READ
// COMMITTED) of two round trips: the fence of every shard it touches (the shard's row FOR
// SHARE, so a steal's exclusive lock waits for this transaction and every write after the
// steal reads the new range id), then the writes whose fence held, each a compare-and-swap
// on the row's revision, in one pipeline.
#include <map>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/execution_store.h"
#include "server-core/persistence/postgres/pg_stores.h"
#include "server-core/persistence/timer_store.h"

namespace tock::persistence {
namespace {

constexpr char kColumns[] = "namespace_id, timer_id, shard_id, revision, due_ms, record";

absl::StatusOr<std::vector<StoredTimer>> Rows(absl::StatusOr<PgResult> r) {
  if (!r.ok()) return r.status();
  std::vector<StoredTimer> out;
  out.reserve(static_cast<size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) {
    StoredTimer& t = out.emplace_back();
    t.namespace_id = r->Text(i, 0);
    t.timer_id = r->Text(i, 1);
    t.shard_id = static_cast<int32_t>(r->Int(i, 2));
    t.revision = r->Int(i, 3);
    t.due = r->IsNull(i, 4) ? absl::InfiniteFuture() : TimerDueFromMillis(r->Int(i, 4));
    const std::string_view bytes = r->View(i, 5);
    if (!t.record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      return absl::DataLossError("a stored timer cannot be parsed");
    }
  }
  return out;
}

PgParam Due(absl::Time due) {
  return due == absl::InfiniteFuture() ? PgParam::Null() : PgParam::Int(TimerDueMillis(due));
}

class PgTimerStore : public TimerStore {
 public:
  explicit PgTimerStore(PgPool& pool) : pool_(pool) {}

  std::vector<absl::Status> Write(std::vector<TimerWrite>& writes) override {
    std::vector<absl::Status> out(writes.size());
    if (writes.empty()) return out;
    absl::Status s = pool_.InTransaction([&](PgConn& conn) -> absl::Status {
      // Round trip 1: the fences, in shard order (every writer locks shards in the same
      // order, so two batches cannot deadlock on them).
      std::map<int32_t, int64_t> ranges;
      for (const TimerWrite& w : writes) ranges.emplace(w.timer.shard_id, -1);
      std::vector<PgStatement> fences;
      for (const auto& [shard, range] : ranges) {
        fences.push_back(PgStatement{"SELECT range_id FROM shards WHERE shard_id = $1 FOR SHARE",
                                     {PgParam::Int(shard)}});
      }
      std::vector<absl::StatusOr<PgResult>> fenced = conn.Pipeline(fences);
      size_t f = 0;
      for (auto& [shard, range] : ranges) {
        if (!fenced[f].ok()) return fenced[f].status();
        if (fenced[f]->rows() > 0) range = fenced[f]->Int(0, 0);
        ++f;
      }
      // Round trip 2: the writes whose fence held.
      std::vector<std::string> records(writes.size());
      std::vector<PgStatement> statements;
      std::vector<size_t> index;  // statements[k] writes writes[index[k]]
      for (size_t i = 0; i < writes.size(); ++i) {
        TimerWrite& w = writes[i];
        const StoredTimer& t = w.timer;
        if (ranges[t.shard_id] != w.range_id) {
          out[i] = FencedOut(w);
          continue;
        }
        if (w.remove) {
          statements.push_back(PgStatement{
              "DELETE FROM timers WHERE namespace_id = $1 AND timer_id = $2 AND revision = $3 "
              "RETURNING 1",
              {PgParam::Text(t.namespace_id), PgParam::Text(t.timer_id),
               PgParam::Int(w.expected_revision)}});
          index.push_back(i);
          continue;
        }
        if (absl::Status misused = CheckAttemptRecord(w); !misused.ok()) {
          out[i] = misused;
          continue;
        }
        records[i] = t.record.SerializeAsString();
        const int listed = ListedState(t.record.state());
        if (w.expected_revision == 0) {
          statements.push_back(PgStatement{
              "INSERT INTO timers(namespace_id, timer_id, shard_id, revision, state, "
              "listed_state, due_ms, record) VALUES ($1, $2, $3, 1, $4, $5, $6, $7) "
              "ON CONFLICT DO NOTHING RETURNING 1",
              {PgParam::Text(t.namespace_id), PgParam::Text(t.timer_id), PgParam::Int(t.shard_id),
               PgParam::Int(t.record.state()), PgParam::Int(listed), Due(t.due),
               PgParam::Bytes(records[i])}});
        } else if (w.attempt) {
          // No indexed column changes: PostgreSQL can make it a HOT update (no index entries).
          statements.push_back(PgStatement{
              "UPDATE timers SET revision = $1, state = $2, record = $3 "
              "WHERE namespace_id = $4 AND timer_id = $5 AND revision = $6 RETURNING 1",
              {PgParam::Int(w.expected_revision + 1), PgParam::Int(t.record.state()),
               PgParam::Bytes(records[i]), PgParam::Text(t.namespace_id),
               PgParam::Text(t.timer_id), PgParam::Int(w.expected_revision)}});
        } else {
          statements.push_back(PgStatement{
              "UPDATE timers SET revision = $1, state = $2, listed_state = $3, due_ms = $4, "
              "record = $5 WHERE namespace_id = $6 AND timer_id = $7 AND revision = $8 RETURNING 1",
              {PgParam::Int(w.expected_revision + 1), PgParam::Int(t.record.state()),
               PgParam::Int(listed), Due(t.due), PgParam::Bytes(records[i]),
               PgParam::Text(t.namespace_id), PgParam::Text(t.timer_id),
               PgParam::Int(w.expected_revision)}});
        }
        index.push_back(i);
      }
      if (statements.empty()) return absl::OkStatus();
      std::vector<absl::StatusOr<PgResult>> written = conn.Pipeline(statements);
      for (size_t k = 0; k < written.size(); ++k) {
        if (!written[k].ok()) return written[k].status();
        TimerWrite& w = writes[index[k]];
        if (written[k]->rows() == 0) {
          out[index[k]] = ChangedConcurrently(w);
        } else if (!w.remove) {
          w.timer.revision = w.expected_revision + 1;
        }
      }
      return absl::OkStatus();
    });
    if (!s.ok()) {
      for (absl::Status& o : out) o = s;
    }
    return out;
  }

  absl::StatusOr<StoredTimer> Get(const std::string& namespace_id,
                                  const std::string& timer_id) override {
    absl::StatusOr<std::vector<StoredTimer>> found = Rows(pool_.Query(
        absl::StrCat("SELECT ", kColumns, " FROM timers WHERE namespace_id = $1 AND timer_id = $2"),
        {PgParam::Text(namespace_id), PgParam::Text(timer_id)}));
    if (!found.ok()) return found.status();
    if (found->empty()) return absl::NotFoundError("no such timer");
    return std::move(found->front());
  }

  absl::StatusOr<std::vector<StoredTimer>> List(const std::string& namespace_id,
                                                const std::string& after_id, int state,
                                                int32_t limit) override {
    if (state == 0) {
      return Rows(pool_.Query(
          absl::StrCat("SELECT ", kColumns,
                       " FROM timers WHERE namespace_id = $1 AND timer_id > $2 "
                       "ORDER BY timer_id LIMIT $3"),
          {PgParam::Text(namespace_id), PgParam::Text(after_id), PgParam::Int(limit)}));
    }
    return Rows(pool_.Query(
        absl::StrCat("SELECT ", kColumns,
                     " FROM timers WHERE namespace_id = $1 AND listed_state = $2 AND state = $3 "
                     "AND timer_id > $4 ORDER BY timer_id LIMIT $5"),
        {PgParam::Text(namespace_id), PgParam::Int(ListedState(state)), PgParam::Int(state),
         PgParam::Text(after_id), PgParam::Int(limit)}));
  }

  absl::StatusOr<std::vector<StoredTimer>> LoadDue(int32_t shard_id, const TimerDueCursor& after,
                                                   absl::Time until, int32_t limit) override {
    return Rows(pool_.Query(
        absl::StrCat("SELECT ", kColumns,
                     " FROM timers WHERE shard_id = $1 AND due_ms IS NOT NULL AND due_ms < $2 "
                     "AND (due_ms, namespace_id, timer_id) > ($3, $4, $5) "
                     "ORDER BY due_ms, namespace_id, timer_id LIMIT $6"),
        {PgParam::Int(shard_id), PgParam::Int(TimerDueMillis(until)),
         PgParam::Int(TimerDueMillis(after.due)), PgParam::Text(after.namespace_id),
         PgParam::Text(after.timer_id), PgParam::Int(limit)}));
  }

 private:
  PgPool& pool_;
};

}  // namespace

std::unique_ptr<TimerStore> NewPostgresTimerStore(PgPool& pool) {
  return std::make_unique<PgTimerStore>(pool);
}

}  // namespace tock::persistence
