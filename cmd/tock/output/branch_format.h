// How a run's history branches read on a terminal, shared by `tock workflow describe-state`
// and the REPL inspector's `branches`: one row per version history item, the event ids it
// covers (from the previous item's id + 1 through its own) and their failover version.
#pragma once

#include <string>
#include <vector>

#include "tock/admin/v1/service.pb.h"

namespace tock::cli {

// BRANCH, CURRENT, TOKEN, EVENTS, VERSION.
std::vector<std::string> BranchColumns();

// The rows of one branch (`index` in the run's version histories): the index, "yes" for the
// current branch, the token as hex ("-" for the empty token of a run that never forked; cut
// to 16 characters and "..."), each shown on the branch's first row only, then "A-B" (or
// "A" for one event) and the version. A branch with no items (a run with no events yet)
// has one row with "-" as events.
std::vector<std::vector<std::string>> BranchRows(const tock::admin::v1::HistoryBranch& branch,
                                                 int index);

}  // namespace tock::cli
