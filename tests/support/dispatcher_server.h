// A stand-in gRPC server for tests: an rpc::Dispatcher (the handlers the test adds) served
// over real gRPC on a free port of 127.0.0.1, shut down with the object. Header-only: its
// users link the server core's dispatcher already.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "server-core/rpc/dispatcher.h"

namespace tock::testing {

class DispatcherServer {
 public:
  ~DispatcherServer() {
    if (server_) server_->Shutdown();
  }

  // Add the handlers here, then Start.
  server::rpc::Dispatcher& dispatcher() { return dispatcher_; }
  // False when gRPC could not listen.
  bool Start() {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterCallbackGenericService(&dispatcher_);
    server_ = builder.BuildAndStart();
    address_ = "127.0.0.1:" + std::to_string(port);
    return server_ != nullptr;
  }
  const std::string& address() const { return address_; }

 private:
  server::rpc::Dispatcher dispatcher_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

}  // namespace tock::testing
