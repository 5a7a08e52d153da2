#include "server-core/nexus/endpoint_registry.h"

#include <regex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/common/ids.h"
#include "lib/common/time_format.h"

namespace tock::server::nexus {
namespace {

using persistence::NexusEndpoint;
using temporal::api::nexus::v1::EndpointSpec;

constexpr char kNamePattern[] = "^[a-zA-Z][a-zA-Z0-9\\-]*[a-zA-Z0-9]$";
// What a message may quote of a client's text (names and schemes are bounded, URLs are not).
constexpr size_t kQuoted = 100;

std::string Quoted(const std::string& text) {
  return absl::StrCat("\"", text.size() > kQuoted ? text.substr(0, kQuoted) + "..." : text, "\"");
}

// Temporal's getEndpointIDIssues.
absl::Status CheckId(const std::string& id) {
  if (id.empty()) return absl::InvalidArgumentError("endpoint ID not set");
  if (!IsUuid(id)) return absl::InvalidArgumentError(absl::StrCat("malformed endpoint ID: ", Quoted(id)));
  return absl::OkStatus();
}

// The scheme of an absolute URL ("" when there is none): what comes before "://".
std::string SchemeOf(const std::string& url) {
  const size_t colon = url.find("://");
  return colon == std::string::npos ? "" : url.substr(0, colon);
}

}  // namespace

EndpointRegistry::EndpointRegistry(persistence::NexusEndpointStore& store,
                                   persistence::NamespaceStore& namespaces, Clock& clock,
                                   EndpointLimits limits)
    : store_(store), namespaces_(namespaces), clock_(clock), limits_(limits) {}

absl::StatusOr<EndpointSpec> EndpointRegistry::Validated(const EndpointSpec& spec) {
  std::vector<std::string> issues;
  const std::string& name = spec.name();
  if (name.empty()) return absl::InvalidArgumentError("endpoint name not set");
  if (name.size() > limits_.max_name_length) {
    issues.push_back(absl::StrCat("endpoint name exceeds length limit of ", limits_.max_name_length));
  }
  static const std::regex kName(kNamePattern);
  if (name.size() <= limits_.max_name_length && !std::regex_match(name, kName)) {
    issues.push_back(absl::StrCat("endpoint name must match the regex: \"", kNamePattern, "\""));
  }
  auto fail = [&] { return absl::InvalidArgumentError(absl::StrJoin(issues, ", ")); };
  if (!spec.has_target() ||
      spec.target().variant_case() == temporal::api::nexus::v1::EndpointTarget::VARIANT_NOT_SET) {
    issues.push_back("empty target variant");
    return fail();
  }
  EndpointSpec stored = spec;
  if (spec.target().has_worker()) {
    const auto& worker = spec.target().worker();
    if (worker.namespace_().empty()) {
      issues.push_back("target namespace not set");
    } else {
      absl::StatusOr<persistence::NamespaceVersion> ns = namespaces_.GetNamespaceByName(worker.namespace_());
      if (!ns.ok()) {
        if (ns.status().code() != absl::StatusCode::kNotFound) return ns.status();
        return absl::FailedPreconditionError(absl::StrCat(
            "could not verify namespace referenced by target exists: Namespace name ",
            Quoted(worker.namespace_()), " is not found."));
      }
      stored.mutable_target()->mutable_worker()->set_namespace_(ns->record.info().id());
    }
    if (worker.task_queue().empty()) {
      issues.push_back("invalid target task queue: \"taskQueue is not set\"");
    } else if (worker.task_queue().size() > limits_.max_task_queue_length) {
      issues.push_back(absl::StrCat("invalid target task queue: \"taskQueue length exceeds limit of ",
                                    limits_.max_task_queue_length, "\""));
    }
  } else {
    const std::string& url = spec.target().external().url();
    if (url.empty()) {
      issues.push_back("empty target URL");
    } else if (url.size() > limits_.max_url_length) {
      issues.push_back(absl::StrCat("target URL length exceeds limit of ", limits_.max_url_length));
    } else if (const std::string scheme = SchemeOf(url); scheme != "http" && scheme != "https") {
      issues.push_back(absl::StrCat("invalid target URL scheme: ", Quoted(scheme),
                                    ", expected http or https"));
    } else if (url.size() == scheme.size() + 3) {
      issues.push_back("invalid target URL: the URL has no host");
    }
  }
  if (spec.description().ByteSizeLong() > limits_.max_description_bytes) {
    issues.push_back(absl::StrCat("description size exceeds limit of ", limits_.max_description_bytes));
  }
  if (!issues.empty()) return fail();
  return stored;
}

NexusEndpoint EndpointRegistry::Rendered(NexusEndpoint stored,
                                        std::map<std::string, std::string>* names) {
  if (stored.spec().target().has_worker()) {
    auto* worker = stored.mutable_spec()->mutable_target()->mutable_worker();
    const std::string id = worker->namespace_();
    if (names != nullptr && names->contains(id)) {
      worker->set_namespace_(names->at(id));
    } else if (absl::StatusOr<persistence::NamespaceVersion> ns = namespaces_.GetNamespaceById(id);
               ns.ok()) {
      // (A deleted namespace leaves its id, which names nothing here any more.)
      worker->set_namespace_(ns->record.info().name());
      if (names != nullptr) (*names)[id] = worker->namespace_();
    }
  }
  stored.set_url_prefix(absl::StrCat("/nexus/endpoints/", stored.id(), "/services"));
  return stored;
}

absl::StatusOr<op::CreateNexusEndpointResponse> EndpointRegistry::Create(
    const op::CreateNexusEndpointRequest& req) {
  absl::StatusOr<EndpointSpec> spec = Validated(req.spec());
  if (!spec.ok()) return spec.status();
  NexusEndpoint endpoint;
  endpoint.set_id(NewUuid());
  endpoint.set_version(1);
  *endpoint.mutable_spec() = std::move(*spec);
  *endpoint.mutable_created_time() = ToProtoTime(clock_.Now());
  if (absl::Status s = store_.Create(endpoint); !s.ok()) {
    if (s.code() != absl::StatusCode::kAlreadyExists) return s;
    return absl::AlreadyExistsError(absl::StrCat(
        "error creating Nexus endpoint. Endpoint with name ", req.spec().name(),
        " already registered"));
  }
  op::CreateNexusEndpointResponse out;
  *out.mutable_endpoint() = Rendered(std::move(endpoint));
  return out;
}

absl::StatusOr<op::UpdateNexusEndpointResponse> EndpointRegistry::Update(
    const op::UpdateNexusEndpointRequest& req) {
  if (absl::Status s = CheckId(req.id()); !s.ok()) return s;
  absl::StatusOr<EndpointSpec> spec = Validated(req.spec());
  if (!spec.ok()) return spec.status();
  absl::StatusOr<NexusEndpoint> current = store_.Get(req.id());
  auto not_found = [&] {
    return absl::NotFoundError(
        absl::StrCat("error updating Nexus endpoint. endpoint ID ", req.id(), " not found"));
  };
  if (!current.ok()) {
    return current.status().code() == absl::StatusCode::kNotFound ? not_found() : current.status();
  }
  auto mismatch = [&](int64_t stored) {
    return absl::FailedPreconditionError(absl::StrCat(
        "nexus endpoint version mismatch. received: ", req.version(), " expected ", stored));
  };
  if (current->version() != req.version()) return mismatch(current->version());
  NexusEndpoint next = *current;
  *next.mutable_spec() = std::move(*spec);
  next.set_version(current->version() + 1);
  *next.mutable_last_modified_time() = ToProtoTime(clock_.Now());
  absl::Status s = store_.Update(next, current->version());
  if (s.code() == absl::StatusCode::kAborted) {
    absl::StatusOr<NexusEndpoint> now = store_.Get(req.id());
    if (!now.ok()) return now.status().code() == absl::StatusCode::kNotFound ? not_found() : now.status();
    return mismatch(now->version());
  }
  if (s.code() == absl::StatusCode::kNotFound) return not_found();
  if (s.code() == absl::StatusCode::kAlreadyExists) {
    return absl::AlreadyExistsError(absl::StrCat(
        "error updating Nexus endpoint. Endpoint with name ", req.spec().name(),
        " already registered"));
  }
  if (!s.ok()) return s;
  op::UpdateNexusEndpointResponse out;
  *out.mutable_endpoint() = Rendered(std::move(next));
  return out;
}

absl::StatusOr<op::DeleteNexusEndpointResponse> EndpointRegistry::Delete(
    const op::DeleteNexusEndpointRequest& req) {
  if (absl::Status s = CheckId(req.id()); !s.ok()) return s;
  if (req.version() <= 0) return absl::InvalidArgumentError("endpoint version is non-positive");
  absl::Status s = store_.Delete(req.id());
  if (s.code() == absl::StatusCode::kNotFound) {
    return absl::NotFoundError(absl::StrCat("error deleting nexus endpoint with ID: ", req.id()));
  }
  if (!s.ok()) return s;
  return op::DeleteNexusEndpointResponse();
}

absl::StatusOr<op::GetNexusEndpointResponse> EndpointRegistry::Get(
    const op::GetNexusEndpointRequest& req) {
  if (absl::Status s = CheckId(req.id()); !s.ok()) return s;
  absl::StatusOr<NexusEndpoint> found = store_.Get(req.id());
  if (!found.ok()) {
    if (found.status().code() != absl::StatusCode::kNotFound) return found.status();
    return absl::NotFoundError(absl::StrCat("could not find Nexus endpoint with ID: ", req.id()));
  }
  op::GetNexusEndpointResponse out;
  *out.mutable_endpoint() = Rendered(std::move(*found));
  return out;
}

absl::StatusOr<op::ListNexusEndpointsResponse> EndpointRegistry::List(
    const op::ListNexusEndpointsRequest& req) {
  if (req.page_size() < 0) return absl::InvalidArgumentError("page_size is negative");
  if (req.page_size() > limits_.max_page_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size exceeds limit of ", limits_.max_page_size));
  }
  op::ListNexusEndpointsResponse out;
  if (!req.name().empty()) {
    // By name: zero or one endpoint, no further page (Temporal's listAndFilterByName).
    absl::StatusOr<NexusEndpoint> found = store_.GetByName(req.name());
    if (found.ok()) *out.add_endpoints() = Rendered(std::move(*found));
    if (!found.ok() && found.status().code() != absl::StatusCode::kNotFound) return found.status();
    return out;
  }
  const std::string& after = req.next_page_token();
  if (!after.empty() && !IsUuid(after)) {
    return absl::InvalidArgumentError("invalid next_page_token: not one this server returned");
  }
  const int32_t size = req.page_size() == 0 ? limits_.default_page_size : req.page_size();
  absl::StatusOr<std::vector<NexusEndpoint>> page = store_.List(after, size);
  if (!page.ok()) return page.status();
  // The token of the next page is the last id of this one.
  if (static_cast<int32_t>(page->size()) == size) out.set_next_page_token(page->back().id());
  std::map<std::string, std::string> names;
  for (auto& e : *page) *out.add_endpoints() = Rendered(std::move(e), &names);
  return out;
}

absl::StatusOr<NexusEndpoint> EndpointRegistry::Find(const std::string& name) {
  absl::StatusOr<NexusEndpoint> found = store_.GetByName(name);
  if (!found.ok()) return found.status();
  return Rendered(std::move(*found));
}

}  // namespace tock::server::nexus
