#include "lib/admin/mutable_state_ops.h"

namespace tock::admin {

absl::StatusOr<tock::admin::v1::DescribeMutableStateResponse> DescribeMutableState(
    client::Connection& connection, const std::string& namespace_name,
    const std::string& workflow_id, const std::string& run_id) {
  tock::admin::v1::DescribeMutableStateRequest req;
  req.set_namespace_(namespace_name);
  req.set_workflow_id(workflow_id);
  req.set_run_id(run_id);
  return connection.Call(&tock::admin::v1::AdminService::Stub::DescribeMutableState,
                         connection.admin(), req, namespace_name);
}

}  // namespace tock::admin
