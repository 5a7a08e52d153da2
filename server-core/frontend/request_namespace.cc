#include "server-core/frontend/request_namespace.h"

#include <memory>
#include <vector>

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

}  // namespace tock::server::frontend
