// How events of a losing branch are cut into ReapplyEvents calls to the active cluster: the
// receiving frontend accepts requests of at most kMaxRequestBytes (4 MiB), so a forward of
// many signals or large ones goes in several calls, in order.
#pragma once

#include <cstddef>
#include <vector>

#include "lib/common/message_size.h"
#include "server-core/persistence/execution_store.h"

namespace tock::server::history {

// Events one ReapplyEvents call carries at most (the receiver refuses more).
inline constexpr size_t kMaxReapplyEvents = 1000;
// Bytes of events one call carries at most: the request's other fields fit in the rest.
inline constexpr size_t kMaxReapplyBytes = kMaxRequestBytes - 64 * 1024;

// `events` cut into successive parts, in order, each within kMaxReapplyEvents and
// kMaxReapplyBytes; an event larger than kMaxReapplyBytes goes alone.
std::vector<std::vector<persistence::HistoryEvent>> ReapplyParts(
    const std::vector<persistence::HistoryEvent>& events);

}  // namespace tock::server::history
