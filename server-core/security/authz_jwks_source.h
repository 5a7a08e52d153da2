// Where the token keys come from: a JWKS file, or an http(s) URL fetched with libcurl; read
// at start (a start fails when the keys cannot be read) and again every `refresh` on a
// thread of its own, so that keys an identity provider rotates in are picked up without a
// restart. A token naming a kid not in the set asks for an early read (at most one per
// kMinRefreshGap), for the moment between a provider's rotation and the next refresh. A
// failed read keeps the keys already held (logged at warn).
//
// Limits: the document at most kMaxJwksBytes (authz_jwks.h); a fetch at most 10 s.
//
// Thread safety: Current and RequestRefresh are safe from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/common/log.h"
#include "server-core/security/authz_jwks.h"

namespace tock::server::security {

// The text of a JWKS file or URL, at most kMaxJwksBytes. INVALID_ARGUMENT for a document too
// large, UNAVAILABLE when it cannot be read or fetched (naming the file or URL and why; an
// HTTP answer other than 200 gives its status).
absl::StatusOr<std::string> ReadJwksText(const std::string& file_or_url);

class JwksSource {
 public:
  static constexpr absl::Duration kMinRefreshGap = absl::Seconds(30);

  // Reads the keys once (errors as ReadJwksText and ParseJwks) and starts refreshing.
  static absl::StatusOr<std::unique_ptr<JwksSource>> Start(const std::string& file_or_url,
                                                           absl::Duration refresh, Logger& logger);
  ~JwksSource();

  // The keys now held; never null.
  std::shared_ptr<const Jwks> Current() const;
  // Counts each set of keys taken (1 after Start): verified tokens are cached per set.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // Counts each read of the file or URL finished, whether it failed or not: tests wait on
  // it to check that a bad read changed nothing, without sleeping.
  uint64_t reads() const { return reads_.load(std::memory_order_acquire); }
  // An early read (a token named an unknown kid); at most one per kMinRefreshGap.
  void RequestRefresh();

 private:
  JwksSource(std::string file_or_url, absl::Duration refresh, Logger& logger)
      : source_(std::move(file_or_url)), refresh_(refresh), logger_(logger) {}
  absl::Status Load();
  void Run();

  const std::string source_;
  const absl::Duration refresh_;
  Logger& logger_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::shared_ptr<const Jwks> keys_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint64_t> reads_{0};
  bool stop_ = false;
  bool early_ = false;
  absl::Time last_load_ = absl::InfinitePast();
  std::thread thread_;
};

}  // namespace tock::server::security
