#include "lib/common/grpc_status.h"

#include <string>

#include "absl/strings/match.h"
#include "lib/common/status.h"
#include "tock/rpc/v1/status.pb.h"

namespace tock {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  tock::rpc::v1::Status rich;
  rich.set_code(static_cast<int>(status.code()));
  rich.set_message(std::string(status.message()));
  status.ForEachPayload([&](absl::string_view type_url, const absl::Cord& payload) {
    if (!absl::StartsWith(type_url, kTypeUrlPrefix)) return;
    auto* any = rich.add_details();
    any->set_type_url(std::string(type_url));
    any->set_value(std::string(payload));
  });
  std::string details;
  if (rich.details_size() > 0) details = rich.SerializeAsString();
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()),
                      details);
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  absl::Status result(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
  tock::rpc::v1::Status rich;
  if (!status.error_details().empty() && rich.ParseFromString(status.error_details())) {
    for (const auto& any : rich.details()) {
      result.SetPayload(any.type_url(), absl::Cord(any.value()));
    }
  }
  return result;
}

}  // namespace tock
