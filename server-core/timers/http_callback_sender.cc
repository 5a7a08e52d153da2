#include "server-core/timers/http_callback_sender.h"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include <sys/socket.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/archival/libcurl_stubs.h"
#include "lib/common/named_thread.h"
#include "server-core/timers/callback_protocol.h"
#include "server-core/timers/callback_signature.h"

namespace tock::server::timers {
namespace {

// libcurl is loaded at first use (libcurl_stubs.h): a server without timers never loads it.
absl::Status InitCurlOnce() {
  if (absl::Status s = archival::Libcurl().Load(); !s.ok()) return s;
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  return absl::OkStatus();
}

struct Transfer {
  ~Transfer() {
    if (headers != nullptr) curl_slist_free_all(headers);
  }
  CallbackRequest request;
  std::function<void(CallbackOutcome)> done;
  CURL* easy = nullptr;
  size_t max_bytes = 0;
  std::string response;
  bool truncated = false;
  char error[CURL_ERROR_SIZE] = {};
  curl_slist* headers = nullptr;  // its own, when signed (the shared ones otherwise)
  const CallbackAddressPolicy* policy = nullptr;
  const char* refused_range = nullptr;  // the first address refused, if any
  int connects_allowed = 0;
};

// curl's open-socket callback: the address a connection is about to be opened to, after
// resolution. A refused one gets no socket, so nothing is sent to it; curl tries the host's
// next address, if any.
curl_socket_t OpenCheckedSocket(void* user, curlsocktype, curl_sockaddr* address) {
  auto* t = static_cast<Transfer*>(user);
  std::optional<IpAddress> ip = IpAddress::FromSockaddr(&address->addr);
  const char* refused =
      ip.has_value() ? t->policy->RefusedRange(t->request.url, *ip) : "non-IP";
  if (refused != nullptr) {
    if (t->refused_range == nullptr) t->refused_range = refused;
    return CURL_SOCKET_BAD;
  }
  ++t->connects_allowed;
  return socket(address->family, address->socktype, address->protocol);
}

// Reads the answer up to the transfer's bound; past it, returns 0, which makes libcurl end
// the transfer with CURLE_WRITE_ERROR (classified with the body read so far).
size_t ReadAnswer(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t bytes = size * n;
  if (t->response.size() + bytes > t->max_bytes) {
    t->response.append(data, t->max_bytes - t->response.size());
    t->truncated = true;
    return 0;
  }
  t->response.append(data, bytes);
  return bytes;
}

CallbackOutcome Failure(std::string error, int http_status = 0) {
  CallbackOutcome outcome;
  outcome.kind = CallbackOutcome::Kind::kRetry;
  outcome.http_status = http_status;
  outcome.error = BoundedErrorText(error);
  return outcome;
}

int64_t TimeoutMs(absl::Duration d) {
  // curl reads 0 as "no timeout": a callback always has one, of at least 1 ms.
  return std::max<int64_t>(1, absl::ToInt64Milliseconds(d));
}

}  // namespace

struct HttpCallbackSender::Impl {
  HttpCallbackSenderOptions options;
  CURLM* multi = nullptr;
  curl_slist* headers = nullptr;  // shared by every transfer (curl only reads it)
  std::thread thread;

  std::mutex mu;
  std::deque<std::unique_ptr<Transfer>> queue;     // guarded by mu
  std::vector<std::unique_ptr<Transfer>> refused;  // queue full; guarded by mu
  bool stopping = false;                           // guarded by mu
  bool stopped = false;                            // Stop ran; guarded by stop_mu
  std::mutex stop_mu;

  // The sender thread's own.
  std::unordered_map<Transfer*, std::unique_ptr<Transfer>> active;
  std::vector<CURL*> idle_easy;

  std::atomic<uint64_t> sent{0}, answered{0}, connections_opened{0};

  void Loop();
  bool Start(std::unique_ptr<Transfer> t);
  size_t Reap();
  void Finish(std::unique_ptr<Transfer> t, CallbackOutcome outcome);
  CallbackOutcome Classify(const Transfer& t, CURLcode rc, long status) const;
};

absl::StatusOr<std::unique_ptr<HttpCallbackSender>> HttpCallbackSender::Create(
    HttpCallbackSenderOptions options) {
  if (options.max_in_flight < 1 || options.max_in_flight > 100'000) {
    return absl::InvalidArgumentError("callback sender: max_in_flight must be 1..100000");
  }
  if (options.max_response_bytes < 1 || options.max_response_bytes > (16u << 20)) {
    return absl::InvalidArgumentError("callback sender: max_response_bytes must be 1..16 MiB");
  }
  if (absl::Status s = InitCurlOnce(); !s.ok()) return s;
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->multi = curl_multi_init();
  if (impl->multi == nullptr) return absl::ResourceExhaustedError("curl_multi_init failed");
  const long idle = options.max_idle_connections > 0 ? options.max_idle_connections
                                                     : options.max_in_flight;
  curl_multi_setopt(impl->multi, CURLMOPT_MAXCONNECTS, idle);
  for (const char* header : kCallbackHeaders) impl->headers = curl_slist_append(impl->headers, header);
  Impl* raw = impl.get();
  impl->thread = NamedThread("timer-sender", [raw] { raw->Loop(); });
  return std::unique_ptr<HttpCallbackSender>(new HttpCallbackSender(std::move(impl)));
}

HttpCallbackSender::HttpCallbackSender(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpCallbackSender::~HttpCallbackSender() { Stop(); }

void HttpCallbackSender::Send(CallbackRequest request,
                              std::function<void(CallbackOutcome)> done) {
  auto t = std::make_unique<Transfer>();
  t->request = std::move(request);
  t->done = std::move(done);
  t->max_bytes = impl_->options.max_response_bytes;
  {
    std::lock_guard lock(impl_->mu);
    if (!impl_->stopping) {
      // The thread drains the queue as far as it has room and leaves requests there only
      // while every slot is busy (a finished transfer wakes it): so a queue that holds
      // something already has its wake-up coming, and only the first request needs one (not
      // a write to curl's wake-up pipe per callback).
      const bool first = impl_->queue.empty() && impl_->refused.empty();
      if (impl_->queue.size() >= impl_->options.max_queued) {
        impl_->refused.push_back(std::move(t));
      } else {
        impl_->queue.push_back(std::move(t));
      }
      // Under the lock: Stop cleans the multi handle up only after `stopping` is set.
      if (first) curl_multi_wakeup(impl_->multi);
      return;
    }
  }
  impl_->answered.fetch_add(1, std::memory_order_relaxed);
  t->done(Failure("the callback sender stopped"));
}

void HttpCallbackSender::Stop() {
  std::lock_guard stop_lock(impl_->stop_mu);
  if (impl_->stopped) return;
  impl_->stopped = true;
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
    curl_multi_wakeup(impl_->multi);
  }
  if (impl_->thread.joinable()) impl_->thread.join();
  for (CURL* easy : impl_->idle_easy) curl_easy_cleanup(easy);
  impl_->idle_easy.clear();
  curl_multi_cleanup(impl_->multi);  // closes the kept connections
  curl_slist_free_all(impl_->headers);
}

HttpCallbackSender::Stats HttpCallbackSender::stats() const {
  Stats s;
  s.sent = impl_->sent.load(std::memory_order_relaxed);
  s.answered = impl_->answered.load(std::memory_order_relaxed);
  s.connections_opened = impl_->connections_opened.load(std::memory_order_relaxed);
  return s;
}

void HttpCallbackSender::Impl::Loop() {
  for (;;) {
    std::vector<std::unique_ptr<Transfer>> starting, full;
    bool more_waiting = false;
    {
      std::lock_guard lock(mu);
      if (stopping) break;
      const size_t room = static_cast<size_t>(options.max_in_flight) - active.size();
      while (starting.size() < room && !queue.empty()) {
        starting.push_back(std::move(queue.front()));
        queue.pop_front();
      }
      full.swap(refused);
    }
    for (auto& t : full) {
      Finish(std::move(t), Failure(absl::StrCat("the callback queue is full (",
                                                options.max_queued, " waiting)")));
    }
    for (auto& t : starting) Start(std::move(t));
    int running = 0;
    curl_multi_perform(multi, &running);
    const size_t reaped = Reap();
    if (reaped > 0) {
      std::lock_guard lock(mu);
      more_waiting = !queue.empty() || !refused.empty();
    }
    // Slots freed while requests wait: start them at once rather than after a poll.
    if (!more_waiting) curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
  }
  // Stopping: everything unfinished is answered, on this thread.
  for (auto& [raw, t] : active) {
    curl_multi_remove_handle(multi, t->easy);
    curl_easy_cleanup(t->easy);
    t->easy = nullptr;
    answered.fetch_add(1, std::memory_order_relaxed);
    t->done(Failure("the callback sender stopped"));
  }
  active.clear();
  std::deque<std::unique_ptr<Transfer>> left;
  std::vector<std::unique_ptr<Transfer>> full;
  {
    std::lock_guard lock(mu);
    left.swap(queue);
    full.swap(refused);
  }
  for (auto& t : left) Finish(std::move(t), Failure("the callback sender stopped"));
  for (auto& t : full) Finish(std::move(t), Failure("the callback sender stopped"));
}

bool HttpCallbackSender::Impl::Start(std::unique_ptr<Transfer> t) {
  CURL* easy = nullptr;
  if (!idle_easy.empty()) {
    // Reused as it is: the options every callback shares were set when it was made, and
    // each one below is set again for every transfer (a reset and a dozen options per
    // callback were a good part of the sender's cost against a plain multi loop).
    easy = idle_easy.back();
    idle_easy.pop_back();
  } else {
    easy = curl_easy_init();
    if (easy != nullptr) {
      curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
      curl_easy_setopt(easy, CURLOPT_POST, 1L);
      curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
      curl_easy_setopt(easy, CURLOPT_USERAGENT, kCallbackUserAgent);
      curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, ReadAnswer);
      curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
      curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
      // No proxy, not even http_proxy from the environment: the address checked by
      // OpenCheckedSocket must be the receiver's, not a proxy's that reaches anything.
      curl_easy_setopt(easy, CURLOPT_PROXY, "");
      curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, OpenCheckedSocket);
    }
  }
  if (easy == nullptr) {
    Finish(std::move(t), Failure("curl_easy_init failed (out of memory)"));
    return false;
  }
  t->easy = easy;
  const std::string& body = t->request.body_json;
  const int64_t timeout_ms = TimeoutMs(t->request.timeout);
  const int64_t connect_ms = std::min(timeout_ms, TimeoutMs(options.connect_timeout));
  CURLcode rc = curl_easy_setopt(easy, CURLOPT_URL, t->request.url.c_str());
  if (rc != CURLE_OK) {
    t->easy = nullptr;
    idle_easy.push_back(easy);
    Finish(std::move(t), Failure(absl::StrCat("callback URL refused by libcurl: ",
                                              curl_easy_strerror(rc))));
    return false;
  }
  if (const std::string* secret =
          SigningSecretFor(options.signing_secrets, t->request.namespace_name)) {
    for (const char* header : kCallbackHeaders) t->headers = curl_slist_append(t->headers, header);
    const std::string signature =
        absl::StrCat(kSignatureHeader, ": ", CallbackSignature(*secret, absl::Now(), body));
    t->headers = curl_slist_append(t->headers, signature.c_str());
  }
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, t->headers != nullptr ? t->headers : headers);
  t->policy = &options.address_policy;
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, t.get());
  curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body.data());  // lives in *t until the end
  curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, t.get());
  curl_easy_setopt(easy, CURLOPT_PRIVATE, t.get());
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, t->error);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_ms));
  if (CURLMcode mc = curl_multi_add_handle(multi, easy); mc != CURLM_OK) {
    t->easy = nullptr;
    idle_easy.push_back(easy);
    Finish(std::move(t), Failure(absl::StrCat("curl_multi_add_handle: ", curl_multi_strerror(mc))));
    return false;
  }
  sent.fetch_add(1, std::memory_order_relaxed);
  Transfer* raw = t.get();
  active.emplace(raw, std::move(t));
  return true;
}

size_t HttpCallbackSender::Impl::Reap() {
  size_t reaped = 0;
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    CURL* easy = msg->easy_handle;
    const CURLcode rc = msg->data.result;
    char* raw = nullptr;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, &raw);
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    long connects = 0;
    curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &connects);
    connections_opened.fetch_add(static_cast<uint64_t>(std::max(0L, connects)),
                                 std::memory_order_relaxed);
    curl_multi_remove_handle(multi, easy);
    auto it = active.find(reinterpret_cast<Transfer*>(raw));
    if (it == active.end()) continue;  // not ours: cannot happen, never answered twice
    std::unique_ptr<Transfer> t = std::move(it->second);
    active.erase(it);
    const CallbackOutcome outcome = Classify(*t, rc, status);
    t->easy = nullptr;
    if (idle_easy.size() < static_cast<size_t>(options.max_in_flight)) {
      idle_easy.push_back(easy);
    } else {
      curl_easy_cleanup(easy);
    }
    Finish(std::move(t), outcome);
    ++reaped;
  }
  return reaped;
}

CallbackOutcome HttpCallbackSender::Impl::Classify(const Transfer& t, CURLcode rc,
                                                   long status) const {
  const int http_status = static_cast<int>(status);
  if (rc == CURLE_OK) return ClassifyCallbackAnswer(http_status, t.response, false);
  if (rc == CURLE_WRITE_ERROR && t.truncated) {
    return ClassifyCallbackAnswer(http_status, t.response, true);
  }
  if (t.refused_range != nullptr && t.connects_allowed == 0) {
    // Every address of the host was refused: no retry will make it allowed.
    CallbackOutcome outcome = Failure(CallbackAddressPolicy::NotSentError(t.refused_range));
    outcome.kind = CallbackOutcome::Kind::kStop;
    return outcome;
  }
  const std::string detail = t.error[0] != '\0' ? t.error : curl_easy_strerror(rc);
  if (rc == CURLE_OPERATION_TIMEDOUT) {
    return Failure(absl::StrCat("callback timed out after ",
                                absl::FormatDuration(absl::Milliseconds(TimeoutMs(t.request.timeout))),
                                ": ", detail),
                   http_status);
  }
  return Failure(absl::StrCat("callback failed (", curl_easy_strerror(rc), "): ", detail),
                 http_status);
}

void HttpCallbackSender::Impl::Finish(std::unique_ptr<Transfer> t, CallbackOutcome outcome) {
  answered.fetch_add(1, std::memory_order_relaxed);
  t->done(std::move(outcome));
}

}  // namespace tock::server::timers
