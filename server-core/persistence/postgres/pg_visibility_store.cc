// The visibility store on PostgreSQL: typed filters (visibility_store.h) compiled to SQL
// whose values are all bound parameters ($n), never spliced into the text; the only text
// that varies is made of fixed column names, operators and placeholders.
//
// Semantics follow the SQLite store exactly:
//   - text compares byte-wise: the visibility columns are COLLATE "C" (pg_schema.cc), which
//     a bound text parameter takes on from the column it is compared with;
//   - an absent close time is NULL, so every condition on it is NULL, which WHERE treats as
//     false; with only AND and OR (no NOT) that is the contract's "every condition on it is
//     false";
//   - order: SQLite sorts NULL below every value, so an absent close time comes first in
//     ascending order and last in descending order; PostgreSQL's default is the opposite,
//     so a close-time key says NULLS FIRST/LAST explicitly;
//   - paging by offset, with run_id appended as the last key when the filter's order does
//     not already end the ties (PostgreSQL, unlike SQLite, may return tied rows in another
//     order from one query to the next, which would repeat or skip rows across pages).
//
// Bounds: PostgreSQL's parser flattens AND/OR chains and has no SQLite-like fixed parser
// stack, so the limits of visibility_store.h are enforced here directly: nesting deeper than
// kMaxVisibilityNesting and more than kMaxVisibilityConditions conditions are refused, which
// also keeps the parameters far below the protocol's 65,535.
#include <algorithm>
#include <deque>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "server-core/persistence/postgres/pg_stores.h"
#include "server-core/persistence/visibility_store.h"

namespace tock::persistence {
namespace {

constexpr int32_t kDefaultPageSize = 1000;



// Builds the WHERE text and its parameters. The parameters view the filter's values, which
// outlive the query.
class Compiler {
 public:
  explicit Compiler(int first_placeholder) : next_(first_placeholder) {}

  absl::Status Compile(const VisibilityPredicate& p, int depth, std::string& out) {
    if (p.kind == VisibilityPredicate::Kind::kCondition) return Condition(p.condition, out);
    if (depth >= kMaxVisibilityNesting) {
      return absl::InvalidArgumentError(absl::StrCat(
          "visibility filter: AND and OR nested deeper than ", kMaxVisibilityNesting, " levels"));
    }
    const bool is_and = p.kind == VisibilityPredicate::Kind::kAnd;
    if (p.children.empty()) {
      out += is_and ? "TRUE" : "FALSE";
      return absl::OkStatus();
    }
    out += '(';
    for (size_t i = 0; i < p.children.size(); ++i) {
      if (i > 0) out += is_and ? " AND " : " OR ";
      if (absl::Status s = Compile(p.children[i], depth + 1, out); !s.ok()) return s;
    }
    out += ')';
    return absl::OkStatus();
  }

  std::vector<PgParam>& params() { return params_; }

 private:
  absl::Status Condition(const VisibilityCondition& c, std::string& out) {
    conditions_ += c.op == VisibilityOp::kIn ? static_cast<int>(c.values.size()) : 1;
    if (conditions_ > kMaxVisibilityConditions) {
      return absl::InvalidArgumentError(
          absl::StrCat("visibility filter: more than ", kMaxVisibilityConditions, " conditions"));
    }
    if (absl::Status s = CheckVisibilityCondition(c); !s.ok()) return s;
    const std::string column = VisibilityColumn(c.field, c.custom);
    if (c.op == VisibilityOp::kIsNull || c.op == VisibilityOp::kIsNotNull) {
      absl::StrAppend(&out, column, c.op == VisibilityOp::kIsNull ? " IS NULL" : " IS NOT NULL");
      return absl::OkStatus();
    }
    const bool negated = c.op == VisibilityOp::kNotEqual;
    if (c.field == VisibilityField::kCustom && c.custom.type == CustomType::kText) {
      // Every word of the value found as " word " in the normalized column.
      const std::string normalized = NormalizeText(std::get<std::string>(c.values[0]));
      std::vector<std::string> likes;
      for (size_t at = 0; at + 1 < normalized.size();) {
        const size_t end = normalized.find(' ', at + 1);
        likes.push_back(absl::StrCat(
            column, " LIKE ", Owned(absl::StrCat("%", normalized.substr(at, end - at + 1), "%"))));
        at = end;
      }
      const std::string match = likes.empty() ? absl::StrCat(column, " IS NOT NULL")
                                              : absl::StrCat("(", absl::StrJoin(likes, " AND "), ")");
      absl::StrAppend(&out, negated ? "NOT " : "", match);
      return absl::OkStatus();
    }
    if (c.field == VisibilityField::kCustom && c.custom.type == CustomType::kKeywordList) {
      if (negated) absl::StrAppend(&out, "(", column, " IS NOT NULL AND NOT ");
      absl::StrAppend(&out, "EXISTS (SELECT 1 FROM jsonb_array_elements_text(", column,
                      ") AS e(v) WHERE e.v IN (");
      for (size_t i = 0; i < c.values.size(); ++i) {
        if (i > 0) out += ", ";
        out += Placeholder(c.values[i]);
      }
      out += negated ? ")))" : "))";
      return absl::OkStatus();
    }
    switch (c.op) {
      case VisibilityOp::kEqual:
        return Binary(column, " = ", c.values[0], out);
      case VisibilityOp::kNotEqual:
        return Binary(column, " <> ", c.values[0], out);
      case VisibilityOp::kLess:
        return Binary(column, " < ", c.values[0], out);
      case VisibilityOp::kLessOrEqual:
        return Binary(column, " <= ", c.values[0], out);
      case VisibilityOp::kGreater:
        return Binary(column, " > ", c.values[0], out);
      case VisibilityOp::kGreaterOrEqual:
        return Binary(column, " >= ", c.values[0], out);
      case VisibilityOp::kIn:
        absl::StrAppend(&out, column, " IN (");
        for (size_t i = 0; i < c.values.size(); ++i) {
          if (i > 0) out += ", ";
          out += Placeholder(c.values[i]);
        }
        out += ')';
        return absl::OkStatus();
      case VisibilityOp::kBetween:
        absl::StrAppend(&out, column, " BETWEEN ", Placeholder(c.values[0]), " AND ",
                        Placeholder(c.values[1]));
        return absl::OkStatus();
      case VisibilityOp::kStartsWith:
        // starts_with compares characters of the UTF-8 text, as SQLite's substr() does.
        absl::StrAppend(&out, "starts_with(", column, ", ", Placeholder(c.values[0]), ")");
        return absl::OkStatus();
      case VisibilityOp::kIsNull:
      case VisibilityOp::kIsNotNull:
        break;  // answered above
    }
    return absl::InvalidArgumentError("visibility filter: unknown operator");
  }

  absl::Status Binary(const std::string& column, const char* op, const VisibilityValue& v,
                      std::string& out) {
    absl::StrAppend(&out, column, op, Placeholder(v));
    return absl::OkStatus();
  }

  std::string Placeholder(const VisibilityValue& v) {
    if (const auto* s = std::get_if<std::string>(&v)) {
      params_.push_back(PgParam::Text(*s));
    } else if (const auto* d = std::get_if<double>(&v)) {
      // Sent as text (exact: 17 significant digits) and cast by the server.
      owned_.push_back(absl::StrFormat("%.17g", *d));
      params_.push_back(PgParam::Text(owned_.back()));
      return absl::StrCat("$", next_++, "::double precision");
    } else {
      params_.push_back(PgParam::Int(std::get<int64_t>(v)));
    }
    return absl::StrCat("$", next_++);
  }

  // A text parameter made here (a LIKE pattern): kept as long as the compiler.
  std::string Owned(std::string text) {
    owned_.push_back(std::move(text));
    params_.push_back(PgParam::Text(owned_.back()));
    return absl::StrCat("$", next_++);
  }

  int next_;
  int conditions_ = 0;
  std::vector<PgParam> params_;
  std::deque<std::string> owned_;  // stable addresses: the params view them
};

std::string OrderClause(const std::vector<VisibilityOrderKey>& keys) {
  if (keys.empty()) return "start_ms DESC, run_id DESC";
  std::vector<std::string> parts;
  bool has_run_id = false;
  for (const VisibilityOrderKey& key : keys) {
    has_run_id = has_run_id || key.field == VisibilityField::kRunId;
    // Only the close time can be NULL; the other keys keep PostgreSQL's default NULLS
    // placement, which is what an index on them is ordered by.
    const bool nullable =
        key.field == VisibilityField::kCloseTime || key.field == VisibilityField::kCustom;
    parts.push_back(absl::StrCat(VisibilityColumn(key.field, key.custom), key.descending ? " DESC" : " ASC",
                                 !nullable        ? ""
                                 : key.descending ? " NULLS LAST"
                                                  : " NULLS FIRST"));
  }
  if (!has_run_id) parts.push_back("run_id DESC");
  return absl::StrJoin(parts, ", ");
}

// What PostgreSQL said about a filter's statement stays here (its messages can quote the
// statement's parts); within the limits this does not happen. Losing the database, a
// timeout or a serialization failure keep their codes, so callers can retry.
absl::Status QueryFailed(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kDeadlineExceeded:
      return absl::Status(s.code(), absl::StrCat("visibility store: ", s.message()));
    default:
      return absl::InvalidArgumentError(
          "invalid query: too complex for the visibility store; use fewer conditions or less "
          "nesting");
  }
}

template <typename Message>
absl::Status ParseAll(const PgResult& r, int rows, std::vector<Message>& out) {
  for (int i = 0; i < rows; ++i) {
    const std::string_view bytes = r.View(i, 0);
    if (!out.emplace_back().ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      return absl::DataLossError("a stored visibility record cannot be parsed");
    }
  }
  return absl::OkStatus();
}

class PgVisibilityStore : public VisibilityStore {
 public:
  explicit PgVisibilityStore(PgPool& pool) : pool_(pool) {}

  absl::StatusOr<VisibilityPage> List(const std::string& namespace_id,
                                      const VisibilityFilter& filter, int32_t page_size,
                                      const std::string& page_token) override {
    if (page_size <= 0) page_size = kDefaultPageSize;
    absl::StatusOr<int64_t> offset = VisibilityPageOffset(page_token);
    if (!offset.ok()) return offset.status();
    Compiler compiler(2);
    std::string where;
    if (!filter.predicate.MatchesAll()) {
      where = " AND ";
      if (absl::Status s = compiler.Compile(filter.predicate, 0, where); !s.ok()) return s;
    }
    std::vector<PgParam>& params = compiler.params();
    const int limit_at = static_cast<int>(params.size()) + 2;
    const std::string sql =
        absl::StrCat("SELECT info FROM visibility WHERE namespace_id = $1", where, " ORDER BY ",
                     OrderClause(filter.order_by), " LIMIT $", limit_at, " OFFSET $", limit_at + 1);
    params.insert(params.begin(), PgParam::Text(namespace_id));
    params.push_back(PgParam::Int(int64_t{page_size} + 1));
    params.push_back(PgParam::Int(*offset));
    absl::StatusOr<PgResult> r = Run(sql, params);
    if (!r.ok()) return r.status();
    VisibilityPage page;
    const int rows = std::min(r->rows(), page_size);
    for (int i = 0; i < rows; ++i) page.executions.emplace_back(r->View(i, 0));
    if (r->rows() > page_size) page.next_page_token = VisibilityPageToken(*offset + page_size);
    return page;
  }

  absl::StatusOr<int64_t> Count(const std::string& namespace_id,
                                const VisibilityPredicate& predicate) override {
    Compiler compiler(2);
    std::string where;
    if (!predicate.MatchesAll()) {
      where = " AND ";
      if (absl::Status s = compiler.Compile(predicate, 0, where); !s.ok()) return s;
    }
    std::vector<PgParam>& params = compiler.params();
    params.insert(params.begin(), PgParam::Text(namespace_id));
    absl::StatusOr<PgResult> r =
        Run(absl::StrCat("SELECT COUNT(*) FROM visibility WHERE namespace_id = $1", where), params);
    if (!r.ok()) return r.status();
    return r->Int(0, 0);
  }

  absl::StatusOr<std::vector<std::pair<int, int64_t>>> CountByStatus(
      const std::string& namespace_id, const VisibilityPredicate& predicate) override {
    Compiler compiler(2);
    std::string where;
    if (!predicate.MatchesAll()) {
      where = " AND ";
      if (absl::Status s = compiler.Compile(predicate, 0, where); !s.ok()) return s;
    }
    std::vector<PgParam>& params = compiler.params();
    params.insert(params.begin(), PgParam::Text(namespace_id));
    absl::StatusOr<PgResult> r =
        Run(absl::StrCat("SELECT status, COUNT(*) FROM visibility WHERE namespace_id = $1", where,
                         " GROUP BY status ORDER BY status"),
            params);
    if (!r.ok()) return r.status();
    std::vector<std::pair<int, int64_t>> groups;
    for (int i = 0; i < r->rows(); ++i) {
      groups.emplace_back(static_cast<int>(r->Int(i, 0)), r->Int(i, 1));
    }
    return groups;
  }

  absl::StatusOr<std::vector<temporal::api::workflow::v1::WorkflowExecutionInfo>> ListClosedBefore(
      const std::string& namespace_id, absl::Time closed_before, const ClosedRunCursor& after,
      int32_t limit) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "SELECT info FROM visibility v WHERE v.namespace_id = $1 AND v.close_ms IS NOT NULL AND "
        "v.close_ms < $2 AND (v.close_ms, v.run_id) > ($4::bigint, $5::text) AND NOT EXISTS "
        "(SELECT 1 FROM archival_queue a WHERE a.namespace_id = v.namespace_id AND "
        "a.run_id = v.run_id AND a.run_deleted = 0) "
        "ORDER BY v.close_ms ASC, v.run_id ASC LIMIT $3",
        {PgParam::Text(namespace_id), PgParam::Int(absl::ToUnixMillis(closed_before)),
         PgParam::Int(std::max(limit, 0)), PgParam::Int(after.close_ms),
         PgParam::Text(after.run_id)});
    if (!r.ok())
      return absl::Status(r.status().code(),
                          absl::StrCat("visibility store: ", r.status().message()));
    std::vector<temporal::api::workflow::v1::WorkflowExecutionInfo> runs;
    if (absl::Status s = ParseAll(*r, r->rows(), runs); !s.ok()) return s;
    return runs;
  }

 private:
  // A filter's statement is built at run time: run unprepared, so that the per-connection
  // statement cache holds only the stores' fixed statements.
  absl::StatusOr<PgResult> Run(const std::string& sql, const std::vector<PgParam>& params) {
    absl::StatusOr<PgResult> r = absl::UnknownError("not run");
    absl::Status s = pool_.WithConnection([&](PgConn& conn) {
      r = conn.QueryOnce(sql, params);
      return r.status();
    });
    if (!s.ok()) return QueryFailed(s);
    return r;
  }

  PgPool& pool_;
};

}  // namespace

std::unique_ptr<VisibilityStore> NewPostgresVisibilityStore(PgPool& pool) {
  return std::make_unique<PgVisibilityStore>(pool);
}

}  // namespace tock::persistence
