#include "server-core/frontend/handlers.h"

namespace tock::server::frontend {
namespace {

constexpr char kService[] = "temporal.api.operatorservice.v1.OperatorService/";

}  // namespace

void RegisterOperatorServiceHandlers(rpc::Dispatcher& dispatcher,
                                     namespaces::NamespaceEngine& namespaces) {
  dispatcher.AddUnary<op::AddSearchAttributesRequest, op::AddSearchAttributesResponse>(
      std::string(kService) + "AddSearchAttributes",
      [&namespaces](const auto& req, const rpc::CallContext&) {
        return namespaces.AddSearchAttributes(req);
      });
  dispatcher.AddUnary<op::RemoveSearchAttributesRequest, op::RemoveSearchAttributesResponse>(
      std::string(kService) + "RemoveSearchAttributes",
      [&namespaces](const auto& req, const rpc::CallContext&) {
        return namespaces.RemoveSearchAttributes(req);
      });
  dispatcher.AddUnary<op::ListSearchAttributesRequest, op::ListSearchAttributesResponse>(
      std::string(kService) + "ListSearchAttributes",
      [&namespaces](const auto& req, const rpc::CallContext&) {
        return namespaces.ListSearchAttributes(req);
      });
  dispatcher.AddUnary<op::DeleteNamespaceRequest, op::DeleteNamespaceResponse>(
      std::string(kService) + "DeleteNamespace",
      [&namespaces](const auto& req, const rpc::CallContext&) { return namespaces.Delete(req); });
}

}  // namespace tock::server::frontend
