#include "lib/admin/namespace_diff.h"

#include <algorithm>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/common/duration.h"
#include "lib/common/json_flatten.h"
#include "lib/common/proto_json.h"

namespace tock::admin {
namespace {

// "259200s" -> "3d"; anything else unchanged.
std::string Humanize(const std::string& value) {
  if (value.size() < 2 || value.back() != 's') return value;
  double seconds = 0;
  if (!absl::SimpleAtod(value.substr(0, value.size() - 1), &seconds)) return value;
  return FormatHumanDuration(absl::Seconds(seconds));
}

std::map<std::string, std::string> Fields(const tock::persistence::v1::NamespaceRecord& record) {
  tock::persistence::v1::NamespaceRecord copy = record;
  copy.clear_failover_history();  // the failover version itself is compared
  copy.clear_config_version();     // bookkeeping: it changes with every change
  std::map<std::string, std::string> out;
  for (auto& [path, value] : FlattenJson(ProtoToJson(copy))) out[path] = Humanize(value);
  return out;
}

std::string Quote(const std::string& s) {
  return s.empty() || s.find(' ') != std::string::npos ? absl::StrCat("\"", s, "\"") : s;
}

}  // namespace

std::vector<FieldChange> DiffNamespaceRecords(const tock::persistence::v1::NamespaceRecord& before,
                                              const tock::persistence::v1::NamespaceRecord& after) {
  std::map<std::string, std::string> a = Fields(before), b = Fields(after);
  std::vector<FieldChange> changes;
  for (const auto& [path, value] : b) {
    auto it = a.find(path);
    std::string old = it == a.end() ? "" : it->second;
    if (old != value) changes.push_back({path, old, value});
  }
  for (const auto& [path, value] : a) {
    if (!b.contains(path)) changes.push_back({path, value, ""});
  }
  std::sort(changes.begin(), changes.end(),
            [](const FieldChange& x, const FieldChange& y) { return x.field < y.field; });
  return changes;
}

std::string SummarizeChanges(const std::vector<FieldChange>& changes) {
  if (changes.empty()) return "no change";
  std::string out;
  for (const FieldChange& c : changes) {
    if (!out.empty()) out += "; ";
    absl::StrAppend(&out, c.field, ": ", Quote(c.before), " -> ", Quote(c.after));
  }
  return out;
}

}  // namespace tock::admin
