#include "lib/archival/visibility_query.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "temporal/api/enums/v1/workflow.pb.h"

namespace tock::archival {
namespace {

namespace enums = temporal::api::enums::v1;

// Parentheses nest at most this deep: the parser recurses at each '(' and checks the depth
// before it descends, so a query of thousands of '(' is refused instead of exhausting the
// stack (the visibility query parser of server-core has the same limit).
constexpr int kMaxParenthesisDepth = 100;
// Messages quote at most this many bytes of a name or value from the query, so that a reply
// stays small whatever the input.
constexpr size_t kMaxQuotedBytes = 64;

// `text` cut to kMaxQuotedBytes (at a UTF-8 character boundary) with "…" when longer.
std::string Bounded(std::string_view text) {
  if (text.size() <= kMaxQuotedBytes) return std::string(text);
  size_t cut = kMaxQuotedBytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "…";
}

// One comparison of the conjunction the query is.
struct Comparison {
  std::string field;
  std::string op;
  std::string value;
  bool quoted = false;
};

// query := term (AND term)*; term := '(' query ')' | NAME op value.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  absl::StatusOr<std::vector<Comparison>> Parse() {
    std::vector<Comparison> out;
    SkipSpace();
    if (pos_ == text_.size()) return out;
    if (absl::Status s = Conjunction(out, 0); !s.ok()) return s;
    SkipSpace();
    if (pos_ != text_.size()) return Unsupported();
    return out;
  }

 private:
  static absl::Status Unsupported() {
    return absl::InvalidArgumentError("only comparison and \"and\" expression is supported");
  }

  absl::Status Conjunction(std::vector<Comparison>& out, int depth) {
    while (true) {
      if (absl::Status s = Term(out, depth); !s.ok()) return s;
      SkipSpace();
      const size_t save = pos_;
      if (absl::EqualsIgnoreCase(Word(), "and")) continue;
      pos_ = save;
      return absl::OkStatus();
    }
  }

  absl::Status Term(std::vector<Comparison>& out, int depth) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '(') {
      if (depth >= kMaxParenthesisDepth) {
        return absl::InvalidArgumentError(
            absl::StrCat("'(' at position ", pos_ + 1, " nests deeper than the limit of ",
                         kMaxParenthesisDepth, " parentheses"));
      }
      ++pos_;
      if (absl::Status s = Conjunction(out, depth + 1); !s.ok()) return s;
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ')') return Unsupported();
      ++pos_;
      return absl::OkStatus();
    }
    Comparison c;
    c.field = Word();
    if (c.field.empty() || absl::EqualsIgnoreCase(c.field, "or") ||
        absl::EqualsIgnoreCase(c.field, "not")) {
      return Unsupported();
    }
    SkipSpace();
    while (pos_ < text_.size() && std::string_view("=<>!").find(text_[pos_]) != std::string::npos) {
      c.op.push_back(text_[pos_++]);
    }
    if (c.op.empty()) return Unsupported();
    SkipSpace();
    if (pos_ < text_.size() && (text_[pos_] == '\'' || text_[pos_] == '"')) {
      const char quote = text_[pos_++];
      const size_t end = text_.find(quote, pos_);
      if (end == std::string_view::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("unterminated string in query after ", Bounded(c.field), " ",
                         Bounded(c.op)));
      }
      c.value = std::string(text_.substr(pos_, end - pos_));
      c.quoted = true;
      pos_ = end + 1;
    } else {
      c.value = Word();
      if (c.value.empty()) return Unsupported();
    }
    out.push_back(std::move(c));
    return absl::OkStatus();
  }

  std::string Word() {
    SkipSpace();
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (absl::ascii_isalnum(text_[pos_]) || text_[pos_] == '_' || text_[pos_] == '-' ||
            text_[pos_] == '.')) {
      ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(text_[pos_])) ++pos_;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

absl::Status OnlyEquals(const Comparison& c) {
  if (c.op == "=") return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("only operation = is support for ", Bounded(c.field)));
}

absl::StatusOr<std::string> StringValue(const Comparison& c) {
  if (!c.quoted) return absl::InvalidArgumentError(absl::StrCat("value ", Bounded(c.value), " is not a string value"));
  return c.value;
}

absl::StatusOr<int> ParseStatus(const std::string& value) {
  std::string v = absl::AsciiStrToLower(value);
  if (v == "completed") return enums::WORKFLOW_EXECUTION_STATUS_COMPLETED;
  if (v == "failed") return enums::WORKFLOW_EXECUTION_STATUS_FAILED;
  if (v == "canceled") return enums::WORKFLOW_EXECUTION_STATUS_CANCELED;
  if (v == "terminated") return enums::WORKFLOW_EXECUTION_STATUS_TERMINATED;
  if (v == "continuedasnew" || v == "continued_as_new") {
    return enums::WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW;
  }
  if (v == "timedout" || v == "timed_out") return enums::WORKFLOW_EXECUTION_STATUS_TIMED_OUT;
  int n = 0;
  if (absl::SimpleAtoi(v, &n) && n >= enums::WORKFLOW_EXECUTION_STATUS_COMPLETED &&
      n <= enums::WORKFLOW_EXECUTION_STATUS_TIMED_OUT) {
    return n;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown workflow close status: ", Bounded(value),
      "; use completed, failed, canceled, terminated, continuedasnew or timedout"));
}

absl::StatusOr<absl::Time> ParseTime(const Comparison& c) {
  absl::Time t;
  std::string err;
  if (c.quoted) {
    if (absl::ParseTime(absl::RFC3339_full, c.value, &t, &err)) return t;
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot parse ", Bounded(c.field), " \"", Bounded(c.value), "\": use RFC 3339, e.g. 2026-01-02T15:04:05Z"));
  }
  int64_t nanos = 0;
  if (absl::SimpleAtoi(c.value, &nanos)) return absl::FromUnixNanos(nanos);
  return absl::InvalidArgumentError(absl::StrCat(
      "cannot parse ", Bounded(c.field), " ", Bounded(c.value),
      ": use an RFC 3339 string in quotes or unix nanoseconds"));
}

// Sets `slot` to `value`; a second, different value makes the query match nothing.
template <typename T>
void SetEqual(std::optional<T>& slot, T value, bool& matches_nothing) {
  if (slot && *slot != value) matches_nothing = true;
  slot = std::move(value);
}

}  // namespace

absl::StatusOr<FileVisibilityQuery> ParseFileVisibilityQuery(std::string_view query,
                                                             absl::Time now) {
  absl::StatusOr<std::vector<Comparison>> parsed = Parser(query).Parse();
  if (!parsed.ok()) return parsed.status();
  FileVisibilityQuery out;
  out.latest_close = now;
  for (const Comparison& c : *parsed) {
    const std::string name = absl::AsciiStrToLower(c.field);
    if (name == "workflowid" || name == "runid" || name == "workflowtype") {
      if (absl::Status s = OnlyEquals(c); !s.ok()) return s;
      absl::StatusOr<std::string> v = StringValue(c);
      if (!v.ok()) return v.status();
      auto& slot = name == "workflowid" ? out.workflow_id
                   : name == "runid"    ? out.run_id
                                        : out.workflow_type;
      SetEqual(slot, *v, out.matches_nothing);
    } else if (name == "executionstatus") {
      if (absl::Status s = OnlyEquals(c); !s.ok()) return s;
      absl::StatusOr<int> status = ParseStatus(c.value);
      if (!status.ok()) return status.status();
      SetEqual(out.status, *status, out.matches_nothing);
    } else if (name == "closetime") {
      absl::StatusOr<absl::Time> t = ParseTime(c);
      if (!t.ok()) return t.status();
      if (c.op == "=") {
        out.earliest_close = std::max(out.earliest_close, *t);
        out.latest_close = std::min(out.latest_close, *t);
      } else if (c.op == ">" || c.op == ">=") {
        out.earliest_close = std::max(out.earliest_close, c.op == ">" ? *t + absl::Nanoseconds(1) : *t);
      } else if (c.op == "<" || c.op == "<=") {
        out.latest_close = std::min(out.latest_close, c.op == "<" ? *t - absl::Nanoseconds(1) : *t);
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("operator ", Bounded(c.op), " is not supported for close time"));
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown filter name: ", Bounded(c.field),
          "; the filters are WorkflowId, RunId, WorkflowType, ExecutionStatus and CloseTime"));
    }
  }
  if (out.earliest_close > out.latest_close) out.matches_nothing = true;
  return out;
}

absl::StatusOr<S3VisibilityQuery> ParseS3VisibilityQuery(std::string_view query) {
  absl::StatusOr<std::vector<Comparison>> parsed = Parser(query).Parse();
  if (!parsed.ok()) return parsed.status();
  S3VisibilityQuery out;
  if (parsed->empty()) {
    out.empty = true;
    return out;
  }
  for (const Comparison& c : *parsed) {
    const std::string name = absl::AsciiStrToLower(c.field);
    if (absl::Status s = OnlyEquals(c); !s.ok()) return s;
    auto once = [&](bool already) -> absl::Status {
      if (already) return absl::InvalidArgumentError(absl::StrCat("can not query ", Bounded(c.field), " multiple times"));
      return absl::OkStatus();
    };
    if (name == "workflowid") {
      if (absl::Status s = once(out.workflow_id.has_value()); !s.ok()) return s;
      out.workflow_id = c.value;
    } else if (name == "workflowtype" || name == "workflowtypename") {
      if (absl::Status s = once(out.workflow_type.has_value()); !s.ok()) return s;
      out.workflow_type = c.value;
    } else if (name == "starttime" || name == "closetime") {
      auto& slot = name == "starttime" ? out.start_time : out.close_time;
      if (absl::Status s = once(slot.has_value()); !s.ok()) return s;
      absl::StatusOr<absl::Time> t = ParseTime(c);
      if (!t.ok()) return t.status();
      slot = *t;
    } else if (name == "searchprecision") {
      if (absl::Status s = once(!out.precision.empty()); !s.ok()) return s;
      if (c.value != "Day" && c.value != "Hour" && c.value != "Minute" && c.value != "Second") {
        return absl::InvalidArgumentError(absl::StrCat(
            "invalid value for SearchPrecision: ", Bounded(c.value), "; use Day, Hour, Minute or Second"));
      }
      out.precision = c.value;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown filter name: ", Bounded(c.field),
          "; the filters are WorkflowId, WorkflowType, StartTime, CloseTime and SearchPrecision"));
    }
  }
  if (!out.workflow_id && !out.workflow_type) {
    return absl::InvalidArgumentError("WorkflowId or WorkflowType is required in query");
  }
  if (out.workflow_id && out.workflow_type) {
    return absl::InvalidArgumentError(
        "only one of WorkflowId or WorkflowType can be specified in a query");
  }
  if (out.start_time && out.close_time) {
    return absl::InvalidArgumentError(
        "only one of StartTime or CloseTime can be specified in a query");
  }
  const bool has_time = out.start_time || out.close_time;
  if (has_time && out.precision.empty()) {
    return absl::InvalidArgumentError(
        "SearchPrecision is required when searching for a StartTime or CloseTime");
  }
  if (!has_time && !out.precision.empty()) {
    return absl::InvalidArgumentError("SearchPrecision requires a StartTime or CloseTime");
  }
  return out;
}

}  // namespace tock::archival
