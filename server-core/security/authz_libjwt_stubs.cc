// The libjwt functions token verification calls, forwarding to the real ones resolved on
// first call (authz_libjwt_stubs.h). The prototypes are jwt.h's own.
#include "server-core/security/authz_libjwt_stubs.h"

#include <jwt.h>

namespace tock::server::security {

LazyLibrary& Libjwt() {
  static LazyLibrary library("libjwt.so.0", "libjwt0");
  return library;
}

}  // namespace tock::server::security

#define TOCK_LIBJWT_REAL(name) TOCK_LAZY_REAL(tock::server::security::Libjwt(), name)

extern "C" {

int jwt_decode(jwt_t** jwt, const char* token, const unsigned char* key, int key_len) {
  TOCK_LIBJWT_REAL(jwt_decode);
  return real(jwt, token, key, key_len);
}
void jwt_free(jwt_t* jwt) {
  TOCK_LIBJWT_REAL(jwt_free);
  real(jwt);
}
jwt_alg_t jwt_get_alg(jwt_t* jwt) {
  TOCK_LIBJWT_REAL(jwt_get_alg);
  return real(jwt);
}
const char* jwt_get_header(jwt_t* jwt, const char* header) {
  TOCK_LIBJWT_REAL(jwt_get_header);
  return real(jwt, header);
}
const char* jwt_get_grant(jwt_t* jwt, const char* grant) {
  TOCK_LIBJWT_REAL(jwt_get_grant);
  return real(jwt, grant);
}
char* jwt_get_grants_json(jwt_t* jwt, const char* grant) {
  TOCK_LIBJWT_REAL(jwt_get_grants_json);
  return real(jwt, grant);
}

}  // extern "C"
