#include "server-core/replication/replication_faults.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tock::server::replication {

ReplicationFaults::ReplicationFaults(std::string path, MetricsRegistry& metrics, Logger& logger)
    : path_(std::move(path)), logger_(logger) {
  const char* help = "Replication faults injected by --replication-faults-file (tests only).";
  dropped_ = metrics.Counter("replication_injected_faults_total", help, {{"kind", "drop"}});
  failed_ = metrics.Counter("replication_injected_faults_total", help, {{"kind", "fail"}});
  replayed_ = metrics.Counter("replication_injected_faults_total", help, {{"kind", "replay"}});
  reordered_ = metrics.Counter("replication_injected_faults_total", help, {{"kind", "reorder"}});
  namespace_failed_ =
      metrics.Counter("replication_injected_faults_total", help, {{"kind", "fail_namespace"}});
}

void ReplicationFaults::Refresh() {
  std::string content;
  if (std::ifstream in(path_); in) {
    std::ostringstream buffer;
    buffer << in.rdbuf();
    content = buffer.str();
  }
  std::lock_guard lock(mu_);
  if (content == content_) return;
  content_ = content;
  pause_ = false;
  replay_ = false;
  reorder_ = false;
  tasks_per_pull_ = 0;
  drop_workflow_id_.clear();
  fail_workflow_ids_.clear();
  fail_namespaces_.clear();
  if (content.empty()) return;
  // The test writes the file while the server may read it: a half-written one is read
  // again at the next pull (its content differs then), so a parse error is not sticky.
  nlohmann::json doc = nlohmann::json::parse(content, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) {
    logger_.Error("the replication faults file is not a JSON object; no faults",
                  {{"path", path_}});
    return;
  }
  for (const auto& [key, value] : doc.items()) {
    if (key == "pause" && value.is_boolean()) {
      pause_ = value.get<bool>();
    } else if (key == "replay" && value.is_boolean()) {
      replay_ = value.get<bool>();
    } else if (key == "reorder" && value.is_boolean()) {
      reorder_ = value.get<bool>();
    } else if (key == "fail_namespaces" && value.is_array()) {
      for (const auto& name : value) {
        if (name.is_string()) fail_namespaces_.insert(name.get<std::string>());
      }
    } else if (key == "tasks_per_pull" && value.is_number_integer() && value.get<int64_t>() > 0 &&
               value.get<int64_t>() <= 100000) {
      tasks_per_pull_ = static_cast<int>(value.get<int64_t>());
    } else if (key == "drop_workflow_id" && value.is_string()) {
      drop_workflow_id_ = value.get<std::string>();
    } else if (key == "fail_workflow_ids" && value.is_array()) {
      for (const auto& id : value) {
        if (id.is_string()) fail_workflow_ids_.insert(id.get<std::string>());
      }
    } else {
      logger_.Error("the replication faults file has an unknown key or a value of the wrong type; "
                    "ignored (keys: pause, replay, reorder, drop_workflow_id, fail_workflow_ids, "
                    "fail_namespaces, tasks_per_pull (1..100000))",
                    {{"path", path_}, {"key", key}});
    }
  }
  logger_.Warn("replication faults set (tests only)", {{"path", path_}, {"faults", doc.dump()}});
}

bool ReplicationFaults::paused() const {
  std::lock_guard lock(mu_);
  return pause_;
}

int ReplicationFaults::tasks_per_pull() const {
  std::lock_guard lock(mu_);
  return tasks_per_pull_;
}

bool ReplicationFaults::replay() const {
  std::lock_guard lock(mu_);
  return replay_;
}

bool ReplicationFaults::TakeDrop(const std::string& workflow_id) {
  {
    std::lock_guard lock(mu_);
    if (drop_workflow_id_.empty() || drop_workflow_id_ != workflow_id) return false;
    drop_workflow_id_.clear();
  }
  dropped_.Increment();
  logger_.Warn("replication fault: a task dropped", {{"workflow_id", workflow_id}});
  return true;
}

bool ReplicationFaults::Fails(const std::string& workflow_id) {
  {
    std::lock_guard lock(mu_);
    if (!fail_workflow_ids_.contains(workflow_id)) return false;
  }
  failed_.Increment();
  return true;
}

bool ReplicationFaults::FailsNamespace(const std::string& name) {
  {
    std::lock_guard lock(mu_);
    if (!fail_namespaces_.contains(name)) return false;
  }
  namespace_failed_.Increment();
  return true;
}

bool ReplicationFaults::reorder() const {
  std::lock_guard lock(mu_);
  return reorder_;
}

void ReplicationFaults::CountReplay() { replayed_.Increment(); }

void ReplicationFaults::CountReorder() { reordered_.Increment(); }

}  // namespace tock::server::replication
