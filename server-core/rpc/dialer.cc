#include "server-core/rpc/dialer.h"

#include <grpcpp/create_channel.h>

namespace tock::server::rpc {

Dialer::Dialer() : Dialer(std::nullopt, absl::Minutes(1)) {}

Dialer::Dialer(const std::optional<InternodeTls>& tls, absl::Duration reload)
    : credentials_(InternodeCredentials(tls, reload)),
      server_name_(tls.has_value() ? tls->server_name : ""),
      tls_(tls.has_value()) {}

std::shared_ptr<grpc::Channel> Dialer::Dial(const std::string& address,
                                            grpc::ChannelArguments args) const {
  if (!server_name_.empty()) args.SetSslTargetNameOverride(server_name_);
  return grpc::CreateCustomChannel(address, credentials_, args);
}

}  // namespace tock::server::rpc
