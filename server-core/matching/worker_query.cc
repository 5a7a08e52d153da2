#include "server-core/matching/worker_query.h"

#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace tock::server::matching {

namespace wk = temporal::api::worker::v1;

enum class Field { kInstanceKey, kIdentity, kHostName, kTaskQueue, kDeploymentName, kBuildId,
                   kSdkName, kSdkVersion, kStatus, kStartTime, kHeartbeatTime };
enum class Op { kEq, kNe, kGt, kGe, kLt, kLe, kStartsWith, kNotStartsWith, kIsNull, kIsNotNull, kBetween };

struct WorkerQuery::Node {
  enum class Kind { kAnd, kOr, kCompare } kind = Kind::kCompare;
  std::vector<std::shared_ptr<const Node>> children;  // kAnd, kOr
  Field field = Field::kInstanceKey;
  Op op = Op::kEq;
  std::string text;               // string fields (the status normalized)
  absl::Time time, time_to;       // time fields (time_to: BETWEEN's upper bound)
};

namespace {

constexpr size_t kQuoted = 64;

bool IsTime(Field f) { return f == Field::kStartTime || f == Field::kHeartbeatTime; }

std::optional<Field> FieldNamed(const std::string& name) {
  static const std::pair<const char*, Field> kFields[] = {
      {"WorkerInstanceKey", Field::kInstanceKey}, {"WorkerIdentity", Field::kIdentity},
      {"HostName", Field::kHostName}, {"TaskQueue", Field::kTaskQueue},
      {"DeploymentName", Field::kDeploymentName}, {"BuildId", Field::kBuildId},
      {"SdkName", Field::kSdkName}, {"SdkVersion", Field::kSdkVersion},
      {"WorkerStatus", Field::kStatus}, {"Status", Field::kStatus},
      {"StartTime", Field::kStartTime}, {"HeartbeatTime", Field::kHeartbeatTime}};
  for (const auto& [n, f] : kFields) {
    if (name == n) return f;
  }
  return std::nullopt;
}

// "Running", "RUNNING", "WORKER_STATUS_RUNNING", "shutting_down" -> "running", "shuttingdown".
std::string StatusKey(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (c != '_') out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (out.rfind("workerstatus", 0) == 0) out = out.substr(12);
  return out;
}

std::string StatusOf(const wk::WorkerHeartbeat& w) {
  switch (w.status()) {
    case temporal::api::enums::v1::WORKER_STATUS_RUNNING: return "running";
    case temporal::api::enums::v1::WORKER_STATUS_SHUTTING_DOWN: return "shuttingdown";
    case temporal::api::enums::v1::WORKER_STATUS_SHUTDOWN: return "shutdown";
    default: return "";
  }
}

std::string TextOf(const wk::WorkerHeartbeat& w, Field f) {
  switch (f) {
    case Field::kInstanceKey: return w.worker_instance_key();
    case Field::kIdentity: return w.worker_identity();
    case Field::kHostName: return w.host_info().host_name();
    case Field::kTaskQueue: return w.task_queue();
    case Field::kDeploymentName: return w.deployment_version().deployment_name();
    case Field::kBuildId: return w.deployment_version().build_id();
    case Field::kSdkName: return w.sdk_name();
    case Field::kSdkVersion: return w.sdk_version();
    case Field::kStatus: return StatusOf(w);
    default: return "";
  }
}

absl::Time TimeOf(const wk::WorkerHeartbeat& w, Field f) {
  const google::protobuf::Timestamp& t = f == Field::kStartTime ? w.start_time() : w.heartbeat_time();
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

struct Token {
  enum class Kind { kWord, kString, kOp, kOpen, kClose, kEnd } kind = Kind::kEnd;
  std::string text;
  size_t at = 0;  // 1-based byte position
};

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<std::shared_ptr<const WorkerQuery::Node>> Parse() {
    if (absl::Status s = Lex(); !s.ok()) return s;
    auto root = Or(0);
    if (!root.ok()) return root.status();
    if (Peek().kind != Token::Kind::kEnd) return Error(Peek(), "expected AND, OR or the end");
    return root;
  }

 private:
  absl::Status Lex() {
    size_t i = 0;
    while (i < text_.size()) {
      const char c = text_[i];
      if (std::isspace(static_cast<unsigned char>(c))) { ++i; continue; }
      Token t;
      t.at = i + 1;
      if (c == '(' || c == ')') {
        t.kind = c == '(' ? Token::Kind::kOpen : Token::Kind::kClose;
        t.text = std::string(1, c);
        ++i;
      } else if (c == '\'' || c == '"') {
        t.kind = Token::Kind::kString;
        size_t j = i + 1;
        for (; j < text_.size() && text_[j] != c; ++j) {
          if (text_[j] == '\\' && j + 1 < text_.size()) ++j;
          t.text.push_back(text_[j]);
        }
        if (j >= text_.size()) return Error(t, "a quoted value is not closed");
        i = j + 1;
      } else if (c == '=' || c == '!' || c == '<' || c == '>') {
        t.kind = Token::Kind::kOp;
        t.text = std::string(1, c);
        if (i + 1 < text_.size() && (text_[i + 1] == '=' || (c == '<' && text_[i + 1] == '>'))) {
          t.text.push_back(text_[i + 1]);
        }
        i += t.text.size();
        if (t.text == "!") return Error(t, "'!' must be followed by '='");
      } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ':' ||
                 c == '.') {
        t.kind = Token::Kind::kWord;
        size_t j = i;
        while (j < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[j])) ||
                                    text_[j] == '_' || text_[j] == '-' || text_[j] == ':' ||
                                    text_[j] == '.' || text_[j] == '+')) {
          ++j;
        }
        t.text = std::string(text_.substr(i, j - i));
        i = j;
      } else {
        t.text = std::string(1, c);
        return Error(t, "unexpected character");
      }
      tokens_.push_back(std::move(t));
    }
    Token end;
    end.at = text_.size() + 1;
    tokens_.push_back(end);
    return absl::OkStatus();
  }

  const Token& Peek() const { return tokens_[pos_]; }
  const Token& Next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool Keyword(const char* word) {
    if (Peek().kind == Token::Kind::kWord && absl::EqualsIgnoreCase(Peek().text, word)) {
      ++pos_;
      return true;
    }
    return false;
  }

  static absl::Status Error(const Token& t, absl::string_view what) {
    const std::string near = t.kind == Token::Kind::kEnd ? "the end" : absl::StrCat("\"", t.text.substr(0, kQuoted), "\"");
    return absl::InvalidArgumentError(
        absl::StrCat("invalid worker query: ", what, " at ", near, " (byte ", t.at, ")"));
  }

  using NodePtr = std::shared_ptr<const WorkerQuery::Node>;

  absl::StatusOr<NodePtr> Or(int depth) { return Joined(depth, "OR", WorkerQuery::Node::Kind::kOr); }

  absl::StatusOr<NodePtr> Joined(int depth, const char* word, WorkerQuery::Node::Kind kind) {
    std::vector<NodePtr> parts;
    do {
      auto part = kind == WorkerQuery::Node::Kind::kOr
                      ? Joined(depth, "AND", WorkerQuery::Node::Kind::kAnd)
                      : Factor(depth);
      if (!part.ok()) return part.status();
      parts.push_back(*std::move(part));
    } while (Keyword(word));
    if (parts.size() == 1) return parts[0];
    auto node = std::make_shared<WorkerQuery::Node>();
    node->kind = kind;
    node->children = std::move(parts);
    return NodePtr(node);
  }

  absl::StatusOr<NodePtr> Factor(int depth) {
    if (Peek().kind == Token::Kind::kOpen) {
      if (depth >= kMaxWorkerQueryDepth) {
        return Error(Peek(), absl::StrCat("more than ", kMaxWorkerQueryDepth, " nested parentheses"));
      }
      Next();
      auto inner = Or(depth + 1);
      if (!inner.ok()) return inner.status();
      if (Peek().kind != Token::Kind::kClose) return Error(Peek(), "expected ')'");
      Next();
      return inner;
    }
    return Compare();
  }

  absl::StatusOr<absl::Time> TimeValue() {
    const Token& t = Next();
    if (t.kind != Token::Kind::kString) return Error(t, "expected a quoted RFC 3339 time");
    absl::Time time;
    std::string err;
    if (!absl::ParseTime(absl::RFC3339_full, t.text, &time, &err)) {
      return Error(t, "expected an RFC 3339 time such as '2026-11-29T08:00:00Z'");
    }
    return time;
  }

  absl::StatusOr<NodePtr> Compare() {
    const Token& name = Next();
    if (name.kind != Token::Kind::kWord) return Error(name, "expected a field");
    std::optional<Field> field = FieldNamed(name.text);
    if (!field.has_value()) {
      return Error(name, "unknown field (WorkerInstanceKey, WorkerIdentity, HostName, TaskQueue, "
                         "DeploymentName, BuildId, SdkName, SdkVersion, WorkerStatus, StartTime, "
                         "HeartbeatTime)");
    }
    auto node = std::make_shared<WorkerQuery::Node>();
    node->field = *field;
    const Token& op = Peek();
    if (IsTime(*field)) {
      if (Keyword("BETWEEN")) {
        node->op = Op::kBetween;
        auto from = TimeValue();
        if (!from.ok()) return from.status();
        if (!Keyword("AND")) return Error(Peek(), "expected AND in BETWEEN ... AND ...");
        auto to = TimeValue();
        if (!to.ok()) return to.status();
        node->time = *from;
        node->time_to = *to;
        return NodePtr(node);
      }
      if (op.kind != Token::Kind::kOp) return Error(op, "expected = != > >= < <= or BETWEEN for a time");
      Next();
      static const std::pair<const char*, Op> kOps[] = {{"=", Op::kEq}, {"!=", Op::kNe}, {"<>", Op::kNe},
                                                        {">", Op::kGt}, {">=", Op::kGe}, {"<", Op::kLt},
                                                        {"<=", Op::kLe}};
      for (const auto& [text, o] : kOps) {
        if (op.text == text) node->op = o;
      }
      auto time = TimeValue();
      if (!time.ok()) return time.status();
      node->time = *time;
      return NodePtr(node);
    }
    if (Keyword("IS")) {
      node->op = Keyword("NOT") ? Op::kIsNotNull : Op::kIsNull;
      if (!Keyword("NULL")) return Error(Peek(), "expected NULL after IS [NOT]");
      return NodePtr(node);
    }
    if (Keyword("NOT")) {
      if (!Keyword("STARTS_WITH")) return Error(Peek(), "expected STARTS_WITH after NOT");
      node->op = Op::kNotStartsWith;
    } else if (Keyword("STARTS_WITH")) {
      node->op = Op::kStartsWith;
    } else if (op.kind == Token::Kind::kOp && (op.text == "=" || op.text == "!=" || op.text == "<>")) {
      Next();
      node->op = op.text == "=" ? Op::kEq : Op::kNe;
    } else {
      return Error(op, "expected = != STARTS_WITH, NOT STARTS_WITH or IS [NOT] NULL for a string");
    }
    const Token& value = Next();
    if (value.kind != Token::Kind::kString) return Error(value, "expected a quoted value");
    node->text = *field == Field::kStatus ? StatusKey(value.text) : value.text;
    if (*field == Field::kStatus && node->text != "running" && node->text != "shuttingdown" &&
        node->text != "shutdown") {
      return Error(value, "a worker's status is Running, ShuttingDown or Shutdown");
    }
    return NodePtr(node);
  }

  absl::string_view text_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

bool Evaluate(const WorkerQuery::Node& n, const wk::WorkerHeartbeat& w) {
  using Kind = WorkerQuery::Node::Kind;
  if (n.kind == Kind::kAnd) {
    for (const auto& c : n.children) {
      if (!Evaluate(*c, w)) return false;
    }
    return true;
  }
  if (n.kind == Kind::kOr) {
    for (const auto& c : n.children) {
      if (Evaluate(*c, w)) return true;
    }
    return false;
  }
  if (IsTime(n.field)) {
    const absl::Time t = TimeOf(w, n.field);
    switch (n.op) {
      case Op::kEq: return t == n.time;
      case Op::kNe: return t != n.time;
      case Op::kGt: return t > n.time;
      case Op::kGe: return t >= n.time;
      case Op::kLt: return t < n.time;
      case Op::kLe: return t <= n.time;
      case Op::kBetween: return t >= n.time && t <= n.time_to;
      default: return false;
    }
  }
  const std::string v = TextOf(w, n.field);
  switch (n.op) {
    case Op::kEq: return v == n.text;
    case Op::kNe: return v != n.text;
    case Op::kStartsWith: return v.rfind(n.text, 0) == 0;
    case Op::kNotStartsWith: return v.rfind(n.text, 0) != 0;
    case Op::kIsNull: return v.empty();
    case Op::kIsNotNull: return !v.empty();
    default: return false;
  }
}

}  // namespace

absl::StatusOr<WorkerQuery> WorkerQuery::Compile(absl::string_view text) {
  WorkerQuery q;
  if (text.size() > kMaxWorkerQueryBytes) {
    return absl::InvalidArgumentError(absl::StrCat("invalid worker query: ", text.size(),
                                                   " bytes, over the limit of ", kMaxWorkerQueryBytes));
  }
  if (absl::StripAsciiWhitespace(text).empty()) return q;
  auto root = Parser(text).Parse();
  if (!root.ok()) return root.status();
  q.root_ = *std::move(root);
  return q;
}

bool WorkerQuery::Matches(const wk::WorkerHeartbeat& worker) const {
  return root_ == nullptr || Evaluate(*root_, worker);
}

}  // namespace tock::server::matching
