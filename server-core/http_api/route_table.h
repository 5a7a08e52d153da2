// Temporal's HTTP API routes, read from the `google.api.http` options of the pinned protos'
// service descriptors (never written by hand: a proto bump brings its new bindings).
//
// Each binding (the primary one, without a prefix, and its additional ones, under /api/v1)
// is a verb, a path template and a body rule. Templates hold literal segments and
// `{field.path}` variables (the pinned protos use no `=` or `*` patterns; a template with
// one is refused at build time); a variable matches one whole segment, percent-decoded
// after the path is split, so that an id with a `/` travels as `%2F`. When several
// templates match a path, the one with the most literal segments wins (`workflow-count`
// over `{execution.workflow_id}`).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/descriptor.h"

namespace tock::server::http_api {

struct Route {
  std::string verb;  // GET, POST, PUT, PATCH, DELETE
  std::string path;  // the template, as in the proto: /api/v1/namespaces/{namespace}
  // One per segment: a literal, or a variable's field path in proto names
  // ("execution.workflow_id") when `variable` is set.
  struct Segment {
    std::string text;
    bool variable = false;
  };
  std::vector<Segment> segments;
  // The body rule: "*" (the whole request), "" (no body: the other fields come from the
  // query), or a field's name (the body is that field).
  std::string body;
  // The method bound (its request and response messages), and the gRPC method called:
  // "/temporal.api.workflowservice.v1.WorkflowService/StartWorkflowExecution".
  const google::protobuf::MethodDescriptor* method = nullptr;
  std::string rpc;
};

// A path matched to its route, with the values of its variables (field path, decoded value).
struct Match {
  const Route* route = nullptr;
  std::vector<std::pair<std::string, std::string>> variables;
};

class RouteTable {
 public:
  // A service whose methods' google.api.http options are read, and the service (full name)
  // whose method of the same name each route calls: the service itself, or the one a
  // service of tock/http/v1/routes.proto stands for.
  struct Source {
    const google::protobuf::ServiceDescriptor* service = nullptr;
    std::string calls;
  };
  // The routes of every method of `sources` that has a google.api.http option.
  // INTERNAL when a template uses a pattern this table does not implement.
  static absl::StatusOr<RouteTable> Build(const std::vector<Source>& sources);
  // The routes served: Temporal's (WorkflowService and OperatorService of the pinned protos,
  // under /api/v1 and unprefixed) and Tock's own under /tock/v1 (tock/http/v1/routes.proto).
  static absl::StatusOr<RouteTable> Served();

  // The route for `verb` and `raw_path` (still percent-encoded, without the query), or
  // nullopt. `path_known` is set when some route has the path with another verb (405).
  std::optional<Match> Find(const std::string& verb, const std::string& raw_path,
                            bool* path_known = nullptr) const;

  const std::vector<Route>& routes() const { return routes_; }

 private:
  std::vector<Route> routes_;
};

// Percent-decodes one path segment or query value ('+' stays '+' in a path, is a space in a
// query: `plus_is_space`). nullopt for a malformed escape.
std::optional<std::string> PercentDecode(const std::string& text, bool plus_is_space);

}  // namespace tock::server::http_api
