// Which runs a host's background workers (retention, archival) handle: those of the history
// shards it owns (review P3-3). On a shared database every host runs the workers, each over
// its own shards, so a run is archived and deleted by its shard's owner alone, under its run
// lock and fenced by its shard's range (HistoryEngine::DeleteWorkflow).
#pragma once

#include <functional>
#include <string>

namespace tock::server::worker {

// True when this host owns the history shard of the run of (namespace id, workflow id).
using OwnsRun =
    std::function<bool(const std::string& namespace_id, const std::string& workflow_id)>;

}  // namespace tock::server::worker
