// The pinned protos' OpenAPI descriptions of Temporal's HTTP API, embedded in the binary at
// build time (openapi_files.cc includes the installed files with the assembler's .incbin),
// served as Temporal's server serves them: GET /api/v1/swagger.json (v2) and
// GET /api/v1/openapi.yaml (v3).
#pragma once

#include <string_view>

namespace tock::server::http_api {

std::string_view OpenApiV2Json();
std::string_view OpenApiV3Yaml();

}  // namespace tock::server::http_api
