// ListWorkflowExecutions, CountWorkflowExecutions and the older ListOpen/ListClosed calls,
// over the visibility store with the query language of server-core/visibility/query.h.
#include "absl/strings/str_cat.h"
#include "lib/common/time_format.h"
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

}  // namespace

void RegisterVisibilityHandlers(rpc::Dispatcher& dispatcher, NamespaceEngine& namespaces,
                                persistence::VisibilityStore& store) {
  dispatcher.AddUnary<wf::ListWorkflowExecutionsRequest, wf::ListWorkflowExecutionsResponse>(
      Method("ListWorkflowExecutions"),
      [&](const wf::ListWorkflowExecutionsRequest& req,
          const rpc::CallContext&) -> absl::StatusOr<wf::ListWorkflowExecutionsResponse> {
        auto ns = namespaces.Resolve(req.namespace_(), true);
        if (!ns.ok()) return ns.status();
        if (absl::Status s = CheckPageSize(req.page_size()); !s.ok()) return s;
        auto filter = visibility::CompileQuery(req.query(), *ns->search_attributes);
        if (!filter.ok()) return filter.status();
        if (filter->group_by_status) {
          return absl::InvalidArgumentError(
              "invalid query: 'group by' clause is only supported in count query");
        }
        auto page = store.List(ns->id, *filter, req.page_size(), req.next_page_token());
        if (!page.ok()) return page.status();
        wf::ListWorkflowExecutionsResponse out;
        for (auto& e : page->executions) *out.add_executions() = std::move(e);
        out.set_next_page_token(page->next_page_token);
        return out;
      });
  dispatcher.AddUnary<wf::CountWorkflowExecutionsRequest, wf::CountWorkflowExecutionsResponse>(
      Method("CountWorkflowExecutions"),
      [&](const wf::CountWorkflowExecutionsRequest& req,
          const rpc::CallContext&) -> absl::StatusOr<wf::CountWorkflowExecutionsResponse> {
        auto ns = namespaces.Resolve(req.namespace_(), true);
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
  dispatcher
      .AddUnary<wf::ListOpenWorkflowExecutionsRequest, wf::ListOpenWorkflowExecutionsResponse>(
          Method("ListOpenWorkflowExecutions"),
          [&](const wf::ListOpenWorkflowExecutionsRequest& req,
              const rpc::CallContext&) -> absl::StatusOr<wf::ListOpenWorkflowExecutionsResponse> {
            auto ns = namespaces.Resolve(req.namespace_(), true);
            if (!ns.ok()) return ns.status();
            if (absl::Status s = CheckPageSize(req.maximum_page_size()); !s.ok()) return s;
            auto page = store.List(ns->id, LegacyFilter(req, true), req.maximum_page_size(),
                                   req.next_page_token());
            if (!page.ok()) return page.status();
            wf::ListOpenWorkflowExecutionsResponse out;
            for (auto& e : page->executions) *out.add_executions() = std::move(e);
            out.set_next_page_token(page->next_page_token);
            return out;
          });
  dispatcher
      .AddUnary<wf::ListClosedWorkflowExecutionsRequest, wf::ListClosedWorkflowExecutionsResponse>(
          Method("ListClosedWorkflowExecutions"),
          [&](const wf::ListClosedWorkflowExecutionsRequest& req,
              const rpc::CallContext&) -> absl::StatusOr<wf::ListClosedWorkflowExecutionsResponse> {
            auto ns = namespaces.Resolve(req.namespace_(), true);
            if (!ns.ok()) return ns.status();
            persistence::VisibilityFilter filter = LegacyFilter(req, false);
            if (req.has_status_filter()) {
              filter.predicate.children.push_back(
                  VisibilityPredicate::Of(VisibilityField::kExecutionStatus, VisibilityOp::kEqual,
                                          {static_cast<int64_t>(req.status_filter().status())}));
            }
            if (absl::Status s = CheckPageSize(req.maximum_page_size()); !s.ok()) return s;
            auto page = store.List(ns->id, filter, req.maximum_page_size(), req.next_page_token());
            if (!page.ok()) return page.status();
            wf::ListClosedWorkflowExecutionsResponse out;
            for (auto& e : page->executions) *out.add_executions() = std::move(e);
            out.set_next_page_token(page->next_page_token);
            return out;
          });
}

}  // namespace tock::server::frontend
