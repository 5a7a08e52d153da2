#include "server-core/rpc/dispatcher.h"

#include <atomic>
#include <memory>

namespace tock::server::rpc {

// Serves one unary call over the generic bidi-stream surface: read the single request,
// run the handler, write the single response (or only the status) and finish.
class UnaryReactor : public grpc::ServerGenericBidiReactor {
 public:
  UnaryReactor(const Dispatcher& dispatcher, grpc::GenericCallbackServerContext* ctx)
      : dispatcher_(dispatcher), ctx_(ctx) {
    context_.grpc = ctx;
    context_.cancellation = std::make_shared<CancellationSignal>();
    auto deadline = ctx->deadline();
    if (deadline != std::chrono::system_clock::time_point::max()) {
      context_.deadline = absl::FromChrono(deadline);
    }
    const std::string& full = ctx->method();
    context_.method = !full.empty() && full[0] == '/' ? full.substr(1) : full;
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the request was not received"));
      return;
    }
    auto it = dispatcher_.handlers_.find(context_.method);
    if (it == dispatcher_.handlers_.end()) {
      Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                          "Method " + context_.method + " is unimplemented"));
      return;
    }
    // The responder may be called more than once (a long poll's answer racing its
    // cancellation); only the first call reaches this reactor, and the shared flag outlives
    // it, so a late call never touches a finished reactor.
    auto answered = answered_;
    it->second(context_, request_,
               [this, answered](const grpc::Status& status, grpc::ByteBuffer* out) {
                 if (answered->exchange(true)) return;
                 Respond(status, out);
               });
  }

  void OnCancel() override { context_.cancellation->Cancel(); }

  void OnDone() override { delete this; }

 private:
  void Respond(const grpc::Status& status, grpc::ByteBuffer* out) {
    if (status.ok() && out != nullptr) {
      response_ = std::move(*out);
      StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
    } else {
      Finish(status);
    }
  }

  const Dispatcher& dispatcher_;
  grpc::GenericCallbackServerContext* ctx_;
  CallContext context_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  std::shared_ptr<std::atomic<bool>> answered_ = std::make_shared<std::atomic<bool>>(false);
};

void CancellationSignal::OnCancel(std::function<void()> callback) {
  {
    std::lock_guard lock(mu_);
    if (!cancelled_) {
      callback_ = std::move(callback);
      return;
    }
  }
  callback();
}

bool CancellationSignal::cancelled() const {
  std::lock_guard lock(mu_);
  return cancelled_;
}

void CancellationSignal::Cancel() {
  std::function<void()> callback;
  {
    std::lock_guard lock(mu_);
    if (cancelled_) return;
    cancelled_ = true;
    callback = std::move(callback_);
  }
  if (callback) callback();
}

void Dispatcher::AddRaw(const std::string& method, RawHandler handler) {
  handlers_[method] = std::move(handler);
}

grpc::ServerGenericBidiReactor* Dispatcher::CreateReactor(
    grpc::GenericCallbackServerContext* ctx) {
  return new UnaryReactor(*this, ctx);
}

}  // namespace tock::server::rpc
