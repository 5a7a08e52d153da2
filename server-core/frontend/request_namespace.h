// The `namespace` field of a WorkflowService request as it arrived (a serialized payload),
// read before the call is dispatched: forwarding to the active cluster and the handover gate
// decide on it without knowing the request's type at compile time.
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <grpcpp/support/byte_buffer.h>

#include <string>
#include <vector>

namespace tock::server::frontend {

// "" when the payload does not parse as `prototype`'s type.
std::string RequestNamespace(const google::protobuf::Message& prototype,
                             const google::protobuf::FieldDescriptor& field,
                             const grpc::ByteBuffer& payload);

// A WorkflowService method whose request has a `namespace` field: what the wrappers that
// decide on a call's namespace (DC redirection, the handover gate) install themselves on.
struct NamespacedMethod {
  std::string name;       // "StartWorkflowExecution"
  std::string full_name;  // "temporal.api.workflowservice.v1.WorkflowService/StartWorkflowExecution"
  const google::protobuf::Message* prototype;  // of its request
  const google::protobuf::FieldDescriptor* field;  // the request's `namespace`
};

// Every such method (each is named after its request, NameRequest, all in one file; the
// service's own descriptor is not linked into the server).
const std::vector<NamespacedMethod>& NamespacedWorkflowMethods();

}  // namespace tock::server::frontend
