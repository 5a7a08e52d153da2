#include "server-core/frontend/request_namespace.h"

#include <google/protobuf/dynamic_message.h>

#include <memory>
#include <string_view>
#include <vector>

#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::server::frontend {

std::string RequestNamespace(const google::protobuf::Message& prototype,
                             const google::protobuf::FieldDescriptor& field,
                             const grpc::ByteBuffer& payload) {
  std::vector<grpc::Slice> slices;
  if (!payload.Dump(&slices).ok()) return "";
  std::string bytes;
  for (const grpc::Slice& s : slices) {
    bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  std::unique_ptr<google::protobuf::Message> request(prototype.New());
  if (!request->ParseFromString(bytes)) return "";
  return request->GetReflection()->GetString(*request, &field);
}

const std::vector<NamespacedMethod>& NamespacedWorkflowMethods() {
  namespace pb = google::protobuf;
  static const auto* methods = [] {
    auto* out = new std::vector<NamespacedMethod>();
    const pb::FileDescriptor* file =
        temporal::api::workflowservice::v1::StartWorkflowExecutionRequest::descriptor()->file();
    for (int i = 0; i < file->message_type_count(); ++i) {
      const pb::Descriptor* input = file->message_type(i);
      const std::string type = input->name();
      constexpr std::string_view kSuffix = "Request";
      if (!type.ends_with(kSuffix)) continue;
      const pb::FieldDescriptor* field = input->FindFieldByName("namespace");
      if (field == nullptr || field->type() != pb::FieldDescriptor::TYPE_STRING ||
          field->is_repeated()) {
        continue;
      }
      const pb::Message* prototype = pb::MessageFactory::generated_factory()->GetPrototype(input);
      if (prototype == nullptr) continue;
      const std::string name = type.substr(0, type.size() - kSuffix.size());
      out->push_back({name, "temporal.api.workflowservice.v1.WorkflowService/" + name, prototype,
                      field});
    }
    return out;
  }();
  return *methods;
}

}  // namespace tock::server::frontend
