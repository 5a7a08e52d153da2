#include "lib/client/connection.h"

#include <fstream>
#include <sstream>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/client/tls_probe.h"
#include "lib/common/grpc_status.h"
#include "lib/common/message_size.h"
#include "lib/common/version.h"

namespace tock::client {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path, absl::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read the ", what, " file ", path));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Connection>> Connection::Open(const ConnectionOptions& options) {
  if (options.address.empty()) {
    return absl::InvalidArgumentError("the server address is empty; use --address HOST:PORT");
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  if (options.tls.enabled) {
    grpc::SslCredentialsOptions ssl;
    if (!options.tls.ca_cert_path.empty()) {
      auto ca = ReadFile(options.tls.ca_cert_path, "TLS CA certificate");
      if (!ca.ok()) return ca.status();
      ssl.pem_root_certs = *ca;
    }
    if (!options.tls.cert_path.empty() || !options.tls.key_path.empty()) {
      auto cert = ReadFile(options.tls.cert_path, "TLS client certificate");
      if (!cert.ok()) return cert.status();
      auto key = ReadFile(options.tls.key_path, "TLS client key");
      if (!key.ok()) return key.status();
      ssl.pem_cert_chain = *cert;
      ssl.pem_private_key = *key;
    }
    if (!options.tls.server_name.empty()) {
      args.SetSslTargetNameOverride(options.tls.server_name);
    }
    credentials = grpc::SslCredentials(ssl);
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  auto channel = grpc::CreateCustomChannel(options.address, credentials, args);
  return std::unique_ptr<Connection>(new Connection(options, std::move(channel)));
}

Connection::Connection(ConnectionOptions options, std::shared_ptr<grpc::Channel> channel)
    : options_(std::move(options)),
      channel_(std::move(channel)),
      workflow_(temporal::api::workflowservice::v1::WorkflowService::NewStub(channel_)),
      operator_(temporal::api::operatorservice::v1::OperatorService::NewStub(channel_)),
      admin_(tock::admin::v1::AdminService::NewStub(channel_)),
      timer_(tock::timer::v1::TimerService::NewStub(channel_)) {}

void Connection::ContextRelease::operator()(grpc::ClientContext* context) const {
  if (connection != nullptr) {
    std::lock_guard lock(connection->in_flight_mu_);
    connection->in_flight_.erase(context);
  }
  delete context;
}

void Connection::Interrupt() const {
  std::lock_guard lock(in_flight_mu_);
  interrupted_ = true;
  for (grpc::ClientContext* context : in_flight_) context->TryCancel();
}

void Connection::ClearInterrupt() const {
  std::lock_guard lock(in_flight_mu_);
  interrupted_ = false;
}

bool Connection::interrupted() const {
  std::lock_guard lock(in_flight_mu_);
  return interrupted_;
}

Connection::ContextPtr Connection::NewContext(const std::string& namespace_name) const {
  ContextPtr context(new grpc::ClientContext(), ContextRelease{this});
  if (options_.timeout > absl::ZeroDuration()) {
    context->set_deadline(absl::ToChronoTime(absl::Now() + options_.timeout));
  }
  context->AddMetadata("client-name", "tock");
  context->AddMetadata("client-version", kTockVersion);
  if (!options_.api_key.empty()) {
    context->AddMetadata("authorization", absl::StrCat("Bearer ", options_.api_key));
  }
  // gRPC refuses header values with control characters (and aborts the call); such a name is
  // invalid anyway, and the server says so with the namespace rules' message.
  bool printable = !namespace_name.empty();
  for (unsigned char c : namespace_name) printable = printable && c >= 0x20 && c < 0x7f;
  if (printable) context->AddMetadata("temporal-namespace", namespace_name);
  std::lock_guard lock(in_flight_mu_);
  in_flight_.insert(context.get());
  if (interrupted_) context->TryCancel();  // the call will fail at once with CANCELLED
  return context;
}

absl::Status Connection::Translate(const grpc::Status& status) const {
  absl::Status result = FromGrpcStatus(status);
  if (result.code() == absl::StatusCode::kUnavailable) {
    // gRPC words a TLS mismatch or a refused handshake as a closed socket: a probe of our
    // own says which it was (tls_probe.h). Only for failures to connect, not for answers.
    std::optional<std::string> why;
    if (absl::StrContains(result.message(), "failed to connect to all addresses")) {
      why = ExplainTransportFailure(options_.address, options_.tls, absl::Seconds(3));
    }
    absl::Status named(result.code(), why.has_value()
                                          ? *why
                                          : absl::StrCat("cannot reach the server at ",
                                                         options_.address, ": ", result.message()));
    result.ForEachPayload(
        [&](absl::string_view url, const absl::Cord& payload) { named.SetPayload(url, payload); });
    return named;
  }
  if (result.code() == absl::StatusCode::kCancelled && interrupted()) {
    return absl::CancelledError("interrupted");
  }
  if (result.code() == absl::StatusCode::kDeadlineExceeded) {
    return absl::DeadlineExceededError(
        absl::StrCat("the server at ", options_.address, " did not answer within ",
                     absl::FormatDuration(options_.timeout), " (", result.message(), ")"));
  }
  return result;
}

}  // namespace tock::client
