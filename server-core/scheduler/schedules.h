// Schedules (WorkflowService CreateSchedule, DescribeSchedule, UpdateSchedule, PatchSchedule,
// ListSchedules, DeleteSchedule, ListScheduleMatchingTimes) with Temporal's checks, messages
// and semantics, and the runner that takes their actions.
//
// A schedule is a record (persistence::ScheduleStore) changed by compare-and-swap, by the API
// calls of any host and by the runner. The runner of a schedule is the host that owns the
// schedule's shard (hash of namespace id and schedule id), found by a scan every kScanInterval
// and told at once of the schedules this host creates or changes. It wakes each schedule at
// its next action time on the server's clock (so AdvanceTime moves schedules too; Wake() is
// called then), buffers the times due, decides under the overlap policy, and makes each start,
// cancel and terminate as a call to the frontend (this server's own address), like a client.
//
// No action is lost or made twice across a crash: the starts decided are written to the
// record ("starting") before they are made, and each has a workflow id (the action's id and
// the nominal time) and a request id derived from the schedule and the start; after a restart
// the runner makes them again, and the server answers a repeated request id with the run it
// started the first time (or AlreadyStarted with that request id, taken as done).
//
// A start that fails with a retryable error (IsRetryable, and INTERNAL or UNKNOWN, safe to
// repeat thanks to the request id) stays in "starting" with its attempts and retry time, and
// is made again then, after 1 s, 2 s, 4 s, 8 s; the fifth failure, or any other error, ends
// it: it is recorded in recent_actions as FAILED (no run id, not counted in action_count).
// Meanwhile the schedule is looked at its retry time or its next spec time, whichever is first.
//
// Thread safety: safe from many threads.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/persistence/schedule_store.h"
#include "server-core/rpc/dialer.h"
#include "server-core/rpc/dispatcher.h"
#include "server-core/scheduler/schedule_logic.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"

namespace tock::server::scheduler {

namespace wf = temporal::api::workflowservice::v1;

class Schedules {
 public:
  static constexpr int kWorkers = 16;
  static constexpr absl::Duration kScanInterval = absl::Seconds(5);

  // `owns(namespace_id, schedule_id)`: whether this host runs that schedule (one host: always).
  Schedules(persistence::ScheduleStore& store, namespaces::NamespaceEngine& namespaces,
            Clock& clock, Logger& logger,
            std::function<bool(const std::string&, const std::string&)> owns);
  ~Schedules();

  // Starts the runner, calling the frontend at `frontend_address` through `dialer` (as other
  // hosts do: TLS with tls.internode). Call once the server listens.
  void Start(const std::string& frontend_address, const rpc::Dialer& dialer);
  // Stops the runner (records stay as they are; the next start goes on from them).
  void Shutdown();
  // The server's clock moved (AdvanceTime): look at every schedule's next time again.
  void Wake();
  // Time skipping and tests: wakes the runner and returns once it has looked at every
  // schedule due by the clock's now (as it is at the call): a scan begun after the call has
  // read every schedule's record without a store error, and then no schedule this host runs
  // is due by that time or being looked at (each look made its starts and recorded them). A
  // check that a schedule has NOT acted, made after this, so fails when the runner acts
  // wrongly, however slow the machine. False when `timeout` (real time) passed first or the
  // runner is not running.
  bool WaitForDue(absl::Duration timeout);

  absl::StatusOr<wf::CreateScheduleResponse> Create(const wf::CreateScheduleRequest& req);
  absl::StatusOr<wf::DescribeScheduleResponse> Describe(const wf::DescribeScheduleRequest& req);
  absl::StatusOr<wf::UpdateScheduleResponse> Update(const wf::UpdateScheduleRequest& req);
  absl::StatusOr<wf::PatchScheduleResponse> Patch(const wf::PatchScheduleRequest& req);
  absl::StatusOr<wf::ListSchedulesResponse> List(const wf::ListSchedulesRequest& req);
  absl::StatusOr<wf::DeleteScheduleResponse> Delete(const wf::DeleteScheduleRequest& req);
  absl::StatusOr<wf::ListScheduleMatchingTimesResponse> MatchingTimes(
      const wf::ListScheduleMatchingTimesRequest& req);

 private:
  struct Entry {
    std::string namespace_id, schedule_id;
    std::optional<absl::Time> due;  // nullopt: nothing to do until a change
    bool busy = false;              // a worker has it
    bool again = false;             // changed while busy: look again right after
  };

  // Read, change, write with the revision read; again on a concurrent change. `change` sets
  // its bool to false to write nothing. `known`: the record as last read or written (tried
  // first, saving a read; a stale one costs a failed compare-and-swap). Returns the record
  // written (or read) with its revision.
  absl::StatusOr<persistence::StoredSchedule> Mutate(
      const std::string& namespace_id, const std::string& schedule_id,
      const std::function<absl::Status(ScheduleRecord&, bool*)>& change,
      std::optional<persistence::StoredSchedule> known = std::nullopt);
  // The schedule named by a request, or NOT_FOUND "schedule not found".
  absl::StatusOr<persistence::StoredSchedule> Find(const std::string& namespace_id,
                                                   const std::string& schedule_id);
  // A patch's trigger, backfills, pause and unpause applied to the record.
  absl::Status ApplyPatch(ScheduleRecord& r, const temporal::api::schedule::v1::SchedulePatch& p);
  // Tells the runner (when this host runs the schedule) to look at it now.
  void Touch(const std::string& namespace_id, const std::string& schedule_id);

  void Loop();
  void Work();
  // One look at a schedule: buffer what is due, refresh, decide, start. Returns when to look
  // again (nullopt: not until a change; the schedule was deleted or is not ours any more).
  std::optional<absl::Time> Tick(const std::string& namespace_id, const std::string& schedule_id);
  // False when a store error left schedules not read.
  bool Scan();
  // Under mu_: no schedule due by `t` waits for a look or is being looked at.
  bool NoneDueLocked(absl::Time t) const;

  // Calls to the frontend.
  struct RunStatus {
    enums::WorkflowExecutionStatus status = enums::WORKFLOW_EXECUTION_STATUS_UNSPECIFIED;
    std::string failure_message;
    std::string failure;  // temporal.api.failure.v1.Failure bytes
    std::optional<temporal::api::common::v1::Payloads> result;
  };
  absl::StatusOr<RunStatus> Watch(const ScheduleRecord& r,
                                  const temporal::api::common::v1::WorkflowExecution& ex);
  // The start's run id; ALREADY_EXISTS when another run holds the workflow id.
  absl::StatusOr<std::string> StartAction(const ScheduleRecord& r, const BufferedStart& start);
  void CancelOrTerminate(const ScheduleRecord& r, bool terminate);

  // The steps of Tick.
  struct Made;
  // The running workflows that closed, by workflow id (only when a start waits for them); a
  // retryable error when their status cannot be read now.
  absl::StatusOr<std::map<std::string, RunStatus>> ClosedRuns(
      const persistence::StoredSchedule& stored);
  // Takes the closed runs out of the running list (their status into the recent actions).
  static void ApplyClosed(ScheduleRecord& r, const std::map<std::string, RunStatus>& closed);
  // Buffers what is due and notes in `starting` what starts now, in one write.
  absl::StatusOr<persistence::StoredSchedule> Decide(
      const std::string& namespace_id, const std::string& schedule_id,
      const persistence::StoredSchedule& stored, const std::map<std::string, RunStatus>& closed,
      bool& cancel, bool& terminate);
  // Makes each start of `starting` whose retry time has come.
  std::vector<Made> MakeStarts(const ScheduleRecord& current);
  // Takes what was made out of `starting` into the recent actions (a start to retry stays,
  // with its attempts and retry time).
  absl::StatusOr<persistence::StoredSchedule> RecordStarts(
      const std::string& namespace_id, const std::string& schedule_id,
      const std::vector<Made>& made, const persistence::StoredSchedule& decided);
  static void RecordAction(ScheduleRecord& r, const Made& m);
  // When to look again: the next spec time or retry time; deletes a schedule past its retention.
  std::optional<absl::Time> NextLook(const std::string& namespace_id,
                                     const std::string& schedule_id,
                                     const ScheduleRecord& recorded);

  persistence::ScheduleStore& store_;
  namespaces::NamespaceEngine& namespaces_;
  Clock& clock_;
  Logger& logger_;
  std::function<bool(const std::string&, const std::string&)> owns_;
  std::unique_ptr<wf::WorkflowService::Stub> frontend_;

  std::mutex mu_;
  std::condition_variable wake_;       // the loop
  std::condition_variable work_ready_;  // the workers
  bool shutdown_ = false;
  bool started_ = false;
  std::map<std::string, Entry> entries_;  // by namespace id + "/" + schedule id
  std::deque<std::string> work_;
  absl::Time last_scan_ = absl::InfinitePast();
  // WaitForDue's: the scans begun (each reads the clock after it is counted), the last one
  // that read every record, and the signal that a scan or a look ended.
  uint64_t scans_begun_ = 0;
  uint64_t last_clean_scan_ = 0;
  std::condition_variable looked_;
  std::thread loop_;
  std::vector<std::thread> workers_;
};

// Registers the seven schedule calls of WorkflowService.
void RegisterScheduleHandlers(rpc::Dispatcher& dispatcher, Schedules& schedules);

}  // namespace tock::server::scheduler
