// The web console on the HTTP port, at its root: `GET /` is the page, `GET /assets/...` its
// scripts, styles and libraries (embedded: console_files.h), `GET /api/v1/settings` what the
// page needs to know of the server (the shape of Temporal's ui-server, so that the official
// UI could boot against it too) and `GET /healthz`.
//
// Every URL the page uses is relative to the page, so the console works under any sub-path
// of a reverse proxy with no configuration. Files carry a strong ETag (a fingerprint of their
// bytes) and are revalidated (304 when unchanged); cpp-httplib compresses them for clients
// that accept gzip or brotli. The page is sent with a Content-Security-Policy that allows
// scripts from this origin only (the import map by its hash) and connections to this origin
// and the codec endpoint.
#pragma once

#include <string>

#include "server-core/http/http_server.h"

namespace tock::server::console {

struct ConsoleOptions {
  std::string codec_endpoint;  // "": payloads are shown as the server sends them
  bool read_only = false;      // the page offers no write actions
  bool auth_enabled = false;   // the page asks for a token
  std::string default_namespace = "default";
  std::string server_version;
  // The HTTP server's path_prefix ("/tock"; "": the root): `GET /tock` is sent on to
  // `/tock/`, where the page's relative URLs resolve under the prefix.
  std::string public_path;
};

// Registers the routes; call before the server starts.
void RegisterConsole(http::HttpServer& server, const ConsoleOptions& options);

// The value of the page's Content-Security-Policy header.
std::string ContentSecurityPolicy(const ConsoleOptions& options);

}  // namespace tock::server::console
