#include "server-core/history/namespace_activity.h"

#include "absl/strings/str_cat.h"

namespace tock::server::history {

absl::Status NamespaceStateUnknown(const std::string& namespace_id) {
  return absl::UnavailableError(absl::StrCat(
      "whether namespace ", namespace_id.substr(0, 64),
      " is active on this cluster could not be read from the store; retry"));
}

}  // namespace tock::server::history
