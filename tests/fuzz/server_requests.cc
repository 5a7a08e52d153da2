// The request handlers: a tock-server in this process (127.0.0.1, port 0, SQLite in memory,
// time skipping on so that AdminService/AdvanceTime moves its clock), called over a real
// gRPC channel. The first byte of the input picks the method (the unary methods of
// WorkflowService, OperatorService and Tock's AdminService in name order, modulo their
// number, so that a corpus input keeps its method as the server grows; inputs for a method
// the server answers "... is unimplemented" are skipped); the rest is the request, sent as it
// is when it parses as that method's request message. Any answer is fine; a crash, a hang or a
// sanitizer report is a finding. State accumulates over the run (namespaces, workflows), as on a
// real server.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/byte_buffer.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "lib/common/clock.h"
#include "server-core/server.h"
#include "temporal/api/operatorservice/v1/service.grpc.pb.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"
#include "tests/fuzz/fuzz_check.h"
#include "tock/admin/v1/service.grpc.pb.h"

namespace {

namespace pb = google::protobuf;

// The service files' descriptor tables: referenced so that the linker keeps them (nothing
// else in the server refers to the service descriptors; it dispatches on method names).
const void* const volatile kLinked[] = {
    &descriptor_table_temporal_2fapi_2fworkflowservice_2fv1_2fservice_2eproto,
    &descriptor_table_temporal_2fapi_2foperatorservice_2fv1_2fservice_2eproto,
    &descriptor_table_tock_2fadmin_2fv1_2fservice_2eproto,
};

struct Method {
  std::string path;  // "/package.Service/Method"
  const pb::Descriptor* request;
  bool implemented = false;
};

class Harness {
 public:
  Harness() {
    // Protobuf logs every string field with bad UTF-8 it parses; the fuzzer sends many.
    pb::SetLogHandler(nullptr);
    tock::server::ServerConfig config;
    config.ip = "127.0.0.1";
    config.port = 0;
    config.time_skipping = true;
    auto server = tock::server::TockServer::Start(config, tock::RealClock());
    if (!server.ok()) tock::fuzz::Fail("TockServer::Start", server.status().ToString());
    server_ = std::move(*server);
    stub_ = std::make_unique<grpc::GenericStub>(
        grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
    // The services by name. Their descriptors are in the generated pool once their files'
    // code is linked in (kLinked below).
    const char* services[] = {
        temporal::api::workflowservice::v1::WorkflowService::service_full_name(),
        temporal::api::operatorservice::v1::OperatorService::service_full_name(),
        tock::admin::v1::AdminService::service_full_name()};
    int implemented = 0;
    for (const char* name : services) {
      const pb::ServiceDescriptor* service =
          pb::DescriptorPool::generated_pool()->FindServiceByName(name);
      if (service == nullptr) tock::fuzz::Fail("no descriptor for service", std::string(name));
      for (int i = 0; i < service->method_count(); ++i) {
        const pb::MethodDescriptor* m = service->method(i);
        if (m->client_streaming() || m->server_streaming()) continue;
        Method method{"/" + std::string(service->full_name()) + "/" + std::string(m->name()),
                      m->input_type()};
        // What the server does not implement answers an empty request with "Method ... is
        // unimplemented"; inputs for those are skipped without a call.
        grpc::Status probe = Call(method.path, "");
        method.implemented = !(probe.error_code() == grpc::StatusCode::UNIMPLEMENTED &&
                               absl::StrContains(probe.error_message(), "is unimplemented"));
        implemented += method.implemented;
        methods_.push_back(std::move(method));
      }
    }
    std::sort(methods_.begin(), methods_.end(),
              [](const Method& a, const Method& b) { return a.path < b.path; });
    if (implemented == 0) tock::fuzz::Fail("no implemented method", server_->address());
    (void)kLinked[0];
  }

  void Run(const uint8_t* data, size_t size) {
    if (size == 0) return;
    const Method& method = methods_[data[0] % methods_.size()];
    if (!method.implemented) return;
    const std::string request(reinterpret_cast<const char*>(data + 1), size - 1);
    // Bytes that do not parse as the request only reach the dispatcher's parse error.
    std::unique_ptr<pb::Message> message(
        pb::MessageFactory::generated_factory()->GetPrototype(method.request)->New());
    if (!message->ParseFromString(request)) return;
    const grpc::Status status = Call(method.path, request);
    // A call that ran out of time may have wedged the server (a deadlock, a thread pool
    // stuck): it must still answer the cheapest call.
    if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      const grpc::Status alive = Call(
          "/temporal.api.workflowservice.v1.WorkflowService/GetSystemInfo", "", absl::Seconds(10));
      FUZZ_CHECK(alive.ok(),
                 method.path + " left the server unresponsive: " + alive.error_message());
    }
  }

 private:
  // Long polls answer a second before the caller's deadline: with one second they answer at
  // once, so that every call is quick.
  grpc::Status Call(const std::string& path, const std::string& request,
                    absl::Duration timeout = absl::Seconds(1)) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
    grpc::Slice slice(request);
    grpc::ByteBuffer in(&slice, 1);
    grpc::ByteBuffer out;
    grpc::CompletionQueue cq;
    auto call = stub_->PrepareUnaryCall(&context, path, in, &cq);
    call->StartCall();
    grpc::Status status;
    call->Finish(&out, &status, reinterpret_cast<void*>(1));
    void* tag = nullptr;
    bool ok = false;
    if (!cq.Next(&tag, &ok)) tock::fuzz::Fail("completion queue shut down", path);
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
    return status;
  }

  std::unique_ptr<tock::server::TockServer> server_;
  std::unique_ptr<grpc::GenericStub> stub_;
  std::vector<Method> methods_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Never destroyed: the server keeps serving until the process exits.
  static Harness* harness = new Harness();
  harness->Run(data, size);
  return 0;
}
