#include "server-core/rpc/tls_credentials.h"

#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <algorithm>

namespace tock::server::rpc {
namespace {

namespace gx = grpc::experimental;

unsigned int Seconds(absl::Duration reload) {
  return static_cast<unsigned int>(std::clamp<int64_t>(absl::ToInt64Seconds(reload), 1, 86400));
}

}  // namespace

std::shared_ptr<grpc::ServerCredentials> FrontendCredentials(const std::optional<FrontendTls>& tls,
                                                             absl::Duration reload) {
  if (!tls.has_value()) return grpc::InsecureServerCredentials();
  auto provider = std::make_shared<gx::FileWatcherCertificateProvider>(
      tls->key_file, tls->cert_file, tls->client_ca_file, Seconds(reload));
  gx::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (tls->client_ca_file.empty()) {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  } else {
    options.watch_root_certs();
    options.set_cert_request_type(tls->RequiresClientCertificate()
                                      ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                      : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
  }
  return gx::TlsServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> InternodeCredentials(
    const std::optional<InternodeTls>& tls, absl::Duration reload) {
  if (!tls.has_value()) return grpc::InsecureChannelCredentials();
  gx::TlsChannelCredentialsOptions options;
  if (!tls->ca_file.empty() || !tls->cert_file.empty()) {
    options.set_certificate_provider(std::make_shared<gx::FileWatcherCertificateProvider>(
        tls->key_file, tls->cert_file, tls->ca_file, Seconds(reload)));
  }
  if (!tls->ca_file.empty()) options.watch_root_certs();  // otherwise the system roots
  if (!tls->cert_file.empty()) options.watch_identity_key_cert_pairs();
  // The server's certificate must name the host dialed (or server_name): said explicitly,
  // not left to the default of an experimental API.
  options.set_verify_server_certs(true);
  options.set_certificate_verifier(std::make_shared<gx::HostNameCertificateVerifier>());
  return grpc::experimental::TlsCredentials(options);
}

}  // namespace tock::server::rpc
