// Which thread a call's handler runs on (rpc::Dispatcher::RunHandlersOnThreads): with
// Hop::kUnary a synchronous handler (one that waits, like a commit waiting for its fsync)
// runs on the dispatcher's threads and an asynchronous one (a long poll) stays on gRPC's,
// so a poll is answered while every handler thread waits; with Hop::kAll both hop.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <thread>

#include "temporal/api/workflowservice/v1/service.grpc.pb.h"
#include "tests/support/dispatcher_server.h"

namespace tock::server::rpc {
namespace {

namespace wf = temporal::api::workflowservice::v1;
constexpr char kService[] = "temporal.api.workflowservice.v1.WorkflowService/";

// A server whose GetSystemInfo (synchronous) waits for `release` and whose
// PollWorkflowTaskQueue (asynchronous) answers at once; each notes its thread.
class ThreadsServer {
 public:
  ThreadsServer(int threads, Dispatcher::Hop hop) {
    Dispatcher& d = server_.dispatcher();
    d.RunHandlersOnThreads(threads, hop);
    d.AddUnary<wf::GetSystemInfoRequest, wf::GetSystemInfoResponse>(
        std::string(kService) + "GetSystemInfo",
        [this](const wf::GetSystemInfoRequest&,
               const CallContext&) -> absl::StatusOr<wf::GetSystemInfoResponse> {
          Note(unary_thread_);
          if (wait_) entered_.set_value();
          if (wait_ && release_.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
            return absl::DeadlineExceededError("not released within 30 s");
          }
          return wf::GetSystemInfoResponse();
        });
    d.AddAsync<wf::PollWorkflowTaskQueueRequest, wf::PollWorkflowTaskQueueResponse>(
        std::string(kService) + "PollWorkflowTaskQueue",
        [this](const wf::PollWorkflowTaskQueueRequest&, const CallContext&,
               Responder<wf::PollWorkflowTaskQueueResponse> respond) {
          Note(async_thread_);
          respond(wf::PollWorkflowTaskQueueResponse());
        });
    EXPECT_TRUE(server_.Start());
    stub_ = wf::WorkflowService::NewStub(
        grpc::CreateChannel(server_.address(), grpc::InsecureChannelCredentials()));
  }

  grpc::Status SystemInfo() {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    wf::GetSystemInfoResponse out;
    return stub_->GetSystemInfo(&ctx, wf::GetSystemInfoRequest(), &out);
  }
  grpc::Status Poll() {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    wf::PollWorkflowTaskQueueResponse out;
    return stub_->PollWorkflowTaskQueue(&ctx, wf::PollWorkflowTaskQueueRequest(), &out);
  }

  // The (one) synchronous call waits for Release (set before its call); Entered is ready once
  // it is in its handler.
  void HoldSynchronousCalls() { wait_ = true; }
  std::future<void> Entered() { return entered_.get_future(); }
  void Release() { released_.set_value(); }

  std::thread::id unary_thread() {
    std::lock_guard lock(mu_);
    return unary_thread_;
  }
  std::thread::id async_thread() {
    std::lock_guard lock(mu_);
    return async_thread_;
  }

 private:
  void Note(std::thread::id& slot) {
    std::lock_guard lock(mu_);
    slot = std::this_thread::get_id();
  }

  std::promise<void> entered_, released_;
  std::shared_future<void> release_ = released_.get_future().share();
  bool wait_ = false;
  std::mutex mu_;
  std::thread::id unary_thread_, async_thread_;
  tock::testing::DispatcherServer server_;
  std::unique_ptr<wf::WorkflowService::Stub> stub_;
};

TEST(DispatcherThreadsTest, APollIsAnsweredWhileEveryHandlerThreadWaitsForACommit) {
  ThreadsServer server(1, Dispatcher::Hop::kUnary);
  server.HoldSynchronousCalls();
  std::future<void> entered = server.Entered();
  // The one handler thread waits in GetSystemInfo until the poll has been answered: were the
  // poll queued behind it, it would never be, and GetSystemInfo would give up after 30 s.
  std::future<grpc::Status> waiting = std::async(std::launch::async, [&] { return server.SystemInfo(); });
  ASSERT_EQ(entered.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "GetSystemInfo never reached its handler";
  grpc::Status poll = server.Poll();
  EXPECT_TRUE(poll.ok()) << poll.error_message();
  server.Release();
  grpc::Status info = waiting.get();
  EXPECT_TRUE(info.ok()) << info.error_message();
  EXPECT_NE(server.unary_thread(), server.async_thread());
}

TEST(DispatcherThreadsTest, WithHopAllEveryCallRunsOnTheDispatchersThreads) {
  ThreadsServer server(1, Dispatcher::Hop::kAll);
  ASSERT_TRUE(server.SystemInfo().ok());
  ASSERT_TRUE(server.Poll().ok());
  // One handler thread: both ran on it.
  EXPECT_NE(server.unary_thread(), std::thread::id());
  EXPECT_EQ(server.unary_thread(), server.async_thread());
}

}  // namespace
}  // namespace tock::server::rpc
