#include <variant>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/sqlite/sqlite_stores.h"
#include "server-core/persistence/visibility_store.h"

namespace tock::persistence {
namespace {

constexpr int32_t kDefaultPageSize = 1000;

void BindFilter(Statement& q, int first, const VisibilityFilter& filter) {
  int index = first;
  for (const auto& p : filter.params) {
    if (std::holds_alternative<int64_t>(p)) {
      q.Bind(index++, std::get<int64_t>(p));
    } else {
      q.Bind(index++, std::get<std::string>(p));
    }
  }
}

class SqliteVisibilityStore : public VisibilityStore {
 public:
  explicit SqliteVisibilityStore(SqliteDb& db) : db_(db) {}

  absl::StatusOr<VisibilityPage> List(const std::string& namespace_id,
                                      const VisibilityFilter& filter, int32_t page_size,
                                      const std::string& page_token) override {
    if (page_size <= 0) page_size = kDefaultPageSize;
    int64_t offset = 0;
    if (!page_token.empty()) {
      try {
        offset = std::stoll(page_token);
      } catch (...) {
        return absl::InvalidArgumentError("the next_page_token is not one this server issued");
      }
    }
    std::string sql = absl::StrCat(
        "SELECT info, status, close_ms FROM visibility WHERE namespace_id = ?",
        filter.where.empty() ? "" : absl::StrCat(" AND (", filter.where, ")"), " ORDER BY ",
        filter.order_by.empty() ? "start_ms DESC, run_id DESC" : filter.order_by,
        " LIMIT ? OFFSET ?");
    std::lock_guard lock(db_.mutex());
    auto prepared = db_.Prepare(sql);
    if (!prepared.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("invalid query: ", prepared.status().message()));
    }
    Statement& q = **prepared;
    q.Bind(1, namespace_id);
    BindFilter(q, 2, filter);
    q.Bind(static_cast<int>(filter.params.size()) + 2, int64_t{page_size} + 1);
    q.Bind(static_cast<int>(filter.params.size()) + 3, offset);
    VisibilityPage page;
    absl::Status read = q.ForEachRow([&] {
      return page.executions.emplace_back().ParseFromString(q.Blob(0))
                 ? absl::OkStatus()
                 : absl::DataLossError("a stored visibility record cannot be parsed");
    });
    if (!read.ok()) return read;
    if (page.executions.size() > static_cast<size_t>(page_size)) {
      page.executions.pop_back();
      page.next_page_token = std::to_string(offset + page_size);
    }
    return page;
  }

  absl::StatusOr<int64_t> Count(const std::string& namespace_id,
                                const VisibilityFilter& filter) override {
    std::string sql = absl::StrCat(
        "SELECT COUNT(*) FROM visibility WHERE namespace_id = ?",
        filter.where.empty() ? "" : absl::StrCat(" AND (", filter.where, ")"));
    std::lock_guard lock(db_.mutex());
    auto prepared = db_.Prepare(sql);
    if (!prepared.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("invalid query: ", prepared.status().message()));
    }
    Statement& q = **prepared;
    q.Bind(1, namespace_id);
    BindFilter(q, 2, filter);
    auto row = q.Step();
    if (!row.ok()) return row.status();
    int64_t count = q.Int(0);
    q.Reset();
    return count;
  }

 private:
  SqliteDb& db_;
};

}  // namespace

std::unique_ptr<VisibilityStore> NewSqliteVisibilityStore(SqliteDb& db) {
  return std::make_unique<SqliteVisibilityStore>(db);
}

}  // namespace tock::persistence
