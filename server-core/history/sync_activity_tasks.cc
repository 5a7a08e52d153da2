#include "server-core/history/sync_activity_tasks.h"

#include <algorithm>

#include "lib/common/proto_time.h"

namespace tock::server::history {
namespace {

int64_t Nanos(const google::protobuf::Timestamp& t) {
  return t.seconds() * 1'000'000'000 + t.nanos();
}

ActivityMark MarkOf(const tock::persistence::v1::ActivityInfo& a) {
  ActivityMark m;
  m.scheduled_event_id = a.scheduled_event_id();
  m.attempt = a.attempt();
  m.stamp = a.stamp();
  m.started_ns = a.has_started_time() ? Nanos(a.started_time()) : 0;
  m.last_heartbeat_ns = a.has_last_heartbeat_time() ? Nanos(a.last_heartbeat_time()) : 0;
  return m;
}

bool Same(const ActivityMark& a, const ActivityMark& b) {
  return a.attempt == b.attempt && a.stamp == b.stamp && a.started_ns == b.started_ns &&
         a.last_heartbeat_ns == b.last_heartbeat_ns;
}

}  // namespace

ActivityMarks MarkActivities(const MutableStateRecord& state) {
  ActivityMarks marks;
  marks.reserve(state.activities_size());
  for (const auto& [id, a] : state.activities()) marks.push_back(MarkOf(a));
  std::sort(marks.begin(), marks.end(), [](const ActivityMark& x, const ActivityMark& y) {
    return x.scheduled_event_id < y.scheduled_event_id;
  });
  return marks;
}

void AddSyncActivityTasks(const ActivityMarks& before, RunTransaction& tx,
                          std::vector<persistence::ReplicationTaskRow>& out) {
  if (tx.version() <= 0 || tx.state().activities().empty()) return;
  const auto& exec = tx.execution();
  for (auto& [id, a] : *tx.state().mutable_activities()) {
    auto it = std::lower_bound(before.begin(), before.end(), id,
                               [](const ActivityMark& m, int64_t v) { return m.scheduled_event_id < v; });
    // An activity the change scheduled: its ActivityTaskScheduled event replicates it.
    if (it == before.end() || it->scheduled_event_id != id || Same(*it, MarkOf(a))) continue;
    a.set_version(tx.version());
    persistence::ReplicationTaskRow& row = out.emplace_back();
    row.task.set_kind(tock::persistence::v1::ReplicationTask::KIND_SYNC_ACTIVITY);
    row.task.set_namespace_id(exec.namespace_id());
    row.task.set_workflow_id(exec.workflow_id());
    row.task.set_run_id(exec.run_id());
    row.task.set_scheduled_event_id(id);
    row.task.set_version(tx.version());
  }
}

}  // namespace tock::server::history
