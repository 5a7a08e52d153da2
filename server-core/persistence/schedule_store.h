// Schedules (WorkflowService CreateSchedule ...): one record per (namespace id, schedule id).
// Every change is a compare-and-swap on the row's revision, so the API calls of any host and
// the host that runs the schedule never lose each other's changes: read, change, Update with
// the revision read, and on ABORTED read again.
//
// Thread safety: implementations are safe to call from many threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tock/persistence/v1/schedule.pb.h"

namespace tock::persistence {

using ScheduleRecord = tock::persistence::v1::ScheduleRecord;

struct StoredSchedule {
  ScheduleRecord record;
  int64_t revision = 0;  // 1 when created, +1 by each Update
};

class ScheduleStore {
 public:
  virtual ~ScheduleStore() = default;
  // ALREADY_EXISTS when the namespace has a schedule with this id.
  virtual absl::Status Create(const ScheduleRecord& record) = 0;
  // Replaces the record when its revision is still `revision` (it becomes revision + 1).
  // NOT_FOUND when there is none; ABORTED when another change came first.
  virtual absl::Status Update(const ScheduleRecord& record, int64_t revision) = 0;
  // NOT_FOUND when there is none.
  virtual absl::StatusOr<StoredSchedule> Get(const std::string& namespace_id,
                                             const std::string& schedule_id) = 0;
  // NOT_FOUND when there is none.
  virtual absl::Status Delete(const std::string& namespace_id,
                              const std::string& schedule_id) = 0;
  // The namespace's schedules by id, those after `after_id` (all with ""), at most `limit`.
  virtual absl::StatusOr<std::vector<StoredSchedule>> List(const std::string& namespace_id,
                                                           const std::string& after_id,
                                                           int32_t limit) = 0;
  // Every namespace's schedules ordered by (namespace id, schedule id), those after the
  // given pair, at most `limit`: how a host pages through the schedules to find its own.
  virtual absl::StatusOr<std::vector<StoredSchedule>> ListAll(const std::string& after_namespace_id,
                                                              const std::string& after_id,
                                                              int32_t limit) = 0;
};

}  // namespace tock::persistence
