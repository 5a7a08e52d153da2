// Timers and transfer tasks of namespaces that are standby here (reference/replication.md
// §4.4, §4.5): kept, with their rows still stored, until the namespace becomes active here,
// then run as the active cluster's (Temporal's failover of a namespace's queues). Checked
// every second while any is parked. A namespace whose state cannot be read counts as
// standby (NamespaceActivity::unknown): its work waits rather than run as if active.
//
// Thread safety: safe from any thread.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "lib/common/clock.h"
#include "lib/common/timer_thread.h"
#include "server-core/history/namespace_activity.h"
#include "server-core/persistence/execution_store.h"

namespace tock::server::history {

class StandbyParking {
 public:
  using RunTimer = std::function<void(const persistence::TimerTaskRow&)>;
  using RunTransfer = std::function<void(const persistence::TaskQueueTask&)>;
  // `activity_of` is read on every call (it is set after construction); `run_timer` and
  // `run_transfer` run what was parked once its namespace is active here.
  StandbyParking(const ActivityOf& activity_of, TimerThread& timers, Clock& clock,
                 RunTimer run_timer, RunTransfer run_transfer)
      : activity_of_(activity_of), timers_(timers), clock_(clock),
        run_timer_(std::move(run_timer)), run_transfer_(std::move(run_transfer)) {}

  // Whether `namespace_id` is standby here; if so the timer or the transfer task is parked.
  bool ParkIfStandby(const std::string& namespace_id, const persistence::TimerTaskRow& timer);
  bool ParkIfStandby(const std::string& namespace_id, const persistence::TaskQueueTask& transfer);
  // How many are parked.
  size_t size() const;

 private:
  static constexpr absl::Duration kCheckInterval = absl::Seconds(1);
  bool Standby(const std::string& namespace_id) const {
    return activity_of_ && !activity_of_(namespace_id).active;
  }
  // Under mu_: the next check, unless one is scheduled.
  void ScheduleCheckLocked();
  // Runs what is parked whose namespace is now active here.
  void Check();

  const ActivityOf& activity_of_;
  TimerThread& timers_;
  Clock& clock_;
  RunTimer run_timer_;
  RunTransfer run_transfer_;
  mutable std::mutex mu_;
  std::vector<persistence::TimerTaskRow> timers_parked_;      // guarded by mu_
  std::vector<persistence::TaskQueueTask> transfers_parked_;  // guarded by mu_
  bool check_scheduled_ = false;                             // guarded by mu_
};

}  // namespace tock::server::history
