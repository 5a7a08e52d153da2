// BlobStore on an S3 bucket (Temporal's s3store provider), written on libcurl with AWS
// Signature V4: AWS itself or any S3-compatible server at a custom endpoint, path-style
// ("http://host/bucket/key") or virtual-host style ("bucket.host/key") addressing.
//
// Every call is retried with exponential backoff on connection errors, timeouts, 5xx and
// 429 (S3's "slow down"), up to `max_attempts`; then UNAVAILABLE with the last error.
// 403 is PERMISSION_DENIED with S3's error code and message (SignatureDoesNotMatch, ...).
// Connections are kept alive in a small pool of curl handles, one per concurrent call.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "lib/archival/blob_store.h"
#include "lib/archival/sigv4.h"

namespace tock::archival {

struct S3Options {
  std::string bucket;
  std::string prefix;    // keys are stored as "<prefix>/<key>" ("" for none)
  std::string region;    // required
  std::string endpoint;  // "http://127.0.0.1:9000"; "" for AWS (https://s3.<region>.amazonaws.com)
  bool force_path_style = false;
  AwsCredentials credentials;
  absl::Duration timeout = absl::Minutes(1);  // per attempt, as Temporal's s3store
  int max_attempts = 4;
  absl::Duration first_backoff = absl::Milliseconds(100);
};

// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN; empty fields when unset.
AwsCredentials CredentialsFromEnvironment();

class S3BlobStore : public BlobStore {
 public:
  // INVALID_ARGUMENT for an empty region or bucket, or an endpoint that is not http(s)://.
  static absl::StatusOr<std::unique_ptr<S3BlobStore>> Create(S3Options options);
  ~S3BlobStore() override;

  absl::Status Put(const std::string& key, std::string_view bytes) override;
  absl::StatusOr<std::string> Get(const std::string& key) override;
  absl::StatusOr<bool> Exists(const std::string& key) override;
  absl::StatusOr<BlobListPage> List(const std::string& prefix, int max_keys,
                                    const std::string& token) override;
  std::string Describe() const override;

  struct Response {
    long status = 0;
    std::string body;
  };

 private:
  explicit S3BlobStore(S3Options options);
  // One signed request with retries; `key` "" addresses the bucket.
  absl::StatusOr<Response> Send(const std::string& method, const std::string& key,
                                const std::vector<std::pair<std::string, std::string>>& query,
                                std::string_view body);
  std::string FullKey(const std::string& key) const;

  S3Options options_;
  std::string scheme_;     // "http" or "https"
  std::string authority_;  // host[:port] of the endpoint
  std::mutex pool_mu_;
  std::vector<void*> idle_handles_;  // CURL*, reused for keep-alive
};

}  // namespace tock::archival
