#include "server-core/visibility/query.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "lib/common/time_format.h"

namespace tock::server::visibility {
namespace {

using persistence::VisibilityField;
using persistence::VisibilityFilter;
using persistence::VisibilityOp;
using persistence::VisibilityPredicate;
using persistence::VisibilityValue;
using Kind = VisibilityPredicate::Kind;

enum class FieldKind { kText, kStatus, kTime, kCustom };

struct Field {
  absl::string_view name;
  VisibilityField field;
  FieldKind kind;
  persistence::CustomColumn custom = {};  // with kCustom
};

constexpr std::array<Field, 11> kFields = {{
    {"WorkflowId", VisibilityField::kWorkflowId, FieldKind::kText},
    {"WorkflowType", VisibilityField::kWorkflowType, FieldKind::kText},
    {"RunId", VisibilityField::kRunId, FieldKind::kText},
    {"TaskQueue", VisibilityField::kTaskQueue, FieldKind::kText},
    {"ExecutionStatus", VisibilityField::kExecutionStatus, FieldKind::kStatus},
    {"StartTime", VisibilityField::kStartTime, FieldKind::kTime},
    {"CloseTime", VisibilityField::kCloseTime, FieldKind::kTime},
    {"ExecutionTime", VisibilityField::kExecutionTime, FieldKind::kTime},
    {"TemporalWorkerDeployment", VisibilityField::kWorkerDeployment, FieldKind::kText},
    {"TemporalWorkerDeploymentVersion", VisibilityField::kWorkerDeploymentVersion, FieldKind::kText},
    {"TemporalWorkflowVersioningBehavior", VisibilityField::kVersioningBehavior, FieldKind::kText},
}};

// temporal.api.enums.v1.WorkflowExecutionStatus by the names Temporal's queries use.
constexpr std::array<std::pair<absl::string_view, int64_t>, 7> kStatuses = {{
    {"Running", 1},
    {"Completed", 2},
    {"Failed", 3},
    {"Canceled", 4},
    {"Terminated", 5},
    {"ContinuedAsNew", 6},
    {"TimedOut", 7},
}};

// `text` in single quotes, cut to kMaxQuotedBytes (at a UTF-8 character boundary) with "…",
// so that a message stays small whatever the input.
std::string Quote(absl::string_view text) {
  if (text.size() <= kMaxQuotedBytes) return absl::StrCat("'", text, "'");
  size_t cut = kMaxQuotedBytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat("'", text.substr(0, cut), "…'");
}

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("invalid query: ", what));
}

struct Token {
  enum Kind { kWord, kString, kNumber, kSymbol, kEnd } kind = kEnd;
  absl::string_view text;  // a string's content, without its quotes
  size_t position = 0;    // 1-based byte offset of the token's first character
};

// Produces one token at a time (no token list: memory stays bounded by the parse depth, and
// a query is refused at its first error without being read further).
class Lexer {
 public:
  explicit Lexer(absl::string_view query) : q_(query) {}

  absl::StatusOr<Token> Next() {
    while (i_ < q_.size() && std::isspace(static_cast<unsigned char>(q_[i_]))) ++i_;
    const size_t start = i_;
    if (i_ >= q_.size()) return Token{Token::kEnd, "", q_.size() + 1};
    const char c = q_[i_];
    if (c == '\'' || c == '"') {
      const size_t close = q_.find(c, i_ + 1);
      if (close == absl::string_view::npos) {
        return Invalid(
            absl::StrCat("the string starting at position ", start + 1, " is not closed"));
      }
      i_ = close + 1;
      return Token{Token::kString, q_.substr(start + 1, close - start - 1), start + 1};
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (i_ < q_.size() && (std::isalnum(static_cast<unsigned char>(q_[i_])) || q_[i_] == '_'))
        ++i_;
      return Token{Token::kWord, q_.substr(start, i_ - start), start + 1};
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-') {
      ++i_;
      Digits();
      if (i_ < q_.size() && q_[i_] == '.') {  // a fraction, for Double attributes
        ++i_;
        Digits();
      }
      if (i_ < q_.size() && (q_[i_] == 'e' || q_[i_] == 'E')) {
        ++i_;
        if (i_ < q_.size() && (q_[i_] == '+' || q_[i_] == '-')) ++i_;
        Digits();
      }
      return Token{Token::kNumber, q_.substr(start, i_ - start), start + 1};
    }
    if (c == '(' || c == ')' || c == ',' || c == '=') {
      ++i_;
      return Token{Token::kSymbol, q_.substr(start, 1), start + 1};
    }
    if (c == '!' || c == '<' || c == '>') {
      const size_t length = (i_ + 1 < q_.size() && q_[i_ + 1] == '=') ? 2 : 1;
      if (c == '!' && length == 1) {
        return Invalid(absl::StrCat("unexpected '!' at position ", start + 1, "; use !="));
      }
      i_ += length;
      return Token{Token::kSymbol, q_.substr(start, length), start + 1};
    }
    return Invalid(
        absl::StrCat("unexpected character ", Character(start), " at position ", start + 1));
  }

 private:
  void Digits() {
    while (i_ < q_.size() && std::isdigit(static_cast<unsigned char>(q_[i_]))) ++i_;
  }

  // The character at `at` for a message: a whole UTF-8 sequence, control bytes as \xNN.
  std::string Character(size_t at) const {
    const unsigned char c = static_cast<unsigned char>(q_[at]);
    if (c < 0x20 || c == 0x7F) return absl::StrFormat("'\\x%02X'", c);
    size_t length = 1;
    while (length < 4 && at + length < q_.size() &&
           (static_cast<unsigned char>(q_[at + length]) & 0xC0) == 0x80) {
      ++length;
    }
    return Quote(q_.substr(at, c < 0x80 ? 1 : length));
  }

  absl::string_view q_;
  size_t i_ = 0;
};

// A parsed (sub)expression and its AND/OR levels, so that the nesting limit is checked as
// the tree is built, without walking it again.
struct Parsed {
  VisibilityPredicate predicate;
  int nesting = 0;
};

// Recursive descent over Expr := Term (OR Term)*, Term := Factor (AND Factor)*,
// Factor := '(' Expr ')' | Condition. Recursion only descends at '(' and the depth is checked
// before it does, so the stack used is bounded by kMaxParenthesisDepth.
class Parser {
 public:
  Parser(absl::string_view query, const SearchAttributeSchema& schema)
      : lexer_(query), schema_(schema) {}

  absl::StatusOr<VisibilityFilter> Parse() {
    if (absl::Status s = Advance(); !s.ok()) return s;
    VisibilityFilter out;
    if (!AtKeyword("ORDER") && !AtKeyword("GROUP") && tok_.kind != Token::kEnd) {
      absl::StatusOr<Parsed> where = Expr(0);
      if (!where.ok()) return where.status();
      out.predicate = std::move(where->predicate);
    }
    if (AtKeyword("GROUP")) {
      if (absl::Status s = GroupBy(out); !s.ok()) return s;
      if (AtKeyword("ORDER")) {
        return Invalid("'order by' clause is not supported with 'group by' clause");
      }
    }
    if (AtKeyword("ORDER")) {
      if (absl::Status s = OrderBy(out); !s.ok()) return s;
    }
    if (tok_.kind != Token::kEnd) return Unexpected("AND, OR, GROUP BY or ORDER BY");
    return out;
  }

 private:
  absl::Status Advance() {
    absl::StatusOr<Token> next = lexer_.Next();
    if (!next.ok()) return next.status();
    tok_ = *next;
    return absl::OkStatus();
  }
  bool AtKeyword(absl::string_view word) const {
    return tok_.kind == Token::kWord && absl::EqualsIgnoreCase(tok_.text, word);
  }
  bool AtSymbol(absl::string_view symbol) const {
    return tok_.kind == Token::kSymbol && tok_.text == symbol;
  }
  absl::Status Unexpected(absl::string_view expected) const {
    if (tok_.kind == Token::kEnd) {
      return Invalid(absl::StrCat("it ends where ", expected, " was expected"));
    }
    return Invalid(absl::StrCat("unexpected token ", Quote(tok_.text), " at position ",
                                tok_.position, "; expected ", expected));
  }

  absl::StatusOr<Field> Lookup(const Token& t) const {
    if (t.kind == Token::kEnd) return Invalid("it ends where a field was expected");
    if (t.kind == Token::kWord) {
      for (const Field& f : kFields) {
        if (absl::EqualsIgnoreCase(t.text, f.name)) return f;
      }
      // Custom attributes are case-sensitive, as in Temporal.
      if (const SearchAttributeSchema::Attribute* a = schema_.Find(t.text)) {
        return Field{t.text, VisibilityField::kCustom, FieldKind::kCustom, a->column};
      }
    }
    return Invalid(absl::StrCat(
        "unknown field ", Quote(t.text), " at position ", t.position,
        "; fields: WorkflowId, WorkflowType, RunId, ExecutionStatus, TaskQueue, StartTime, "
        "CloseTime, ExecutionTime, the Worker Deployment attributes and the namespace's custom "
        "search attributes"));
  }

  absl::Status NotAValue(const Token& t, const Field& field, absl::string_view expected) const {
    return Invalid(absl::StrCat(Quote(t.text), " at position ", t.position, " is not a value of ",
                                field.name, "; it takes ", expected));
  }

  // A value of a custom attribute (see persistence::CustomColumn for what each type holds).
  absl::StatusOr<VisibilityValue> CustomValue(const Token& t, const Field& field) const {
    using persistence::CustomType;
    switch (field.custom.type) {
      case CustomType::kKeyword:
      case CustomType::kKeywordList:
        if (t.kind != Token::kString) return NotAValue(t, field, "'text'");
        return VisibilityValue(std::string(t.text));
      case CustomType::kText: {
        if (t.kind != Token::kString) return NotAValue(t, field, "'text'");
        const std::string words =
            persistence::NormalizeText(std::string_view(t.text.data(), t.text.size()));
        if (std::count(words.begin(), words.end(), ' ') > kMaxTextWords + 1) {
          return Invalid(absl::StrCat(Quote(t.text), " at position ", t.position, " has more than ",
                                      kMaxTextWords, " words; a text match takes at most ",
                                      kMaxTextWords));
        }
        return VisibilityValue(std::string(t.text));
      }
      case CustomType::kInt: {
        int64_t n = 0;
        if (t.kind != Token::kNumber || !absl::SimpleAtoi(t.text, &n)) {
          return NotAValue(t, field, "an integer");
        }
        return VisibilityValue(n);
      }
      case CustomType::kDouble: {
        double d = 0;
        if (t.kind != Token::kNumber || !absl::SimpleAtod(t.text, &d)) {
          return NotAValue(t, field, "a number");
        }
        return VisibilityValue(d);
      }
      case CustomType::kBool: {
        const bool yes = absl::EqualsIgnoreCase(t.text, "true");
        if ((t.kind != Token::kWord && t.kind != Token::kString) ||
            (!yes && !absl::EqualsIgnoreCase(t.text, "false"))) {
          return NotAValue(t, field, "true or false");
        }
        return VisibilityValue(int64_t{yes ? 1 : 0});
      }
      case CustomType::kDatetime: {
        int64_t nanos = 0;
        if (t.kind == Token::kNumber && absl::SimpleAtoi(t.text, &nanos)) {
          return VisibilityValue(nanos);
        }
        absl::StatusOr<absl::Time> time = t.kind == Token::kString && t.text != "now"
                                              ? ParseTimestamp(t.text, absl::InfinitePast())
                                              : absl::InvalidArgumentError("");
        if (!time.ok()) return NotAValue(t, field, "an RFC 3339 time");
        return VisibilityValue(absl::ToUnixNanos(*time));
      }
    }
    return NotAValue(t, field, "a value");
  }

  // One more condition (or IN value) at `at`: refused past the limit.
  absl::Status CountCondition(const Token& at) {
    if (++conditions_ <= persistence::kMaxVisibilityConditions) return absl::OkStatus();
    return Invalid(absl::StrCat(
        "too many conditions at ", Quote(at.text), " (position ", at.position, "): the limit is ",
        persistence::kMaxVisibilityConditions, " conditions, each value of an IN counting as one"));
  }

  absl::StatusOr<VisibilityValue> Value(const Field& field) {
    const Token t = tok_;
    const bool boolean = field.kind == FieldKind::kCustom &&
                         field.custom.type == persistence::CustomType::kBool &&
                         t.kind == Token::kWord;
    if (t.kind != Token::kString && t.kind != Token::kNumber && !boolean) {
      return Unexpected("a value ('text' or a number)");
    }
    VisibilityValue value;
    switch (field.kind) {
      case FieldKind::kCustom: {
        absl::StatusOr<VisibilityValue> custom = CustomValue(t, field);
        if (!custom.ok()) return custom.status();
        value = std::move(*custom);
        break;
      }
      case FieldKind::kText:
        value = std::string(t.text);
        break;
      case FieldKind::kStatus: {
        auto it = std::find_if(kStatuses.begin(), kStatuses.end(), [&](const auto& s) {
          return absl::EqualsIgnoreCase(t.text, s.first);
        });
        if (it == kStatuses.end()) {
          return Invalid(absl::StrCat(
              "unknown ExecutionStatus ", Quote(t.text), " at position ", t.position,
              "; use Running, Completed, Failed, Canceled, Terminated, ContinuedAsNew or "
              "TimedOut"));
        }
        value = it->second;
        break;
      }
      case FieldKind::kTime: {
        int64_t nanos = 0;
        if (t.kind == Token::kNumber && absl::SimpleAtoi(t.text, &nanos)) {
          value = nanos / 1'000'000;  // nanoseconds since the epoch, as Temporal accepts
          break;
        }
        absl::StatusOr<absl::Time> time = t.kind == Token::kString && t.text != "now"
                                              ? ParseTimestamp(t.text, absl::InfinitePast())
                                              : absl::InvalidArgumentError("");
        if (!time.ok()) {
          return Invalid(absl::StrCat(Quote(t.text), " at position ", t.position,
                                      " is not a time; use RFC 3339"));
        }
        value = absl::ToUnixMillis(*time);
        break;
      }
    }
    if (absl::Status s = Advance(); !s.ok()) return s;
    return value;
  }

  // Joins `parts` under one `kind` node, taking in the children of parts of the same kind
  // (parentheses that only repeated the operator), so the tree alternates AND and OR.
  absl::StatusOr<Parsed> Combine(Kind kind, std::vector<Parsed> parts, const Token& op) {
    if (parts.size() == 1) return std::move(parts[0]);
    Parsed out;
    out.predicate.kind = kind;
    out.nesting = 1;
    for (Parsed& part : parts) {
      if (part.predicate.kind == kind) {
        out.nesting = std::max(out.nesting, part.nesting);
        for (VisibilityPredicate& child : part.predicate.children) {
          out.predicate.children.push_back(std::move(child));
        }
      } else {
        out.nesting = std::max(out.nesting, part.nesting + 1);
        out.predicate.children.push_back(std::move(part.predicate));
      }
    }
    if (out.nesting > persistence::kMaxVisibilityNesting) {
      return Invalid(absl::StrCat(Quote(op.text), " at position ", op.position,
                                  " nests AND and OR deeper than the limit of ",
                                  persistence::kMaxVisibilityNesting, " levels"));
    }
    return out;
  }

  absl::StatusOr<Parsed> Expr(int depth) { return Chain(Kind::kOr, "OR", depth); }

  // Expr (kind OR, joining Terms) or Term (kind AND, joining Factors).
  absl::StatusOr<Parsed> Chain(Kind kind, absl::string_view keyword, int depth) {
    std::vector<Parsed> parts;
    Token op;
    while (true) {
      absl::StatusOr<Parsed> part =
          kind == Kind::kOr ? Chain(Kind::kAnd, "AND", depth) : Factor(depth);
      if (!part.ok()) return part.status();
      parts.push_back(std::move(*part));
      if (!AtKeyword(keyword)) break;
      if (parts.size() == 1) op = tok_;
      if (absl::Status s = Advance(); !s.ok()) return s;
    }
    return Combine(kind, std::move(parts), op);
  }

  absl::StatusOr<Parsed> Factor(int depth) {
    if (!AtSymbol("(")) return Condition();
    if (depth >= kMaxParenthesisDepth) {
      return Invalid(absl::StrCat("'(' at position ", tok_.position,
                                  " nests deeper than the limit of ", kMaxParenthesisDepth,
                                  " parentheses"));
    }
    if (absl::Status s = Advance(); !s.ok()) return s;
    absl::StatusOr<Parsed> inner = Expr(depth + 1);
    if (!inner.ok()) return inner.status();
    if (!AtSymbol(")")) return Unexpected("')'");
    if (absl::Status s = Advance(); !s.ok()) return s;
    return inner;
  }

  absl::StatusOr<Parsed> Condition() {
    const Token name = tok_;
    absl::StatusOr<Field> field = Lookup(name);
    if (!field.ok()) return field.status();
    if (absl::Status s = Advance(); !s.ok()) return s;
    const Token op = tok_;
    std::vector<VisibilityValue> values;
    auto take_value = [&]() -> absl::Status {
      absl::StatusOr<VisibilityValue> v = Value(*field);
      if (!v.ok()) return v.status();
      values.push_back(std::move(*v));
      return absl::OkStatus();
    };
    VisibilityOp kind;
    if (op.kind == Token::kSymbol && op.text != "(" && op.text != ")" && op.text != ",") {
      kind = op.text == "="    ? VisibilityOp::kEqual
             : op.text == "!=" ? VisibilityOp::kNotEqual
             : op.text == "<"  ? VisibilityOp::kLess
             : op.text == "<=" ? VisibilityOp::kLessOrEqual
             : op.text == ">"  ? VisibilityOp::kGreater
                               : VisibilityOp::kGreaterOrEqual;
      if (absl::Status s = CountCondition(name); !s.ok()) return s;
      if (absl::Status s = Advance(); !s.ok()) return s;
      if (absl::Status s = take_value(); !s.ok()) return s;
    } else if (AtKeyword("IN")) {
      kind = VisibilityOp::kIn;
      if (absl::Status s = Advance(); !s.ok()) return s;
      if (!AtSymbol("(")) return Unexpected("'(' after IN");
      if (absl::Status s = Advance(); !s.ok()) return s;
      while (true) {
        if (absl::Status s = CountCondition(tok_); !s.ok()) return s;
        if (absl::Status s = take_value(); !s.ok()) return s;
        if (AtSymbol(")")) break;
        if (!AtSymbol(",")) return Unexpected("',' or ')'");
        if (absl::Status s = Advance(); !s.ok()) return s;
      }
      if (absl::Status s = Advance(); !s.ok()) return s;
    } else if (AtKeyword("BETWEEN")) {
      kind = VisibilityOp::kBetween;
      if (absl::Status s = CountCondition(name); !s.ok()) return s;
      if (absl::Status s = Advance(); !s.ok()) return s;
      if (absl::Status s = take_value(); !s.ok()) return s;
      if (!AtKeyword("AND")) return Unexpected("AND in BETWEEN ... AND ...");
      if (absl::Status s = Advance(); !s.ok()) return s;
      if (absl::Status s = take_value(); !s.ok()) return s;
    } else if (AtKeyword("IS")) {
      if (absl::Status s = CountCondition(name); !s.ok()) return s;
      if (absl::Status s = Advance(); !s.ok()) return s;
      kind = VisibilityOp::kIsNull;
      if (AtKeyword("NOT")) {
        kind = VisibilityOp::kIsNotNull;
        if (absl::Status s = Advance(); !s.ok()) return s;
      }
      if (!AtKeyword("NULL")) return Unexpected("NULL after IS or IS NOT");
      if (absl::Status s = Advance(); !s.ok()) return s;
    } else if (AtKeyword("STARTS_WITH")) {
      kind = VisibilityOp::kStartsWith;
      if (field->kind != FieldKind::kText &&
          !(field->kind == FieldKind::kCustom &&
            field->custom.type == persistence::CustomType::kKeyword)) {
        return Invalid(
            absl::StrCat("STARTS_WITH at position ", op.position, " needs a text field"));
      }
      if (absl::Status s = CountCondition(name); !s.ok()) return s;
      if (absl::Status s = Advance(); !s.ok()) return s;
      if (tok_.kind != Token::kString) return Unexpected("a 'text' value after STARTS_WITH");
      if (absl::Status s = take_value(); !s.ok()) return s;
    } else {
      return Unexpected("an operator (= != < <= > >= IN BETWEEN STARTS_WITH IS)");
    }
    VisibilityPredicate p = VisibilityPredicate::Of(field->field, kind, std::move(values),
                                                    field->custom);
    if (field->kind == FieldKind::kCustom) {
      // Which operators a type takes (Text: = and !=, KeywordList: = != IN, Bool: = !=).
      if (absl::Status s = persistence::CheckVisibilityCondition(p.condition); !s.ok()) {
        return Invalid(absl::StrCat("operator ", Quote(op.text), " at position ", op.position,
                                    " is not supported for ", TypeName(ApiTypeOf(field->custom.type)),
                                    " attribute ", Quote(name.text)));
      }
    }
    return Parsed{std::move(p), 0};
  }

  absl::Status OrderBy(VisibilityFilter& out) {
    if (absl::Status s = Advance(); !s.ok()) return s;  // ORDER
    if (!AtKeyword("BY")) return Unexpected("BY");
    while (true) {
      if (absl::Status s = Advance(); !s.ok()) return s;  // BY or ','
      absl::StatusOr<Field> field = Lookup(tok_);
      if (!field.ok()) return field.status();
      if (field->kind == FieldKind::kCustom &&
          (field->custom.type == persistence::CustomType::kText ||
           field->custom.type == persistence::CustomType::kKeywordList)) {
        return Invalid(absl::StrCat("cannot order by ", Quote(tok_.text), " at position ",
                                    tok_.position, ": a ", TypeName(ApiTypeOf(field->custom.type)),
                                    " attribute has no order"));
      }
      if (absl::Status s = Advance(); !s.ok()) return s;
      bool descending = false;
      if (AtKeyword("ASC") || AtKeyword("DESC")) {
        descending = AtKeyword("DESC");
        if (absl::Status s = Advance(); !s.ok()) return s;
      }
      // A field already ordered by decides nothing more; keeping only the first also bounds
      // the keys to the number of fields.
      if (std::none_of(out.order_by.begin(), out.order_by.end(),
                       [&](const auto& key) {
                         return key.field == field->field && key.custom == field->custom;
                       })) {
        out.order_by.push_back({field->field, descending, field->custom});
      }
      if (!AtSymbol(",")) return absl::OkStatus();
    }
  }

  // GROUP BY ExecutionStatus, the one grouping Temporal's count supports.
  absl::Status GroupBy(VisibilityFilter& out) {
    if (absl::Status s = Advance(); !s.ok()) return s;  // GROUP
    if (!AtKeyword("BY")) return Unexpected("BY");
    if (absl::Status s = Advance(); !s.ok()) return s;
    if (!AtKeyword("ExecutionStatus")) {
      if (tok_.kind == Token::kEnd) return Unexpected("ExecutionStatus");
      return Invalid(absl::StrCat("'group by' clause is only supported for ExecutionStatus "
                                  "search attribute (got ",
                                  Quote(tok_.text), " at position ", tok_.position, ")"));
    }
    if (absl::Status s = Advance(); !s.ok()) return s;
    if (AtSymbol(",")) return Invalid("'group by' clause supports only a single field");
    out.group_by_status = true;
    return absl::OkStatus();
  }

  Lexer lexer_;
  const SearchAttributeSchema& schema_;
  Token tok_;
  int conditions_ = 0;
};

}  // namespace

absl::StatusOr<VisibilityFilter> CompileQuery(absl::string_view query,
                                               const SearchAttributeSchema& schema) {
  if (query.size() > kMaxQueryBytes) {
    return Invalid(absl::StrCat("longer than the limit of ", kMaxQueryBytes, " bytes (it has ",
                                query.size(), ")"));
  }
  return Parser(query, schema).Parse();
}

}  // namespace tock::server::visibility
