#include "server-core/http_api/openapi_files.h"

// The files' bytes in .rodata, between a start and an end symbol of each. The paths are
// compile definitions (CMake), and the object depends on the files, so a proto bump
// rebuilds it.
__asm__(
    ".section .rodata\n"
    ".balign 16\n"
    ".global tock_openapi_v2_begin\n.hidden tock_openapi_v2_begin\ntock_openapi_v2_begin:\n"
    ".incbin \"" TOCK_OPENAPI_V2_FILE "\"\n"
    ".global tock_openapi_v2_end\n.hidden tock_openapi_v2_end\ntock_openapi_v2_end:\n"
    ".balign 16\n"
    ".global tock_openapi_v3_begin\n.hidden tock_openapi_v3_begin\ntock_openapi_v3_begin:\n"
    ".incbin \"" TOCK_OPENAPI_V3_FILE "\"\n"
    ".global tock_openapi_v3_end\n.hidden tock_openapi_v3_end\ntock_openapi_v3_end:\n"
    ".previous\n");

extern "C" const char tock_openapi_v2_begin[], tock_openapi_v2_end[];
extern "C" const char tock_openapi_v3_begin[], tock_openapi_v3_end[];

namespace tock::server::http_api {

std::string_view OpenApiV2Json() {
  return {tock_openapi_v2_begin, static_cast<size_t>(tock_openapi_v2_end - tock_openapi_v2_begin)};
}

std::string_view OpenApiV3Yaml() {
  return {tock_openapi_v3_begin, static_cast<size_t>(tock_openapi_v3_end - tock_openapi_v3_begin)};
}

}  // namespace tock::server::http_api
