// absl::Status <-> grpc::Status at the wire edges (lib/common/grpc_status.h): code, message
// and Temporal error details survive the trip server -> client.
#include "lib/common/grpc_status.h"

#include <gtest/gtest.h>

#include "lib/common/status.h"
#include "temporal/api/errordetails/v1/message.pb.h"
#include "tock/rpc/v1/status.pb.h"

namespace tock {
namespace {

namespace errordetails = temporal::api::errordetails::v1;

TEST(GrpcStatusTest, NamespaceNotFoundKeepsCodeMessageAndDetail) {
  absl::Status original = NamespaceNotFoundError("orders");
  grpc::Status wire = ToGrpcStatus(original);
  EXPECT_EQ(wire.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(wire.error_message(), "Namespace orders is not found.");

  // The trailer is a google.rpc.Status: code, message, and the detail as an Any.
  tock::rpc::v1::Status rich;
  ASSERT_TRUE(rich.ParseFromString(wire.error_details()));
  EXPECT_EQ(rich.code(), 5);
  EXPECT_EQ(rich.message(), "Namespace orders is not found.");
  ASSERT_EQ(rich.details_size(), 1);
  EXPECT_EQ(rich.details(0).type_url(),
            "type.googleapis.com/temporal.api.errordetails.v1.NamespaceNotFoundFailure");

  absl::Status back = FromGrpcStatus(wire);
  EXPECT_EQ(back.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(back.message(), "Namespace orders is not found.");
  auto detail = GetDetail<errordetails::NamespaceNotFoundFailure>(back);
  ASSERT_TRUE(detail.has_value());
  EXPECT_EQ(detail->namespace_(), "orders");
  EXPECT_FALSE(GetDetail<errordetails::NamespaceAlreadyExistsFailure>(back).has_value());
}

TEST(GrpcStatusTest, NamespaceNotActiveDetailKeepsItsFields) {
  absl::Status back = FromGrpcStatus(ToGrpcStatus(NamespaceNotActiveError("pay", "b", "a")));
  EXPECT_EQ(back.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(back.message(),
            "Namespace: pay is active in cluster: b, while current cluster a is a standby "
            "cluster.");
  auto detail = GetDetail<errordetails::NamespaceNotActiveFailure>(back);
  ASSERT_TRUE(detail.has_value());
  EXPECT_EQ(detail->namespace_(), "pay");
  EXPECT_EQ(detail->active_cluster(), "b");
  EXPECT_EQ(detail->current_cluster(), "a");
}

TEST(GrpcStatusTest, SeveralDetailsAllTravel) {
  errordetails::NamespaceNotFoundFailure not_found;
  not_found.set_namespace_("x");
  absl::Status s = WithDetail(NamespaceAlreadyExistsError(), not_found);
  grpc::Status wire = ToGrpcStatus(s);
  EXPECT_EQ(wire.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  absl::Status back = FromGrpcStatus(wire);
  EXPECT_EQ(back.message(), "Namespace already exists.");
  EXPECT_TRUE(GetDetail<errordetails::NamespaceAlreadyExistsFailure>(back).has_value());
  ASSERT_TRUE(GetDetail<errordetails::NamespaceNotFoundFailure>(back).has_value());
  EXPECT_EQ(GetDetail<errordetails::NamespaceNotFoundFailure>(back)->namespace_(), "x");
}

TEST(GrpcStatusTest, EveryCodeMapsNumberForNumber) {
  for (int code = 1; code <= 16; ++code) {
    absl::Status s(static_cast<absl::StatusCode>(code), "m");
    grpc::Status wire = ToGrpcStatus(s);
    EXPECT_EQ(static_cast<int>(wire.error_code()), code);
    EXPECT_EQ(static_cast<int>(FromGrpcStatus(wire).code()), code);
    EXPECT_EQ(FromGrpcStatus(wire).message(), "m");
  }
}

TEST(GrpcStatusTest, PlainErrorsCarryNoTrailerAndOkStaysOk) {
  grpc::Status plain = ToGrpcStatus(absl::InvalidArgumentError("bad"));
  EXPECT_EQ(plain.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(plain.error_message(), "bad");
  EXPECT_TRUE(plain.error_details().empty());
  EXPECT_EQ(FromGrpcStatus(plain), absl::InvalidArgumentError("bad"));

  // Payloads that are not type URLs (absl's own annotations) stay on this side.
  absl::Status local = absl::InternalError("x");
  local.SetPayload("tock/debug", absl::Cord("trace"));
  EXPECT_TRUE(ToGrpcStatus(local).error_details().empty());

  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
}

TEST(GrpcStatusTest, UnreadableTrailerKeepsCodeAndMessage) {
  grpc::Status wire(grpc::StatusCode::UNAVAILABLE, "down", "\xff\xff not a proto");
  absl::Status back = FromGrpcStatus(wire);
  EXPECT_EQ(back.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(back.message(), "down");
}

}  // namespace
}  // namespace tock
