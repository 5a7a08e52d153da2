// ListWorkflowExecutions, CountWorkflowExecutions and the older ListOpen/ListClosed calls,
// over the visibility store with the query language of server-core/visibility/query.h.
#include "absl/strings/str_cat.h"
#include "lib/common/time_format.h"
#include "lib/common/wire_bytes.h"
#include "server-core/frontend/handlers.h"
#include "server-core/visibility/query.h"
#include "server-core/visibility/search_attributes.h"

namespace tock::server::frontend {
namespace {

constexpr char kService[] = "temporal.api.workflowservice.v1.WorkflowService/";
std::string Method(const char* name) { return std::string(kService) + name; }

using persistence::VisibilityField;
using persistence::VisibilityOp;
using persistence::VisibilityPredicate;

// The filters of ListOpen/ListClosedWorkflowExecutions as one visibility filter.
template <typename Request>
persistence::VisibilityFilter LegacyFilter(const Request& req, bool open) {
  std::vector<VisibilityPredicate> all = {
      VisibilityPredicate::Of(VisibilityField::kExecutionStatus,
                              open ? VisibilityOp::kEqual : VisibilityOp::kNotEqual, {int64_t{1}})};
  if (req.has_start_time_filter()) {
    const auto& range = req.start_time_filter();
    if (range.has_earliest_time()) {
      all.push_back(
          VisibilityPredicate::Of(VisibilityField::kStartTime, VisibilityOp::kGreaterOrEqual,
                                  {absl::ToUnixMillis(FromProtoTime(range.earliest_time()))}));
    }
    if (range.has_latest_time()) {
      all.push_back(
          VisibilityPredicate::Of(VisibilityField::kStartTime, VisibilityOp::kLessOrEqual,
                                  {absl::ToUnixMillis(FromProtoTime(range.latest_time()))}));
    }
  }
  if (req.has_execution_filter()) {
    all.push_back(VisibilityPredicate::Of(VisibilityField::kWorkflowId, VisibilityOp::kEqual,
                                          {req.execution_filter().workflow_id()}));
  }
  if (req.has_type_filter()) {
    all.push_back(VisibilityPredicate::Of(VisibilityField::kWorkflowType, VisibilityOp::kEqual,
                                          {req.type_filter().name()}));
  }
  persistence::VisibilityFilter f;
  f.predicate = VisibilityPredicate::And(std::move(all));
  return f;
}

// The status's name in queries and in Temporal's GROUP BY answers ("Running").
std::string StatusName(int status) {
  static constexpr const char* kNames[] = {"Unspecified", "Running",        "Completed",
                                           "Failed",      "Canceled",       "Terminated",
                                           "ContinuedAsNew", "TimedOut"};
  return status >= 0 && status < 8 ? kNames[status] : absl::StrCat(status);
}

// Temporal's limit on a list page (frontend.visibilityMaxPageSize's result window).
constexpr int32_t kMaxListPageSize = 10000;

absl::Status CheckPageSize(int32_t page_size) {
  if (page_size > kMaxListPageSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("PageSize is larger than allowed ", kMaxListPageSize, "."));
  }
  return absl::OkStatus();
}

// A list response (ListWorkflowExecutions and the ListOpen/ListClosed calls all have
// `executions = 1` and `next_page_token = 2`) assembled from the stored records as they are:
// no record is parsed and serialized again, which was most of a list's cost.
WireBytes PageBytes(const persistence::VisibilityPage& page) {
  WireBytes out;
  size_t size = page.next_page_token.size() + 11;
  for (const std::string& e : page.executions) size += e.size() + 11;
  out.buffer.reserve(size);
  for (const std::string& e : page.executions) {
    out.buffer.push_back(0x0A);  // field 1, length-delimited
    AppendVarint(out.buffer, e.size());
    out.buffer += e;
  }
  if (!page.next_page_token.empty()) {
    out.buffer.push_back(0x12);  // field 2, length-delimited
    AppendVarint(out.buffer, page.next_page_token.size());
    out.buffer += page.next_page_token;
  }
  return out;
}

template <typename Request>
void AddListMethod(rpc::Dispatcher& dispatcher, const char* name,
                   std::function<absl::StatusOr<persistence::VisibilityPage>(const Request&)> list) {
  dispatcher.AddAsyncSerialized<Request>(
      Method(name), [list = std::move(list)](const Request& req, const rpc::CallContext&,
                                             std::function<void(absl::StatusOr<WireBytes>)> respond) {
        absl::StatusOr<persistence::VisibilityPage> page = list(req);
        if (!page.ok()) return respond(page.status());
        respond(PageBytes(*page));
      });
}

}  // namespace

void RegisterVisibilityHandlers(rpc::Dispatcher& dispatcher,
                                namespaces::NamespaceEngine& namespaces,
                                persistence::VisibilityStore& store) {
  AddListMethod<wf::ListWorkflowExecutionsRequest>(
      dispatcher, "ListWorkflowExecutions",
      [&](const wf::ListWorkflowExecutionsRequest& req)
          -> absl::StatusOr<persistence::VisibilityPage> {
        auto ns = namespaces.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
        if (!ns.ok()) return ns.status();
        if (absl::Status s = CheckPageSize(req.page_size()); !s.ok()) return s;
        auto filter = visibility::CompileQuery(req.query(), *ns->search_attributes);
        if (!filter.ok()) return filter.status();
        if (filter->group_by_status) {
          return absl::InvalidArgumentError(
              "invalid query: 'group by' clause is only supported in count query");
        }
        return store.List(ns->id, *filter, req.page_size(), req.next_page_token());
      });
  dispatcher.AddUnary<wf::CountWorkflowExecutionsRequest, wf::CountWorkflowExecutionsResponse>(
      Method("CountWorkflowExecutions"),
      [&](const wf::CountWorkflowExecutionsRequest& req,
          const rpc::CallContext&) -> absl::StatusOr<wf::CountWorkflowExecutionsResponse> {
        auto ns = namespaces.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
        if (!ns.ok()) return ns.status();
        auto filter = visibility::CompileQuery(req.query(), *ns->search_attributes);
        if (!filter.ok()) return filter.status();
        wf::CountWorkflowExecutionsResponse out;
        if (filter->group_by_status) {
          auto groups = store.CountByStatus(ns->id, filter->predicate);
          if (!groups.ok()) return groups.status();
          int64_t total = 0;
          for (const auto& [status, count] : *groups) {
            auto* group = out.add_groups();
            auto* value = group->add_group_values();
            (*value->mutable_metadata())["encoding"] = "json/plain";
            value->set_data(absl::StrCat("\"", StatusName(status), "\""));
            group->set_count(count);
            total += count;
          }
          out.set_count(total);
          return out;
        }
        auto count = store.Count(ns->id, filter->predicate);
        if (!count.ok()) return count.status();
        out.set_count(*count);
        return out;
      });
  // The search attributes every namespace has (system and predefined); a namespace's own
  // are listed by OperatorService/ListSearchAttributes.
  dispatcher.AddUnary<wf::GetSearchAttributesRequest, wf::GetSearchAttributesResponse>(
      Method("GetSearchAttributes"),
      [](const wf::GetSearchAttributesRequest&,
         const rpc::CallContext&) -> absl::StatusOr<wf::GetSearchAttributesResponse> {
        wf::GetSearchAttributesResponse out;
        for (const auto* attributes : {&visibility::SystemSearchAttributes(),
                                       &visibility::PredefinedSearchAttributes()}) {
          for (const auto& [name, type] : *attributes) (*out.mutable_keys())[name] = type;
        }
        return out;
      });
  AddListMethod<wf::ListOpenWorkflowExecutionsRequest>(
      dispatcher, "ListOpenWorkflowExecutions",
      [&](const wf::ListOpenWorkflowExecutionsRequest& req)
          -> absl::StatusOr<persistence::VisibilityPage> {
        auto ns = namespaces.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
        if (!ns.ok()) return ns.status();
        if (absl::Status s = CheckPageSize(req.maximum_page_size()); !s.ok()) return s;
        return store.List(ns->id, LegacyFilter(req, true), req.maximum_page_size(),
                          req.next_page_token());
      });
  AddListMethod<wf::ListClosedWorkflowExecutionsRequest>(
      dispatcher, "ListClosedWorkflowExecutions",
      [&](const wf::ListClosedWorkflowExecutionsRequest& req)
          -> absl::StatusOr<persistence::VisibilityPage> {
        auto ns = namespaces.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
        if (!ns.ok()) return ns.status();
        persistence::VisibilityFilter filter = LegacyFilter(req, false);
        if (req.has_status_filter()) {
          filter.predicate.children.push_back(
              VisibilityPredicate::Of(VisibilityField::kExecutionStatus, VisibilityOp::kEqual,
                                      {static_cast<int64_t>(req.status_filter().status())}));
        }
        if (absl::Status s = CheckPageSize(req.maximum_page_size()); !s.ok()) return s;
        return store.List(ns->id, filter, req.maximum_page_size(), req.next_page_token());
      });
}

}  // namespace tock::server::frontend
