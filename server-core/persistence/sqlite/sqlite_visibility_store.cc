// The visibility store on SQLite: typed filters compiled to parameterised SQL (values are
// always bound, never pasted into the text).
//
// SQLite parses with a fixed stack of 100 entries (YYSTACKDEPTH) and refuses expressions
// more than 1000 deep (SQLITE_MAX_EXPR_DEPTH), so the SQL is shaped to stay far below both
// for every predicate within the limits of visibility_store.h:
//   - AND/OR chains are n-ary: a child of the same kind is spliced in, one that stands alone
//     loses its node, so parentheses appear only where AND and OR alternate;
//   - a long chain is written as groups of at most kGroup operands, nested as a balanced
//     tree, so "a AND b AND ... (2000 terms)" is 3 levels of parentheses and about 3 * kGroup
//     deep instead of 2000;
//   - in each chain the operand that needs the most parser stack comes first (Sethi-Ullman
//     ordering; AND and OR commute): the first operand of a chain costs its own parenthesis
//     only, later ones also the operand and operator before them. A thin alternating chain
//     32 levels deep then costs about one stack entry per level.
#include <algorithm>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server-core/persistence/sqlite/sqlite_stores.h"
#include "server-core/persistence/visibility_store.h"

namespace tock::persistence {
namespace {

constexpr int32_t kDefaultPageSize = 1000;
constexpr size_t kGroup = 16;
// Grammar stack entries: a condition ("substr(col, 1, ?) = ?" is the deepest); what a later
// operand of a chain adds ("expr AND"); and a parenthesis.
constexpr int kConditionCost = 4;
// A condition with a sub-select (a KeywordList's json_each) or a chain of LIKEs (a Text's
// words, written as one LIKE per word inside its own parentheses) is deeper.
constexpr int kSubqueryCost = 12;
constexpr int kLaterOperandCost = 2;
constexpr int kParenthesisCost = 1;


// A piece of WHERE clause with its parameters in placeholder order, and the parser stack it
// needs when it starts a chain (not counting its own parentheses).
struct Sql {
  std::string text;
  std::vector<VisibilityValue> params;
  int cost = kConditionCost;
  bool parenthesized = false;  // text is "( ... )"
  // The operator joining the top level of `text` (kCondition: none), so that the caller
  // knows when it needs parentheses.
  VisibilityPredicate::Kind chain = VisibilityPredicate::Kind::kCondition;
};

int StartCost(const Sql& s) { return s.cost + (s.parenthesized ? kParenthesisCost : 0); }

// UTF-8 characters in `text`: SQLite's substr() counts characters of TEXT, not bytes.
int64_t Utf8Length(const std::string& text) {
  return std::count_if(text.begin(), text.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}


// "(col LIKE ? AND col LIKE ? ...)" for a Text condition's words ("col IS NOT NULL" for none).
Sql TextMatch(const std::string& column, const std::string& value) {
  Sql out;
  out.cost = kSubqueryCost;
  const std::string normalized = NormalizeText(value);
  std::vector<std::string> likes;
  for (size_t at = 0; at + 1 < normalized.size();) {
    const size_t end = normalized.find(' ', at + 1);
    likes.push_back(absl::StrCat(column, " LIKE ?"));
    out.params.push_back(absl::StrCat("%", normalized.substr(at, end - at + 1), "%"));
    at = end;
  }
  out.text = likes.empty() ? absl::StrCat(column, " IS NOT NULL")
                           : absl::StrCat("(", absl::StrJoin(likes, " AND "), ")");
  return out;
}

// A KeywordList holds one of `values`.
Sql ListHolds(const std::string& column, const std::vector<VisibilityValue>& values) {
  Sql out;
  out.cost = kSubqueryCost;
  out.params = values;
  out.text = absl::StrCat("EXISTS (SELECT 1 FROM json_each(", column, ") WHERE value IN (?");
  for (size_t i = 1; i < values.size(); ++i) out.text += ", ?";
  out.text += "))";
  return out;
}

absl::StatusOr<Sql> CompileCondition(const VisibilityCondition& c) {
  if (absl::Status s = CheckVisibilityCondition(c); !s.ok()) return s;
  Sql out;
  out.params = c.values;
  const std::string column = VisibilityColumn(c.field, c.custom);
  if (c.op == VisibilityOp::kIsNull || c.op == VisibilityOp::kIsNotNull) {
    out.text = absl::StrCat(column, c.op == VisibilityOp::kIsNull ? " IS NULL" : " IS NOT NULL");
    return out;
  }
  if (c.field == VisibilityField::kCustom && c.custom.type == CustomType::kText) {
    Sql match = TextMatch(column, std::get<std::string>(c.values[0]));
    if (c.op == VisibilityOp::kNotEqual) {
      match.text = absl::StrCat("NOT ", match.text);
    }
    return match;
  }
  if (c.field == VisibilityField::kCustom && c.custom.type == CustomType::kKeywordList) {
    Sql holds = ListHolds(column, c.values);
    if (c.op == VisibilityOp::kNotEqual) {
      holds.text = absl::StrCat(column, " IS NOT NULL AND NOT ", holds.text);
      holds.chain = VisibilityPredicate::Kind::kAnd;
    }
    return holds;
  }
  switch (c.op) {
    case VisibilityOp::kEqual:
      out.text = absl::StrCat(column, " = ?");
      break;
    case VisibilityOp::kNotEqual:
      out.text = absl::StrCat(column, " != ?");
      break;
    case VisibilityOp::kLess:
      out.text = absl::StrCat(column, " < ?");
      break;
    case VisibilityOp::kLessOrEqual:
      out.text = absl::StrCat(column, " <= ?");
      break;
    case VisibilityOp::kGreater:
      out.text = absl::StrCat(column, " > ?");
      break;
    case VisibilityOp::kGreaterOrEqual:
      out.text = absl::StrCat(column, " >= ?");
      break;
    case VisibilityOp::kIn: {
      out.text = absl::StrCat(column, " IN (?");
      for (size_t i = 1; i < c.values.size(); ++i) out.text += ", ?";
      out.text += ")";
      break;
    }
    case VisibilityOp::kBetween:
      out.text = absl::StrCat(column, " BETWEEN ? AND ?");
      break;
    case VisibilityOp::kStartsWith:
      out.text = absl::StrCat("substr(", column, ", 1, ?) = ?");
      out.params.insert(out.params.begin(), Utf8Length(std::get<std::string>(c.values[0])));
      break;
    case VisibilityOp::kIsNull:
    case VisibilityOp::kIsNotNull:
      break;  // answered above
  }
  return out;
}

// `parts` (ordered, most costly first) joined by `op`, each parenthesized when needed.
Sql Join(std::vector<Sql> parts, VisibilityPredicate::Kind kind) {
  const char* op = kind == VisibilityPredicate::Kind::kAnd ? " AND " : " OR ";
  Sql out;
  out.cost = 0;
  out.chain = kind;
  for (size_t i = 0; i < parts.size(); ++i) {
    Sql& part = parts[i];
    out.cost = std::max(out.cost, StartCost(part) + (i == 0 ? 0 : kLaterOperandCost));
    if (i > 0) out.text += op;
    out.text += part.text;
    for (VisibilityValue& v : part.params) out.params.push_back(std::move(v));
  }
  return out;
}

Sql Parenthesize(Sql s) {
  s.text = absl::StrCat("(", s.text, ")");
  s.parenthesized = true;
  return s;
}

absl::StatusOr<Sql> Compile(const VisibilityPredicate& p, int depth);

absl::Status TooDeep() {
  return absl::InvalidArgumentError(absl::StrCat(
      "visibility filter: AND and OR nested deeper than ", kMaxVisibilityNesting, " levels"));
}

// Compiles the operands of `node` (at `depth`), splicing in those of children of the same
// kind. The depth is checked before each descent, so the recursion is bounded.
absl::Status CollectOperands(const VisibilityPredicate& node, int depth, std::vector<Sql>& out) {
  for (const VisibilityPredicate& child : node.children) {
    if (child.kind != VisibilityPredicate::Kind::kCondition && depth + 1 >= kMaxVisibilityNesting) {
      return TooDeep();
    }
    if (child.kind == node.kind) {
      if (absl::Status s = CollectOperands(child, depth + 1, out); !s.ok()) return s;
      continue;
    }
    absl::StatusOr<Sql> sql = Compile(child, depth + 1);
    if (!sql.ok()) return sql.status();
    // A chain of the other operator needs parentheses (AND binds tighter than OR, but the
    // uniform rule keeps the cost model simple).
    const bool other =
        sql->chain != VisibilityPredicate::Kind::kCondition && sql->chain != node.kind;
    out.push_back(other ? Parenthesize(std::move(*sql)) : std::move(*sql));
  }
  return absl::OkStatus();
}

absl::StatusOr<Sql> Compile(const VisibilityPredicate& p, int depth) {
  if (p.kind == VisibilityPredicate::Kind::kCondition) return CompileCondition(p.condition);
  if (depth >= kMaxVisibilityNesting) return TooDeep();
  std::vector<Sql> parts;
  if (absl::Status s = CollectOperands(p, depth, parts); !s.ok()) return s;
  if (parts.empty()) {
    Sql constant;
    constant.text = p.kind == VisibilityPredicate::Kind::kAnd ? "1" : "0";
    return constant;
  }
  if (parts.size() == 1) return std::move(parts[0]);
  std::stable_sort(parts.begin(), parts.end(),
                   [](const Sql& a, const Sql& b) { return StartCost(a) > StartCost(b); });
  // The most costly operand stays first and alone; the others are grouped, level by level,
  // until one chain of at most kGroup operands is left.
  Sql first = std::move(parts[0]);
  std::vector<Sql> rest(std::make_move_iterator(parts.begin() + 1),
                        std::make_move_iterator(parts.end()));
  while (rest.size() >= kGroup) {
    std::vector<Sql> groups;
    for (size_t i = 0; i < rest.size(); i += kGroup) {
      const size_t end = std::min(rest.size(), i + kGroup);
      std::vector<Sql> chunk(std::make_move_iterator(rest.begin() + i),
                             std::make_move_iterator(rest.begin() + end));
      groups.push_back(chunk.size() == 1 ? std::move(chunk[0])
                                         : Parenthesize(Join(std::move(chunk), p.kind)));
    }
    rest = std::move(groups);
  }
  rest.insert(rest.begin(), std::move(first));
  return Join(std::move(rest), p.kind);
}

// " AND (where)" for the filter's predicate, or "" when it matches every record.
absl::StatusOr<Sql> WhereClause(const VisibilityPredicate& predicate) {
  if (predicate.MatchesAll()) return Sql{};
  absl::StatusOr<Sql> where = Compile(predicate, 0);
  if (!where.ok()) return where.status();
  where->text = absl::StrCat(" AND (", where->text, ")");
  return where;
}

std::string OrderClause(const std::vector<VisibilityOrderKey>& keys) {
  if (keys.empty()) return "start_ms DESC, run_id DESC";
  std::vector<std::string> parts;
  for (const VisibilityOrderKey& key : keys) {
    parts.push_back(
        absl::StrCat(VisibilityColumn(key.field, key.custom), key.descending ? " DESC" : " ASC"));
  }
  return absl::StrJoin(parts, ", ");
}

int BindParams(Statement& q, int first, const std::vector<VisibilityValue>& params) {
  int index = first;
  for (const VisibilityValue& p : params) {
    std::visit([&](const auto& v) { q.Bind(index++, v); }, p);
  }
  return index;
}

// Whatever SQLite said about our SQL stays here: the text and SQLite's message about it
// would show the store's internals (and could be large). Within the limits this does not
// happen; beyond them, or on a bug, the caller learns only that the filter cannot run.
absl::Status CannotRun() {
  return absl::InvalidArgumentError(
      "invalid query: too complex for the visibility store; use fewer conditions or less "
      "nesting");
}

// A failed step: SQLite's message names the condition (busy, I/O), never the SQL text.
absl::Status StepFailed(const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat("visibility store: ", s.message()));
}

class SqliteVisibilityStore : public VisibilityStore {
 public:
  explicit SqliteVisibilityStore(SqliteDb& db) : db_(db) {}

  absl::StatusOr<VisibilityPage> List(const std::string& namespace_id,
                                      const VisibilityFilter& filter, int32_t page_size,
                                      const std::string& page_token) override {
    if (page_size <= 0) page_size = kDefaultPageSize;
    absl::StatusOr<int64_t> offset = VisibilityPageOffset(page_token);
    if (!offset.ok()) return offset.status();
    absl::StatusOr<Sql> where = WhereClause(filter.predicate);
    if (!where.ok()) return where.status();
    const std::string sql =
        absl::StrCat("SELECT info FROM visibility WHERE namespace_id = ?", where->text,
                     " ORDER BY ", OrderClause(filter.order_by), " LIMIT ? OFFSET ?");
    std::lock_guard lock(db_.mutex());
    absl::StatusOr<Statement*> prepared = db_.PrepareDynamic(sql);
    if (!prepared.ok()) return CannotRun();
    Statement& q = **prepared;
    q.Bind(1, namespace_id);
    int next = BindParams(q, 2, where->params);
    q.Bind(next, int64_t{page_size} + 1);
    q.Bind(next + 1, *offset);
    VisibilityPage page;
    absl::Status read = q.ForEachRow([&] {
      page.executions.push_back(q.Blob(0));
      return absl::OkStatus();
    });
    if (!read.ok()) return StepFailed(read);
    if (page.executions.size() > static_cast<size_t>(page_size)) {
      page.executions.pop_back();
      page.next_page_token = VisibilityPageToken(*offset + page_size);
    }
    return page;
  }

  absl::StatusOr<int64_t> Count(const std::string& namespace_id,
                                const VisibilityPredicate& predicate) override {
    absl::StatusOr<Sql> where = WhereClause(predicate);
    if (!where.ok()) return where.status();
    const std::string sql =
        absl::StrCat("SELECT COUNT(*) FROM visibility WHERE namespace_id = ?", where->text);
    std::lock_guard lock(db_.mutex());
    absl::StatusOr<Statement*> prepared = db_.PrepareDynamic(sql);
    if (!prepared.ok()) return CannotRun();
    Statement& q = **prepared;
    q.Bind(1, namespace_id);
    BindParams(q, 2, where->params);
    absl::StatusOr<bool> row = q.Step();
    if (!row.ok()) {
      q.Reset();
      return StepFailed(row.status());
    }
    int64_t count = q.Int(0);
    q.Reset();
    return count;
  }

  absl::StatusOr<std::vector<std::pair<int, int64_t>>> CountByStatus(
      const std::string& namespace_id, const VisibilityPredicate& predicate) override {
    absl::StatusOr<Sql> where = WhereClause(predicate);
    if (!where.ok()) return where.status();
    const std::string sql =
        absl::StrCat("SELECT status, COUNT(*) FROM visibility WHERE namespace_id = ?",
                     where->text, " GROUP BY status ORDER BY status");
    std::lock_guard lock(db_.mutex());
    absl::StatusOr<Statement*> prepared = db_.PrepareDynamic(sql);
    if (!prepared.ok()) return CannotRun();
    Statement& q = **prepared;
    q.Bind(1, namespace_id);
    BindParams(q, 2, where->params);
    std::vector<std::pair<int, int64_t>> groups;
    absl::Status read = q.ForEachRow([&] {
      groups.emplace_back(static_cast<int>(q.Int(0)), q.Int(1));
      return absl::OkStatus();
    });
    if (!read.ok()) return StepFailed(read);
    return groups;
  }

  absl::StatusOr<std::vector<temporal::api::workflow::v1::WorkflowExecutionInfo>> ListClosedBefore(
      const std::string& namespace_id, absl::Time closed_before, const ClosedRunCursor& after,
      int32_t limit) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(
        q, db_.Prepare(
               "SELECT info FROM visibility WHERE namespace_id = ? AND close_ms IS NOT NULL AND "
               "close_ms < ? AND (close_ms, run_id) > (?, ?) AND NOT EXISTS (SELECT 1 FROM "
               "archival_queue a WHERE a.namespace_id = visibility.namespace_id AND a.run_id = "
               "visibility.run_id AND a.run_deleted = 0) "
               "ORDER BY close_ms ASC, run_id ASC LIMIT ?"));
    q.Bind(1, namespace_id).Bind(2, absl::ToUnixMillis(closed_before)).Bind(3, after.close_ms);
    q.Bind(4, after.run_id).Bind(5, int64_t{limit});
    std::vector<temporal::api::workflow::v1::WorkflowExecutionInfo> runs;
    absl::Status read = q.ForEachRow([&] {
      return runs.emplace_back().ParseFromString(q.Blob(0))
                 ? absl::OkStatus()
                 : absl::DataLossError("a stored visibility record cannot be parsed");
    });
    if (!read.ok()) return StepFailed(read);
    return runs;
  }

 private:
  SqliteDb& db_;
};

}  // namespace

std::unique_ptr<VisibilityStore> NewSqliteVisibilityStore(SqliteDb& db) {
  return std::make_unique<SqliteVisibilityStore>(db);
}

}  // namespace tock::persistence
