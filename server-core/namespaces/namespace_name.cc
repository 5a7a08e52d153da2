#include "server-core/namespaces/namespace_name.h"

#include "absl/strings/str_format.h"

namespace tock::server::namespaces {

absl::Status ValidateNamespaceName(const std::string& name) {
  if (name.empty()) return absl::InvalidArgumentError("Namespace not set on request.");
  if (name.size() > kMaxNamespaceLength) {
    return absl::InvalidArgumentError("Namespace length exceeds limit.");
  }
  for (size_t i = 0; i < name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    if (c <= 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "Namespace name contains %s at position %d (byte 0x%02x); names may not contain "
          "whitespace or control characters.",
          c == ' ' ? "a space" : "a control character", i + 1, c));
    }
  }
  return absl::OkStatus();
}

}  // namespace tock::server::namespaces
