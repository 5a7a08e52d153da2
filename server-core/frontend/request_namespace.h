// The `namespace` field of a WorkflowService request as it arrived (a serialized payload),
// read before the call is dispatched: forwarding to the active cluster and the handover gate
// decide on it without knowing the request's type at compile time.
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <grpcpp/support/byte_buffer.h>

#include <string>

namespace tock::server::frontend {

// "" when the payload does not parse as `prototype`'s type.
std::string RequestNamespace(const google::protobuf::Message& prototype,
                             const google::protobuf::FieldDescriptor& field,
                             const grpc::ByteBuffer& payload);

}  // namespace tock::server::frontend
