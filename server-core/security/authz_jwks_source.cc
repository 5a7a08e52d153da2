#include "server-core/security/authz_jwks_source.h"

#include <curl/curl.h>

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tock::server::security {
namespace {

struct Body {
  std::string text;
  bool too_large = false;
};

size_t Append(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<Body*>(user);
  const size_t n = size * count;
  if (body->text.size() + n > kMaxJwksBytes) {
    body->too_large = true;
    return 0;  // aborts the transfer
  }
  body->text.append(data, n);
  return n;
}

absl::StatusOr<std::string> Fetch(const std::string& url) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::UnavailableError("JWKS " + url + ": libcurl failed to start");
  Body body;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 3L);
  // Only http(s), also after a redirect.
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  const CURLcode code = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(curl);
  if (body.too_large) {
    return absl::InvalidArgumentError(
        absl::StrCat("JWKS ", url, ": longer than ", kMaxJwksBytes, " bytes"));
  }
  if (code != CURLE_OK) {
    return absl::UnavailableError(absl::StrCat("JWKS ", url, ": ", curl_easy_strerror(code)));
  }
  if (status != 200) {
    return absl::UnavailableError(absl::StrCat("JWKS ", url, ": HTTP status ", status));
  }
  return std::move(body.text);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::UnavailableError("JWKS " + path + ": cannot be read");
  std::string text(kMaxJwksBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxJwksBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("JWKS ", path, ": longer than ", kMaxJwksBytes, " bytes"));
  }
  return text;
}

}  // namespace

absl::StatusOr<std::string> ReadJwksText(const std::string& file_or_url) {
  if (absl::StartsWithIgnoreCase(file_or_url, "http://") ||
      absl::StartsWithIgnoreCase(file_or_url, "https://")) {
    return Fetch(file_or_url);
  }
  return ReadFile(file_or_url);
}

absl::StatusOr<std::unique_ptr<JwksSource>> JwksSource::Start(const std::string& file_or_url,
                                                              absl::Duration refresh,
                                                              Logger& logger) {
  std::unique_ptr<JwksSource> source(new JwksSource(file_or_url, refresh, logger));
  if (absl::Status s = source->Load(); !s.ok()) return s;
  source->thread_ = std::thread([s = source.get()] { s->Run(); });
  return source;
}

JwksSource::~JwksSource() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::shared_ptr<const Jwks> JwksSource::Current() const {
  std::lock_guard lock(mu_);
  return keys_;
}

void JwksSource::RequestRefresh() {
  {
    std::lock_guard lock(mu_);
    if (early_ || absl::Now() < last_load_ + kMinRefreshGap) return;
    early_ = true;
  }
  wake_.notify_all();
}

absl::Status JwksSource::Load() {
  absl::StatusOr<std::string> text = ReadJwksText(source_);
  absl::StatusOr<Jwks> keys = text.ok() ? ParseJwks(*text, source_) : text.status();
  std::lock_guard lock(mu_);
  last_load_ = absl::Now();
  if (keys.ok()) {
    keys_ = std::make_shared<const Jwks>(std::move(*keys));
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  reads_.fetch_add(1, std::memory_order_acq_rel);  // after the keys taken, if they were
  return keys.status();
}

void JwksSource::Run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    wake_.wait_for(lock, absl::ToChronoSeconds(refresh_), [this] { return stop_ || early_; });
    if (stop_) return;
    early_ = false;
    lock.unlock();
    if (absl::Status s = Load(); !s.ok()) {
      logger_.Warn("JWKS not refreshed; the keys read before are kept",
                   {{"error", std::string(s.message())}});
    }
    lock.lock();
  }
}

}  // namespace tock::server::security
