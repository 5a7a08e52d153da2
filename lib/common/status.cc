#include "lib/common/status.h"

#include "absl/strings/str_cat.h"
#include "temporal/api/errordetails/v1/message.pb.h"

namespace tock {

std::string TypeUrlOf(const google::protobuf::Message& message) {
  return absl::StrCat(kTypeUrlPrefix, message.GetDescriptor()->full_name());
}

absl::Status WithDetail(absl::Status status, const google::protobuf::Message& detail) {
  status.SetPayload(TypeUrlOf(detail), absl::Cord(detail.SerializeAsString()));
  return status;
}

absl::Status NamespaceNotFoundError(absl::string_view name) {
  // No namespace has a longer name; echoing one back would make the answer as large as it.
  if (name.size() > kMaxNamespaceNameLength) {
    return absl::InvalidArgumentError("Namespace length exceeds limit.");
  }
  temporal::api::errordetails::v1::NamespaceNotFoundFailure detail;
  detail.set_namespace_(std::string(name));
  return WithDetail(absl::NotFoundError(absl::StrCat("Namespace ", name, " is not found.")),
                    detail);
}

absl::Status NamespaceAlreadyExistsError() {
  return WithDetail(absl::AlreadyExistsError("Namespace already exists."),
                    temporal::api::errordetails::v1::NamespaceAlreadyExistsFailure());
}

absl::Status NamespaceNotActiveError(absl::string_view name, absl::string_view active_cluster,
                                     absl::string_view current_cluster) {
  temporal::api::errordetails::v1::NamespaceNotActiveFailure detail;
  detail.set_namespace_(std::string(name));
  detail.set_current_cluster(std::string(current_cluster));
  detail.set_active_cluster(std::string(active_cluster));
  return WithDetail(
      absl::FailedPreconditionError(absl::StrCat("Namespace: ", name, " is active in cluster: ",
                                                 active_cluster, ", while current cluster ",
                                                 current_cluster, " is a standby cluster.")),
      detail);
}

absl::Status NamespaceInvalidStateError(absl::string_view name, int state,
                                        absl::string_view allowed) {
  temporal::api::errordetails::v1::NamespaceInvalidStateFailure detail;
  detail.set_namespace_(std::string(name));
  detail.set_state(static_cast<temporal::api::enums::v1::NamespaceState>(state));
  return WithDetail(
      absl::FailedPreconditionError(absl::StrCat(
          "Namespace ", name, " is in state ",
          temporal::api::enums::v1::NamespaceState_Name(detail.state()), "; allowed: ", allowed,
          ".")),
      detail);
}

}  // namespace tock
