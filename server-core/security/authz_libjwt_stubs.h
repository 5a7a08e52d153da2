// libjwt, opened at the first token verification (lib/common/lazy_library.h): `tock` links
// the server core for `tock server start-dev`, and neither it nor a tock-server without
// `authorization:` should load libjwt and its libraries (jansson, libb64) at every start.
// The stubs of authz_libjwt_stubs.cc define the few libjwt functions the verifier calls.
#pragma once

#include "lib/common/lazy_library.h"

namespace tock::server::security {

LazyLibrary& Libjwt();

}  // namespace tock::server::security
