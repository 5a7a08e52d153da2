#include "lib/common/grpc_status.h"

#include <string>

#include "absl/strings/match.h"
#include "lib/common/status.h"
#include "tock/rpc/v1/status.pb.h"

namespace tock {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // The last guard against a message that echoes unbounded input: a status travels in HTTP/2
  // trailers, and one too large never reaches the client at all.
  std::string message(status.message().substr(0, kMaxStatusMessage));
  if (status.message().size() > kMaxStatusMessage) {
    while (!message.empty() && (static_cast<unsigned char>(message.back()) & 0xC0) == 0x80) {
      message.pop_back();  // no cut UTF-8 sequence
    }
    if (!message.empty()) message.pop_back();
    message += "... (message truncated)";
  }
  tock::rpc::v1::Status rich;
  rich.set_code(static_cast<int>(status.code()));
  rich.set_message(message);
  status.ForEachPayload([&](absl::string_view type_url, const absl::Cord& payload) {
    if (!absl::StartsWith(type_url, kTypeUrlPrefix)) return;
    auto* any = rich.add_details();
    any->set_type_url(std::string(type_url));
    any->set_value(std::string(payload));
  });
  std::string details;
  if (rich.details_size() > 0) details = rich.SerializeAsString();
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), message, details);
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
