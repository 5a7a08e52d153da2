#include "cmd/tock/output/branch_format.h"

#include "absl/strings/str_cat.h"

namespace tock::cli {
namespace {

constexpr size_t kTokenShown = 16;

std::string TokenText(const std::string& hex) {
  if (hex.empty()) return "-";
  if (hex.size() <= kTokenShown) return hex;
  return absl::StrCat(hex.substr(0, kTokenShown), "...");
}

}  // namespace

std::vector<std::string> BranchColumns() { return {"BRANCH", "CURRENT", "TOKEN", "EVENTS", "VERSION"}; }

std::vector<std::vector<std::string>> BranchRows(const tock::admin::v1::HistoryBranch& branch,
                                                 int index) {
  std::vector<std::vector<std::string>> rows;
  const std::string current = branch.is_current() ? "yes" : "";
  if (branch.items().empty()) {
    rows.push_back({std::to_string(index), current, TokenText(branch.branch_token()), "-", ""});
    return rows;
  }
  int64_t first = 1;
  for (const auto& item : branch.items()) {
    const bool head = rows.empty();
    rows.push_back({head ? std::to_string(index) : "", head ? current : "",
                    head ? TokenText(branch.branch_token()) : "",
                    first == item.event_id() ? std::to_string(first)
                                             : absl::StrCat(first, "-", item.event_id()),
                    std::to_string(item.version())});
    first = item.event_id() + 1;
  }
  return rows;
}

}  // namespace tock::cli
