// The updates of each run that live in memory only (like Temporal's update registry):
// admitted and not yet accepted or rejected, rejected ones (kept a minute for their waiters
// to read), and the run's speculative workflow task. Accepted updates are in the run's
// state, not here. A restart loses what is here, and the callers' retries admit it again.
//
// Every change of a run's entry is made under that run's lock (HistoryEngine::Mutate) or
// right after its commit; the registry's own lock keeps its map consistent across runs.
//
// Thread safety: safe from any thread.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "lib/common/clock.h"
#include "lib/common/timer_thread.h"
#include "server-core/history/run_transaction.h"
#include "temporal/api/failure/v1/message.pb.h"
#include "temporal/api/protocol/v1/message.pb.h"
#include "temporal/api/update/v1/message.pb.h"

namespace tock::server::history {

// What a workflow task completion does to updates: applied to the registry once committed.
struct UpdateEffects {
  std::set<std::string> accepted;                                        // update ids
  std::map<std::string, temporal::api::failure::v1::Failure> rejected;  // by update id
};

class UpdateRegistry {
 public:
  UpdateRegistry(Clock& clock, TimerThread& timers) : clock_(clock), timers_(timers) {}

  // What the registry holds of one update, for an admission's checks.
  struct Seen {
    bool admitted = false;
    bool rejected = false;
    size_t admitted_in_run = 0;  // the run's admitted updates
  };
  // Admits `request` to the run unless `check` (called under the registry's lock with what
  // is there) returns an error, which is returned and admits nothing. Asked again after a
  // rejection, it is a new update.
  absl::Status Admit(const std::string& run_id, const temporal::api::update::v1::Request& request,
                     const std::function<absl::Status(const Seen&)>& check = nullptr);
  // The update leaves the run (its admission was not written, or it moved to the next run).
  void Withdraw(const std::string& run_id, const std::string& update_id);
  // Everything of the run goes (its start was not written).
  void Forget(const std::string& run_id);
  // A closed run's entry goes after a minute (its waiters' time to read it).
  void ForgetLater(const std::string& run_id);

  // The admitted update's request; none when it is not admitted here.
  std::optional<temporal::api::update::v1::Request> Admitted(const std::string& run_id,
                                                             const std::string& update_id);
  // Where the update stands here, read at once: rejected (with the failure), or admitted.
  struct Standing {
    std::optional<temporal::api::failure::v1::Failure> rejection;
    bool admitted = false;
  };
  Standing StandingOf(const std::string& run_id, const std::string& update_id);
  // The admitted updates as protocol messages for the workflow task started at
  // `started_id`, in admission order (each remembers it was sent with that task).
  std::vector<temporal::api::protocol::v1::Message> MessagesFor(const std::string& run_id,
                                                                int64_t started_id);
  // After a completion's commands, the admitted updates it did not answer: those the task
  // carried (started at `started_id`), and whether any was admitted while it ran.
  struct Unanswered {
    std::vector<std::string> delivered;
    bool undelivered = false;
  };
  Unanswered UnansweredBy(const std::string& run_id, int64_t started_id,
                          const UpdateEffects& effects);
  // After the completion committed: accepted ones leave, rejected ones are kept a minute.
  void Publish(const std::string& run_id, const UpdateEffects& effects);

  // The run's speculative task: taken out (Mutate puts it back when nothing was written),
  // put, and whether there is one (cheap while no run has one).
  std::optional<SpeculativeTask> TakeSpeculative(const std::string& run_id);
  void PutSpeculative(const std::string& run_id, SpeculativeTask task);
  bool HasSpeculative(const std::string& run_id);
  bool AnySpeculative() const { return speculative_tasks_.load() > 0; }

 private:
  struct AdmittedUpdate {
    temporal::api::update::v1::Request request;
    uint64_t seq = 0;             // admission order: the order of delivery
    int64_t sent_started_id = 0;  // the workflow task (started event) that last carried it
  };
  struct RunUpdates {
    std::map<std::string, AdmittedUpdate> admitted;                        // by update id
    std::map<std::string, temporal::api::failure::v1::Failure> rejected;  // kept a minute
    std::optional<SpeculativeTask> speculative;
    bool Empty() const { return admitted.empty() && rejected.empty() && !speculative; }
  };
  // Under mu_: drops the run's entry when it holds nothing.
  void DropIfEmptyLocked(const std::string& run_id);

  Clock& clock_;
  TimerThread& timers_;
  std::mutex mu_;
  std::unordered_map<std::string, RunUpdates> runs_;  // by run id; guarded by mu_
  uint64_t next_seq_ = 1;                             // guarded by mu_
  std::atomic<int> speculative_tasks_{0};  // how many runs have one (Mutate's fast path)
};

}  // namespace tock::server::history
