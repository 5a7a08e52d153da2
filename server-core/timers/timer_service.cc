#include "server-core/timers/timer_service.h"

#include <google/protobuf/util/message_differencer.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/common/time_format.h"
#include "nlohmann/json.hpp"

namespace tock::server::timers {
namespace {

using persistence::StoredTimer;

// How many times a write is tried again when another write of the same timer came first.
constexpr int kWriteTries = 5;

std::string F(FieldNaming naming, const char* proto, const char* json) {
  return naming == FieldNaming::kProto ? proto : json;
}

bool ValidUtf8NoControl(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;
    int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (int k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

bool SameContent(const tv1::Timer& a, const tv1::Timer& b) {
  using google::protobuf::util::MessageDifferencer;
  return MessageDifferencer::Equals(a.execute_at(), b.execute_at()) &&
         a.callback_url() == b.callback_url() && a.payload_json() == b.payload_json() &&
         MessageDifferencer::Equals(a.retry_policy(), b.retry_policy()) &&
         a.callback_timeout_seconds() == b.callback_timeout_seconds();
}

const char* StateWord(tv1::TimerState s) {
  switch (s) {
    case tv1::TIMER_STATE_PENDING: return "pending";
    case tv1::TIMER_STATE_FIRING: return "firing";
    case tv1::TIMER_STATE_SUCCEEDED: return "succeeded";
    case tv1::TIMER_STATE_FAILED: return "failed";
    case tv1::TIMER_STATE_DELETED: return "deleted";
    default: return "in an unknown state";
  }
}

// Only a pending timer can be changed (the seed's rule); `verb`: "updated", "deleted".
absl::Status OnlyPending(const persistence::StoredTimer& stored, const std::string& id,
                         const char* verb) {
  if (stored.record.state() == tv1::TIMER_STATE_PENDING) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "timer '", id, "' is ", StateWord(stored.record.state()), "; only a pending timer can be ", verb));
}

}  // namespace

int32_t TimerShard(const std::string& namespace_id, const std::string& timer_id,
                   int32_t shard_count) {
  return history::ShardForWorkflow(namespace_id, timer_id, shard_count);
}

absl::Status ValidateTimerId(const std::string& id, const std::string& field) {
  if (id.empty()) return absl::InvalidArgumentError(absl::StrCat(field, " is required"));
  if (id.size() > kMaxTimerIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be at most ", kMaxTimerIdBytes,
                                                   " bytes, got ", id.size()));
  }
  if (!ValidUtf8NoControl(id)) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " must be UTF-8 text without control characters"));
  }
  return absl::OkStatus();
}

absl::Status ValidateCallbackUrl(const std::string& url, const std::string& field) {
  if (url.empty()) return absl::InvalidArgumentError(absl::StrCat(field, " is required"));
  if (url.size() > kMaxCallbackUrlBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, " must be at most ", kMaxCallbackUrlBytes, " bytes, got ", url.size()));
  }
  std::string_view rest;
  const std::string lower = absl::AsciiStrToLower(url.substr(0, 8));
  if (absl::StartsWith(lower, "http://")) {
    rest = std::string_view(url).substr(7);
  } else if (absl::StartsWith(lower, "https://")) {
    rest = std::string_view(url).substr(8);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " must be an http:// or https:// URL"));
  }
  for (char c : url) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " must not contain spaces or control characters"));
    }
  }
  const size_t host_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, host_end);
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority = authority.substr(at + 1);
  }
  if (authority.empty() || authority[0] == ':') {
    return absl::InvalidArgumentError(absl::StrCat(field, " must name a host"));
  }
  return absl::OkStatus();
}

absl::Status ValidatePayloadJson(const std::string& json, const std::string& field) {
  if (json.empty()) return absl::OkStatus();
  if (json.size() > kMaxPayloadBytes) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be at most ", kMaxPayloadBytes,
                                                   " bytes of JSON, got ", json.size()));
  }
  // Nesting first, in one pass outside strings: the parser is not asked to go deeper.
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : json) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > kMaxPayloadDepth) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, " must be nested at most ", kMaxPayloadDepth, " levels deep"));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  if (!nlohmann::json::accept(json)) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be valid JSON"));
  }
  return absl::OkStatus();
}

absl::Status ValidateCallbackTimeout(int32_t seconds, const std::string& field) {
  if (seconds < 0 || seconds > kMaxCallbackTimeoutSeconds) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, " must be between 1 and ", kMaxCallbackTimeoutSeconds, " (0 or unset: ",
        kDefaultCallbackTimeoutSeconds, "), got ", seconds));
  }
  return absl::OkStatus();
}

absl::Status ValidateExecuteAt(const google::protobuf::Timestamp& at, absl::Time now,
                               const std::string& field) {
  if (at.nanos() < 0 || at.nanos() > 999'999'999) {
    return absl::InvalidArgumentError(absl::StrCat(field, " is not a valid time"));
  }
  const absl::Time t = FromProtoTime(at);
  if (t > now + kMaxScheduleAhead || t < now - kMaxScheduleAhead) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be within 10 years of now (",
                                                   FormatTimestamp(now), ")"));
  }
  return absl::OkStatus();
}

absl::Status TimerService::NotFound(const std::string& namespace_name,
                                    const std::string& timer_id) {
  return absl::NotFoundError(
      absl::StrCat("timer '", timer_id, "' not found in namespace ", namespace_name));
}

TimerService::TimerService(persistence::TimerStore& store, history::ShardController& shards,
                           namespaces::NamespaceEngine& namespaces, Clock& clock)
    : store_(store), shards_(shards), namespaces_(namespaces), clock_(clock) {}

int32_t TimerService::ShardOf(const std::string& namespace_name, const std::string& timer_id) {
  absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(namespace_name, true, namespaces::NamespaceAccess::kRead);
  if (!ns.ok() || timer_id.empty()) return 0;
  return TimerShard(ns->id, timer_id, shards_.shard_count());
}

absl::StatusOr<TimerService::Target> TimerService::Resolve(const std::string& namespace_name,
                                                           const std::string& timer_id,
                                                           FieldNaming naming, bool for_create,
                                                           namespaces::NamespaceAccess access) {
  if (namespace_name.empty()) return absl::InvalidArgumentError("namespace is required");
  if (namespace_name.size() > 255) {
    return absl::InvalidArgumentError(
        absl::StrCat("namespace must be at most 255 bytes, got ", namespace_name.size()));
  }
  if (absl::Status s = ValidateTimerId(
          timer_id, for_create || naming == FieldNaming::kProto ? "id" : "timerId");
      !s.ok()) {
    return s;
  }
  absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns = namespaces_.Resolve(
      namespace_name, /*allow_deprecated=*/access == namespaces::NamespaceAccess::kRead, access);
  if (!ns.ok()) return ns.status();
  return Target{ns->id, ns->name, TimerShard(ns->id, timer_id, shards_.shard_count())};
}

absl::StatusOr<StoredTimer> TimerService::ReadChangeWrite(const Target& target,
                                                          const std::string& timer_id,
                                                          const Change& change) {
  // Held across the read and the write: a renewal of the shard's range by this host's own
  // workflow commits waits for it instead of fencing it out.
  history::ShardController::RangeHold hold = shards_.HoldRange(target.shard);
  if (hold.range_id() == history::ShardController::kNotOwned) {
    return history::ShardNotOwnedHere(target.shard);
  }
  for (int attempt = 0; attempt < kWriteTries; ++attempt) {
    absl::StatusOr<StoredTimer> stored = store_.Get(target.namespace_id, timer_id);
    if (!stored.ok() && stored.status().code() != absl::StatusCode::kNotFound) {
      return stored.status();
    }
    persistence::TimerWrite w;
    w.timer.namespace_id = target.namespace_id;
    w.timer.timer_id = timer_id;
    w.timer.shard_id = target.shard;
    if (stored.ok()) w.timer = *stored;
    absl::StatusOr<bool> write = change(stored.ok() ? &*stored : nullptr, w.timer);
    if (!write.ok()) return write.status();
    if (!*write) return w.timer;  // nothing to change
    w.range_id = hold.range_id();
    w.expected_revision = stored.ok() ? stored->revision : 0;
    std::vector<persistence::TimerWrite> batch = {std::move(w)};
    absl::Status s = store_.Write(batch)[0];
    if (s.ok()) {
      if (on_written_) on_written_(batch[0].timer);
      return std::move(batch[0].timer);
    }
    const persistence::TimerWriteRefusal refusal = persistence::TimerWriteRefusalOf(s);
    // Another write came first, or the transaction was aborted (a deadlock: nothing written).
    if (refusal == persistence::TimerWriteRefusal::kChanged ||
        s.code() == absl::StatusCode::kAborted) {
      continue;
    }
    if (refusal == persistence::TimerWriteRefusal::kFenced) {
      // Another host took the shard: until the ring says otherwise it is not ours.
      const int64_t range_id = hold.range_id();
      { history::ShardController::RangeHold released = std::move(hold); }
      shards_.Lost(target.shard, range_id);
      return history::ShardNotOwnedHere(target.shard);
    }
    return s;
  }
  return absl::AbortedError(absl::StrCat("timer '", timer_id,
                                         "' kept changing while it was written; try again"));
}

absl::StatusOr<tv1::CreateTimerResponse> TimerService::Create(
    const tv1::CreateTimerRequest& req, FieldNaming naming) {
  // Every field first, before anything is read or resolved.
  if (req.namespace_().empty()) return absl::InvalidArgumentError("namespace is required");
  if (absl::Status s = ValidateTimerId(req.id(), "id"); !s.ok()) return s;
  const absl::Time now = clock_.Now();
  const std::string execute_at = F(naming, "execute_at", "executeAt");
  if (!req.has_execute_at()) return absl::InvalidArgumentError(execute_at + " is required");
  if (absl::Status s = ValidateExecuteAt(req.execute_at(), now, execute_at); !s.ok()) return s;
  if (absl::Status s = ValidateCallbackUrl(req.callback_url(),
                                           F(naming, "callback_url", "callbackUrl"));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = callback_policy_.CheckUrl(req.callback_url(),
                                                 F(naming, "callback_url", "callbackUrl"));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidatePayloadJson(req.payload_json(), F(naming, "payload_json", "payload"));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateCallbackTimeout(
          req.callback_timeout_seconds(),
          F(naming, "callback_timeout_seconds", "callbackTimeoutSeconds"));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateRetryPolicy(req.retry_policy(), naming); !s.ok()) return s;
  absl::StatusOr<Target> target =
      Resolve(req.namespace_(), req.id(), naming, true, namespaces::NamespaceAccess::kWrite);
  if (!target.ok()) return target.status();

  tv1::Timer wanted;
  wanted.set_namespace_(target->namespace_name);
  wanted.set_id(req.id());
  *wanted.mutable_execute_at() = req.execute_at();
  wanted.set_callback_url(req.callback_url());
  wanted.set_payload_json(req.payload_json());
  if (req.has_retry_policy()) *wanted.mutable_retry_policy() = req.retry_policy();
  wanted.set_callback_timeout_seconds(req.callback_timeout_seconds() == 0
                                          ? kDefaultCallbackTimeoutSeconds
                                          : req.callback_timeout_seconds());
  bool created = true;
  absl::StatusOr<StoredTimer> written = ReadChangeWrite(
      *target, req.id(), [&](const StoredTimer* stored, StoredTimer& next) -> absl::StatusOr<bool> {
        // The same timer again (a retried create): nothing changes, whatever it did since.
        if (stored != nullptr && stored->record.state() != tv1::TIMER_STATE_DELETED &&
            SameContent(stored->record, wanted)) {
          created = false;
          return false;
        }
        created = true;
        const absl::Time at = clock_.Now();
        next.record = wanted;
        next.record.set_state(tv1::TIMER_STATE_PENDING);
        *next.record.mutable_created_at() =
            stored != nullptr ? stored->record.created_at() : ToProtoTime(at);
        *next.record.mutable_updated_at() = ToProtoTime(at);
        *next.record.mutable_next_attempt_at() = req.execute_at();
        next.due = FromProtoTime(req.execute_at());
        return true;
      });
  if (!written.ok()) return written.status();
  tv1::CreateTimerResponse out;
  *out.mutable_timer() = std::move(written->record);
  out.set_created(created);
  return out;
}

absl::StatusOr<tv1::GetTimerResponse> TimerService::Get(const tv1::GetTimerRequest& req,
                                                        FieldNaming naming) {
  absl::StatusOr<Target> target =
      Resolve(req.namespace_(), req.id(), naming, false, namespaces::NamespaceAccess::kRead);
  if (!target.ok()) return target.status();
  absl::StatusOr<StoredTimer> stored = store_.Get(target->namespace_id, req.id());
  if (!stored.ok()) {
    if (stored.status().code() == absl::StatusCode::kNotFound) {
      return NotFound(target->namespace_name, req.id());
    }
    return stored.status();
  }
  tv1::GetTimerResponse out;
  *out.mutable_timer() = std::move(stored->record);
  return out;
}

absl::StatusOr<tv1::UpdateTimerResponse> TimerService::Update(const tv1::UpdateTimerRequest& req,
                                                              FieldNaming naming) {
  if (req.namespace_().empty()) return absl::InvalidArgumentError("namespace is required");
  if (absl::Status s = ValidateTimerId(req.id(), F(naming, "id", "timerId")); !s.ok()) return s;
  const absl::Time now = clock_.Now();
  if (req.has_execute_at()) {
    if (absl::Status s = ValidateExecuteAt(req.execute_at(), now, F(naming, "execute_at", "executeAt"));
        !s.ok()) {
      return s;
    }
  }
  if (req.has_callback_url()) {
    if (absl::Status s = ValidateCallbackUrl(req.callback_url(),
                                             F(naming, "callback_url", "callbackUrl"));
        !s.ok()) {
      return s;
    }
    if (absl::Status s = callback_policy_.CheckUrl(req.callback_url(),
                                                   F(naming, "callback_url", "callbackUrl"));
        !s.ok()) {
      return s;
    }
  }
  if (req.has_payload_json()) {
    if (absl::Status s =
            ValidatePayloadJson(req.payload_json(), F(naming, "payload_json", "payload"));
        !s.ok()) {
      return s;
    }
  }
  if (req.has_callback_timeout_seconds()) {
    if (absl::Status s = ValidateCallbackTimeout(
            req.callback_timeout_seconds(),
            F(naming, "callback_timeout_seconds", "callbackTimeoutSeconds"));
        !s.ok()) {
      return s;
    }
  }
  if (req.has_retry_policy()) {
    if (absl::Status s = ValidateRetryPolicy(req.retry_policy(), naming); !s.ok()) return s;
  }
  absl::StatusOr<Target> target =
      Resolve(req.namespace_(), req.id(), naming, false, namespaces::NamespaceAccess::kWrite);
  if (!target.ok()) return target.status();
  absl::StatusOr<StoredTimer> written = ReadChangeWrite(
      *target, req.id(), [&](const StoredTimer* stored, StoredTimer& next) -> absl::StatusOr<bool> {
        if (stored == nullptr) return NotFound(target->namespace_name, req.id());
        if (absl::Status s = OnlyPending(*stored, req.id(), "updated"); !s.ok()) return s;
        tv1::Timer& r = next.record;
        if (req.has_execute_at()) {
          *r.mutable_execute_at() = req.execute_at();
          *r.mutable_next_attempt_at() = req.execute_at();
          next.due = FromProtoTime(req.execute_at());
        }
        if (req.has_callback_url()) r.set_callback_url(req.callback_url());
        if (req.has_payload_json()) r.set_payload_json(req.payload_json());
        if (req.has_callback_timeout_seconds()) {
          r.set_callback_timeout_seconds(req.callback_timeout_seconds() == 0
                                             ? kDefaultCallbackTimeoutSeconds
                                             : req.callback_timeout_seconds());
        }
        if (req.has_retry_policy()) *r.mutable_retry_policy() = req.retry_policy();
        *r.mutable_updated_at() = ToProtoTime(clock_.Now());
        return true;
      });
  if (!written.ok()) return written.status();
  tv1::UpdateTimerResponse out;
  *out.mutable_timer() = std::move(written->record);
  return out;
}

absl::StatusOr<tv1::DeleteTimerResponse> TimerService::Delete(const tv1::DeleteTimerRequest& req,
                                                              FieldNaming naming) {
  absl::StatusOr<Target> target =
      Resolve(req.namespace_(), req.id(), naming, false, namespaces::NamespaceAccess::kWrite);
  if (!target.ok()) return target.status();
  absl::StatusOr<StoredTimer> written = ReadChangeWrite(
      *target, req.id(), [&](const StoredTimer* stored, StoredTimer& next) -> absl::StatusOr<bool> {
        if (stored == nullptr) return NotFound(target->namespace_name, req.id());
        if (absl::Status s = OnlyPending(*stored, req.id(), "deleted"); !s.ok()) return s;
        const absl::Time now = clock_.Now();
        next.record.set_state(tv1::TIMER_STATE_DELETED);
        next.record.clear_next_attempt_at();
        *next.record.mutable_updated_at() = ToProtoTime(now);
        // Readable as DELETED until its namespace's retention is over, then removed.
        next.due = retention_ != nullptr
                       ? retention_->DueAfterFinish(stored->namespace_id, now, now)
                       : absl::InfiniteFuture();
        return true;
      });
  if (!written.ok()) return written.status();
  tv1::DeleteTimerResponse out;
  *out.mutable_timer() = std::move(written->record);
  return out;
}

absl::StatusOr<tv1::ListTimersResponse> TimerService::List(const tv1::ListTimersRequest& req,
                                                           FieldNaming naming) {
  if (req.namespace_().empty()) return absl::InvalidArgumentError("namespace is required");
  const std::string page_size = F(naming, "page_size", "pageSize");
  if (req.page_size() < 0 || req.page_size() > kMaxListPageSize) {
    return absl::InvalidArgumentError(absl::StrCat(page_size, " must be between 1 and ",
                                                   kMaxListPageSize, " (0: ", kDefaultListPageSize,
                                                   "), got ", req.page_size()));
  }
  // The token is the last id of the previous page.
  if (req.next_page_token().size() > kMaxTimerIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        F(naming, "next_page_token", "nextPageToken"), " is not a token of this list"));
  }
  if (!tv1::TimerState_IsValid(req.state())) {
    return absl::InvalidArgumentError(
        absl::StrCat(F(naming, "state", "state"), " must be a TimerState (0 to 5), got ", req.state()));
  }
  absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
  if (!ns.ok()) return ns.status();
  const int32_t limit = req.page_size() == 0 ? kDefaultListPageSize : req.page_size();
  // One more than the page: whether another page follows without an empty last page.
  absl::StatusOr<std::vector<StoredTimer>> rows =
      store_.List(ns->id, req.next_page_token(), req.state(), limit + 1);
  if (!rows.ok()) return rows.status();
  tv1::ListTimersResponse out;
  const bool more = static_cast<int32_t>(rows->size()) > limit;
  if (more) rows->resize(static_cast<size_t>(limit));
  for (StoredTimer& t : *rows) *out.add_timers() = std::move(t.record);
  if (more) out.set_next_page_token(out.timers(out.timers_size() - 1).id());
  return out;
}

}  // namespace tock::server::timers
