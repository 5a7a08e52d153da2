#include "server-core/persistence/observed/observed_persistence.h"

#include <string>
#include <utility>
#include <vector>

namespace tock::persistence {
namespace {

// The handles of one operation, resolved when the decorator is built.
struct Op {
  const char* name = "";
  metrics::Counter requests;
  metrics::Counter errors;
  metrics::Histogram latency;
};

const absl::Status& StatusOf(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& result) {
  return result.status();
}

// What every decorated call goes through.
class Observer {
 public:
  Observer(MetricsRegistry& metrics, FaultInjector* faults) : metrics_(metrics), faults_(faults) {}

  Op Resolve(const char* name) {
    const MetricLabels labels = {{"operation", name}};
    Op op;
    op.name = name;
    op.requests =
        metrics_.Counter("persistence_requests_total", "Store calls, by operation.", labels);
    op.errors =
        metrics_.Counter("persistence_errors_total",
                         "Store calls that failed (NOT_FOUND aside), by operation.", labels);
    op.latency =
        metrics_.Histogram("persistence_latency", "Seconds per store call, by operation.", labels);
    return op;
  }

  template <typename F>
  auto Run(const Op& op, F&& call) -> decltype(call()) {
    const InjectedFault fault = faults_ != nullptr ? faults_->Next(op.name) : InjectedFault::kNone;
    op.requests.Increment();
    if (fault == InjectedFault::kUnavailableBefore) {
      op.errors.Increment();
      return FaultInjector::StatusOf(fault, op.name);
    }
    if (!op.latency.enabled()) {
      auto result = call();
      if (fault == InjectedFault::kTimeoutAfter) return FaultInjector::StatusOf(fault, op.name);
      return result;
    }
    metrics::Stopwatch watch;
    auto result = call();
    op.latency.Observe(watch.ElapsedSeconds());
    const absl::Status& status = StatusOf(result);
    if (fault == InjectedFault::kTimeoutAfter) {
      op.errors.Increment();
      return FaultInjector::StatusOf(fault, op.name);
    }
    if (!status.ok() && !absl::IsNotFound(status)) op.errors.Increment();
    return result;
  }

  // Run for a call that answers through `done` (ExecutionStore::WriteAsync): `call` gets the
  // callback to answer through, which counts and times the call first.
  void RunAsync(const Op& op, const std::function<void(ExecutionStore::Written)>& call,
                ExecutionStore::Written done) {
    const InjectedFault fault = faults_ != nullptr ? faults_->Next(op.name) : InjectedFault::kNone;
    op.requests.Increment();
    if (fault == InjectedFault::kUnavailableBefore) {
      op.errors.Increment();
      return done(FaultInjector::StatusOf(fault, op.name));
    }
    call([&op, fault, watch = metrics::Stopwatch(), done = std::move(done)](absl::Status status) {
      if (op.latency.enabled()) op.latency.Observe(watch.ElapsedSeconds());
      if (fault == InjectedFault::kTimeoutAfter) {
        op.errors.Increment();
        return done(FaultInjector::StatusOf(fault, op.name));
      }
      if (!status.ok() && !absl::IsNotFound(status)) op.errors.Increment();
      done(std::move(status));
    });
  }

 private:
  MetricsRegistry& metrics_;
  FaultInjector* faults_;
};

class ObservedNamespaceStore : public NamespaceStore {
 public:
  ObservedNamespaceStore(NamespaceStore& inner, Observer& o)
      : inner_(inner),
        o_(o),
        create_(o.Resolve("CreateNamespace")),
        by_name_(o.Resolve("GetNamespaceByName")),
        by_id_(o.Resolve("GetNamespaceById")),
        as_of_(o.Resolve("GetNamespaceAsOf")),
        append_(o.Resolve("AppendNamespaceVersion")),
        list_(o.Resolve("ListNamespaces")),
        history_(o.Resolve("GetNamespaceHistory")) {}

  absl::StatusOr<NamespaceVersion> CreateNamespace(const NamespaceRecord& record, absl::Time now,
                                                   const std::string& operation) override {
    return o_.Run(create_, [&] { return inner_.CreateNamespace(record, now, operation); });
  }
  absl::StatusOr<NamespaceVersion> GetNamespaceByName(const std::string& name) override {
    return o_.Run(by_name_, [&] { return inner_.GetNamespaceByName(name); });
  }
  absl::StatusOr<NamespaceVersion> GetNamespaceById(const std::string& id) override {
    return o_.Run(by_id_, [&] { return inner_.GetNamespaceById(id); });
  }
  absl::StatusOr<NamespaceVersion> GetNamespaceAsOf(const std::string& name,
                                                    absl::Time as_of) override {
    return o_.Run(as_of_, [&] { return inner_.GetNamespaceAsOf(name, as_of); });
  }
  absl::StatusOr<NamespaceVersion> AppendNamespaceVersion(const NamespaceRecord& record,
                                                          int64_t expected_version,
                                                          const std::string& operation,
                                                          absl::Time now) override {
    return o_.Run(append_, [&] {
      return inner_.AppendNamespaceVersion(record, expected_version, operation, now);
    });
  }
  absl::StatusOr<NamespacePage> ListNamespaces(int32_t page_size, const std::string& page_token,
                                               bool include_deleted) override {
    return o_.Run(list_,
                  [&] { return inner_.ListNamespaces(page_size, page_token, include_deleted); });
  }
  absl::StatusOr<std::vector<NamespaceVersion>> GetNamespaceHistory(
      const std::string& name) override {
    return o_.Run(history_, [&] { return inner_.GetNamespaceHistory(name); });
  }

 private:
  NamespaceStore& inner_;
  Observer& o_;
  const Op create_, by_name_, by_id_, as_of_, append_, list_, history_;
};

class ObservedClusterMetadataStore : public ClusterMetadataStore {
 public:
  ObservedClusterMetadataStore(ClusterMetadataStore& inner, Observer& o)
      : inner_(inner),
        o_(o),
        shards_(o.Resolve("InitHistoryShardCount")),
        name_(o.Resolve("InitClusterName")),
        id_(o.Resolve("InitClusterId")),
        secret_(o.Resolve("InitHostSecret")) {}

  absl::StatusOr<int32_t> InitHistoryShardCount(int32_t shard_count) override {
    return o_.Run(shards_, [&] { return inner_.InitHistoryShardCount(shard_count); });
  }
  absl::Status InitClusterName(const std::string& cluster_name) override {
    return o_.Run(name_, [&] { return inner_.InitClusterName(cluster_name); });
  }
  absl::StatusOr<std::string> InitClusterId(const std::string& fresh_id) override {
    return o_.Run(id_, [&] { return inner_.InitClusterId(fresh_id); });
  }
  absl::StatusOr<std::string> InitHostSecret(const std::string& fresh) override {
    return o_.Run(secret_, [&] { return inner_.InitHostSecret(fresh); });
  }

 private:
  ClusterMetadataStore& inner_;
  Observer& o_;
  const Op shards_, name_, id_, secret_;
};

class ObservedExecutionStore : public ExecutionStore {
 public:
  ObservedExecutionStore(ExecutionStore& inner, Observer& o)
      : inner_(inner),
        o_(o),
        acquire_(o.Resolve("AcquireShard")),
        renew_(o.Resolve("RenewShardRange")),
        write_(o.Resolve("WriteExecution")),
        get_run_(o.Resolve("GetRun")),
        current_(o.Resolve("GetCurrentRun")),
        read_(o.Resolve("ReadEvents")),
        read_branch_(o.Resolve("ReadBranchEvents")),
        delete_(o.Resolve("DeleteRun")),
        visit_(o.Resolve("VisitEventBytes")),
        tasks_(o.Resolve("LoadTaskQueueTasks")),
        queue_tasks_(o.Resolve("LoadQueueTasks")),
        transfer_tasks_(o.Resolve("LoadTransferTasks")),
        timers_(o.Resolve("LoadTimers")) {}

  void SetWriteObserver(WriteObserver* observer) override { inner_.SetWriteObserver(observer); }
  absl::StatusOr<int64_t> AcquireShard(int32_t shard_id, const std::string& owner) override {
    return o_.Run(acquire_, [&] { return inner_.AcquireShard(shard_id, owner); });
  }
  absl::Status RenewShardRange(int32_t shard_id, int64_t range_id,
                               const std::string& owner) override {
    return o_.Run(renew_, [&] { return inner_.RenewShardRange(shard_id, range_id, owner); });
  }
  absl::Status Write(Commit& commit) override {
    return o_.Run(write_, [&] { return inner_.Write(commit); });
  }
  void WriteAsync(Commit& commit, Written written) override {
    o_.RunAsync(
        write_, [&](Written done) { inner_.WriteAsync(commit, std::move(done)); },
        std::move(written));
  }
  absl::StatusOr<MutableStateRecord> GetRun(const std::string& namespace_id,
                                            const std::string& workflow_id,
                                            const std::string& run_id) override {
    return o_.Run(get_run_, [&] { return inner_.GetRun(namespace_id, workflow_id, run_id); });
  }
  absl::StatusOr<CurrentRun> GetCurrentRun(const std::string& namespace_id,
                                           const std::string& workflow_id) override {
    return o_.Run(current_, [&] { return inner_.GetCurrentRun(namespace_id, workflow_id); });
  }
  absl::StatusOr<std::vector<HistoryEvent>> ReadEvents(const std::string& run_id,
                                                       int64_t first_event_id,
                                                       int64_t next_event_id,
                                                       int32_t limit) override {
    return o_.Run(read_,
                  [&] { return inner_.ReadEvents(run_id, first_event_id, next_event_id, limit); });
  }
  absl::StatusOr<std::vector<HistoryEvent>> ReadBranchEvents(const std::string& run_id,
                                                             const std::string& branch_token,
                                                             int64_t first_event_id,
                                                             int64_t next_event_id,
                                                             int32_t limit) override {
    return o_.Run(read_branch_, [&] {
      return inner_.ReadBranchEvents(run_id, branch_token, first_event_id, next_event_id, limit);
    });
  }
  absl::Status DeleteRun(int32_t shard_id, int64_t range_id, const std::string& namespace_id,
                         const std::string& workflow_id, const std::string& run_id) override {
    return o_.Run(delete_, [&] {
      return inner_.DeleteRun(shard_id, range_id, namespace_id, workflow_id, run_id);
    });
  }
  absl::StatusOr<int64_t> VisitEventBytes(
      const std::string& run_id, int64_t first_event_id, int64_t next_event_id, int32_t limit,
      absl::FunctionRef<void(std::string_view)> visit) override {
    return o_.Run(visit_, [&] {
      return inner_.VisitEventBytes(run_id, first_event_id, next_event_id, limit, visit);
    });
  }
  absl::StatusOr<std::vector<TaskQueueTask>> LoadTaskQueueTasks() override {
    return o_.Run(tasks_, [&] { return inner_.LoadTaskQueueTasks(); });
  }
  absl::StatusOr<std::vector<TaskQueueTask>> LoadQueueTasks(
      const std::string& namespace_id, const std::string& task_queue, TaskKind kind,
      int32_t limit, const std::optional<ShardSet>& only = std::nullopt) override {
    return o_.Run(queue_tasks_, [&] {
      return inner_.LoadQueueTasks(namespace_id, task_queue, kind, limit, only);
    });
  }
  absl::StatusOr<std::vector<QueueName>> ListQueuesWithTasks(const ShardSet& only,
                                                            int32_t limit) override {
    return o_.Run(queue_tasks_, [&] { return inner_.ListQueuesWithTasks(only, limit); });
  }
  absl::StatusOr<std::vector<TaskQueueTask>> LoadTransferTasks(int32_t shard_id,
                                                               int64_t after_task_id,
                                                               int32_t limit) override {
    return o_.Run(transfer_tasks_,
                  [&] { return inner_.LoadTransferTasks(shard_id, after_task_id, limit); });
  }
  absl::StatusOr<std::vector<TimerTaskRow>> LoadTimers(int32_t shard_id, const TimerCursor& after,
                                                       absl::Time until, int32_t limit) override {
    return o_.Run(timers_, [&] { return inner_.LoadTimers(shard_id, after, until, limit); });
  }

 private:
  ExecutionStore& inner_;
  Observer& o_;
  const Op acquire_, renew_, write_, get_run_, current_, read_, read_branch_, delete_, visit_, tasks_,
      queue_tasks_, transfer_tasks_, timers_;
};

class ObservedVisibilityStore : public VisibilityStore {
 public:
  ObservedVisibilityStore(VisibilityStore& inner, Observer& o)
      : inner_(inner),
        o_(o),
        list_(o.Resolve("ListVisibility")),
        count_(o.Resolve("CountVisibility")),
        count_by_status_(o.Resolve("CountVisibilityByStatus")),
        closed_(o.Resolve("ListClosedBefore")) {}

  absl::StatusOr<VisibilityPage> List(const std::string& namespace_id,
                                      const VisibilityFilter& filter, int32_t page_size,
                                      const std::string& page_token) override {
    return o_.Run(list_, [&] { return inner_.List(namespace_id, filter, page_size, page_token); });
  }
  absl::StatusOr<int64_t> Count(const std::string& namespace_id,
                                const VisibilityPredicate& predicate) override {
    return o_.Run(count_, [&] { return inner_.Count(namespace_id, predicate); });
  }
  absl::StatusOr<std::vector<std::pair<int, int64_t>>> CountByStatus(
      const std::string& namespace_id, const VisibilityPredicate& predicate) override {
    return o_.Run(count_by_status_,
                  [&] { return inner_.CountByStatus(namespace_id, predicate); });
  }
  absl::StatusOr<std::vector<temporal::api::workflow::v1::WorkflowExecutionInfo>> ListClosedBefore(
      const std::string& namespace_id, absl::Time closed_before, const ClosedRunCursor& after,
      int32_t limit) override {
    return o_.Run(closed_, [&] {
      return inner_.ListClosedBefore(namespace_id, closed_before, after, limit);
    });
  }

 private:
  VisibilityStore& inner_;
  Observer& o_;
  const Op list_, count_, count_by_status_, closed_;
};

class ObservedArchivalQueueStore : public ArchivalQueueStore {
 public:
  ObservedArchivalQueueStore(ArchivalQueueStore& inner, Observer& o)
      : inner_(inner),
        o_(o),
        visibility_due_(o.Resolve("ArchivalQueueVisibilityDue")),
        retention_due_(o.Resolve("ArchivalQueueRetentionDue")),
        live_(o.Resolve("ArchivalQueueNamespacesWithLiveRuns")),
        get_(o.Resolve("ArchivalQueueGet")),
        put_(o.Resolve("ArchivalQueuePut")),
        counts_(o.Resolve("ArchivalQueueCounts")),
        failing_(o.Resolve("ArchivalQueueFailing")) {}

  absl::StatusOr<std::vector<ArchivalQueueRow>> VisibilityDue(absl::Time now,
                                                              int32_t limit) override {
    return o_.Run(visibility_due_, [&] { return inner_.VisibilityDue(now, limit); });
  }
  absl::StatusOr<std::vector<ArchivalQueueRow>> RetentionDue(const std::string& namespace_id,
                                                             absl::Time closed_before,
                                                             absl::Time now,
                                                             int32_t limit) override {
    return o_.Run(retention_due_,
                  [&] { return inner_.RetentionDue(namespace_id, closed_before, now, limit); });
  }
  absl::StatusOr<std::vector<std::string>> NamespacesWithLiveRuns() override {
    return o_.Run(live_, [&] { return inner_.NamespacesWithLiveRuns(); });
  }
  absl::StatusOr<std::optional<ArchivalQueueRow>> Get(const std::string& namespace_id,
                                                      const std::string& run_id) override {
    return o_.Run(get_, [&] { return inner_.Get(namespace_id, run_id); });
  }
  absl::Status Put(const ArchivalQueueRow& row) override {
    return o_.Run(put_, [&] { return inner_.Put(row); });
  }
  absl::StatusOr<ArchivalCounts> Counts(const std::string& namespace_id) override {
    return o_.Run(counts_, [&] { return inner_.Counts(namespace_id); });
  }
  absl::StatusOr<std::vector<ArchivalQueueRow>> Failing(const std::string& namespace_id,
                                                        int32_t limit) override {
    return o_.Run(failing_, [&] { return inner_.Failing(namespace_id, limit); });
  }

 private:
  ArchivalQueueStore& inner_;
  Observer& o_;
  const Op visibility_due_, retention_due_, live_, get_, put_, counts_, failing_;
};

class ObservedMembershipStore : public MembershipStore {
 public:
  ObservedMembershipStore(MembershipStore& inner, Observer& o)
      : inner_(inner),
        o_(o),
        heartbeat_(o.Resolve("MembershipHeartbeat")),
        hosts_(o.Resolve("MembershipListHosts")),
        leave_(o.Resolve("MembershipLeave")),
        shards_(o.Resolve("MembershipListShards")) {}

  absl::Status Heartbeat(const std::string& host_id, const std::string& address,
                         absl::Time session_start) override {
    return o_.Run(heartbeat_, [&] { return inner_.Heartbeat(host_id, address, session_start); });
  }
  absl::StatusOr<std::vector<HostRecord>> ListHosts(absl::Duration forget_after) override {
    return o_.Run(hosts_, [&] { return inner_.ListHosts(forget_after); });
  }
  absl::Status Leave(const std::string& host_id) override {
    return o_.Run(leave_, [&] { return inner_.Leave(host_id); });
  }
  absl::StatusOr<std::vector<ShardRecord>> ListShards() override {
    return o_.Run(shards_, [&] { return inner_.ListShards(); });
  }

 private:
  MembershipStore& inner_;
  Observer& o_;
  const Op heartbeat_, hosts_, leave_, shards_;
};

class ObservedBatchStore : public BatchStore {
 public:
  ObservedBatchStore(BatchStore& inner, Observer& o)
      : inner_(inner),
        o_(o),
        create_(o.Resolve("BatchCreate")),
        update_(o.Resolve("BatchUpdate")),
        get_(o.Resolve("BatchGet")),
        list_(o.Resolve("BatchList")),
        running_(o.Resolve("BatchListRunning")) {}

  absl::Status Create(const BatchOperationRecord& record) override {
    return o_.Run(create_, [&] { return inner_.Create(record); });
  }
  absl::Status Update(const BatchOperationRecord& record) override {
    return o_.Run(update_, [&] { return inner_.Update(record); });
  }
  absl::StatusOr<BatchOperationRecord> Get(const std::string& namespace_id,
                                           const std::string& job_id) override {
    return o_.Run(get_, [&] { return inner_.Get(namespace_id, job_id); });
  }
  absl::StatusOr<std::vector<BatchOperationRecord>> List(const std::string& namespace_id,
                                                         int32_t limit, int64_t offset) override {
    return o_.Run(list_, [&] { return inner_.List(namespace_id, limit, offset); });
  }
  absl::StatusOr<std::vector<BatchOperationRecord>> ListRunning() override {
    return o_.Run(running_, [&] { return inner_.ListRunning(); });
  }

 private:
  BatchStore& inner_;
  Observer& o_;
  const Op create_, update_, get_, list_, running_;
};

class ObservedDeploymentStore : public DeploymentStore {
 public:
  ObservedDeploymentStore(DeploymentStore& inner, Observer& o)
      : inner_(inner),
        o_(o),
        create_(o.Resolve("DeploymentCreate")),
        update_(o.Resolve("DeploymentUpdate")),
        get_(o.Resolve("DeploymentGet")),
        delete_(o.Resolve("DeploymentDelete")),
        list_(o.Resolve("DeploymentList")),
        list_all_(o.Resolve("DeploymentListAll")) {}

  absl::Status Create(const WorkerDeploymentRecord& record) override {
    return o_.Run(create_, [&] { return inner_.Create(record); });
  }
  absl::Status Update(const WorkerDeploymentRecord& record, int64_t revision) override {
    return o_.Run(update_, [&] { return inner_.Update(record, revision); });
  }
  absl::StatusOr<StoredDeployment> Get(const std::string& namespace_id,
                                       const std::string& name) override {
    return o_.Run(get_, [&] { return inner_.Get(namespace_id, name); });
  }
  absl::Status Delete(const std::string& namespace_id, const std::string& name,
                      int64_t revision) override {
    return o_.Run(delete_, [&] { return inner_.Delete(namespace_id, name, revision); });
  }
  absl::StatusOr<std::vector<StoredDeployment>> List(const std::string& namespace_id,
                                                     const std::string& after_name,
                                                     int32_t limit) override {
    return o_.Run(list_, [&] { return inner_.List(namespace_id, after_name, limit); });
  }
  absl::StatusOr<std::vector<StoredDeployment>> ListAll(const std::string& after_namespace_id,
                                                        const std::string& after_name,
                                                        int32_t limit) override {
    return o_.Run(list_all_,
                  [&] { return inner_.ListAll(after_namespace_id, after_name, limit); });
  }

 private:
  DeploymentStore& inner_;
  Observer& o_;
  const Op create_, update_, get_, delete_, list_, list_all_;
};

class ObservedNexusEndpointStore : public NexusEndpointStore {
 public:
  ObservedNexusEndpointStore(NexusEndpointStore& inner, Observer& o)
      : inner_(inner),
        o_(o),
        create_(o.Resolve("NexusEndpointCreate")),
        update_(o.Resolve("NexusEndpointUpdate")),
        get_(o.Resolve("NexusEndpointGet")),
        delete_(o.Resolve("NexusEndpointDelete")),
        list_(o.Resolve("NexusEndpointList")) {}

  absl::Status Create(const NexusEndpoint& endpoint) override {
    return o_.Run(create_, [&] { return inner_.Create(endpoint); });
  }
  absl::Status Update(const NexusEndpoint& endpoint, int64_t version) override {
    return o_.Run(update_, [&] { return inner_.Update(endpoint, version); });
  }
  absl::StatusOr<NexusEndpoint> Get(const std::string& id) override {
    return o_.Run(get_, [&] { return inner_.Get(id); });
  }
  absl::StatusOr<NexusEndpoint> GetByName(const std::string& name) override {
    return o_.Run(get_, [&] { return inner_.GetByName(name); });
  }
  absl::Status Delete(const std::string& id) override {
    return o_.Run(delete_, [&] { return inner_.Delete(id); });
  }
  absl::StatusOr<std::vector<NexusEndpoint>> List(const std::string& after_id,
                                                  int32_t limit) override {
    return o_.Run(list_, [&] { return inner_.List(after_id, limit); });
  }

 private:
  NexusEndpointStore& inner_;
  Observer& o_;
  const Op create_, update_, get_, delete_, list_;
};

class ObservedScheduleStore : public ScheduleStore {
 public:
  ObservedScheduleStore(ScheduleStore& inner, Observer& o)
      : inner_(inner),
        o_(o),
        create_(o.Resolve("ScheduleCreate")),
        update_(o.Resolve("ScheduleUpdate")),
        get_(o.Resolve("ScheduleGet")),
        delete_(o.Resolve("ScheduleDelete")),
        list_(o.Resolve("ScheduleList")),
        list_all_(o.Resolve("ScheduleListAll")) {}

  absl::Status Create(const ScheduleRecord& record) override {
    return o_.Run(create_, [&] { return inner_.Create(record); });
  }
  absl::Status Update(const ScheduleRecord& record, int64_t revision) override {
    return o_.Run(update_, [&] { return inner_.Update(record, revision); });
  }
  absl::StatusOr<StoredSchedule> Get(const std::string& namespace_id,
                                     const std::string& schedule_id) override {
    return o_.Run(get_, [&] { return inner_.Get(namespace_id, schedule_id); });
  }
  absl::Status Delete(const std::string& namespace_id, const std::string& schedule_id) override {
    return o_.Run(delete_, [&] { return inner_.Delete(namespace_id, schedule_id); });
  }
  absl::StatusOr<std::vector<StoredSchedule>> List(const std::string& namespace_id,
                                                   const std::string& after_id,
                                                   int32_t limit) override {
    return o_.Run(list_, [&] { return inner_.List(namespace_id, after_id, limit); });
  }
  absl::StatusOr<std::vector<StoredSchedule>> ListAll(const std::string& after_namespace_id,
                                                      const std::string& after_id,
                                                      int32_t limit) override {
    return o_.Run(list_all_, [&] { return inner_.ListAll(after_namespace_id, after_id, limit); });
  }

 private:
  ScheduleStore& inner_;
  Observer& o_;
  const Op create_, update_, get_, delete_, list_, list_all_;
};

// A batch of timer writes is one store call: one fault or none for all of it.
class ObservedTimerStore : public TimerStore {
 public:
  ObservedTimerStore(TimerStore& inner, Observer& o)
      : inner_(inner),
        o_(o),
        write_(o.Resolve("TimerWrite")),
        get_(o.Resolve("TimerGet")),
        list_(o.Resolve("TimerList")),
        load_due_(o.Resolve("TimerLoadDue")) {}

  std::vector<absl::Status> Write(std::vector<TimerWrite>& writes) override {
    std::vector<absl::Status> out;
    absl::Status s = o_.Run(write_, [&]() -> absl::Status {
      out = inner_.Write(writes);
      for (const absl::Status& each : out) {
        // A refusal of one timer is marked; anything else is the transaction's error.
        if (!each.ok() && TimerWriteRefusalOf(each) == TimerWriteRefusal::kNone) return each;
      }
      return absl::OkStatus();
    });
    if (!s.ok()) out.assign(writes.size(), s);
    return out;
  }
  absl::StatusOr<StoredTimer> Get(const std::string& namespace_id,
                                  const std::string& timer_id) override {
    return o_.Run(get_, [&] { return inner_.Get(namespace_id, timer_id); });
  }
  absl::StatusOr<std::vector<StoredTimer>> List(const std::string& namespace_id,
                                                const std::string& after_id, int state,
                                                int32_t limit) override {
    return o_.Run(list_, [&] { return inner_.List(namespace_id, after_id, state, limit); });
  }
  absl::StatusOr<std::vector<StoredTimer>> LoadDue(int32_t shard_id, const TimerDueCursor& after,
                                                   absl::Time until, int32_t limit) override {
    return o_.Run(load_due_, [&] { return inner_.LoadDue(shard_id, after, until, limit); });
  }

 private:
  TimerStore& inner_;
  Observer& o_;
  const Op write_, get_, list_, load_due_;
};

class ObservedReplicationStore : public ReplicationStore {
 public:
  ObservedReplicationStore(ReplicationStore& inner, Observer& o)
      : inner_(inner),
        o_(o),
        list_clusters_(o.Resolve("ListRemoteClusters")),
        save_cluster_(o.Resolve("SaveRemoteCluster")),
        delete_cluster_(o.Resolve("DeleteRemoteCluster")),
        read_ns_tasks_(o.Resolve("ReadNamespaceReplicationTasks")),
        max_ns_task_(o.Resolve("MaxNamespaceReplicationTaskId")),
        ack_ns_(o.Resolve("AckNamespaceReplication")),
        get_ns_ack_(o.Resolve("NamespaceReplicationAck")),
        load_tasks_(o.Resolve("LoadReplicationTasks")),
        max_task_(o.Resolve("MaxReplicationTaskId")),
        ack_(o.Resolve("AckReplication")),
        get_ack_(o.Resolve("ReplicationAck")),
        put_dlq_(o.Resolve("PutReplicationDlqTask")),
        read_dlq_(o.Resolve("ReadReplicationDlq")),
        purge_dlq_(o.Resolve("PurgeReplicationDlq")),
        delete_dlq_(o.Resolve("DeleteReplicationDlqTask")),
        dlq_workflows_(o.Resolve("ReplicationDlqWorkflows")),
        count_dlq_(o.Resolve("CountReplicationDlq")),
        dlq_shards_(o.Resolve("ReplicationDlqShards")),
        put_ns_dlq_(o.Resolve("PutNamespaceDlqTask")),
        read_ns_dlq_(o.Resolve("ReadNamespaceDlq")),
        purge_ns_dlq_(o.Resolve("PurgeNamespaceDlq")),
        delete_ns_dlq_(o.Resolve("DeleteNamespaceDlqTask")),
        count_ns_dlq_(o.Resolve("CountNamespaceDlq")) {}

  absl::StatusOr<std::vector<StoredRemoteCluster>> ListRemoteClusters() override {
    return o_.Run(list_clusters_, [&] { return inner_.ListRemoteClusters(); });
  }
  absl::Status SaveRemoteCluster(const RemoteClusterRecord& record,
                                 int64_t expected_version) override {
    return o_.Run(save_cluster_, [&] { return inner_.SaveRemoteCluster(record, expected_version); });
  }
  absl::Status DeleteRemoteCluster(const std::string& name) override {
    return o_.Run(delete_cluster_, [&] { return inner_.DeleteRemoteCluster(name); });
  }
  absl::StatusOr<std::vector<NamespaceReplicationTask>> ReadNamespaceReplicationTasks(
      int64_t after_task_id, int32_t limit) override {
    return o_.Run(read_ns_tasks_,
                  [&] { return inner_.ReadNamespaceReplicationTasks(after_task_id, limit); });
  }
  absl::StatusOr<int64_t> MaxNamespaceReplicationTaskId() override {
    return o_.Run(max_ns_task_, [&] { return inner_.MaxNamespaceReplicationTaskId(); });
  }
  absl::Status AckNamespaceReplication(const std::string& cluster, int64_t task_id) override {
    return o_.Run(ack_ns_, [&] { return inner_.AckNamespaceReplication(cluster, task_id); });
  }
  absl::StatusOr<int64_t> NamespaceReplicationAck(const std::string& cluster) override {
    return o_.Run(get_ns_ack_, [&] { return inner_.NamespaceReplicationAck(cluster); });
  }
  absl::StatusOr<std::vector<ReplicationTaskRow>> LoadReplicationTasks(int32_t shard_id,
                                                                      int64_t after_task_id,
                                                                      int32_t limit) override {
    return o_.Run(load_tasks_,
                  [&] { return inner_.LoadReplicationTasks(shard_id, after_task_id, limit); });
  }
  absl::StatusOr<int64_t> MaxReplicationTaskId(int32_t shard_id) override {
    return o_.Run(max_task_, [&] { return inner_.MaxReplicationTaskId(shard_id); });
  }
  absl::Status AckReplication(const std::string& cluster, int32_t shard_id,
                              int64_t task_id) override {
    return o_.Run(ack_, [&] { return inner_.AckReplication(cluster, shard_id, task_id); });
  }
  absl::StatusOr<int64_t> ReplicationAck(const std::string& cluster, int32_t shard_id) override {
    return o_.Run(get_ack_, [&] { return inner_.ReplicationAck(cluster, shard_id); });
  }
  absl::Status PutReplicationDlqTask(const ReplicationDlqTask& task) override {
    return o_.Run(put_dlq_, [&] { return inner_.PutReplicationDlqTask(task); });
  }
  absl::StatusOr<std::vector<ReplicationDlqTask>> ReadReplicationDlq(
      const ReplicationDlqSelection& selection, const ReplicationDlqKey& after,
      int32_t limit) override {
    return o_.Run(read_dlq_, [&] { return inner_.ReadReplicationDlq(selection, after, limit); });
  }
  absl::StatusOr<int64_t> PurgeReplicationDlq(const ReplicationDlqSelection& selection) override {
    return o_.Run(purge_dlq_, [&] { return inner_.PurgeReplicationDlq(selection); });
  }
  absl::Status DeleteReplicationDlqTask(const ReplicationDlqKey& key) override {
    return o_.Run(delete_dlq_, [&] { return inner_.DeleteReplicationDlqTask(key); });
  }
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ReplicationDlqWorkflows(
      const std::string& source_cluster, int32_t source_shard) override {
    return o_.Run(dlq_workflows_,
                  [&] { return inner_.ReplicationDlqWorkflows(source_cluster, source_shard); });
  }
  absl::StatusOr<std::map<int32_t, int64_t>> CountReplicationDlq(
      const std::string& source_cluster) override {
    return o_.Run(count_dlq_, [&] { return inner_.CountReplicationDlq(source_cluster); });
  }
  absl::StatusOr<std::vector<std::pair<std::string, int32_t>>> ReplicationDlqShards(
      const ReplicationDlqSelection& selection) override {
    return o_.Run(dlq_shards_, [&] { return inner_.ReplicationDlqShards(selection); });
  }
  absl::Status PutNamespaceDlqTask(const NamespaceDlqTask& task) override {
    return o_.Run(put_ns_dlq_, [&] { return inner_.PutNamespaceDlqTask(task); });
  }
  absl::StatusOr<std::vector<NamespaceDlqTask>> ReadNamespaceDlq(
      const ReplicationDlqSelection& selection, const std::string& after_cluster,
      int64_t after_task_id, int32_t limit) override {
    return o_.Run(read_ns_dlq_, [&] {
      return inner_.ReadNamespaceDlq(selection, after_cluster, after_task_id, limit);
    });
  }
  absl::StatusOr<int64_t> PurgeNamespaceDlq(const ReplicationDlqSelection& selection) override {
    return o_.Run(purge_ns_dlq_, [&] { return inner_.PurgeNamespaceDlq(selection); });
  }
  absl::Status DeleteNamespaceDlqTask(const std::string& source_cluster, int64_t task_id) override {
    return o_.Run(delete_ns_dlq_,
                  [&] { return inner_.DeleteNamespaceDlqTask(source_cluster, task_id); });
  }
  absl::StatusOr<int64_t> CountNamespaceDlq(const std::string& source_cluster) override {
    return o_.Run(count_ns_dlq_, [&] { return inner_.CountNamespaceDlq(source_cluster); });
  }

 private:
  ReplicationStore& inner_;
  Observer& o_;
  const Op list_clusters_, save_cluster_, delete_cluster_, read_ns_tasks_, max_ns_task_, ack_ns_,
      get_ns_ack_, load_tasks_, max_task_, ack_, get_ack_, put_dlq_, read_dlq_, purge_dlq_,
      delete_dlq_, dlq_workflows_, count_dlq_, dlq_shards_, put_ns_dlq_, read_ns_dlq_,
      purge_ns_dlq_, delete_ns_dlq_, count_ns_dlq_;
};

// The execution store's write costs as metrics: transactions, the state transitions
// (commits) they held and their distribution, and SQLite's write-ahead log pages.
class WriteMetrics : public WriteObserver {
 public:
  explicit WriteMetrics(MetricsRegistry& metrics)
      : transactions_(metrics.Counter("persistence_transactions_total",
                                      "Database transactions of the execution store's writes.")),
        transitions_(metrics.Counter("persistence_transitions_total",
                                     "State transitions (commits) those transactions held.")),
        group_(metrics.Histogram("persistence_transaction_transitions",
                                 "State transitions per execution-store transaction.", {},
                                 {1, 2, 4, 8, 16, 32, 64})),
        wal_pages_(metrics.Counter("persistence_wal_pages_total",
                                   "Pages appended to SQLite's write-ahead log.")),
        rewritten_(metrics.Counter(
            "persistence_groups_rewritten_total",
            "Groups of commits sent at once (PostgreSQL) in which one did not pass, rolled "
            "back and written again with a savepoint per commit.")) {}

  void TransactionCommitted(size_t commits) override {
    transactions_.Increment();
    transitions_.Increment(static_cast<double>(commits));
    group_.Observe(static_cast<double>(commits));
  }
  void WalPagesAppended(int64_t pages) override { wal_pages_.Increment(static_cast<double>(pages)); }
  void GroupWrittenAgain() override { rewritten_.Increment(); }

 private:
  const metrics::Counter transactions_, transitions_;
  const metrics::Histogram group_;
  const metrics::Counter wal_pages_, rewritten_;
};

class ObservedPersistence : public Persistence {
 public:
  ObservedPersistence(std::unique_ptr<Persistence> inner, MetricsRegistry& metrics,
                      FaultInjector* faults)
      : inner_(std::move(inner)),
        observer_(metrics, faults),
        namespaces_(inner_->namespaces(), observer_),
        cluster_metadata_(inner_->cluster_metadata(), observer_),
        executions_(inner_->executions(), observer_),
        visibility_(inner_->visibility(), observer_),
        archival_queue_(inner_->archival_queue(), observer_),
        membership_(inner_->membership(), observer_),
        batches_(inner_->batches(), observer_),
        schedules_(inner_->schedules(), observer_),
        deployments_(inner_->deployments(), observer_),
        replication_(inner_->replication(), observer_),
        timers_(inner_->timers(), observer_),
        nexus_endpoints_(inner_->nexus_endpoints(), observer_),
        write_metrics_(metrics) {
    if (metrics.enabled()) inner_->executions().SetWriteObserver(&write_metrics_);
  }
  ~ObservedPersistence() override { inner_->executions().SetWriteObserver(nullptr); }

  NamespaceStore& namespaces() override { return namespaces_; }
  ClusterMetadataStore& cluster_metadata() override { return cluster_metadata_; }
  ExecutionStore& executions() override { return executions_; }
  VisibilityStore& visibility() override { return visibility_; }
  ArchivalQueueStore& archival_queue() override { return archival_queue_; }
  MembershipStore& membership() override { return membership_; }
  BatchStore& batches() override { return batches_; }
  ScheduleStore& schedules() override { return schedules_; }
  DeploymentStore& deployments() override { return deployments_; }
  ReplicationStore& replication() override { return replication_; }
  TimerStore& timers() override { return timers_; }
  NexusEndpointStore& nexus_endpoints() override { return nexus_endpoints_; }
  std::string engine() const override { return inner_->engine(); }
  std::string location() const override { return inner_->location(); }
  bool shared_by_hosts() const override { return inner_->shared_by_hosts(); }
  std::string durability() const override { return inner_->durability(); }

 private:
  std::unique_ptr<Persistence> inner_;
  Observer observer_;
  ObservedNamespaceStore namespaces_;
  ObservedClusterMetadataStore cluster_metadata_;
  ObservedExecutionStore executions_;
  ObservedVisibilityStore visibility_;
  ObservedArchivalQueueStore archival_queue_;
  ObservedMembershipStore membership_;
  ObservedBatchStore batches_;
  ObservedScheduleStore schedules_;
  ObservedDeploymentStore deployments_;
  ObservedReplicationStore replication_;
  ObservedTimerStore timers_;
  ObservedNexusEndpointStore nexus_endpoints_;
  WriteMetrics write_metrics_;
};

}  // namespace

std::unique_ptr<Persistence> ObservePersistence(std::unique_ptr<Persistence> inner,
                                                MetricsRegistry& metrics, FaultInjector* faults) {
  if (!metrics.enabled() && faults == nullptr) return inner;
  return std::make_unique<ObservedPersistence>(std::move(inner), metrics, faults);
}

}  // namespace tock::persistence
