// A run's internal state, read through Tock's AdminService.DescribeMutableState: its history
// branches (version histories), the current one, zombie or not, the last write version.
// Never prints; errors are absl::Status with the server's message. A Temporal frontend has
// no such call: it answers UNIMPLEMENTED, which callers may treat as "not available here".
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "lib/client/connection.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::admin {

// The current run when `run_id` is empty.
absl::StatusOr<tock::admin::v1::DescribeMutableStateResponse> DescribeMutableState(
    client::Connection& connection, const std::string& namespace_name,
    const std::string& workflow_id, const std::string& run_id);

}  // namespace tock::admin
