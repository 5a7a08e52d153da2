#include "server-core/deployments/deployment_routing.h"

#include "absl/strings/str_cat.h"
#include "lib/common/time_format.h"

namespace tock::server::deployments {
namespace {

namespace enums = temporal::api::enums::v1;

std::optional<persistence::TaskKind> KindOf(enums::TaskQueueType type) {
  switch (type) {
    case enums::TASK_QUEUE_TYPE_WORKFLOW:
      return persistence::TaskKind::kWorkflow;
    case enums::TASK_QUEUE_TYPE_ACTIVITY:
      return persistence::TaskKind::kActivity;
    default:
      return std::nullopt;  // Nexus queues are not routed by version yet
  }
}

int64_t Nanos(const google::protobuf::Timestamp& t) {
  return t.seconds() * 1'000'000'000 + t.nanos();
}

}  // namespace

std::string VersionName(const std::string& deployment, const std::string& build_id) {
  return absl::StrCat(deployment, ":", build_id);
}

double RampThreshold(const std::string& workflow_id) {
  uint32_t h = 2166136261u;
  for (unsigned char c : workflow_id) {
    h ^= c;
    h *= 16777619u;
  }
  // FNV-1a's high bits vary little between ids that differ in their last bytes ("order-17",
  // "order-18"): MurmurHash3's finalizer spreads every bit over the whole word.
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return 100.0 * static_cast<double>(h) / 4294967296.0;
}

DeploymentRouting::DeploymentRouting(
    const std::vector<persistence::WorkerDeploymentRecord>& records) {
  for (const persistence::WorkerDeploymentRecord& d : records) {
    const auto& rc = d.routing_config();
    const std::string current = rc.current_deployment_version().build_id().empty()
                                    ? std::string()
                                    : VersionName(d.name(), rc.current_deployment_version().build_id());
    const std::string ramping = rc.ramping_deployment_version().build_id().empty()
                                    ? std::string()
                                    : VersionName(d.name(), rc.ramping_deployment_version().build_id());
    const int64_t changed = std::max(Nanos(rc.current_version_changed_time()),
                                     Nanos(rc.ramping_version_changed_time()));
    // Which of this deployment's versions poll each queue.
    std::map<std::pair<std::string, persistence::TaskKind>, std::set<std::string>> polled;
    for (const auto& v : d.versions()) {
      const std::string name = VersionName(d.name(), v.info().deployment_version().build_id());
      for (const auto& tq : v.info().task_queue_infos()) {
        if (std::optional<persistence::TaskKind> kind = KindOf(tq.type())) {
          polled[{tq.name(), *kind}].insert(name);
        }
      }
    }
    for (auto& [key, versions] : polled) {
      QueueRouting& q = queues_[key];
      q.versions.insert(versions.begin(), versions.end());
      // A queue in several deployments follows the one whose routing changed last.
      if (q.routed && q.changed_nanos >= changed) continue;
      q.routed = true;
      q.changed_nanos = changed;
      q.current = versions.contains(current) ? current : std::string();
      q.ramp = rc.ramping_version_percentage();
      q.ramping = versions.contains(ramping) ? ramping : std::string();
      if (!ramping.empty() && !versions.contains(ramping)) q.ramp = 0;  // not on this queue
    }
  }
}

bool DeploymentRouting::Polls(const std::string& version, const std::string& task_queue,
                              persistence::TaskKind kind) const {
  auto it = queues_.find({task_queue, kind});
  return it != queues_.end() && it->second.versions.contains(version);
}

std::string DeploymentRouting::UnpinnedTarget(const std::string& task_queue,
                                              persistence::TaskKind kind,
                                              const std::string& workflow_id) const {
  auto it = queues_.find({task_queue, kind});
  if (it == queues_.end()) return {};
  const QueueRouting& q = it->second;
  if (q.ramp >= 100 || (q.ramp > 0 && RampThreshold(workflow_id) < q.ramp)) return q.ramping;
  return q.current;
}

std::string DeploymentRouting::TargetOf(const persistence::TaskQueueTask& task) const {
  const std::string& queue = persistence::PlacingQueue(task.task_queue, task.task);
  const auto& t = task.task;
  if (t.pinned() && Polls(t.deployment_version(), queue, task.kind)) return t.deployment_version();
  return UnpinnedTarget(queue, task.kind, t.workflow_id());
}

}  // namespace tock::server::deployments
