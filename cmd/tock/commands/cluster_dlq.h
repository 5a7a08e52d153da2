// `tock cluster dlq read|purge|merge`: the replication DLQ of the cluster (history
// replication tasks from remote clusters that kept failing here).
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

void AddClusterDlqCommands(CLI::App& cluster_group, CommandContext& ctx);

}  // namespace tock::cli
