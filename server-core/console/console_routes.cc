#include "server-core/console/console_routes.h"

#include <openssl/sha.h>

#include <map>
#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/common/hashing.h"
#include "nlohmann/json.hpp"
#include "server-core/console/console_files.h"

namespace tock::server::console {
namespace {

// The official UI encodes path parameters once from this version of its settings on; the
// console and this server's routes do the same.
constexpr char kUiSettingsVersion[] = "2.38.0";

struct ServedFile {
  std::string_view bytes;
  std::string content_type;
  std::string etag;
};

std::string ContentTypeOf(std::string_view file) {
  const absl::string_view path(file.data(), file.size());
  if (absl::EndsWith(path, ".html")) return "text/html; charset=utf-8";
  if (absl::EndsWith(path, ".js") || absl::EndsWith(path, ".mjs")) return "text/javascript; charset=utf-8";
  if (absl::EndsWith(path, ".css")) return "text/css; charset=utf-8";
  if (absl::EndsWith(path, ".svg")) return "image/svg+xml";
  if (absl::EndsWith(path, ".json")) return "application/json";
  return "application/octet-stream";
}

// The import map's text in the page: the one inline script, allowed by its hash.
std::string ImportMapHash(std::string_view page) {
  constexpr std::string_view kOpen = "<script type=\"importmap\">";
  const size_t open = page.find(kOpen);
  if (open == std::string_view::npos) return "";
  const size_t start = open + kOpen.size();
  const size_t end = page.find("</script>", start);
  if (end == std::string_view::npos) return "";
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(page.data() + start), end - start, digest);
  return absl::StrCat("'sha256-",
                      absl::Base64Escape(absl::string_view(reinterpret_cast<char*>(digest), sizeof(digest))),
                      "'");
}

http::HttpResponse Serve(const ServedFile& file, const http::HttpRequest& request,
                         std::vector<std::pair<std::string, std::string>> extra_headers = {}) {
  http::HttpResponse response;
  response.content_type = file.content_type;
  response.headers = std::move(extra_headers);
  response.headers.emplace_back("ETag", file.etag);
  response.headers.emplace_back("Cache-Control", "no-cache");  // revalidated by the ETag
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  auto match = request.headers.find("if-none-match");
  if (match != request.headers.end() && match->second == file.etag) {
    response.status = 304;
    return response;
  }
  response.body = std::string(file.bytes);
  return response;
}

std::string SettingsJson(const ConsoleOptions& options) {
  nlohmann::json settings = {
      {"Auth", {{"Enabled", options.auth_enabled}, {"Options", nlohmann::json::array()}}},
      {"DefaultNamespace", options.default_namespace},
      {"ShowTemporalSystemNamespace", false},
      {"NavCollapsedByDefault", false},
      {"FeedbackURL", ""},
      {"Codec",
       {{"Endpoint", options.codec_endpoint},
        {"PassAccessToken", false},
        {"IncludeCredentials", false},
        {"DefaultErrorMessage", ""},
        {"DefaultErrorLink", ""}}},
      {"Version", kUiSettingsVersion},
      {"DisableWriteActions", options.read_only},
      {"WorkflowTerminateDisabled", options.read_only},
      {"WorkflowCancelDisabled", options.read_only},
      {"WorkflowSignalDisabled", options.read_only},
      {"WorkflowUpdateDisabled", options.read_only},
      {"WorkflowResetDisabled", options.read_only},
      {"WorkflowPauseDisabled", options.read_only},
      {"BatchActionsDisabled", options.read_only},
      {"StartWorkflowDisabled", options.read_only},
      {"HideWorkflowQueryErrors", false},
      {"RefreshWorkflowCountsDisabled", false},
      {"ActivityCommandsDisabled", options.read_only},
      // Tock's own: what the console shows of the server it runs in.
      {"TockServerVersion", options.server_version},
  };
  return settings.dump();
}

}  // namespace

std::string ContentSecurityPolicy(const ConsoleOptions& options) {
  std::string import_map;
  for (const ConsoleFile& file : ConsoleFiles()) {
    if (file.path == "index.html") import_map = ImportMapHash(file.bytes);
  }
  std::string connect = "'self'";
  if (const std::string& codec = options.codec_endpoint; !codec.empty()) {
    // A source with a path matches that path alone unless it ends in '/': the page posts to
    // ENDPOINT/decode, under it.
    const size_t host = codec.find("://") + 3;
    const bool has_path = codec.find('/', host) != std::string::npos;
    absl::StrAppend(&connect, " ", codec, has_path && codec.back() != '/' ? "/" : "");
  }
  return absl::StrCat("default-src 'self'; script-src 'self' ", import_map,
                      "; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
                      "connect-src ", connect,
                      "; object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'");
}

void RegisterConsole(http::HttpServer& server, const ConsoleOptions& options) {
  auto files = std::make_shared<std::map<std::string, ServedFile, std::less<>>>();
  for (const ConsoleFile& file : ConsoleFiles()) {
    (*files)[std::string(file.path)] =
        ServedFile{file.bytes, ContentTypeOf(file.path),
                   absl::StrCat("\"", absl::Hex(Fingerprint64(absl::string_view(file.bytes.data(), file.bytes.size())),
                                                absl::kZeroPad16), "\"")};
  }
  const std::string policy = ContentSecurityPolicy(options);
  auto page = [files, policy](const http::HttpRequest& request) {
    auto it = files->find("index.html");
    if (it == files->end()) return http::HttpResponse{404, "text/plain; charset=utf-8", "no console in this build\n"};
    return Serve(it->second, request,
                 {{"Content-Security-Policy", policy}, {"Referrer-Policy", "no-referrer"}});
  };
  server.Route("GET", "/(?:index\\.html)?", page);
  if (!options.public_path.empty()) {
    // The empty pattern, with the server's optional prefix before it, is the prefix alone.
    // A relative Location keeps a reverse proxy's own sub-path in front of it.
    const std::string last = options.public_path.substr(options.public_path.rfind('/') + 1);
    server.Route("GET", "", [location = absl::StrCat(last, "/")](const http::HttpRequest&) {
      http::HttpResponse response{301, "text/plain; charset=utf-8", "the console is one level down\n"};
      response.headers.emplace_back("Location", location);
      return response;
    });
  }
  server.Route("GET", "/assets/(.+)", [files](const http::HttpRequest& request) {
    auto it = files->find(absl::StrCat("assets/", request.path_groups.empty() ? "" : request.path_groups[0]));
    if (it == files->end()) return http::HttpResponse{404, "text/plain; charset=utf-8", "no such file\n"};
    return Serve(it->second, request);
  });
  server.Route("GET", "/api/v1/settings", [settings = SettingsJson(options)](const http::HttpRequest&) {
    return http::HttpResponse{200, "application/json", settings};
  });
  server.Route("GET", "/healthz", [](const http::HttpRequest&) {
    return http::HttpResponse{200, "application/json", "{\"status\":\"OK\"}"};
  });
}

}  // namespace tock::server::console
