#include "server-core/security/authz_claims.h"

#include <algorithm>

#include "absl/strings/match.h"

namespace tock::server::security {

Role Permissions::On(absl::string_view namespace_name) const {
  auto it = namespaces.find(namespace_name);
  const Role own = it == namespaces.end() ? Role::kNone : it->second;
  return std::max(own, system);
}

void Permissions::Merge(const Permissions& other) {
  system = std::max(system, other.system);
  for (const auto& [name, role] : other.namespaces) {
    Role& mine = namespaces[name];
    mine = std::max(mine, role);
  }
}

Role ParseRole(absl::string_view text) {
  if (absl::EqualsIgnoreCase(text, "read")) return Role::kRead;
  if (absl::EqualsIgnoreCase(text, "worker")) return Role::kWorker;
  if (absl::EqualsIgnoreCase(text, "write")) return Role::kWrite;
  if (absl::EqualsIgnoreCase(text, "admin")) return Role::kAdmin;
  return Role::kNone;
}

Permissions MapPermissions(const std::vector<std::string>& entries) {
  Permissions out;
  for (const std::string& entry : entries) {
    const size_t colon = entry.rfind(':');
    if (colon == std::string::npos || colon == 0) continue;
    const Role role = ParseRole(absl::string_view(entry).substr(colon + 1));
    if (role == Role::kNone) continue;
    const absl::string_view name = absl::string_view(entry).substr(0, colon);
    if (name == kSystemNamespace) {
      out.system = std::max(out.system, role);
    } else {
      Role& mine = out.namespaces[std::string(name)];
      mine = std::max(mine, role);
    }
  }
  return out;
}

}  // namespace tock::server::security
