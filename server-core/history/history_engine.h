// The history service: workflow runs as durable state machines (SPEC §4, §5;
// reference/sdk_protocol.md §2–§5).
//
// Every operation locks its run, applies the change to a copy of the mutable state in a
// RunTransaction, and commits the state, the new events, the tasks and timers it creates and
// the ones it retires in ONE store transaction fenced by the shard's range id. Only after
// the commit succeeded are tasks handed to matching, timers armed and history waiters woken;
// on failure the cached state is dropped and nothing happened.
//
// Thread safety: safe from any thread; operations on one run are serialised by its lock.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <limits>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/common/blocking_pool.h"
#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "lib/common/timer_thread.h"
#include "lib/common/wire_bytes.h"
#include "server-core/history/any_shard.h"
#include "server-core/history/eager_dispatch.h"
#include "server-core/history/mutation.h"
#include "server-core/history/namespace_activity.h"
#include "server-core/history/queries.h"
#include "server-core/history/replication_applier.h"
#include "server-core/history/reset.h"
#include "server-core/history/request_limits.h"
#include "server-core/visibility/search_attributes.h"
#include "server-core/history/run_cache.h"
#include "server-core/history/run_transaction.h"
#include "server-core/history/shard_controller.h"
#include "server-core/history/standby_parking.h"
#include "server-core/history/task_token.h"
#include "server-core/history/update_registry.h"
#include "server-core/history/timer_queue.h"
#include "server-core/history/versioning.h"
#include "server-core/matching/matching_engine.h"
#include "server-core/persistence/execution_store.h"
#include "temporal/api/sdk/v1/user_metadata.pb.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::server::history {

// The task a worker gets for the started workflow task of `run`, carrying `events` (a poll's
// answer, an eager start's, a completion's next task).
wf::PollWorkflowTaskQueueResponse WorkflowTaskOf(const MutableStateRecord& run,
                                                 std::vector<persistence::HistoryEvent> events,
                                                 bool speculative);

// The engine is the AnyShard of the shards this host owns.
class HistoryEngine : public ShardListener,
                      public AnyShard,
                      private ReplicationApplier::Engine,
                      private QueryDispatcher::Engine {
 public:
  // Whether runs of a namespace (by id) that close now are queued for the archiver; set once
  // at start. Without it nothing is queued.
  using ArchivalCheck = std::function<bool(const std::string& namespace_id)>;
  void SetArchivalCheck(ArchivalCheck check) { archival_check_ = std::move(check); }
  // Size and count limits (Temporal's defaults unless configured); set once at start.
  void SetLimits(const Limits& limits) { limits_ = limits; }
  // Which namespaces' workers get activities and first workflow tasks eagerly (on for all
  // by default); set once at start.
  void SetEagerDispatch(const EagerDispatch& eager) { eager_ = eager; }
  // Outcomes, schedule-to-start latencies and the timers' metrics (set once at start; must
  // outlive the engine).
  void SetMetrics(const ServerMetrics& metrics);
  // With hosts sharing the database (set once at start): where the engine's work on other
  // runs goes (a child start, a parent told of its child's close, a signal or cancel of
  // another workflow), where ready tasks go (this host's partition of their queue), and
  // which stored rows of a queue this host's matching reads (those of its partition). By
  // default, this engine, this host's matching, and every row.
  void SetAnyShard(AnyShard& any_shard) { any_shard_ = &any_shard; }
  // The operations of the poll path for a task of any shard (routing's when set).
  AnyShard& any_shard() { return *any_shard_; }
  using TaskSink = std::function<void(persistence::TaskQueueTask)>;
  void SetTaskSink(TaskSink sink) { task_sink_ = std::move(sink); }
  // Hands a ready task to its queue through the sink.
  void QueueTask(persistence::TaskQueueTask task) override { task_sink_(std::move(task)); }
  using QueueShards = std::function<persistence::ExecutionStore::ShardSet(
      const std::string& namespace_id, const std::string& task_queue)>;
  void SetQueueShards(QueueShards shards) { queue_shards_ = std::move(shards); }

  // Multi-cluster replication (the ReplicationApplier, replication_applier.cc).
  //
  // Whether a namespace is active here and its failover version (what timers and the
  // engine's own follow-up work stamp their events with). Unset: every namespace is active,
  // at the version of each run's last event.
  using NamespaceActivity = history::NamespaceActivity;
  using ActivityOf = history::ActivityOf;
  void SetNamespaceActivity(ActivityOf activity) { activity_of_ = std::move(activity); }
  // Whether a failover version is this cluster's (version % increment == its initial
  // version): conflict resolution terminates a losing run last written here, and turns one
  // last written elsewhere into a zombie (reference/replication.md §3.5 step 1).
  // The namespaces' Worker Deployments, for what new runs inherit of a version and for
  // WorkflowTaskStarted's target_worker_deployment_version_changed. Unset: nothing is
  // inherited and no target changes.
  void SetVersionRouting(VersionRouting routing) { version_routing_ = std::move(routing); }
  void SetOwnsVersion(std::function<bool(int64_t version)> owns) {
    replication_.SetOwnsVersion(std::move(owns));
  }
  // Where a standby sends what a losing branch received from outside (the active cluster's
  // AdminService.ReapplyEvents, reference/replication.md §3.5 step 6). Without one the
  // events are not applied again here (logged).
  using ReapplyForwarder = history::ReapplyForwarder;
  void SetReapplyForwarder(ReapplyForwarder forward) {
    replication_.SetReapplyForwarder(std::move(forward));
  }
  // Applies again, to the workflow's current run, events that a losing branch of it received
  // from outside on another cluster (signals, cancel requests, terminations, updates), each
  // at most once: the receiving end of a forward. NamespaceNotActive when the namespace is
  // not active here.
  absl::Status ReapplyEvents(const std::string& namespace_id, const std::string& workflow_id,
                             const std::vector<HistoryEvent>& events) {
    return replication_.ReapplyEvents(namespace_id, workflow_id, events);
  }

  using ReplicationGap = history::ReplicationGap;
  // Applies events another cluster wrote to this cluster's copy of the run (Temporal's
  // history replicator, reference/replication.md §3.5):
  // - a new run is created from its WorkflowExecutionStarted: as the current run, or as a
  //   zombie when the current run is newer; a running current run that is older is
  //   suppressed first (terminated "due to version conflict" when last written here, else
  //   made a zombie);
  // - events already here are skipped (a duplicate is OK); events after a gap are not
  //   applied and the gap is returned, for the caller to fetch and apply first;
  // - events of a branch that diverged from this cluster's are kept on their own branch: the
  //   branch with the higher last version is the current one (the run's state is rebuilt
  //   from it when it changes); signals, cancel requests, terminations and updates of a
  //   losing branch or a zombie are applied again to the workflow's current run as new
  //   events where the namespace is active (forwarded there from a standby: an error of the
  //   forward fails the call, and the task's next delivery applies them again, each once).
  // Nothing applied here is replicated on (the reapplied events are: they are this
  // cluster's). `items`: the version history of the source's branch the events are on.
  absl::StatusOr<std::optional<ReplicationGap>> ApplyReplicated(
      const std::string& namespace_id, const std::string& workflow_id, const std::string& run_id,
      const std::vector<tock::persistence::v1::VersionHistoryItem>& items,
      const std::vector<HistoryEvent>& events) {
    return replication_.ApplyEvents(namespace_id, workflow_id, run_id, items, events);
  }
  // Applies the state of a pending activity another cluster sent (a SyncActivity task,
  // replication_sync_activity.cc; Temporal's activity state replicator, reference/
  // replication.md §3.7): dropped (OK) when the run or the activity is not here, the run is
  // closed, or the local state is as new; events missing before the activity's are returned
  // as a gap, for the caller to fetch and apply first. Nothing applied here is replicated on.
  // `items`: the version history of the source's current branch.
  absl::StatusOr<std::optional<ReplicationGap>> ApplySyncActivity(
      const std::string& namespace_id, const std::string& workflow_id, const std::string& run_id,
      const std::vector<tock::persistence::v1::VersionHistoryItem>& items, int64_t version,
      const tock::persistence::v1::ActivityInfo& activity) {
    return replication_.ApplySyncActivity(namespace_id, workflow_id, run_id, items, version,
                                          activity);
  }
  // Where the custom search attributes of a namespace are found (set once at start; without
  // it only the predefined attributes are accepted).
  void SetSearchAttributeSchemas(visibility::SearchAttributeSchemas& schemas) {
    schemas_ = &schemas;
  }

  HistoryEngine(persistence::ExecutionStore& store, ShardController& shards,
                matching::MatchingEngine& matching, Clock& clock, TimerThread& timers,
                Logger& logger);
  ~HistoryEngine();

  // After a restart: hands the stored task-queue tasks to matching and starts the durable
  // timers (those due soon in memory, the rest paged in as they come due), so work resumes
  // exactly where it stopped.
  absl::Status Recover();
  // Ownership of a shard moved (ShardListener): its timers are loaded or dropped. (Its
  // cached runs go stale by themselves: see RunEntry.)
  void OnShardAcquired(int32_t shard_id) override;
  void OnShardReleased(int32_t shard_id) override;
  // The clock was moved (time skipping): timers now due fire without waiting.
  void WakeTimers();
  // For tests on a ManualClock (after WakeTimers): returns once every timer and retried
  // task due by the clock's now has been run, so that "not fired yet" can be checked
  // without sleeping (TimerQueue::WaitForDueForTest).
  void WaitForDueTimersForTest() { timer_queue_->WaitForDueForTest(); }
  // Timers and transfer tasks waiting for their namespace to be active here (StandbyParking).
  size_t parked() const { return parking_.size(); }
  // How many later read-backs of a write whose answer was lost may fail before its shard is
  // reloaded anyway (ResolveLostWriteLater).
  static constexpr int kReadBacksBeforeReload = 3;
  // Threads that run what follows asynchronous commits (after_commit_), unless set.
  static constexpr int kAfterCommitThreads = 4;
  // Sets them, before the engine serves calls: more where what follows a commit waits on a
  // remote database's round trips.
  void SetCompletionThreads(int threads) {
    after_commit_ = std::make_unique<BlockingPool>(std::max(1, threads),
                                                   std::numeric_limits<size_t>::max(), "tock-after");
  }
  // Stops firing timers and retrying background work; waits for what is running. Call
  // before the TimerThread goes. Idempotent.
  void StopBackground();
  // Shutdown has begun: history long polls answer their empty page now, and those that
  // come later do not wait. Idempotent.
  void ReleaseWaiters();

  absl::StatusOr<wf::StartWorkflowExecutionResponse> StartWorkflow(
      const NamespaceRef& ns, const wf::StartWorkflowExecutionRequest& req);

  // AnyShard, for the shards owned here.
  absl::StatusOr<wf::PollWorkflowTaskQueueResponse> RecordWorkflowTaskStarted(
      const NamespaceRef& ns, const persistence::TaskQueueTask& task,
      const std::string& identity) override;
  absl::StatusOr<wf::PollActivityTaskQueueResponse> RecordActivityTaskStarted(
      const NamespaceRef& ns, const persistence::TaskQueueTask& task,
      const std::string& identity) override;
  void RecordWorkflowTaskStartedAsync(const NamespaceRef& ns,
                                      const persistence::TaskQueueTask& task,
                                      const std::string& identity,
                                      Answer<wf::PollWorkflowTaskQueueResponse> done) override;
  void RecordActivityTaskStartedAsync(const NamespaceRef& ns,
                                      const persistence::TaskQueueTask& task,
                                      const std::string& identity,
                                      Answer<wf::PollActivityTaskQueueResponse> done) override;
  absl::StatusOr<wf::PollWorkflowTaskQueueResponse> StartQueryTask(
      const NamespaceRef& ns, const persistence::TaskQueueTask& task) override {
    return queries_.StartTask(ns, task);
  }
  absl::StatusOr<wf::StartWorkflowExecutionResponse> StartChildWorkflow(
      const NamespaceRef& ns, const tock::cluster::v1::StartChild& child) override;
  absl::Status RecordChildClosed(const tock::cluster::v1::ChildClosed& closed) override;

  absl::StatusOr<wf::RespondWorkflowTaskCompletedResponse> RespondWorkflowTaskCompleted(
      const NamespaceRef& ns, const wf::RespondWorkflowTaskCompletedRequest& req);
  // The same without waiting for the commit: `done` is called once, from any thread; `req`
  // must stay valid until then (the *Async calls below alike).
  void RespondWorkflowTaskCompletedAsync(const NamespaceRef& ns,
                                         const wf::RespondWorkflowTaskCompletedRequest& req,
                                         Answer<wf::RespondWorkflowTaskCompletedResponse> done);
  absl::Status RespondWorkflowTaskFailed(const NamespaceRef& ns,
                                         const wf::RespondWorkflowTaskFailedRequest& req);

  absl::Status RespondActivityTaskCompleted(const NamespaceRef& ns, const std::string& token,
                                            const temporal::api::common::v1::Payloads& result,
                                            const std::string& identity);
  void RespondActivityTaskCompletedAsync(const NamespaceRef& ns, const std::string& token,
                                         const temporal::api::common::v1::Payloads& result,
                                         const std::string& identity,
                                         std::function<void(absl::Status)> done);
  absl::Status RespondActivityTaskFailed(const NamespaceRef& ns,
                                         const wf::RespondActivityTaskFailedRequest& req);
  absl::Status RespondActivityTaskCanceled(const NamespaceRef& ns, const std::string& token,
                                           const temporal::api::common::v1::Payloads& details,
                                           const std::string& identity);
  absl::StatusOr<wf::RecordActivityTaskHeartbeatResponse> RecordActivityTaskHeartbeat(
      const NamespaceRef& ns, const std::string& token,
      const temporal::api::common::v1::Payloads& details);

  absl::Status SignalWorkflow(const NamespaceRef& ns,
                              const wf::SignalWorkflowExecutionRequest& req) override;
  // Signals the running run of the workflow id, or starts a new run whose history holds the
  // signal before its first workflow task (WorkflowExecutionStarted,
  // WorkflowExecutionSignaled, WorkflowTaskScheduled), in one commit: no poller can take the
  // first task of the new run without the signal.
  absl::StatusOr<wf::SignalWithStartWorkflowExecutionResponse> SignalWithStartWorkflow(
      const NamespaceRef& ns, const wf::SignalWithStartWorkflowExecutionRequest& req);
  absl::Status RequestCancelWorkflow(const NamespaceRef& ns,
                                     const wf::RequestCancelWorkflowExecutionRequest& req) override;
  absl::Status TerminateWorkflow(const NamespaceRef& ns,
                                 const wf::TerminateWorkflowExecutionRequest& req) override;

  // ResetWorkflowExecution (the WorkflowReset, reset.h).
  absl::StatusOr<wf::ResetWorkflowExecutionResponse> ResetWorkflow(
      const NamespaceRef& ns, const wf::ResetWorkflowExecutionRequest& req) {
    return reset_.Reset(ns, req);
  }

  // Ends the run's sticky execution (ResetStickyTaskQueue): its next workflow task goes to
  // the normal queue with the whole history (a task already on the sticky queue moves there
  // when its schedule-to-start timeout passes). NOT_FOUND for an unknown run.
  absl::Status ResetStickyTaskQueue(const NamespaceRef& ns,
                                    const temporal::api::common::v1::WorkflowExecution& execution);

  // Terminates the run if it is open, then removes it and its history (client_ops.cc).
  absl::Status DeleteWorkflow(const NamespaceRef& ns, const wf::DeleteWorkflowExecutionRequest& req);

  // The task token of the started activity `activity_id` of a run, for the *ById calls.
  absl::StatusOr<std::string> ActivityTokenById(const NamespaceRef& ns, const std::string& workflow_id,
                                                const std::string& run_id,
                                                const std::string& activity_id);

  // Newest events first (GetWorkflowExecutionHistoryReverse).
  absl::StatusOr<wf::GetWorkflowExecutionHistoryReverseResponse> GetWorkflowHistoryReverse(
      const NamespaceRef& ns, const wf::GetWorkflowExecutionHistoryReverseRequest& req);

  absl::StatusOr<wf::DescribeWorkflowExecutionResponse> DescribeWorkflow(
      const NamespaceRef& ns, const wf::DescribeWorkflowExecutionRequest& req);
  // AdminService.DescribeMutableState (describe_mutable_state.cc): the run's state as last
  // committed, with its branches. The current run when req.run_id is empty. NOT_FOUND for an
  // unknown workflow id or run; INVALID_ARGUMENT for a run id that is not a UUID.
  absl::StatusOr<tock::admin::v1::DescribeMutableStateResponse> DescribeMutableState(
      const NamespaceRef& ns, const tock::admin::v1::DescribeMutableStateRequest& req);

  // Pages of committed events, answered as a serialized GetWorkflowExecutionHistoryResponse
  // assembled from the stored event bytes (no parse, no re-serialisation); with
  // wait_new_event, waits (without a thread) until there is something new or `deadline`,
  // then answers an empty page.
  void GetWorkflowHistory(const NamespaceRef& ns, const wf::GetWorkflowExecutionHistoryRequest& req,
                          absl::Time deadline, std::function<void(absl::StatusOr<WireBytes>)> done);

  // Queries (the QueryDispatcher, queries.h): answered by a worker through a legacy query
  // task once the run has no workflow task in flight; at most 30 s.
  void QueryWorkflow(const NamespaceRef& ns, const wf::QueryWorkflowRequest& req, absl::Time deadline,
                     QueryDispatcher::Done done);
  absl::Status RespondQueryTaskCompleted(const NamespaceRef& ns,
                                         const wf::RespondQueryTaskCompletedRequest& req) {
    return queries_.Complete(ns, req);
  }

  // Workflow updates (updates.cc; Temporal's update protocol). An update is admitted in
  // memory, delivered to the worker as a protocol message with the run's next workflow task,
  // and accepted, rejected and completed by the worker's messages: acceptance and completion
  // are history events (WorkflowExecutionUpdateAccepted/Completed), a rejection leaves none.
  // The callers wait, without a thread, until the stage they asked for, at most a long poll
  // (then they get the stage reached) or until `deadline` (DEADLINE_EXCEEDED).
  using UpdateDone = std::function<void(absl::StatusOr<wf::UpdateWorkflowExecutionResponse>)>;
  void UpdateWorkflow(const NamespaceRef& ns, const wf::UpdateWorkflowExecutionRequest& req,
                      absl::Time deadline, UpdateDone done);
  void PollWorkflowUpdate(
      const NamespaceRef& ns, const wf::PollWorkflowExecutionUpdateRequest& req, absl::Time deadline,
      std::function<void(absl::StatusOr<wf::PollWorkflowExecutionUpdateResponse>)> done);
  // Update-with-start: [Start, Update] on one workflow id; the update is admitted before the
  // new run's first workflow task can be taken, so that task carries it.
  void ExecuteMultiOperation(
      const NamespaceRef& ns, const wf::ExecuteMultiOperationRequest& req, absl::Time deadline,
      std::function<void(absl::StatusOr<wf::ExecuteMultiOperationResponse>)> done);

  // The history service's own follow-up work (child_workflows.cc): start a child, tell a
  // parent its child closed, apply parent-close policies. Retried until it succeeds.
  void ProcessTransferTask(const persistence::TaskQueueTask& task);

  // A durable timer is due (called by the timer queue's executor): its effect and the
  // deletion of its row, in one commit. NOT_FOUND when the run is gone.
  absl::Status FireTimer(const persistence::TimerTaskRow& row);

 private:
  // What waits for a run's turn: a change to run (on the completion threads), or a thread
  // to wake (WaitTurn).
  struct Turn {
    std::function<void()> run;
    bool wakes_thread = false;
  };
  struct RunEntry {
    std::mutex mu;  // guards the members below; held briefly, never across a commit
    // The run's turn, its lock across threads: one change holds it from its read of the
    // state until its commit is answered (an asynchronous change's commit is answered on
    // another thread than the one that began it). The changes that find it held wait in
    // `turns`, in arrival order, so the run's changes are written in the order they came.
    bool busy = false;
    std::deque<Turn> turns;
    // The answers to the run's asynchronous changes go out in the order those changes took
    // the turn (their tickets), though each is published on whichever completion thread
    // is free: an answer that is ready before its predecessors waits in `answers`, and is
    // sent by the thread that sends the last of them. No thread waits for another's answer.
    uint64_t next_ticket = 0;
    uint64_t next_answer = 0;
    std::map<uint64_t, std::function<void()>> answers;
    // Cached after a successful commit, valid while the shard is still owned with the range
    // id it was written under: a shard given up, or taken again after another host may have
    // changed its runs, makes every cached run of it stale at once, with no sweep.
    std::optional<MutableStateRecord> state;
    int32_t shard_id = 0;
    int64_t range_id = ShardController::kNotOwned;
  };
  // The signal a signal-with-start puts in the new run's history.
  struct StartSignal {
    std::string name;
    temporal::api::common::v1::Payloads input;
    temporal::api::common::v1::Header header;
    std::string identity;
    std::string request_id;
  };

  // The run's entry (its lock, its cached state): shared by all who use the run meanwhile.
  std::shared_ptr<RunEntry> Entry(const std::string& run_id);
  // Caches the state a commit just wrote for a run other than the one Mutate holds locked
  // (a new run), under that run's lock.
  void CacheCommitted(MutableStateRecord state, const persistence::Commit& commit);
  // Under entry.mu: the cached state if still valid; stores one, charged to runs_ by its
  // size (`run_id`: the key the entry was got with); drops it.
  const MutableStateRecord* Cached(const RunEntry& entry) const;
  void Cache(const std::string& run_id, RunEntry& entry, MutableStateRecord state,
             const persistence::Commit& commit);
  void Uncache(const std::string& run_id, RunEntry& entry);
  // store_.Write fenced with the shard's range id, which it sets in `commit.range_id` and
  // holds against a renewal until answered (ShardController::HoldRange); except that a
  // failure after which the commit is found stored is success.
  // `replicated`: the change applies another cluster's events (a standby's copy), which
  // are not sent on again; every other change of a run of a global namespace (events of a
  // version above 0) queues them for the other clusters in the same transaction, and is
  // refused (NamespaceNotActive) when the namespace is not active here or its events carry
  // an older failover version than the namespace's (resolved before a failover).
  // `check_active` false: written even where the namespace is not active (the termination
  // of a run that lost a version conflict, which is this cluster's own write).
  absl::Status WriteCommit(persistence::Commit& commit, bool replicated = false,
                           bool check_active = true);
  // A write whose answer was lost (an ambiguous store error): whether it landed, read back.
  enum class WriteOutcome { kLanded, kNotWritten, kUnknown };
  WriteOutcome ReadBack(const std::string& namespace_id, const std::string& workflow_id,
                        const std::string& run_id, int64_t written_db_version);
  // The read-back of such a write failed: read back again later, backing off (1 s, 2 s,
  // 4 s on the timer queue), and once it landed, or is still unknown after
  // kReadBacksBeforeReload tries, reload the shard (ReloadShard): the timers and transfer
  // tasks the commit stored are then armed and run without a restart.
  void ResolveLostWriteLater(const persistence::Commit& commit);
  // The shard's timers read again from the store and its stored transfer tasks processed,
  // as when a shard is taken (what a commit stored without being published).
  absl::Status ReloadShard(int32_t shard_id);
  absl::StatusOr<std::string> ResolveRunId(const std::string& namespace_id,
                                           const std::string& workflow_id,
                                           const std::string& run_id) override;
  // Loads the run under its lock, applies `mutate`, commits, then runs the post-commit
  // effects. `mutate` returning an error aborts (nothing written) unless it is
  // kCommitThenFail, which commits and then returns the error (UnhandledCommand).
  //
  // The following run and the companion run `mutate` sets on the transaction are written in
  // the same commit (RunTransaction::SetFollowingRun, SetCompanionRun).
  //
  // A speculative task of the run (updates.cc) is written first, unless `offer_speculative`:
  // then `mutate` decides (tx.offered_speculative()), and it is kept when nothing is written.
  absl::Status Mutate(const NamespaceRef& ns, const RunKey& key, const Mutation& mutate,
                      bool offer_speculative = false);
  // Mutate without a waiting thread: the run's turn is taken (or waited for in the run's
  // queue), the change built and handed to the store's committer, and `done` called with
  // Mutate's status once the commit is answered and its effects published, on a completion
  // thread (or on this one when nothing is written). The commit path never parks the
  // caller's thread.
  void MutateAsync(const NamespaceRef& ns, const RunKey& key, Mutation mutate,
                   bool offer_speculative, std::function<void(absl::Status)> done);
  struct Change;
  // The run's turn (RunEntry::busy): TakeTurn runs `now` when it is free (on this thread),
  // else `later` once it is released (on the turn thread); WaitTurn blocks until it is this
  // thread's; ReleaseTurn hands it to the next waiting change, or frees it.
  // `ticket` is set, before either runs, to the change's place for AnswerInTurn.
  void TakeTurn(const std::shared_ptr<RunEntry>& entry, std::function<void()> later,
                const std::function<void()>& now, uint64_t& ticket);
  void WaitTurn(RunEntry& entry);
  void ReleaseTurn(RunEntry& entry);
  // Runs `job` on the completion threads: what follows an asynchronous commit.
  void AfterCommit(std::function<void()> job);
  // Runs `answer`, the answer of the change with `ticket` (from TakeTurn), on this thread
  // once the run's earlier changes are answered, or leaves it to the thread that answers
  // the last of them.
  void AnswerInTurn(RunEntry& entry, uint64_t ticket, std::function<void()> answer);
  // With the run's turn: reads the state, applies the mutation; false when there is nothing
  // to write (the change's result is final, the speculative task settled).
  bool BuildChange(Change& c);
  // With the run's turn: BuildChange, then BeforeWrite. The change's final status when it
  // ends there (nothing to write, or the write refused; the turn released), else none: its
  // commit is ready for the store.
  std::optional<absl::Status> StartChange(Change& c);
  // The speculative task after the change: replaced, ended, written, or still as it was.
  void SettleSpeculative(Change& c, bool written);
  // After the write (`stored`: the store answered `written`; else it was refused before):
  // the cache and the speculative task, then the run's turn released. Waits for nothing a
  // call's continuation may hold, so it runs on the committer's thread.
  void SettleChange(Change& c, absl::Status written, bool stored);
  // Then the commit's effects published (tasks, timers, following and companion runs);
  // Mutate's status.
  absl::Status PublishChange(Change& c);
  // WriteCommit's two halves, around the store's write: the checks and the range hold, and
  // the answer's meaning (a fenced-out shard given up, an ambiguous failure read back).
  absl::Status BeforeWrite(persistence::Commit& commit, bool replicated, bool check_active,
                           std::optional<ShardController::RangeHold>& hold);
  absl::Status AfterWrite(const persistence::Commit& commit, absl::Status s);

  // The hot calls' changes, shared by their waiting and asynchronous forms: the mutation,
  // and the response once committed.
  struct WorkflowTaskCompletion;
  Mutation CompleteWorkflowTask(const wf::RespondWorkflowTaskCompletedRequest& req,
                                WorkflowTaskCompletion& c);
  absl::StatusOr<wf::RespondWorkflowTaskCompletedResponse> WorkflowTaskCompleted(
      WorkflowTaskCompletion& c, absl::Status committed);
  Mutation CompleteActivity(const TaskToken& token,
                            const temporal::api::common::v1::Payloads& result,
                            const std::string& identity);
  struct ActivityStart;
  Mutation StartActivityTask(ActivityStart& start);
  absl::StatusOr<wf::PollActivityTaskQueueResponse> ActivityTaskStarted(const ActivityStart& start,
                                                                        absl::Status committed);
  struct WorkflowTaskStart;
  Mutation StartWorkflowTaskFor(WorkflowTaskStart& start);
  absl::StatusOr<wf::PollWorkflowTaskQueueResponse> WorkflowTaskStarted(WorkflowTaskStart& start,
                                                                         absl::Status committed);
  // What a new run starts with (a start, or a continue-as-new).
  struct NewRun {
    std::string workflow_id;
    temporal::api::common::v1::WorkflowType workflow_type;
    std::string task_queue;
    temporal::api::common::v1::Payloads input;
    absl::Duration execution_timeout, run_timeout, task_timeout;
    std::string request_id;
    std::string identity;
    temporal::api::common::v1::Header header;
    temporal::api::common::v1::Memo memo;
    temporal::api::common::v1::SearchAttributes search_attributes;
    std::optional<temporal::api::common::v1::RetryPolicy> retry_policy;
    std::string cron_schedule;
    std::string first_execution_run_id;      // empty: the new run is the first
    std::string continued_execution_run_id;  // continue-as-new: the run it continues
    temporal::api::enums::v1::ContinueAsNewInitiator initiator{};
    std::optional<tock::persistence::v1::ParentInfo> parent;
    std::optional<temporal::api::sdk::v1::UserMetadata> user_metadata;
    // Worker Deployments: where the run's tasks go before a worker says (history/versioning.h).
    std::optional<temporal::api::workflow::v1::VersioningOverride> versioning_override;
    InheritedVersion inherited;  // of the parent's or the previous run's version
    int32_t attempt = 1;
    // Retry backoff, start delay, the wait for a cron schedule, or continue-as-new's backoff.
    absl::Duration first_task_backoff = absl::ZeroDuration();
    // What the previous run of a cron schedule (or a continue-as-new) left the next one.
    std::optional<temporal::api::common::v1::Payloads> last_completion_result;
    std::optional<temporal::api::failure::v1::Failure> continued_failure;
    // The end of the workflow execution timeout, which bounds the whole chain of runs
    // (retries, cron runs, continue-as-new); none without an execution timeout.
    std::optional<absl::Time> execution_expiration;
    std::optional<StartSignal> signal;  // signal-with-start
  };
  // Starts of one workflow id are serialised by a lock of their own.
  std::shared_ptr<std::mutex> IdLock(const std::string& namespace_id, const std::string& workflow_id);
  // The start with the workflow id's lock held: id conflict and reuse policies, then the new
  // run (with `signal` in its history when given) in one commit.
  // `update` (update-with-start) is admitted to the new run before its first task is queued.
  absl::StatusOr<wf::StartWorkflowExecutionResponse> StartLocked(
      const NamespaceRef& ns, const wf::StartWorkflowExecutionRequest& req,
      std::optional<tock::persistence::v1::ParentInfo> parent, const StartSignal* signal,
      absl::Time now, absl::Duration cron_wait,
      const temporal::api::update::v1::Request* update = nullptr,
      const InheritedVersion& inherited = {});
  // What a start finds of the workflow's current run: an answer without a new run (a retry
  // of the start that made it, USE_EXISTING), or the run the new one replaces (none: the
  // workflow id is new). The conflict and reuse policies refuse here (ALREADY_EXISTS), and
  // TERMINATE_EXISTING terminates the running one.
  struct StartAdmission {
    std::optional<wf::StartWorkflowExecutionResponse> answer;
    std::string replaced_run_id;
  };
  absl::StatusOr<StartAdmission> AdmitStart(const NamespaceRef& ns,
                                            const wf::StartWorkflowExecutionRequest& req);
  // The new run a start request asks for (timeouts resolved as Temporal does).
  static NewRun NewRunOf(const wf::StartWorkflowExecutionRequest& req, absl::Time now,
                         absl::Duration cron_wait);
  // The checks of a start request and the wait of its cron schedule (zero without one).
  absl::StatusOr<absl::Duration> ValidateStart(const NamespaceRef& ns,
                                               const wf::StartWorkflowExecutionRequest& req,
                                               absl::Time now);
  // The custom search attributes of the namespace with this id (an empty schema without
  // SetSearchAttributeSchemas).
  std::shared_ptr<const visibility::SearchAttributeSchema> SchemaOf(const std::string& namespace_id);
  // Fills the custom columns of the commit's visibility records from their runs' attributes.
  void IndexSearchAttributes(persistence::Commit& commit, const std::string& namespace_id);
  // The next run of a closing run's workflow, like it (same type, input, timeouts, policy,
  // cron schedule); the caller sets what differs (attempt, initiator, backoff).
  // `how`: a retry or a cron run (what it inherits of the run's version differs).
  absl::StatusOr<NewRun> SuccessorOf(const tock::persistence::v1::ExecutionInfo& exec,
                                     Successor how);
  // Whether the namespace's routing has a version of `namespace_id` polling `task_queue`.
  std::function<bool(const std::string& version, const std::string& task_queue)> VersionPollsIn(
      const std::string& namespace_id) const;
  // WorkflowTaskStarted's target_worker_deployment_version_changed: the run is pinned to a
  // version and its task queue's target is now another one.
  bool TargetVersionChanged(const tock::persistence::v1::ExecutionInfo& exec) const;
  // The next run of a cron schedule when the closing run has one: it waits for the schedule's
  // next activation (Temporal's backoff) and carries `result` or `failure`. Null without a
  // schedule or when the schedule has no next activation.
  // The next run of a run that failed (or timed out) with `failure`: a retry when its retry
  // policy allows one (`retry_state` says why not otherwise), else the next run of its cron
  // schedule, else null.
  absl::StatusOr<std::unique_ptr<RunTransaction>> NextRunAfterFailure(
      RunTransaction& tx, const NamespaceRef& ns, const temporal::api::failure::v1::Failure& failure,
      temporal::api::enums::v1::RetryState* retry_state);
  // A run that reached its run timeout: retried or continued by its cron schedule like a
  // failure (the timeout is the failure), else it just ends. The execution timeout
  // (`execution_expired`) ends the run and its chain.
  absl::Status TimeOutRun(RunTransaction& tx, NamespaceRef ns, bool execution_expired);
  absl::StatusOr<std::unique_ptr<RunTransaction>> NextCronRun(
      RunTransaction& tx, const NamespaceRef& ns,
      const temporal::api::common::v1::Payloads* result,
      const temporal::api::failure::v1::Failure* failure);
  // Events 1 (WorkflowExecutionStarted) and 2 (WorkflowTaskScheduled) of a new run, its
  // task and its run-timeout timer.
  std::unique_ptr<RunTransaction> BuildNewRun(const NamespaceRef& ns, const NewRun& run,
                                              absl::Time now);
  void Publish(persistence::Commit& commit, const std::string& run_id);
  void ArmTimer(const persistence::TimerTaskRow& row);
  absl::StatusOr<std::vector<persistence::HistoryEvent>> ReadHistory(
      const MutableStateRecord& s) override;

  // RespondWorkflowTaskCompleted's commands, in order (workflow_tasks.cc). The activities
  // scheduled to start eagerly are listed in `eager_activities`.
  // A ProtocolMessage command applies the message it names (taken from `messages`, which
  // keeps the rest for after the commands).
  absl::Status ApplyCommands(RunTransaction& tx, const NamespaceRef& ns,
                             const wf::RespondWorkflowTaskCompletedRequest& req,
                             int64_t completed_event_id, bool* needs_workflow_task,
                             std::map<std::string, const temporal::api::protocol::v1::Message*>& messages,
                             UpdateEffects& effects, std::vector<int64_t>& eager_activities);
  // return_new_workflow_task, as Temporal's: the workflow task this completion scheduled is
  // started in the same commit and handed back in `out.workflow_task` with the events after
  // the completed task (`completed_started`) and its update messages, instead of going
  // through a queue and a poll. Only for a sticky run (the worker keeps it cached).
  void ReturnNewWorkflowTask(RunTransaction& tx, int64_t completed_started,
                             const std::string& identity,
                             wf::RespondWorkflowTaskCompletedResponse& out);
  // ContinueAsNewWorkflowExecution: the next run (what the command leaves empty is inherited)
  // and WorkflowExecutionContinuedAsNew, which closes this one. A member because it builds
  // the run with BuildNewRun.
  void ContinueAsNew(RunTransaction& tx, const NamespaceRef& ns,
                     const temporal::api::command::v1::Command& command, const std::string& identity,
                     int64_t completed_id);

  void NotifyHistoryWaiters(const std::string& run_id);
  absl::StatusOr<wf::StartWorkflowExecutionResponse> StartWorkflowWithParent(
      const NamespaceRef& ns, const wf::StartWorkflowExecutionRequest& req,
      std::optional<tock::persistence::v1::ParentInfo> parent, const InheritedVersion& inherited = {});
  absl::Status ProcessTransferTaskOnce(const persistence::TaskQueueTask& task);
  // Processes the stored transfer tasks of `shards` (after a restart, or when shards were
  // taken from another host).
  absl::Status ProcessStoredTransferTasks(const std::set<int32_t>& shards);
  absl::Status StartChild(const persistence::TaskQueueTask& task);
  absl::Status CloseExecution(const persistence::TaskQueueTask& task);
  absl::Status ConsumeTransferTask(const persistence::TaskQueueTask& task);
  // external_requests.cc
  absl::Status ApplyExternalCommand(RunTransaction& tx, const NamespaceRef& ns,
                                    const temporal::api::command::v1::Command& command,
                                    int64_t completed_id);
  absl::Status DeliverExternalRequest(const persistence::TaskQueueTask& task);
  absl::Status ApplyStartChildCommand(RunTransaction& tx, const NamespaceRef& ns,
                                      const temporal::api::command::v1::Command& command,
                                      int64_t completed_id);
  // Calls `wake` after the next commit of the run, unless the wait is dropped first
  // (the returned id; waits that time out drop themselves so idle runs collect none); also
  // when the run's shard is given up (its commits now happen on another host).
  uint64_t WaitForCommit(const RunKey& key, std::function<void()> wake);
  void DropWait(const std::string& run_id, uint64_t id);
  // Calls `then(expired)` once: after the run's next commit (false), or at `limit` (true).
  // `seen_next_event_id` is the run's next event id as the caller read it: a commit since
  // then calls `then` at once.
  void AfterNextCommit(const RunKey& key, int64_t seen_next_event_id, absl::Time limit,
                       std::function<void(bool expired)> then) override;
  // The run's state as last committed (for reads).
  absl::StatusOr<MutableStateRecord> ReadRun(const RunKey& key) override;
  bool ShuttingDown() override { return releasing_waiters_.load(); }

  bool HasSpeculative(const std::string& run_id) override {
    return updates_.HasSpeculative(run_id);
  }
  // Under the run's lock, on a running run with no workflow task: a speculative task for the
  // updates admitted (kept by `tx`); returns the task for matching, to queue once decided.
  persistence::TaskQueueTask MakeSpeculative(const NamespaceRef& ns, RunTransaction& tx);
  // A started speculative task timed out, or a sticky one no worker took in time: it is
  // written, and its durable timeout (already due) fails it or moves it to the normal queue
  // as any workflow task's.
  void TimeOutSpeculative(const NamespaceRef& ns, const RunKey& key);
  // Where an update stands for a caller waiting for `wanted`.
  struct UpdateProbe {
    enum Kind { kDone, kWaiting, kMoved } kind = kWaiting;
    temporal::api::enums::v1::UpdateWorkflowExecutionLifecycleStage stage{};
    std::optional<temporal::api::update::v1::Outcome> outcome;
    std::string new_run_id;  // kMoved: the run's successor, where an unaccepted update goes
  };
  class UpdateWait;
  absl::Status AdmitUpdate(const NamespaceRef& ns, const RunKey& key,
                           const wf::UpdateWorkflowExecutionRequest& req);
  // Under the run's lock: whether the update may be admitted (NothingToWrite when it is
  // there already; Temporal's errors and limits).
  absl::Status CheckAdmission(const RunTransaction& tx, const UpdateRegistry::Seen& seen);
  absl::StatusOr<UpdateProbe> ProbeUpdate(const RunKey& key, const std::string& update_id,
                                          temporal::api::enums::v1::UpdateWorkflowExecutionLifecycleStage wanted);
  // Waits for `wanted`, then answers with where the update stands and the run it is in. An
  // update not accepted when its run continued (continue-as-new, retry, cron) follows it to
  // the next run, admitted there again when `readmit` is given (the caller's request).
  using ProbeDone = std::function<void(absl::StatusOr<UpdateProbe>, const std::string& run_id)>;
  void AwaitUpdate(const NamespaceRef& ns, RunKey key, std::string update_id,
                   temporal::api::enums::v1::UpdateWorkflowExecutionLifecycleStage wanted,
                   std::optional<wf::UpdateWorkflowExecutionRequest> readmit, absl::Time deadline,
                   ProbeDone done);
  // Under the run's lock, in a workflow task's completion: a protocol message (referenced by
  // a command, or left over after the commands).
  absl::Status ApplyUpdateMessage(RunTransaction& tx, const temporal::api::protocol::v1::Message& m,
                                  UpdateEffects& effects);
  // After the commands: updates the task carried that the worker did not answer are rejected;
  // whether updates admitted meanwhile need another workflow task.
  bool FinishUpdateMessages(RunTransaction& tx, int64_t started_id, bool heartbeat,
                            UpdateEffects& effects);
  // After the completion committed: the registry learns what happened; waiters look again.
  void PublishUpdateEffects(const std::string& run_id, const UpdateEffects& effects);

  persistence::ExecutionStore& store_;
  ShardController& shards_;
  matching::MatchingEngine& matching_;
  Clock& clock_;
  TimerThread& timers_;
  Logger& logger_;
  std::unique_ptr<TimerQueue> timer_queue_;
  AnyShard* any_shard_ = this;
  TaskSink task_sink_;
  QueueShards queue_shards_;  // none: every row
  ActivityOf activity_of_;
  VersionRouting version_routing_;
  ReplicationApplier replication_;
  // Timers and transfer tasks of namespaces standby here, until they are active here.
  StandbyParking parking_;
  QueryDispatcher queries_;
  // Updates not yet accepted live in the registry only (updates.cc has the protocol);
  // accepted ones are in the run's state.
  UpdateRegistry updates_;
  WorkflowReset reset_;

  // ReplicationApplier::Engine: what the applier needs of the engine.
  absl::Status WriteReplicated(const RunKey& key, const ReplicatedBuild& build) override;
  absl::Status MutateRun(const NamespaceRef& ns, const RunKey& key,
                         const Mutation& mutate) override {
    return Mutate(ns, key, mutate);
  }
  NamespaceActivity Activity(const std::string& namespace_id) override {
    return activity_of_ ? activity_of_(namespace_id) : NamespaceActivity{};
  }

  // WriteCommit's check that this cluster may write the commit's events (SPEC §2.2).
  absl::Status CheckActive(const persistence::Commit& commit);
  // Shards taken whose stored transfer tasks wait for their read (OnShardAcquired).
  std::mutex transfer_scan_mu_;
  std::set<int32_t> transfer_scan_shards_;
  bool transfer_scan_scheduled_ = false;

  // By run id; bounded (the limits are in history_engine.cc), the runs in use always kept.
  RunCache<RunEntry> runs_;
  // By namespace and workflow id: locks only, kept while held and a few more.
  RunCache<std::mutex> id_locks_;

  std::atomic<bool> releasing_waiters_{false};
  std::mutex waiters_mu_;
  struct RunWaiters {
    int32_t shard_id = 0;
    std::map<uint64_t, std::function<void()>> wakes;  // by wait id
  };
  std::unordered_map<std::string, RunWaiters> history_waiters_;  // by run id
  uint64_t next_wait_id_ = 1;

  ArchivalCheck archival_check_;
  Limits limits_;
  EagerDispatch eager_;
  visibility::SearchAttributeSchemas* schemas_ = nullptr;
  const ServerMetrics* metrics_ = &kNoServerMetrics;
  // Counts the runs a successful commit closed, by how they closed.
  void CountClosedRuns(const persistence::Commit& commit);
  // A run whose history passed the error limits of count or size is terminated in the same
  // transaction (Temporal's reasons); crossing a warning limit is logged once.
  void EnforceHistoryLimits(RunTransaction& tx);
  // Marks the runs of `commit` that close for archival when their namespace archives.
  void MarkClosingRunsForArchival(persistence::Commit& commit, const std::string& namespace_id);

  // MutateAsync's changes not yet answered.
  std::mutex async_mu_;
  std::condition_variable async_done_;
  int64_t async_changes_ = 0;
  // What follows asynchronous commits (MutateAsync): publishing and the answers. Off the
  // committer's thread, which must not wait; a few threads, since publishing may wait on
  // another host or a run's turn. Unbounded: what queues here is bounded by the calls in
  // flight. Last: stopped (their queued jobs run) first.
  std::unique_ptr<BlockingPool> after_commit_ = std::make_unique<BlockingPool>(
      kAfterCommitThreads, std::numeric_limits<size_t>::max(), "tock-after");
  // The changes that waited for their run's turn (TakeTurn), built and handed to the
  // committer here. Apart from after_commit_, whose jobs may wait for a run's turn: the
  // turns are passed on by the committer's thread and this one, which wait for no call.
  BlockingPool turns_{1, std::numeric_limits<size_t>::max(), "tock-turns"};
};

}  // namespace tock::server::history

