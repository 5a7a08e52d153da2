// Stores that forward every call to a real store, for tests that inject a fault in one call
// (a lost answer, a read that fails) and let the real database do everything else: derive
// and override the call to fault. FailingNamespaceStore is the namespace store whose reads
// by id fail on demand (the database briefly unreachable).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server-core/persistence/execution_store.h"
#include "server-core/persistence/namespace_store.h"

namespace tock::testing {

// An ExecutionStore that forwards every call to `inner`.
class ForwardingExecutionStore : public persistence::ExecutionStore {
 public:
  explicit ForwardingExecutionStore(persistence::ExecutionStore& inner) : inner_(inner) {}

  absl::StatusOr<int64_t> AcquireShard(int32_t shard_id, const std::string& owner) override {
    return inner_.AcquireShard(shard_id, owner);
  }
  absl::Status RenewShardRange(int32_t shard_id, int64_t range_id,
                               const std::string& owner) override {
    return inner_.RenewShardRange(shard_id, range_id, owner);
  }
  absl::Status Write(persistence::Commit& commit) override { return inner_.Write(commit); }
  absl::StatusOr<persistence::MutableStateRecord> GetRun(const std::string& namespace_id,
                                                         const std::string& workflow_id,
                                                         const std::string& run_id) override {
    return inner_.GetRun(namespace_id, workflow_id, run_id);
  }
  absl::StatusOr<persistence::CurrentRun> GetCurrentRun(const std::string& namespace_id,
                                                        const std::string& workflow_id) override {
    return inner_.GetCurrentRun(namespace_id, workflow_id);
  }
  absl::StatusOr<std::vector<persistence::HistoryEvent>> ReadEvents(const std::string& run_id,
                                                                    int64_t first_event_id,
                                                                    int64_t next_event_id,
                                                                    int32_t limit) override {
    return inner_.ReadEvents(run_id, first_event_id, next_event_id, limit);
  }
  absl::StatusOr<std::vector<persistence::HistoryEvent>> ReadBranchEvents(
      const std::string& run_id, const std::string& branch_token, int64_t first_event_id,
      int64_t next_event_id, int32_t limit) override {
    return inner_.ReadBranchEvents(run_id, branch_token, first_event_id, next_event_id, limit);
  }
  absl::Status DeleteRun(int32_t shard_id, int64_t range_id, const std::string& namespace_id,
                         const std::string& workflow_id, const std::string& run_id) override {
    return inner_.DeleteRun(shard_id, range_id, namespace_id, workflow_id, run_id);
  }
  absl::StatusOr<int64_t> VisitEventBytes(
      const std::string& run_id, int64_t first_event_id, int64_t next_event_id, int32_t limit,
      absl::FunctionRef<void(std::string_view)> visit) override {
    return inner_.VisitEventBytes(run_id, first_event_id, next_event_id, limit, visit);
  }
  absl::StatusOr<std::vector<persistence::TaskQueueTask>> LoadTaskQueueTasks() override {
    return inner_.LoadTaskQueueTasks();
  }
  absl::StatusOr<std::vector<persistence::TaskQueueTask>> LoadQueueTasks(
      const std::string& namespace_id, const std::string& task_queue, persistence::TaskKind kind,
      int32_t limit,
      const std::optional<ShardSet>& only = std::nullopt) override {
    return inner_.LoadQueueTasks(namespace_id, task_queue, kind, limit, only);
  }
  absl::StatusOr<std::vector<QueueName>> ListQueuesWithTasks(const ShardSet& only,
                                                            int32_t limit) override {
    return inner_.ListQueuesWithTasks(only, limit);
  }
  absl::StatusOr<std::vector<persistence::TaskQueueTask>> LoadTransferTasks(
      int32_t shard_id, int64_t after_task_id, int32_t limit) override {
    return inner_.LoadTransferTasks(shard_id, after_task_id, limit);
  }
  absl::StatusOr<std::vector<persistence::TimerTaskRow>> LoadTimers(
      int32_t shard_id, const persistence::TimerCursor& after, absl::Time until,
      int32_t limit) override {
    return inner_.LoadTimers(shard_id, after, until, limit);
  }

 protected:
  persistence::ExecutionStore& inner_;
};

// A NamespaceStore that forwards every call to `inner`.
class ForwardingNamespaceStore : public persistence::NamespaceStore {
 public:
  explicit ForwardingNamespaceStore(persistence::NamespaceStore& inner) : inner_(inner) {}

  absl::StatusOr<persistence::NamespaceVersion> CreateNamespace(
      const persistence::NamespaceRecord& record, absl::Time now,
      const std::string& operation) override {
    return inner_.CreateNamespace(record, now, operation);
  }
  absl::StatusOr<persistence::NamespaceVersion> GetNamespaceByName(
      const std::string& name) override {
    return inner_.GetNamespaceByName(name);
  }
  absl::StatusOr<persistence::NamespaceVersion> GetNamespaceById(const std::string& id) override {
    return inner_.GetNamespaceById(id);
  }
  absl::StatusOr<persistence::NamespaceVersion> GetNamespaceAsOf(const std::string& name,
                                                                 absl::Time as_of) override {
    return inner_.GetNamespaceAsOf(name, as_of);
  }
  absl::StatusOr<persistence::NamespaceVersion> AppendNamespaceVersion(
      const persistence::NamespaceRecord& record, int64_t expected_version,
      const std::string& operation, absl::Time now) override {
    return inner_.AppendNamespaceVersion(record, expected_version, operation, now);
  }
  absl::StatusOr<persistence::NamespacePage> ListNamespaces(int32_t page_size,
                                                            const std::string& page_token,
                                                            bool include_deleted) override {
    return inner_.ListNamespaces(page_size, page_token, include_deleted);
  }
  absl::StatusOr<std::vector<persistence::NamespaceVersion>> GetNamespaceHistory(
      const std::string& name) override {
    return inner_.GetNamespaceHistory(name);
  }

 protected:
  persistence::NamespaceStore& inner_;
};

// The namespace store, whose reads by id (GetNamespaceById) fail UNAVAILABLE while
// `fail_reads_by_id` is set, counting every read by id and the failed ones.
class FailingNamespaceStore : public ForwardingNamespaceStore {
 public:
  using ForwardingNamespaceStore::ForwardingNamespaceStore;

  std::atomic<bool> fail_reads_by_id{false};
  std::atomic<int> reads_by_id{0};  // failed or not
  std::atomic<int> failed_reads_by_id{0};

  absl::StatusOr<persistence::NamespaceVersion> GetNamespaceById(const std::string& id) override {
    ++reads_by_id;
    if (fail_reads_by_id) {
      ++failed_reads_by_id;
      return absl::UnavailableError("the namespace store is unavailable (injected)");
    }
    return inner_.GetNamespaceById(id);
  }
};

}  // namespace tock::testing
