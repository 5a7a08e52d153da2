// The checks on a namespace name shared by every namespace RPC.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "lib/common/status.h"

namespace tock::server::namespaces {

inline constexpr size_t kMaxNamespaceLength = kMaxNamespaceNameLength;

// Empty: "Namespace not set on request."; over 1000 characters: "Namespace length exceeds
// limit."; whitespace or control characters: an INVALID_ARGUMENT naming the character.
absl::Status ValidateNamespaceName(const std::string& name);

}  // namespace tock::server::namespaces
