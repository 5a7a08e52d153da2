#include "server-core/history/versioning.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using temporal::api::workflow::v1::VersioningOverride;

std::string NameOf(const temporal::api::deployment::v1::WorkerDeploymentVersion& v) {
  return v.build_id().empty() ? std::string() : absl::StrCat(v.deployment_name(), ":", v.build_id());
}

// Sets the three versioning search attributes from the run's effective state; unversioned
// runs have none.
void SetSearchAttributes(RunTransaction& tx) {
  const auto& exec = tx.state().execution();
  const EffectiveVersion effective = EffectiveVersionOf(exec);
  const auto& info = exec.versioning_info();
  const std::string deployment =
      info.versioning_override().has_pinned()
          ? info.versioning_override().pinned().version().deployment_name()
          : info.deployment_version().deployment_name();
  const char* behavior = effective.version.empty() ? "" : effective.pinned ? "Pinned" : "AutoUpgrade";
  if (effective.version.empty() &&
      !exec.search_attributes().indexed_fields().contains("TemporalWorkerDeploymentVersion")) {
    return;  // unversioned, and never was: nothing to write (nor an empty message to add)
  }
  auto* fields = tx.state().mutable_execution()->mutable_search_attributes()->mutable_indexed_fields();
  bool changed = false;
  for (const auto& [name, value] :
       {std::pair<const char*, std::string>{"TemporalWorkerDeployment",
                                            effective.version.empty() ? "" : deployment},
        {"TemporalWorkerDeploymentVersion", effective.version},
        {"TemporalWorkflowVersioningBehavior", behavior}}) {
    auto it = fields->find(name);
    if (value.empty()) {
      if (it != fields->end()) {
        fields->erase(it);
        changed = true;
      }
      continue;
    }
    temporal::api::common::v1::Payload payload;
    (*payload.mutable_metadata())["encoding"] = "json/plain";
    (*payload.mutable_metadata())["type"] = "Keyword";
    payload.set_data(nlohmann::json(value).dump());
    if (it != fields->end() && it->second.data() == payload.data()) continue;
    (*fields)[name] = std::move(payload);
    changed = true;
  }
  if (changed) tx.VisibilityChanged();
}

}  // namespace

EffectiveVersion EffectiveVersionOf(const tock::persistence::v1::ExecutionInfo& exec) {
  const auto& info = exec.versioning_info();
  const VersioningOverride& o = info.versioning_override();
  if (o.has_pinned()) return {NameOf(o.pinned().version()), true};
  const std::string last = NameOf(info.deployment_version());
  if (o.has_auto_upgrade()) return {last, false};
  return {last, !last.empty() && info.behavior() == enums::VERSIONING_BEHAVIOR_PINNED};
}

absl::Status CheckVersioningOverride(const VersioningOverride& o) {
  switch (o.override_case()) {
    case VersioningOverride::kPinned:
      if (o.pinned().version().build_id().empty() ||
          o.pinned().version().deployment_name().empty()) {
        return absl::InvalidArgumentError("must provide version if override is pinned.");
      }
      if (o.pinned().behavior() != VersioningOverride::PINNED_OVERRIDE_BEHAVIOR_PINNED) {
        return absl::InvalidArgumentError("must specify pinned override behavior if override is pinned.");
      }
      return absl::OkStatus();
    case VersioningOverride::kAutoUpgrade:
      if (!o.auto_upgrade()) return absl::InvalidArgumentError("auto-upgrade override must be true");
      return absl::OkStatus();
    case VersioningOverride::kOneTime:
      if (o.one_time().target_deployment_version().build_id().empty()) {
        return absl::InvalidArgumentError(
            "must provide target deployment version if override is one-time.");
      }
      return absl::UnimplementedError("one-time versioning overrides are not supported yet");
    default:
      // The deprecated fields alone (behavior, pinned_version) of v0.31 clients.
      if (o.behavior() != enums::VERSIONING_BEHAVIOR_UNSPECIFIED) {
        return absl::InvalidArgumentError(
            "this versioning override uses fields Tock does not read (behavior, pinned_version, "
            "deployment); set pinned or auto_upgrade");
      }
      return absl::InvalidArgumentError("versioning override must set pinned or auto_upgrade");
  }
}

InheritedVersion InheritVersion(
    const tock::persistence::v1::ExecutionInfo& from,
    const temporal::api::history::v1::WorkflowExecutionStartedEventAttributes* from_start,
    Successor how, const std::string& task_queue,
    const std::function<bool(const std::string&, const std::string&)>& polls,
    enums::ContinueAsNewVersioningBehavior initial) {
  InheritedVersion out;
  const auto& info = from.versioning_info();
  const std::string version = NameOf(info.deployment_version());
  if (how == Successor::kCron || version.empty() || !polls || !polls(version, task_queue)) return out;
  const bool pinned = info.behavior() == enums::VERSIONING_BEHAVIOR_PINNED;
  const bool auto_upgrade = info.behavior() == enums::VERSIONING_BEHAVIOR_AUTO_UPGRADE;
  if (how == Successor::kRetry) {
    // Only what the retried run inherited, if its own behaviour is still that.
    const bool inherited_pinned = from_start != nullptr && from_start->has_inherited_pinned_version();
    const bool inherited_upgrade = from_start != nullptr && from_start->has_inherited_auto_upgrade_info();
    if ((pinned && !inherited_pinned) || (auto_upgrade && !inherited_upgrade)) return out;
  }
  const bool upgrade_on_continue = how == Successor::kContinueAsNew &&
                                   initial != enums::CONTINUE_AS_NEW_VERSIONING_BEHAVIOR_UNSPECIFIED;
  if (pinned && !upgrade_on_continue) {
    out.pinned = info.deployment_version();
  } else if (pinned || auto_upgrade) {
    out.auto_upgrade.emplace();
    *out.auto_upgrade->mutable_source_deployment_version() = info.deployment_version();
    if (upgrade_on_continue) out.auto_upgrade->set_continue_as_new_initial_versioning_behavior(initial);
  }
  return out;
}

std::optional<VersioningOverride> InheritOverride(
    const tock::persistence::v1::ExecutionInfo& from, const std::string& task_queue,
    const std::function<bool(const std::string&, const std::string&)>& polls) {
  const VersioningOverride& o = from.versioning_info().versioning_override();
  if (!o.has_pinned() || !polls || !polls(NameOf(o.pinned().version()), task_queue)) return std::nullopt;
  return o;
}

void RecordInherited(const InheritedVersion& inherited,
                     temporal::api::history::v1::WorkflowExecutionStartedEventAttributes& started) {
  if (inherited.pinned) *started.mutable_inherited_pinned_version() = *inherited.pinned;
  if (inherited.auto_upgrade) *started.mutable_inherited_auto_upgrade_info() = *inherited.auto_upgrade;
}

void ApplyStartedVersioning(
    RunTransaction& tx,
    const temporal::api::history::v1::WorkflowExecutionStartedEventAttributes& started) {
  if (!started.has_versioning_override() && !started.has_inherited_pinned_version() &&
      !started.has_inherited_auto_upgrade_info()) {
    return;  // an unversioned start: no versioning info at all
  }
  auto* info = tx.state().mutable_execution()->mutable_versioning_info();
  if (started.has_versioning_override()) {
    *info->mutable_versioning_override() = started.versioning_override();
  }
  if (started.has_inherited_pinned_version()) {
    info->set_behavior(enums::VERSIONING_BEHAVIOR_PINNED);
    *info->mutable_deployment_version() = started.inherited_pinned_version();
  } else if (started.has_inherited_auto_upgrade_info()) {
    const auto& upgrade = started.inherited_auto_upgrade_info();
    info->set_behavior(enums::VERSIONING_BEHAVIOR_AUTO_UPGRADE);
    *info->mutable_deployment_version() = upgrade.source_deployment_version();
    info->set_continue_as_new_initial_versioning_behavior(
        upgrade.continue_as_new_initial_versioning_behavior());
  }
  SetSearchAttributes(tx);
}

void RecordWorkerVersion(
    RunTransaction& tx,
    const temporal::api::workflowservice::v1::RespondWorkflowTaskCompletedRequest& req,
    temporal::api::history::v1::WorkflowTaskCompletedEventAttributes& completed) {
  const auto& options = req.deployment_options();
  if (options.worker_versioning_mode() == enums::WORKER_VERSIONING_MODE_VERSIONED) {
    completed.set_versioning_behavior(req.versioning_behavior());
    completed.set_worker_deployment_name(options.deployment_name());
    completed.mutable_deployment_version()->set_deployment_name(options.deployment_name());
    completed.mutable_deployment_version()->set_build_id(options.build_id());
  }
  ApplyCompletedVersioning(tx, completed);
}

void ApplyCompletedVersioning(
    RunTransaction& tx,
    const temporal::api::history::v1::WorkflowTaskCompletedEventAttributes& completed) {
  const auto& exec = tx.state().execution();
  if (!completed.deployment_version().build_id().empty()) {
    auto* info = tx.state().mutable_execution()->mutable_versioning_info();
    info->set_behavior(completed.versioning_behavior());
    *info->mutable_deployment_version() = completed.deployment_version();
  } else if (exec.versioning_info().behavior() != enums::VERSIONING_BEHAVIOR_UNSPECIFIED ||
             exec.versioning_info().has_deployment_version()) {
    auto* info = tx.state().mutable_execution()->mutable_versioning_info();
    info->clear_behavior();
    info->clear_deployment_version();
  }
  SetSearchAttributes(tx);
}

}  // namespace tock::server::history
