// The roles a caller holds, from the entries of a token's permissions claim (or of a client
// certificate's subject in the config), in the manner of Temporal's default JWT claim mapper:
//
//   "orders:write"           the write role on namespace "orders"
//   "temporal-system:admin"  the admin role on every namespace and on the cluster
//
// Each entry is NAMESPACE:ROLE split at the last ':' (namespace names may not hold one, but
// this keeps a namespace with a ':' from being read as a role); ROLE is read, worker, write or
// admin (any case). Entries in another shape or with another role are ignored, as Temporal
// does, so that an identity provider may put other permissions in the same claim. Several
// entries for one namespace keep the highest role.
//
// Thread safety: a value type.
#pragma once

#include <map>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "server-core/security/authz_rules.h"

namespace tock::server::security {

// The pseudo-namespace of cluster-wide roles.
inline constexpr char kSystemNamespace[] = "temporal-system";

struct Permissions {
  Role system = Role::kNone;
  std::map<std::string, Role, std::less<>> namespaces;

  // The role on `namespace_name`: the namespace's own or the cluster-wide one, the higher.
  Role On(absl::string_view namespace_name) const;
  // Adds the roles of `other` (keeping the higher of each).
  void Merge(const Permissions& other);
};

// The role named by `text` ("read", "Worker", ...), kNone for anything else.
Role ParseRole(absl::string_view text);

// The permissions of claim entries (see above).
Permissions MapPermissions(const std::vector<std::string>& entries);

}  // namespace tock::server::security
