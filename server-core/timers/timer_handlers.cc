#include "server-core/timers/timer_handlers.h"

#include <grpcpp/impl/codegen/proto_utils.h>

#include "absl/strings/str_cat.h"

namespace tock::server::timers {

void RegisterTimerHandlers(rpc::Dispatcher& d, TimerService& service) {
  const std::string p = kTimerServicePrefix;
  d.AddUnary<tv1::CreateTimerRequest, tv1::CreateTimerResponse>(
      p + "CreateTimer", [&service](const tv1::CreateTimerRequest& req, const rpc::CallContext&) {
        return service.Create(req);
      });
  d.AddUnary<tv1::GetTimerRequest, tv1::GetTimerResponse>(
      p + "GetTimer", [&service](const tv1::GetTimerRequest& req, const rpc::CallContext&) {
        return service.Get(req);
      });
  d.AddUnary<tv1::UpdateTimerRequest, tv1::UpdateTimerResponse>(
      p + "UpdateTimer", [&service](const tv1::UpdateTimerRequest& req, const rpc::CallContext&) {
        return service.Update(req);
      });
  d.AddUnary<tv1::DeleteTimerRequest, tv1::DeleteTimerResponse>(
      p + "DeleteTimer", [&service](const tv1::DeleteTimerRequest& req, const rpc::CallContext&) {
        return service.Delete(req);
      });
  d.AddUnary<tv1::ListTimersRequest, tv1::ListTimersResponse>(
      p + "ListTimers", [&service](const tv1::ListTimersRequest& req, const rpc::CallContext&) {
        return service.List(req);
      });
}

namespace {

// The shard of a raw request's (namespace, id); 0 when it does not parse or the namespace is
// unknown (the handler then answers the error here).
template <typename Request>
std::function<int32_t(const grpc::ByteBuffer&)> ShardOfRequest(TimerService& service) {
  return [&service](const grpc::ByteBuffer& payload) -> int32_t {
    grpc::ByteBuffer copy(payload);
    Request req;
    if (!grpc::SerializationTraits<Request>::Deserialize(&copy, &req).ok()) return 0;
    return service.ShardOf(req.namespace_(), req.id());
  };
}

}  // namespace

void RouteTimerCalls(routing::CallRouter& router, rpc::Dispatcher& d, TimerService& service) {
  const std::string p = kTimerServicePrefix;
  router.RouteByShard(d, p + "CreateTimer", ShardOfRequest<tv1::CreateTimerRequest>(service));
  router.RouteByShard(d, p + "UpdateTimer", ShardOfRequest<tv1::UpdateTimerRequest>(service));
  router.RouteByShard(d, p + "DeleteTimer", ShardOfRequest<tv1::DeleteTimerRequest>(service));
}

}  // namespace tock::server::timers
