// The baseline of the CLI latency benchmark: the least a program can do to answer
// `tock namespace describe default` — connect, make the one RPC, print the name.
#include <iostream>

#include <grpcpp/grpcpp.h>

#include "temporal/api/workflowservice/v1/service.grpc.pb.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: min_describe HOST:PORT\n";
    return 2;
  }
  auto channel = grpc::CreateChannel(argv[1], grpc::InsecureChannelCredentials());
  auto stub = temporal::api::workflowservice::v1::WorkflowService::NewStub(channel);
  temporal::api::workflowservice::v1::DescribeNamespaceRequest request;
  request.set_namespace_("default");
  temporal::api::workflowservice::v1::DescribeNamespaceResponse response;
  grpc::ClientContext context;
  grpc::Status status = stub->DescribeNamespace(&context, request, &response);
  if (!status.ok()) {
    std::cerr << status.error_message() << "\n";
    return 1;
  }
  std::cout << response.namespace_info().name() << "\n";
  return 0;
}
