// Status helpers shared by the server, the client library and the CLI.
//
// Errors are absl::Status everywhere (gRPC codes number for number). A Temporal
// `errordetails` message travels with a status as a payload keyed by its type URL
// ("type.googleapis.com/temporal.api.errordetails.v1.X"); grpc_status.h packs those payloads
// into the wire trailer and back, so a detail survives the trip server -> client unchanged.
#pragma once

#include <optional>
#include <string>
#include "absl/strings/string_view.h"

#include <google/protobuf/message.h>

#include "absl/status/status.h"

namespace tock {

inline constexpr absl::string_view kTypeUrlPrefix = "type.googleapis.com/";

// The type URL under which `message` is stored in an Any.
std::string TypeUrlOf(const google::protobuf::Message& message);

// Returns `status` with `detail` attached (replacing a detail of the same type).
absl::Status WithDetail(absl::Status status, const google::protobuf::Message& detail);

// Parses the attached detail of type T, if any.
template <typename T>
std::optional<T> GetDetail(const absl::Status& status) {
  T detail;
  auto payload = status.GetPayload(TypeUrlOf(detail));
  if (!payload.has_value()) return std::nullopt;
  if (!detail.ParseFromString(std::string(*payload))) return std::nullopt;
  return detail;
}

// Common Temporal errors, with the message and the detail the SDKs expect.
// Namespace names are at most this long (Temporal's limit.maxIDLength).
inline constexpr size_t kMaxNamespaceNameLength = 1000;
// NOT_FOUND `Namespace NAME is not found.`; for a name longer than any namespace can have,
// INVALID_ARGUMENT `Namespace length exceeds limit.` (never an unbounded echo).
absl::Status NamespaceNotFoundError(absl::string_view name);
absl::Status NamespaceAlreadyExistsError();
absl::Status NamespaceNotActiveError(absl::string_view name, absl::string_view active_cluster,
                                     absl::string_view current_cluster);
absl::Status NamespaceInvalidStateError(absl::string_view name, int state,
                                        absl::string_view allowed);

}  // namespace tock
