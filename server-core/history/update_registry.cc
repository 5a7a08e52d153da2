#include "server-core/history/update_registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tock::server::history {
namespace {

// How long a rejection (and the registry of a closed run) is kept for waiters to read.
constexpr absl::Duration kKeepEnded = absl::Minutes(1);

}  // namespace

absl::Status UpdateRegistry::Admit(const std::string& run_id,
                                   const temporal::api::update::v1::Request& request,
                                   const std::function<absl::Status(const Seen&)>& check) {
  const std::string& id = request.meta().update_id();
  std::lock_guard lock(mu_);
  if (check) {
    Seen seen;
    if (auto run = runs_.find(run_id); run != runs_.end()) {
      seen.admitted = run->second.admitted.contains(id);
      seen.rejected = run->second.rejected.contains(id);
      seen.admitted_in_run = run->second.admitted.size();
    }
    if (absl::Status s = check(seen); !s.ok()) return s;
  }
  RunUpdates& run = runs_[run_id];
  run.rejected.erase(id);
  AdmittedUpdate& entry = run.admitted[id];
  entry.request = request;
  entry.seq = next_seq_++;
  return absl::OkStatus();
}

void UpdateRegistry::DropIfEmptyLocked(const std::string& run_id) {
  auto it = runs_.find(run_id);
  if (it != runs_.end() && it->second.Empty()) runs_.erase(it);
}

void UpdateRegistry::Withdraw(const std::string& run_id, const std::string& update_id) {
  std::lock_guard lock(mu_);
  auto it = runs_.find(run_id);
  if (it == runs_.end()) return;
  it->second.admitted.erase(update_id);
  DropIfEmptyLocked(run_id);
}

void UpdateRegistry::Forget(const std::string& run_id) {
  std::lock_guard lock(mu_);
  auto it = runs_.find(run_id);
  if (it == runs_.end()) return;
  if (it->second.speculative) --speculative_tasks_;
  runs_.erase(it);
}

void UpdateRegistry::ForgetLater(const std::string& run_id) {
  {
    std::lock_guard lock(mu_);
    if (!runs_.contains(run_id)) return;
  }
  timers_.Schedule(clock_.Now() + kKeepEnded, [this, run_id] { Forget(run_id); });
}

std::optional<temporal::api::update::v1::Request> UpdateRegistry::Admitted(
    const std::string& run_id, const std::string& update_id) {
  std::lock_guard lock(mu_);
  auto run = runs_.find(run_id);
  if (run == runs_.end()) return std::nullopt;
  auto it = run->second.admitted.find(update_id);
  if (it == run->second.admitted.end()) return std::nullopt;
  return it->second.request;
}

UpdateRegistry::Standing UpdateRegistry::StandingOf(const std::string& run_id,
                                                    const std::string& update_id) {
  Standing out;
  std::lock_guard lock(mu_);
  auto run = runs_.find(run_id);
  if (run == runs_.end()) return out;
  if (auto it = run->second.rejected.find(update_id); it != run->second.rejected.end()) {
    out.rejection = it->second;
  }
  out.admitted = run->second.admitted.contains(update_id);
  return out;
}

std::vector<temporal::api::protocol::v1::Message> UpdateRegistry::MessagesFor(
    const std::string& run_id, int64_t started_id) {
  std::vector<temporal::api::protocol::v1::Message> out;
  std::lock_guard lock(mu_);
  auto it = runs_.find(run_id);
  if (it == runs_.end() || it->second.admitted.empty()) return out;
  std::vector<std::pair<uint64_t, const std::string*>> order;
  for (auto& [id, update] : it->second.admitted) {
    update.sent_started_id = started_id;
    order.emplace_back(update.seq, &id);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [_, id] : order) {
    temporal::api::protocol::v1::Message& m = out.emplace_back();
    m.set_id(absl::StrCat(*id, "/request"));
    m.set_protocol_instance_id(*id);
    // To be handled after the events before WorkflowTaskStarted (Temporal's sequencing).
    m.set_event_id(started_id - 1);
    m.mutable_body()->PackFrom(it->second.admitted[*id].request);
  }
  return out;
}

UpdateRegistry::Unanswered UpdateRegistry::UnansweredBy(const std::string& run_id,
                                                        int64_t started_id,
                                                        const UpdateEffects& effects) {
  Unanswered out;
  std::lock_guard lock(mu_);
  auto it = runs_.find(run_id);
  if (it == runs_.end()) return out;
  for (const auto& [id, update] : it->second.admitted) {
    if (effects.accepted.contains(id) || effects.rejected.contains(id)) continue;
    if (update.sent_started_id == started_id) {
      out.delivered.push_back(id);
    } else {
      out.undelivered = true;  // admitted while this task ran: the next one carries it
    }
  }
  return out;
}

void UpdateRegistry::Publish(const std::string& run_id, const UpdateEffects& effects) {
  if (effects.accepted.empty() && effects.rejected.empty()) return;
  {
    std::lock_guard lock(mu_);
    RunUpdates& run = runs_[run_id];
    for (const auto& id : effects.accepted) run.admitted.erase(id);
    for (const auto& [id, failure] : effects.rejected) {
      run.admitted.erase(id);
      run.rejected[id] = failure;
    }
    DropIfEmptyLocked(run_id);
  }
  if (effects.rejected.empty()) return;
  std::vector<std::string> ids;
  for (const auto& [id, _] : effects.rejected) ids.push_back(id);
  timers_.Schedule(clock_.Now() + kKeepEnded, [this, run_id, ids] {
    std::lock_guard lock(mu_);
    auto it = runs_.find(run_id);
    if (it == runs_.end()) return;
    for (const auto& id : ids) it->second.rejected.erase(id);
    DropIfEmptyLocked(run_id);
  });
}

std::optional<SpeculativeTask> UpdateRegistry::TakeSpeculative(const std::string& run_id) {
  if (!AnySpeculative()) return std::nullopt;
  std::lock_guard lock(mu_);
  auto it = runs_.find(run_id);
  if (it == runs_.end() || !it->second.speculative) return std::nullopt;
  std::optional<SpeculativeTask> out = std::move(it->second.speculative);
  it->second.speculative.reset();
  --speculative_tasks_;
  return out;
}

void UpdateRegistry::PutSpeculative(const std::string& run_id, SpeculativeTask task) {
  std::lock_guard lock(mu_);
  RunUpdates& run = runs_[run_id];
  if (!run.speculative) ++speculative_tasks_;
  run.speculative = std::move(task);
}

bool UpdateRegistry::HasSpeculative(const std::string& run_id) {
  if (!AnySpeculative()) return false;
  std::lock_guard lock(mu_);
  auto it = runs_.find(run_id);
  return it != runs_.end() && it->second.speculative.has_value();
}

}  // namespace tock::server::history
