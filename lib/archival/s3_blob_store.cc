#include "lib/archival/s3_blob_store.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <cstdlib>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "lib/archival/libcurl_stubs.h"
#include "lib/archival/s3_xml.h"

namespace tock::archival {
namespace {

// Opens libcurl (at the first S3 store: libcurl_stubs.h) and initialises it, once.
absl::Status InitCurlOnce() {
  if (absl::Status s = Libcurl().Load(); !s.ok()) return s;
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  return absl::OkStatus();
}

size_t AppendBody(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

std::string ErrorText(const S3BlobStore::Response& r) {
  const std::string code = XmlElement(r.body, "Code");
  const std::string message = XmlElement(r.body, "Message");
  if (code.empty()) return absl::StrCat("HTTP ", r.status);
  return absl::StrCat("HTTP ", r.status, " ", code, message.empty() ? "" : ": ", message);
}

}  // namespace

AwsCredentials CredentialsFromEnvironment() {
  return {Env("AWS_ACCESS_KEY_ID"), Env("AWS_SECRET_ACCESS_KEY"), Env("AWS_SESSION_TOKEN")};
}

absl::StatusOr<std::unique_ptr<S3BlobStore>> S3BlobStore::Create(S3Options options) {
  if (options.region.empty()) return absl::InvalidArgumentError("s3 store: empty aws region");
  if (options.bucket.empty()) return absl::InvalidArgumentError("s3 store: no bucket specified");
  if (absl::Status s = InitCurlOnce(); !s.ok()) return s;
  auto store = std::unique_ptr<S3BlobStore>(new S3BlobStore(std::move(options)));
  S3Options& o = store->options_;
  if (o.endpoint.empty()) {
    store->scheme_ = "https";
    store->authority_ = absl::StrCat("s3.", o.region, ".amazonaws.com");
  } else {
    absl::string_view e = o.endpoint;
    if (absl::ConsumePrefix(&e, "http://")) {
      store->scheme_ = "http";
    } else if (absl::ConsumePrefix(&e, "https://")) {
      store->scheme_ = "https";
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "s3 store: endpoint \"", o.endpoint, "\" must start with http:// or https://"));
    }
    while (absl::ConsumeSuffix(&e, "/")) {
    }
    store->authority_ = std::string(e);
  }
  while (!o.prefix.empty() && o.prefix.back() == '/') o.prefix.pop_back();
  return store;
}

S3BlobStore::S3BlobStore(S3Options options) : options_(std::move(options)) {}

S3BlobStore::~S3BlobStore() {
  for (void* h : idle_handles_) curl_easy_cleanup(static_cast<CURL*>(h));
}

std::string S3BlobStore::Describe() const {
  return absl::StrCat("s3://", options_.bucket, options_.prefix.empty() ? "" : "/",
                      options_.prefix);
}

std::string S3BlobStore::FullKey(const std::string& key) const {
  return options_.prefix.empty() ? key : absl::StrCat(options_.prefix, "/", key);
}

absl::StatusOr<S3BlobStore::Response> S3BlobStore::Send(
    const std::string& method, const std::string& key,
    const std::vector<std::pair<std::string, std::string>>& query, std::string_view body) {
  // Path-style puts the bucket in the path; virtual-host style in the host name. With a
  // custom endpoint the connection still goes to the endpoint's address and only the Host
  // header names the bucket, so "bucket.127.0.0.1" needs no DNS.
  const bool path_style = options_.force_path_style;
  const std::string host = path_style ? authority_ : absl::StrCat(options_.bucket, ".", authority_);
  std::string path = path_style ? absl::StrCat("/", options_.bucket) : "";
  if (!key.empty() || !path_style) absl::StrAppend(&path, "/", UriEncodePath(key));
  std::string url = absl::StrCat(scheme_, "://",
                                 options_.endpoint.empty() ? host : authority_, path);
  if (!query.empty()) {
    std::string q;
    for (const auto& [k, v] : query) {
      absl::StrAppend(&q, q.empty() ? "?" : "&", UriEncode(k), "=", UriEncode(v));
    }
    url += q;
  }

  CURL* curl = nullptr;
  {
    std::lock_guard lock(pool_mu_);
    if (!idle_handles_.empty()) {
      curl = static_cast<CURL*>(idle_handles_.back());
      idle_handles_.pop_back();
    }
  }
  if (curl == nullptr) curl = curl_easy_init();
  if (curl == nullptr) return absl::ResourceExhaustedError("s3 store: curl_easy_init failed");

  const std::string payload_hash = Sha256Hex(body);
  std::string last_error;
  absl::Duration backoff = options_.first_backoff;
  absl::StatusOr<Response> result = absl::UnavailableError("s3 store: no attempt made");
  for (int attempt = 1; attempt <= std::max(1, options_.max_attempts); ++attempt) {
    const absl::Time now = absl::Now();
    SigV4Request sig;
    sig.method = method;
    sig.encoded_path = path;
    sig.query = query;
    sig.payload_sha256_hex = payload_hash;
    sig.headers["host"] = host;
    sig.headers["x-amz-content-sha256"] = payload_hash;
    sig.headers["x-amz-date"] = AmzDate(now);
    if (!options_.credentials.session_token.empty()) {
      sig.headers["x-amz-security-token"] = options_.credentials.session_token;
    }
    const std::string authorization =
        SignV4(sig, options_.credentials, options_.region, "s3", now);
    curl_slist* headers = nullptr;
    for (const auto& [name, value] : sig.headers) {
      headers = curl_slist_append(headers, absl::StrCat(name, ": ", value).c_str());
    }
    headers = curl_slist_append(headers, absl::StrCat("Authorization: ", authorization).c_str());
    headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
    if (method == "PUT") {
      headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
    }

    Response response;
    curl_easy_reset(curl);
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                     static_cast<long>(absl::ToInt64Milliseconds(options_.timeout)));
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    if (method == "PUT") {
      // The body is sent from where it is, without a read callback or a copy.
      curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "PUT");
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    } else if (method == "HEAD") {
      curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    } else if (method != "GET") {
      curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
    }
    const CURLcode rc = curl_easy_perform(curl);
    curl_slist_free_all(headers);
    bool retry = false;
    if (rc != CURLE_OK) {
      last_error = curl_easy_strerror(rc);
      retry = true;
    } else {
      curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
      if (response.status >= 500 || response.status == 429) {
        last_error = ErrorText(response);
        retry = true;
      } else {
        result = std::move(response);
        break;
      }
    }
    result = absl::UnavailableError(absl::StrCat("s3 store ", Describe(), ": ", method, " ",
                                                 key.empty() ? "(bucket)" : key, " failed after ",
                                                 attempt, attempt == 1 ? " attempt" : " attempts",
                                                 ": ", last_error));
    if (!retry || attempt == options_.max_attempts) break;
    std::this_thread::sleep_for(absl::ToChronoMilliseconds(backoff));
    backoff = std::min(backoff * 2, absl::Seconds(5));
  }
  {
    std::lock_guard lock(pool_mu_);
    idle_handles_.push_back(curl);
  }
  if (!result.ok()) return result;
  const Response& r = *result;
  if (r.status >= 200 && r.status < 300) return result;
  const std::string what = absl::StrCat("s3 store ", Describe(), ": ", method, " ",
                                        key.empty() ? "(bucket)" : key, ": ", ErrorText(r));
  if (r.status == 404) return absl::NotFoundError(what);
  if (r.status == 403 || r.status == 401) return absl::PermissionDeniedError(what);
  return absl::FailedPreconditionError(what);
}

absl::Status S3BlobStore::Put(const std::string& key, std::string_view bytes) {
  return Send("PUT", FullKey(key), {}, bytes).status();
}

absl::StatusOr<std::string> S3BlobStore::Get(const std::string& key) {
  absl::StatusOr<Response> r = Send("GET", FullKey(key), {}, {});
  if (!r.ok()) return r.status();
  return std::move(r->body);
}

absl::StatusOr<bool> S3BlobStore::Exists(const std::string& key) {
  absl::StatusOr<Response> r = Send("HEAD", FullKey(key), {}, {});
  if (r.ok()) return true;
  if (r.status().code() == absl::StatusCode::kNotFound) return false;
  return r.status();
}

absl::StatusOr<BlobListPage> S3BlobStore::List(const std::string& prefix, int max_keys,
                                                const std::string& token) {
  std::vector<std::pair<std::string, std::string>> query = {{"list-type", "2"},
                                                            {"prefix", FullKey(prefix)}};
  if (max_keys > 0) query.emplace_back("max-keys", std::to_string(max_keys));
  if (!token.empty()) query.emplace_back("continuation-token", token);
  absl::StatusOr<Response> r = Send("GET", "", query, {});
  if (!r.ok()) return r.status();
  BlobListPage page;
  const size_t strip = options_.prefix.empty() ? 0 : options_.prefix.size() + 1;
  for (std::string& key : XmlElements(r->body, "Key")) {
    page.keys.push_back(key.substr(std::min(strip, key.size())));
  }
  if (XmlElement(r->body, "IsTruncated") == "true") {
    page.next_token = XmlElement(r->body, "NextContinuationToken");
  }
  return page;
}

}  // namespace tock::archival
