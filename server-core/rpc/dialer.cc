#include "server-core/rpc/dialer.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/support/client_interceptor.h>

#include "lib/common/message_size.h"

namespace tock::server::rpc {
namespace {

namespace gx = grpc::experimental;

// Adds fixed metadata to each call of a channel.
class MetadataInterceptor : public gx::Interceptor {
 public:
  explicit MetadataInterceptor(const std::vector<std::pair<std::string, std::string>>& metadata)
      : metadata_(metadata) {}
  void Intercept(gx::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(gx::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      for (const auto& [key, value] : metadata_) methods->GetSendInitialMetadata()->emplace(key, value);
    }
    methods->Proceed();
  }

 private:
  const std::vector<std::pair<std::string, std::string>>& metadata_;  // the factory's
};

class MetadataInterceptorFactory : public gx::ClientInterceptorFactoryInterface {
 public:
  explicit MetadataInterceptorFactory(std::vector<std::pair<std::string, std::string>> metadata)
      : metadata_(std::move(metadata)) {}
  gx::Interceptor* CreateClientInterceptor(gx::ClientRpcInfo*) override {
    return new MetadataInterceptor(metadata_);
  }

 private:
  const std::vector<std::pair<std::string, std::string>> metadata_;
};

}  // namespace

Dialer::Dialer() : Dialer(std::nullopt, absl::Minutes(1)) {}

Dialer::Dialer(const std::optional<InternodeTls>& tls, absl::Duration reload)
    : credentials_(InternodeCredentials(tls, reload)),
      server_name_(tls.has_value() ? tls->server_name : ""),
      tls_(tls.has_value()) {}

std::shared_ptr<grpc::Channel> Dialer::Dial(const std::string& address) const {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  if (!server_name_.empty()) args.SetSslTargetNameOverride(server_name_);
  if (metadata_.empty()) return grpc::CreateCustomChannel(address, credentials_, args);
  std::vector<std::unique_ptr<gx::ClientInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<MetadataInterceptorFactory>(metadata_));
  return gx::CreateCustomChannelWithInterceptors(address, credentials_, args,
                                                 std::move(interceptors));
}

Dialer Dialer::WithMetadata(std::string key, std::string value) const {
  Dialer copy = *this;
  copy.metadata_.emplace_back(std::move(key), std::move(value));
  return copy;
}

}  // namespace tock::server::rpc
