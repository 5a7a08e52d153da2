// A batch terminate of many running workflows against the same number terminated by direct
// TerminateWorkflowExecution calls from 8 concurrent callers, on one server in one run.
//
//   batch_bench TOCK_SERVER [WORKFLOWS=10000]
//
// Prints both rates and the ratio batch / direct (issue 12's target: 0.5 or more). The batch
// is started with a rate limit far above what the server reaches, so it measures the batch's
// own speed.
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_server.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"

namespace wf = temporal::api::workflowservice::v1;
using Clock = std::chrono::steady_clock;
using Stub = wf::WorkflowService::Stub;

namespace {

constexpr int kCallers = 8;

// Runs fn(i) for i in [0, n) on kCallers threads; the number of calls that failed.
template <typename Fn>
int OnCallers(int n, Fn fn) {
  std::atomic<int> next{0}, failed{0};
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kCallers; ++t) {
      threads.emplace_back([&] {
        for (int i = next++; i < n; i = next++) {
          if (!fn(i)) ++failed;
        }
      });
    }
  }
  return failed;
}

// Starts `n` workflows of `type` on a task queue nobody polls (they stay running).
int StartIdle(Stub& stub, const std::string& type, int n) {
  return OnCallers(n, [&](int i) {
    grpc::ClientContext ctx;
    wf::StartWorkflowExecutionRequest req;
    req.set_namespace_("default");
    req.set_workflow_id(type + "-" + std::to_string(i));
    req.mutable_workflow_type()->set_name(type);
    req.mutable_task_queue()->set_name("nobody-polls");
    req.set_request_id(type + "-" + std::to_string(i));
    wf::StartWorkflowExecutionResponse resp;
    return stub.StartWorkflowExecution(&ctx, req, &resp).ok();
  });
}

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: batch_bench TOCK_SERVER [WORKFLOWS=10000]\n");
    return 2;
  }
  const std::string binary = argv[1];
  const int n = argc > 2 ? std::atoi(argv[2]) : 10'000;
  char dir_template[] = "/tmp/tock-bench-batch-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  tock::bench::Server server = tock::bench::StartServer(binary, {"--db-file", dir + "/tock.db"});
  if (server.pid == 0) {
    std::fprintf(stderr, "tock-server did not start\n");
    return 1;
  }
  auto stub = wf::WorkflowService::NewStub(tock::bench::OpenChannel(server.address));
  int rc = 0;
  const auto started = Clock::now();
  if (StartIdle(*stub, "direct", n) + StartIdle(*stub, "batched", n) > 0) {
    std::fprintf(stderr, "some starts failed\n");
    rc = 1;
  }
  std::printf("%d running workflows started in %.1f s\n", 2 * n, Seconds(started));

  // Direct: 8 callers terminating one run each per call.
  auto direct_start = Clock::now();
  const int direct_failed = OnCallers(n, [&](int i) {
    grpc::ClientContext ctx;
    wf::TerminateWorkflowExecutionRequest req;
    req.set_namespace_("default");
    req.mutable_workflow_execution()->set_workflow_id("direct-" + std::to_string(i));
    req.set_reason("bench");
    wf::TerminateWorkflowExecutionResponse resp;
    return stub->TerminateWorkflowExecution(&ctx, req, &resp).ok();
  });
  const double direct_rate = n / Seconds(direct_start);

  // Batch: one StartBatchOperation, then Describe until it completes.
  auto batch_start = Clock::now();
  {
    grpc::ClientContext ctx;
    wf::StartBatchOperationRequest req;
    req.set_namespace_("default");
    req.set_job_id("bench-batch");
    req.set_reason("bench");
    req.set_visibility_query("WorkflowType = 'batched'");
    req.set_max_operations_per_second(1e6);
    req.mutable_termination_operation();
    wf::StartBatchOperationResponse resp;
    grpc::Status s = stub->StartBatchOperation(&ctx, req, &resp);
    if (!s.ok()) {
      std::fprintf(stderr, "StartBatchOperation: %s\n", s.error_message().c_str());
      rc = 1;
    }
  }
  wf::DescribeBatchOperationResponse described;
  for (int polls = 0; rc == 0 && polls < 20 * 600; ++polls) {
    grpc::ClientContext ctx;
    wf::DescribeBatchOperationRequest req;
    req.set_namespace_("default");
    req.set_job_id("bench-batch");
    if (stub->DescribeBatchOperation(&ctx, req, &described).ok() &&
        described.state() != temporal::api::enums::v1::BATCH_OPERATION_STATE_RUNNING) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double batch_rate = described.complete_operation_count() / Seconds(batch_start);

  std::printf("direct TerminateWorkflowExecution, %d callers  %8.0f runs/s (%d failed)\n",
              kCallers, direct_rate, direct_failed);
  std::printf("batch terminate                             %8.0f runs/s (%lld of %d, %lld failed)\n",
              batch_rate, static_cast<long long>(described.complete_operation_count()), n,
              static_cast<long long>(described.failure_operation_count()));
  std::printf("ratio batch / direct   %.2f  (target: 0.5 or more)\n", batch_rate / direct_rate);
  if (described.complete_operation_count() != n || direct_failed > 0) rc = 1;
  kill(server.pid, SIGTERM);
  waitpid(server.pid, nullptr, 0);
  std::filesystem::remove_all(dir);
  return rc;
}
