// Conversion between absl::Status and grpc::Status at the wire edges.
//
// ToGrpcStatus (server side) packs every detail attached with WithDetail into a
// google.rpc.Status-compatible message in the `grpc-status-details-bin` trailer, which is
// where the Temporal SDKs look. FromGrpcStatus (client side) unpacks it again.
#pragma once

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace tock {

// Messages longer than kMaxStatusMessage bytes are cut there (marked as truncated).
inline constexpr size_t kMaxStatusMessage = 4096;
grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace tock
