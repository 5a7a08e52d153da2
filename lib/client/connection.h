// A connection to a Temporal frontend (tock-server or any Temporal server).
//
// Owns one gRPC channel and the stubs of the services Tock speaks. Each call gets the
// deadline, the authorization header and the `temporal-namespace` header from the options,
// and its error comes back as absl::Status with the Temporal errordetails attached
// (FromGrpcStatus). Thread-safe: one Connection serves a whole REPL session.
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "temporal/api/operatorservice/v1/service.grpc.pb.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"
#include "tock/admin/v1/service.grpc.pb.h"
#include "tock/timer/v1/service.grpc.pb.h"

namespace tock::client {

struct TlsOptions {
  bool enabled = false;
  std::string ca_cert_path;      // PEM; empty: the system roots
  std::string cert_path;         // client certificate (mTLS), PEM
  std::string key_path;          // client key (mTLS), PEM
  std::string server_name;       // overrides the name checked against the certificate
};

struct ConnectionOptions {
  std::string address = "127.0.0.1:7233";
  TlsOptions tls;
  std::string api_key;                       // sent as "authorization: Bearer <key>"
  absl::Duration timeout = absl::Seconds(10);  // per call
  std::string identity = "tock";
};

class Connection {
 public:
  // Creates the channel (lazily connected). INVALID_ARGUMENT when a TLS file cannot be read.
  static absl::StatusOr<std::unique_ptr<Connection>> Open(const ConnectionOptions& options);

  const ConnectionOptions& options() const { return options_; }

  temporal::api::workflowservice::v1::WorkflowService::Stub& workflow() { return *workflow_; }
  temporal::api::operatorservice::v1::OperatorService::Stub& operator_service() {
    return *operator_;
  }
  tock::admin::v1::AdminService::Stub& admin() { return *admin_; }
  // The durable timer service (tock-server only).
  tock::timer::v1::TimerService::Stub& timer() { return *timer_; }

  // Unregisters a context from Interrupt() when the call is over.
  struct ContextRelease {
    const Connection* connection = nullptr;
    void operator()(grpc::ClientContext* context) const;
  };
  using ContextPtr = std::unique_ptr<grpc::ClientContext, ContextRelease>;

  // A context with this connection's deadline and headers; `namespace_name` (may be empty)
  // becomes the temporal-namespace header. Interrupt() cancels it while it lives.
  ContextPtr NewContext(const std::string& namespace_name = "") const;

  // Cancels every call in flight and every call started until ClearInterrupt(): they fail
  // with CANCELLED. For Ctrl-C in the REPL (the connection outlives the command). Safe from
  // any thread, but not from a signal handler.
  void Interrupt() const;
  void ClearInterrupt() const;
  bool interrupted() const;

  // The error of a finished call, as Call reports it (details unpacked, address named).
  absl::Status Translate(const grpc::Status& status) const;

  // Runs one unary call: Call(&Stub::Method, stub, request, ns) -> StatusOr<Response>.
  // UNAVAILABLE errors name the address so the operator sees where it tried.
  template <typename Stub, typename Request, typename Response>
  absl::StatusOr<Response> Call(grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&,
                                                             Response*),
                                Stub& stub, const Request& request,
                                const std::string& namespace_name = "") const {
    auto context = NewContext(namespace_name);
    Response response;
    grpc::Status status = (stub.*method)(context.get(), request, &response);
    if (!status.ok()) return Translate(status);
    return response;
  }

 private:
  explicit Connection(ConnectionOptions options, std::shared_ptr<grpc::Channel> channel);

  ConnectionOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<temporal::api::workflowservice::v1::WorkflowService::Stub> workflow_;
  std::unique_ptr<temporal::api::operatorservice::v1::OperatorService::Stub> operator_;
  std::unique_ptr<tock::admin::v1::AdminService::Stub> admin_;
  std::unique_ptr<tock::timer::v1::TimerService::Stub> timer_;
  mutable std::mutex in_flight_mu_;
  mutable std::set<grpc::ClientContext*> in_flight_;
  mutable bool interrupted_ = false;
};

}  // namespace tock::client
