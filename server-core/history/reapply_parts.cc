#include "server-core/history/reapply_parts.h"

namespace tock::server::history {

std::vector<std::vector<persistence::HistoryEvent>> ReapplyParts(
    const std::vector<persistence::HistoryEvent>& events) {
  std::vector<std::vector<persistence::HistoryEvent>> parts;
  size_t bytes = 0;
  for (const persistence::HistoryEvent& e : events) {
    const size_t size = e.ByteSizeLong();
    if (parts.empty() || parts.back().size() >= kMaxReapplyEvents ||
        (!parts.back().empty() && bytes + size > kMaxReapplyBytes)) {
      parts.emplace_back();
      bytes = 0;
    }
    parts.back().push_back(e);
    bytes += size;
  }
  return parts;
}

}  // namespace tock::server::history
