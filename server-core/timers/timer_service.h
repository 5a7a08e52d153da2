// The timer service's operations (tock.timer.v1.TimerService; the HTTP/JSON API maps onto
// them): every request checked field by field, then written through the fenced owner of the
// timer's history shard.
//
// Checks (INVALID_ARGUMENT naming the field and its limit; nothing is stored on a refusal):
//   namespace                 required, a registered namespace (NOT_FOUND otherwise)
//   id                        1..255 bytes of UTF-8 without control characters
//   execute_at                required on create; a valid time within 10 years of now (a
//                             time in the past fires at once)
//   callback_url              required on create; http:// or https:// with a host, at most
//                             2048 bytes, no spaces or control characters; a host that is
//                             an address (or localhost) the callback policy refuses is
//                             refused here (callback_address_policy.h; names are checked
//                             by the sender once resolved)
//   payload_json              optional; valid JSON, at most 100 KiB, nested at most 64 deep
//   callback_timeout_seconds  0 (the default, 10) or 1..60
//   retry_policy              retry_policy.h
//
// Placement: shard = ShardForWorkflow(namespace id, timer id), the workflows' hash. A write
// is refused with UNAVAILABLE "history shard N is not owned by this host" when this host
// does not own the shard (the call router then forwards it to the owner, as it does for
// workflow calls); the write itself carries the shard's range id, so a host that lost the
// shard meanwhile writes nothing. Reads (get, list) are served by any host from the store.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "lib/common/clock.h"
#include "server-core/history/shard_controller.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/persistence/timer_store.h"
#include "server-core/timers/callback_address_policy.h"
#include "server-core/timers/retry_policy.h"
#include "server-core/timers/timer_retention.h"
#include "tock/timer/v1/service.pb.h"

namespace tock::server::timers {

namespace tv1 = tock::timer::v1;

// Limits of the fields (see above).
inline constexpr size_t kMaxTimerIdBytes = 255;
inline constexpr size_t kMaxCallbackUrlBytes = 2048;
inline constexpr size_t kMaxPayloadBytes = 100 * 1024;
inline constexpr int kMaxPayloadDepth = 64;
inline constexpr int32_t kDefaultCallbackTimeoutSeconds = 10;
inline constexpr int32_t kMaxCallbackTimeoutSeconds = 60;
inline constexpr absl::Duration kMaxScheduleAhead = absl::Hours(24 * 365 * 10);
inline constexpr int32_t kDefaultListPageSize = 100;
inline constexpr int32_t kMaxListPageSize = 1000;

// The shard of a timer (that of a workflow with the same namespace id and id).
int32_t TimerShard(const std::string& namespace_id, const std::string& timer_id,
                   int32_t shard_count);

class TimerService {
 public:
  TimerService(persistence::TimerStore& store, history::ShardController& shards,
               namespaces::NamespaceEngine& namespaces, Clock& clock);

  // Told of every timer this service wrote (after the write committed): the engine arms it
  // when it is due soon. Set once, before the first call.
  void SetOnWritten(std::function<void(const persistence::StoredTimer&)> on_written) {
    on_written_ = std::move(on_written);
  }
  // A deleted timer is removed at the end of its namespace's retention (null: kept). Set
  // once, before the first call; outlives the service.
  void SetRetention(TimerRetention* retention) { retention_ = retention; }
  // Which callback addresses are allowed (the default refuses every restricted range). Set
  // once, before the first call.
  void SetCallbackPolicy(CallbackAddressPolicy policy) { callback_policy_ = std::move(policy); }

  absl::StatusOr<tv1::CreateTimerResponse> Create(const tv1::CreateTimerRequest& request,
                                                  FieldNaming naming = FieldNaming::kProto);
  absl::StatusOr<tv1::GetTimerResponse> Get(const tv1::GetTimerRequest& request,
                                            FieldNaming naming = FieldNaming::kProto);
  absl::StatusOr<tv1::UpdateTimerResponse> Update(const tv1::UpdateTimerRequest& request,
                                                  FieldNaming naming = FieldNaming::kProto);
  absl::StatusOr<tv1::DeleteTimerResponse> Delete(const tv1::DeleteTimerRequest& request,
                                                  FieldNaming naming = FieldNaming::kProto);
  absl::StatusOr<tv1::ListTimersResponse> List(const tv1::ListTimersRequest& request,
                                               FieldNaming naming = FieldNaming::kProto);

  // The shard a request about (namespace name, timer id) goes to, for the call router; 0
  // when the namespace is unknown (the handler then answers the error).
  int32_t ShardOf(const std::string& namespace_name, const std::string& timer_id);

  // The NOT_FOUND answer for a timer that is not stored.
  static absl::Status NotFound(const std::string& namespace_name, const std::string& timer_id);

 private:
  struct Target {
    std::string namespace_id;
    std::string namespace_name;
    int32_t shard = 0;
  };
  // The namespace and id checked and resolved.
  absl::StatusOr<Target> Resolve(const std::string& namespace_name, const std::string& timer_id,
                                 FieldNaming naming, bool for_create,
                                 namespaces::NamespaceAccess access);
  // Reads the stored timer, lets `change` decide the new one (or answer without writing),
  // writes it fenced with the shard's range id held, and tries again when another write
  // came in between (a bounded number of times).
  using Change = std::function<absl::StatusOr<bool>(const persistence::StoredTimer* stored,
                                                    persistence::StoredTimer& next)>;
  absl::StatusOr<persistence::StoredTimer> ReadChangeWrite(const Target& target,
                                                           const std::string& timer_id,
                                                           const Change& change);

  persistence::TimerStore& store_;
  history::ShardController& shards_;
  namespaces::NamespaceEngine& namespaces_;
  Clock& clock_;
  std::function<void(const persistence::StoredTimer&)> on_written_;
  TimerRetention* retention_ = nullptr;
  CallbackAddressPolicy callback_policy_;
};

// Field checks shared with tests and the HTTP API (each OK or INVALID_ARGUMENT naming the
// field and its limit).
absl::Status ValidateTimerId(const std::string& id, const std::string& field);
absl::Status ValidateCallbackUrl(const std::string& url, const std::string& field);
absl::Status ValidatePayloadJson(const std::string& json, const std::string& field);
absl::Status ValidateCallbackTimeout(int32_t seconds, const std::string& field);
absl::Status ValidateExecuteAt(const google::protobuf::Timestamp& at, absl::Time now,
                               const std::string& field);

}  // namespace tock::server::timers
