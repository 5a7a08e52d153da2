#include "server-core/routing/peers.h"

#include <grpcpp/generic/generic_stub.h>

namespace tock::server::routing {

Peers::Peer& Peers::Get(const std::string& address) {
  std::lock_guard lock(mu_);
  Peer& peer = peers_[address];
  if (peer.channel == nullptr) {
    peer.channel = dialer_.Dial(address);
    peer.host_service = tock::cluster::v1::HostService::NewStub(peer.channel);
  }
  return peer;
}

void Peers::Prepare(grpc::ClientContext& context, absl::Time deadline) const {
  calls_.Increment();
  credential_.Stamp(context);
  context.AddMetadata(kOriginHeader, self_);
  if (deadline != absl::InfiniteFuture()) context.set_deadline(absl::ToChronoTime(deadline));
}

std::optional<std::string> Peers::Origin(const rpc::CallContext& ctx) const {
  if (!FromPeer(ctx)) return std::nullopt;
  const auto& metadata = ctx.grpc->client_metadata();
  auto it = metadata.find(kOriginHeader);
  if (it == metadata.end()) return std::nullopt;
  return std::string(it->second.data(), it->second.size());
}

tock::cluster::v1::HostService::Stub& Peers::HostService(const std::string& address) {
  return *Get(address).host_service;
}

std::function<void()> Peers::Forward(const std::string& address, const std::string& method,
                                     const grpc::ByteBuffer& request, absl::Time deadline,
                                     Done done) {
  struct Call {
    grpc::ClientContext context;
    grpc::ByteBuffer request;
    grpc::ByteBuffer response;
  };
  auto call = std::make_shared<Call>();
  call->request = request;
  Prepare(call->context, deadline);
  grpc::GenericStub stub(Get(address).channel);
  stub.UnaryCall(&call->context, "/" + method, grpc::StubOptions(), &call->request,
                 &call->response, [call, done = std::move(done)](grpc::Status status) {
                   done(status, status.ok() ? &call->response : nullptr);
                 });
  std::weak_ptr<Call> weak = call;
  return [weak] {
    if (auto c = weak.lock()) c->context.TryCancel();
  };
}

}  // namespace tock::server::routing
