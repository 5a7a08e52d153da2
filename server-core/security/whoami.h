// AdminService.WhoAmI (GET /tock/v1/whoami): the caller's roles as the authorizer reads its
// token and client certificate, so that a client (the web console) can list the namespaces
// it may read and leave out the actions it may not take. Open to every caller: it tells a
// caller only about itself; one with neither token nor certificate holds no role, one whose
// token does not verify is UNAUTHENTICATED.
#pragma once

#include <functional>

#include "server-core/rpc/dispatcher.h"
#include "server-core/security/authz_interceptor.h"

namespace tock::server::security {

// `authorizer()` is the server's authorizer, or null when authorization is off (then the
// answer says so, and admin everywhere). Called at each call: the authorizer may be made
// after the handlers are registered.
void RegisterWhoAmI(rpc::Dispatcher& dispatcher, std::function<Authorizer*()> authorizer);

}  // namespace tock::server::security
