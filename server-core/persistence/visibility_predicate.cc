#include <cctype>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "absl/strings/str_cat.h"
#include "server-core/persistence/visibility_store.h"

namespace tock::persistence {

namespace {

constexpr const char* kCustomPrefixes[kCustomTypes] = {
    "keyword", "text", "int", "double", "bool", "datetime", "keywordlist"};

bool IsWordByte(unsigned char c) { return std::isalnum(c) || c >= 0x80; }

}  // namespace

std::string CustomColumnName(const CustomColumn& column) {
  return absl::StrFormat("%s%02d", kCustomPrefixes[static_cast<int>(column.type)], column.slot);
}

const std::vector<CustomColumn>& AllCustomColumns() {
  static const auto* columns = [] {
    auto* all = new std::vector<CustomColumn>;
    for (int t = 0; t < kCustomTypes; ++t) {
      for (int slot = 1; slot <= kCustomSlots[t]; ++slot) {
        all->push_back({static_cast<CustomType>(t), slot});
      }
    }
    return all;
  }();
  return *columns;
}

std::string NormalizeText(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  bool in_word = false;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (IsWordByte(c)) {
      if (!in_word) out += ' ';
      out += static_cast<char>(std::tolower(c));
      in_word = true;
    } else {
      in_word = false;
    }
  }
  if (!out.empty()) out += ' ';
  return out;
}

std::string CustomValuesJson(const std::vector<CustomValue>& values,
                             const std::vector<std::pair<std::string, std::string>>& system) {
  if (values.empty() && system.empty()) return "";
  nlohmann::json object = nlohmann::json::object();
  for (const CustomValue& v : values) {
    const std::string name = CustomColumnName(v.column);
    std::visit([&](const auto& x) { object[name] = x; }, v.value);
  }
  for (const auto& [column, value] : system) object[column] = value;
  return object.dump();
}

const std::vector<std::string>& VersioningColumns() {
  static const auto* columns = new std::vector<std::string>{
      VisibilityColumn(VisibilityField::kWorkerDeployment, {}),
      VisibilityColumn(VisibilityField::kWorkerDeploymentVersion, {}),
      VisibilityColumn(VisibilityField::kVersioningBehavior, {})};
  return *columns;
}

std::string CustomSearchAttributeColumnsSql(bool postgres) {
  std::string sql;
  for (const CustomColumn& c : AllCustomColumns()) {
    const std::string name = CustomColumnName(c);
    const char* type = "";
    bool indexed = true;
    switch (c.type) {
      case CustomType::kKeyword:
        type = postgres ? "TEXT COLLATE \"C\"" : "TEXT";
        break;
      case CustomType::kText:
        type = postgres ? "TEXT COLLATE \"C\"" : "TEXT";
        indexed = false;  // searched by word (LIKE '% word %'): an index cannot help
        break;
      case CustomType::kKeywordList:
        type = postgres ? "JSONB" : "TEXT";
        indexed = false;
        break;
      case CustomType::kDouble:
        type = postgres ? "DOUBLE PRECISION" : "REAL";
        break;
      case CustomType::kBool:
        indexed = false;  // two values: an index would not narrow a search much
        type = postgres ? "BIGINT" : "INTEGER";
        break;
      case CustomType::kInt:
      case CustomType::kDatetime:
        type = postgres ? "BIGINT" : "INTEGER";
        break;
    }
    absl::StrAppend(&sql, "ALTER TABLE visibility ADD COLUMN ", name, " ", type, ";\n");
    if (indexed) {
      absl::StrAppend(&sql, "CREATE INDEX visibility_", name, " ON visibility(namespace_id, ", name,
                      ", start_ms, run_id) WHERE ", name, " IS NOT NULL;\n");
    }
  }
  return sql;
}

std::string VisibilityColumn(VisibilityField field, const CustomColumn& custom) {
  switch (field) {
    case VisibilityField::kCustom:
      return CustomColumnName(custom);
    case VisibilityField::kWorkflowId:
      return "workflow_id";
    case VisibilityField::kWorkflowType:
      return "workflow_type";
    case VisibilityField::kRunId:
      return "run_id";
    case VisibilityField::kTaskQueue:
      return "task_queue";
    case VisibilityField::kExecutionStatus:
      return "status";
    case VisibilityField::kStartTime:
      return "start_ms";
    case VisibilityField::kCloseTime:
      return "close_ms";
    case VisibilityField::kExecutionTime:
      return "execution_ms";
    case VisibilityField::kWorkerDeployment:
      return "worker_deployment";
    case VisibilityField::kWorkerDeploymentVersion:
      return "deployment_version";
    case VisibilityField::kVersioningBehavior:
      return "versioning_behavior";
  }
  return "run_id";
}

const char* VisibilityFieldName(VisibilityField field) {
  switch (field) {
    case VisibilityField::kWorkflowId:
      return "WorkflowId";
    case VisibilityField::kWorkflowType:
      return "WorkflowType";
    case VisibilityField::kRunId:
      return "RunId";
    case VisibilityField::kTaskQueue:
      return "TaskQueue";
    case VisibilityField::kExecutionStatus:
      return "ExecutionStatus";
    case VisibilityField::kStartTime:
      return "StartTime";
    case VisibilityField::kCloseTime:
      return "CloseTime";
    case VisibilityField::kExecutionTime:
      return "ExecutionTime";
    case VisibilityField::kWorkerDeployment:
      return "TemporalWorkerDeployment";
    case VisibilityField::kWorkerDeploymentVersion:
      return "TemporalWorkerDeploymentVersion";
    case VisibilityField::kVersioningBehavior:
      return "TemporalWorkflowVersioningBehavior";
    case VisibilityField::kCustom:
      return "a custom search attribute";
  }
  return "RunId";
}

namespace {

// The value alternative a field takes: 0 int64_t, 1 std::string, 2 double.
size_t ValueIndex(const VisibilityCondition& c) {
  if (c.field != VisibilityField::kCustom) return IsTextField(c.field) ? 1 : 0;
  switch (c.custom.type) {
    case CustomType::kKeyword:
    case CustomType::kText:
    case CustomType::kKeywordList:
      return 1;
    case CustomType::kDouble:
      return 2;
    default:
      return 0;
  }
}

// Whether a custom column's type takes `op` (see VisibilityCondition).
bool CustomTakes(CustomType type, VisibilityOp op) {
  if (op == VisibilityOp::kIsNull || op == VisibilityOp::kIsNotNull) return true;
  switch (type) {
    case CustomType::kKeyword:
      return true;
    case CustomType::kInt:
    case CustomType::kDouble:
    case CustomType::kDatetime:
      return op != VisibilityOp::kStartsWith;
    case CustomType::kBool:
    case CustomType::kText:
      return op == VisibilityOp::kEqual || op == VisibilityOp::kNotEqual;
    case CustomType::kKeywordList:
      return op == VisibilityOp::kEqual || op == VisibilityOp::kNotEqual ||
             op == VisibilityOp::kIn;
  }
  return false;
}

}  // namespace

absl::Status CheckVisibilityCondition(const VisibilityCondition& c) {
  const size_t want_index = ValueIndex(c);
  const bool text = want_index == 1;
  if (c.field == VisibilityField::kCustom) {
    const int type = static_cast<int>(c.custom.type);
    if (type < 0 || type >= kCustomTypes || c.custom.slot < 1 ||
        c.custom.slot > kCustomSlots[type]) {
      return absl::InvalidArgumentError("visibility filter: no such custom column");
    }
    if (!CustomTakes(c.custom.type, c.op)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "visibility filter: the operator does not apply to ", CustomColumnName(c.custom)));
    }
  }
  for (const VisibilityValue& v : c.values) {
    if (v.index() != want_index) {
      return absl::InvalidArgumentError(absl::StrCat(
          "visibility filter: ", VisibilityFieldName(c.field),
          text ? " takes text" : want_index == 2 ? " takes floating point numbers"
                                                 : " takes numbers"));
    }
  }
  const bool no_value = c.op == VisibilityOp::kIsNull || c.op == VisibilityOp::kIsNotNull;
  const size_t want = no_value ? 0 : c.op == VisibilityOp::kBetween ? 2 : 1;
  if (c.op == VisibilityOp::kIn ? c.values.empty() : c.values.size() != want) {
    return absl::InvalidArgumentError("visibility filter: wrong number of values");
  }
  if (c.op == VisibilityOp::kStartsWith && !text) {
    return absl::InvalidArgumentError("visibility filter: STARTS_WITH needs a text field");
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> VisibilityPageOffset(const std::string& page_token) {
  int64_t offset = 0;
  if (!page_token.empty() && (!absl::SimpleAtoi(page_token, &offset) || offset < 0)) {
    return absl::InvalidArgumentError("the next_page_token is not one this server issued");
  }
  return offset;
}

std::string VisibilityPageToken(int64_t offset) { return std::to_string(offset); }

}  // namespace tock::persistence
