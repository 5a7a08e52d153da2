#include "server-core/security/whoami.h"

#include "absl/strings/str_cat.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::server::security {

void RegisterWhoAmI(rpc::Dispatcher& dispatcher, std::function<Authorizer*()> authorizer) {
  namespace adm = tock::admin::v1;
  dispatcher.AddUnary<adm::WhoAmIRequest, adm::WhoAmIResponse>(
      "tock.admin.v1.AdminService/WhoAmI",
      [authorizer = std::move(authorizer)](const adm::WhoAmIRequest&,
                                           const rpc::CallContext& ctx) -> absl::StatusOr<adm::WhoAmIResponse> {
        adm::WhoAmIResponse out;
        Authorizer* checker = authorizer();
        if (checker == nullptr) {
          out.set_cluster_role(std::string(RoleName(Role::kAdmin)));
          return out;
        }
        out.set_authorization_enabled(true);
        // No token and no certificate: nobody, with no role (not an error: the question
        // has an answer). A token that does not verify is one.
        const auto [authorization, subject] = Authorizer::Credentials(ctx);
        if (authorization.empty() && subject.empty()) return out;
        absl::StatusOr<Permissions> permissions = checker->Identify(authorization, subject);
        if (!permissions.ok()) {
          return absl::Status(permissions.status().code(),
                              absl::StrCat("WhoAmI: ", permissions.status().message()));
        }
        out.set_cluster_role(std::string(RoleName(permissions->system)));
        for (const auto& [name, role] : permissions->namespaces) {
          if (role > permissions->system) {
            (*out.mutable_namespace_roles())[name] = std::string(RoleName(role));
          }
        }
        return out;
      });
}

}  // namespace tock::server::security
