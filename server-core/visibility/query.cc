#include "server-core/visibility/query.h"

#include <cctype>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "lib/common/time_format.h"

namespace tock::server::visibility {
namespace {

enum class FieldKind { kText, kStatus, kTime };

struct Field {
  const char* column;
  FieldKind kind;
};

const std::map<std::string, Field>& Fields() {
  static const auto* fields = new std::map<std::string, Field>{
      {"workflowid", {"workflow_id", FieldKind::kText}},
      {"workflowtype", {"workflow_type", FieldKind::kText}},
      {"runid", {"run_id", FieldKind::kText}},
      {"taskqueue", {"task_queue", FieldKind::kText}},
      {"executionstatus", {"status", FieldKind::kStatus}},
      {"starttime", {"start_ms", FieldKind::kTime}},
      {"closetime", {"close_ms", FieldKind::kTime}},
      {"executiontime", {"execution_ms", FieldKind::kTime}},
  };
  return *fields;
}

const std::map<std::string, int64_t>& Statuses() {
  static const auto* statuses = new std::map<std::string, int64_t>{
      {"running", 1},   {"completed", 2},      {"failed", 3},   {"canceled", 4},
      {"terminated", 5}, {"continuedasnew", 6}, {"timedout", 7},
  };
  return *statuses;
}

struct Token {
  enum Kind { kWord, kString, kNumber, kSymbol, kEnd } kind;
  std::string text;
  size_t position;  // 1-based
};

absl::StatusOr<std::vector<Token>> Lex(const std::string& q) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < q.size()) {
    char c = q[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    size_t start = i;
    if (c == '\'' || c == '"') {
      std::string text;
      ++i;
      while (i < q.size() && q[i] != c) text += q[i++];
      if (i >= q.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "invalid query: the string starting at position ", start + 1, " is not closed"));
      }
      ++i;
      tokens.push_back({Token::kString, text, start + 1});
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (i < q.size() && (std::isalnum(static_cast<unsigned char>(q[i])) || q[i] == '_')) ++i;
      tokens.push_back({Token::kWord, q.substr(start, i - start), start + 1});
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '-') {
      ++i;
      while (i < q.size() && std::isdigit(static_cast<unsigned char>(q[i]))) ++i;
      tokens.push_back({Token::kNumber, q.substr(start, i - start), start + 1});
    } else if (c == '(' || c == ')' || c == ',' || c == '=') {
      tokens.push_back({Token::kSymbol, std::string(1, c), start + 1});
      ++i;
    } else if (c == '!' || c == '<' || c == '>') {
      std::string op(1, c);
      if (i + 1 < q.size() && q[i + 1] == '=') op += '=';
      if (op == "!") {
        return absl::InvalidArgumentError(
            absl::StrCat("invalid query: unexpected '!' at position ", start + 1, "; use !="));
      }
      i += op.size();
      tokens.push_back({Token::kSymbol, op, start + 1});
    } else {
      return absl::InvalidArgumentError(absl::StrCat("invalid query: unexpected character '",
                                                     std::string(1, c), "' at position ", start + 1));
    }
  }
  tokens.push_back({Token::kEnd, "", q.size() + 1});
  return tokens;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  absl::StatusOr<SqlFilter> Parse() {
    SqlFilter out;
    if (!AtKeyword("ORDER") && Peek().kind != Token::kEnd) {
      absl::StatusOr<std::string> where = Expr(out);
      if (!where.ok()) return where.status();
      out.where = *where;
    }
    if (AtKeyword("ORDER")) {
      Next();
      if (!AtKeyword("BY")) return Unexpected("BY");
      Next();
      std::vector<std::string> parts;
      while (true) {
        const Token& t = Next();
        auto field = Lookup(t);
        if (!field.ok()) return field.status();
        std::string direction = "ASC";
        if (AtKeyword("ASC") || AtKeyword("DESC")) direction = absl::AsciiStrToUpper(Next().text);
        parts.push_back(absl::StrCat(field->column, " ", direction));
        if (Peek().text != ",") break;
        Next();
      }
      out.order_by = absl::StrJoin(parts, ", ");
    }
    if (Peek().kind != Token::kEnd) return Unexpected("AND, OR or ORDER BY");
    if (out.order_by.empty()) out.order_by = "start_ms DESC, run_id DESC";
    return out;
  }

 private:
  const Token& Peek() const { return tokens_[pos_]; }
  const Token& Next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool AtKeyword(const char* word) const {
    return Peek().kind == Token::kWord && absl::AsciiStrToUpper(Peek().text) == word;
  }
  absl::Status Unexpected(const std::string& expected) const {
    const Token& t = Peek();
    if (t.kind == Token::kEnd) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid query: it ends where ", expected, " was expected"));
    }
    return absl::InvalidArgumentError(absl::StrCat("invalid query: unexpected token '", t.text,
                                                   "' at position ", t.position, "; expected ",
                                                   expected));
  }

  absl::StatusOr<Field> Lookup(const Token& t) const {
    if (t.kind == Token::kEnd) {
      return absl::InvalidArgumentError("invalid query: it ends where a field was expected");
    }
    auto it = Fields().find(absl::AsciiStrToLower(t.text));
    if (t.kind != Token::kWord || it == Fields().end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid query: unknown field '", t.text, "' at position ", t.position,
          "; fields: WorkflowId, WorkflowType, RunId, ExecutionStatus, TaskQueue, StartTime, "
          "CloseTime, ExecutionTime"));
    }
    return it->second;
  }

  absl::Status Value(const Field& field, SqlFilter& out) {
    const Token& t = Next();
    if (t.kind != Token::kString && t.kind != Token::kNumber) {
      --pos_;
      return Unexpected("a value ('text' or a number)");
    }
    switch (field.kind) {
      case FieldKind::kText:
        out.params.emplace_back(t.text);
        return absl::OkStatus();
      case FieldKind::kStatus: {
        auto it = Statuses().find(absl::AsciiStrToLower(t.text));
        if (it == Statuses().end()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "invalid query: unknown ExecutionStatus '", t.text, "' at position ", t.position,
              "; use Running, Completed, Failed, Canceled, Terminated, ContinuedAsNew or TimedOut"));
        }
        out.params.emplace_back(it->second);
        return absl::OkStatus();
      }
      case FieldKind::kTime: {
        if (t.kind == Token::kNumber) {  // nanoseconds since the epoch, as Temporal accepts
          out.params.emplace_back(std::stoll(t.text) / 1'000'000);
          return absl::OkStatus();
        }
        absl::StatusOr<absl::Time> time = ParseTimestamp(t.text, absl::InfinitePast());
        if (!time.ok() || t.text == "now") {
          return absl::InvalidArgumentError(absl::StrCat("invalid query: '", t.text,
                                                         "' at position ", t.position,
                                                         " is not a time; use RFC 3339"));
        }
        out.params.emplace_back(absl::ToUnixMillis(*time));
        return absl::OkStatus();
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Expr(SqlFilter& out) {
    absl::StatusOr<std::string> left = Term(out);
    if (!left.ok()) return left;
    std::string sql = *left;
    while (AtKeyword("OR")) {
      Next();
      absl::StatusOr<std::string> right = Term(out);
      if (!right.ok()) return right;
      sql = absl::StrCat(sql, " OR ", *right);
    }
    return sql;
  }

  absl::StatusOr<std::string> Term(SqlFilter& out) {
    absl::StatusOr<std::string> left = Factor(out);
    if (!left.ok()) return left;
    std::string sql = *left;
    while (AtKeyword("AND")) {
      Next();
      absl::StatusOr<std::string> right = Factor(out);
      if (!right.ok()) return right;
      sql = absl::StrCat(sql, " AND ", *right);
    }
    return sql;
  }

  absl::StatusOr<std::string> Factor(SqlFilter& out) {
    if (Peek().text == "(" && Peek().kind == Token::kSymbol) {
      Next();
      absl::StatusOr<std::string> inner = Expr(out);
      if (!inner.ok()) return inner;
      if (Peek().text != ")") return Unexpected("')'");
      Next();
      return absl::StrCat("(", *inner, ")");
    }
    absl::StatusOr<Field> field = Lookup(Peek());
    if (!field.ok()) return field.status();
    Next();
    const std::string column = field->column;
    const Token op = Next();
    if (op.kind == Token::kSymbol &&
        (op.text == "=" || op.text == "!=" || op.text == "<" || op.text == "<=" ||
         op.text == ">" || op.text == ">=")) {
      if (absl::Status s = Value(*field, out); !s.ok()) return s;
      return absl::StrCat(column, " ", op.text, " ?");
    }
    const std::string word = absl::AsciiStrToUpper(op.text);
    if (op.kind == Token::kWord && word == "IN") {
      if (Peek().text != "(") return Unexpected("'(' after IN");
      Next();
      std::vector<std::string> marks;
      while (true) {
        if (absl::Status s = Value(*field, out); !s.ok()) return s;
        marks.push_back("?");
        if (Peek().text == ",") {
          Next();
          continue;
        }
        if (Peek().text == ")") break;
        return Unexpected("',' or ')'");
      }
      Next();
      return absl::StrCat(column, " IN (", absl::StrJoin(marks, ", "), ")");
    }
    if (op.kind == Token::kWord && word == "BETWEEN") {
      if (absl::Status s = Value(*field, out); !s.ok()) return s;
      if (!AtKeyword("AND")) return Unexpected("AND in BETWEEN ... AND ...");
      Next();
      if (absl::Status s = Value(*field, out); !s.ok()) return s;
      return absl::StrCat(column, " BETWEEN ? AND ?");
    }
    if (op.kind == Token::kWord && word == "STARTS_WITH") {
      if (field->kind != FieldKind::kText) {
        return absl::InvalidArgumentError(absl::StrCat(
            "invalid query: STARTS_WITH at position ", op.position, " needs a text field"));
      }
      const Token& value = Peek();
      if (value.kind != Token::kString) return Unexpected("a 'text' value after STARTS_WITH");
      Next();
      out.params.emplace_back(static_cast<int64_t>(value.text.size()));
      out.params.emplace_back(value.text);
      return absl::StrCat("substr(", column, ", 1, ?) = ?");
    }
    pos_ -= 1;
    return Unexpected("an operator (= != < <= > >= IN BETWEEN STARTS_WITH)");
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<SqlFilter> CompileQuery(const std::string& query) {
  absl::StatusOr<std::vector<Token>> tokens = Lex(query);
  if (!tokens.ok()) return tokens.status();
  return Parser(std::move(*tokens)).Parse();
}

}  // namespace tock::server::visibility
