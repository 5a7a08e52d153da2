// Whether the engine honours a worker's request for eager dispatch, per namespace
// (Temporal's dynamic config system.enableActivityEagerExecution and
// system.enableEagerWorkflowStart, both on by default there too):
//  - eager activities: a ScheduleActivityTask command with request_eager_execution, on the
//    run's own task queue, starts its first attempt in the workflow task's completion and
//    hands it back in RespondWorkflowTaskCompletedResponse.activity_tasks (workflow_tasks.cc);
//  - eager workflow start: a StartWorkflowExecution with request_eager_execution starts the
//    first workflow task in the start's commit and hands it back in eager_workflow_task
//    (history_engine.cc StartLocked).
// Configured under `history:` (server_config.h): `eager_activities` and
// `eager_workflow_start`, each `true`/`false` or `{default: BOOL, namespaces: {NAME: BOOL}}`.
#pragma once

#include <map>
#include <string>

namespace tock::server::history {

// One switch: a default and the namespaces (by name) that differ from it.
struct EagerSwitch {
  bool on_by_default = true;
  std::map<std::string, bool> namespaces;

  bool On(const std::string& namespace_name) const {
    auto it = namespaces.find(namespace_name);
    return it == namespaces.end() ? on_by_default : it->second;
  }
};

struct EagerDispatch {
  EagerSwitch activities;
  EagerSwitch workflow_start;
};

}  // namespace tock::server::history
