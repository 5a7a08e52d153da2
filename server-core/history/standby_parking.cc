#include "server-core/history/standby_parking.h"

namespace tock::server::history {

bool StandbyParking::ParkIfStandby(const std::string& namespace_id,
                                   const persistence::TimerTaskRow& timer) {
  if (!Standby(namespace_id)) return false;
  std::lock_guard lock(mu_);
  timers_parked_.push_back(timer);
  ScheduleCheckLocked();
  return true;
}

bool StandbyParking::ParkIfStandby(const std::string& namespace_id,
                                   const persistence::TaskQueueTask& transfer) {
  if (!Standby(namespace_id)) return false;
  std::lock_guard lock(mu_);
  transfers_parked_.push_back(transfer);
  ScheduleCheckLocked();
  return true;
}

size_t StandbyParking::size() const {
  std::lock_guard lock(mu_);
  return timers_parked_.size() + transfers_parked_.size();
}

void StandbyParking::ScheduleCheckLocked() {
  if (check_scheduled_) return;
  check_scheduled_ = true;
  timers_.Schedule(clock_.Now() + kCheckInterval, [this] { Check(); });
}

void StandbyParking::Check() {
  std::vector<persistence::TimerTaskRow> timers;
  std::vector<persistence::TaskQueueTask> transfers;
  {
    std::lock_guard lock(mu_);
    std::erase_if(timers_parked_, [&](const persistence::TimerTaskRow& row) {
      if (Standby(row.task.namespace_id())) return false;
      timers.push_back(row);
      return true;
    });
    std::erase_if(transfers_parked_, [&](const persistence::TaskQueueTask& task) {
      if (Standby(task.task.namespace_id())) return false;
      transfers.push_back(task);
      return true;
    });
    check_scheduled_ = false;
    if (!timers_parked_.empty() || !transfers_parked_.empty()) ScheduleCheckLocked();
  }
  // The namespace failed over to here: what waited runs now, as the active cluster's.
  for (const persistence::TimerTaskRow& row : timers) run_timer_(row);
  for (const persistence::TaskQueueTask& task : transfers) run_transfer_(task);
}

}  // namespace tock::server::history
