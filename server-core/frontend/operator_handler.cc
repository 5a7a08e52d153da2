#include "server-core/frontend/handlers.h"

namespace tock::server::frontend {
namespace {

constexpr char kService[] = "temporal.api.operatorservice.v1.OperatorService/";

}  // namespace

void RegisterOperatorServiceHandlers(rpc::Dispatcher& dispatcher,
                                     namespaces::NamespaceEngine& namespaces,
                                     nexus::EndpointRegistry& endpoints) {
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

  dispatcher.AddUnary<op::CreateNexusEndpointRequest, op::CreateNexusEndpointResponse>(
      std::string(kService) + "CreateNexusEndpoint",
      [&endpoints](const auto& req, const rpc::CallContext&) { return endpoints.Create(req); });
  dispatcher.AddUnary<op::UpdateNexusEndpointRequest, op::UpdateNexusEndpointResponse>(
      std::string(kService) + "UpdateNexusEndpoint",
      [&endpoints](const auto& req, const rpc::CallContext&) { return endpoints.Update(req); });
  dispatcher.AddUnary<op::DeleteNexusEndpointRequest, op::DeleteNexusEndpointResponse>(
      std::string(kService) + "DeleteNexusEndpoint",
      [&endpoints](const auto& req, const rpc::CallContext&) { return endpoints.Delete(req); });
  dispatcher.AddUnary<op::GetNexusEndpointRequest, op::GetNexusEndpointResponse>(
      std::string(kService) + "GetNexusEndpoint",
      [&endpoints](const auto& req, const rpc::CallContext&) { return endpoints.Get(req); });
  dispatcher.AddUnary<op::ListNexusEndpointsRequest, op::ListNexusEndpointsResponse>(
      std::string(kService) + "ListNexusEndpoints",
      [&endpoints](const auto& req, const rpc::CallContext&) { return endpoints.List(req); });
}

}  // namespace tock::server::frontend
