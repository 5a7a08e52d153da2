// Identifiers: UUIDs, random (version 4: namespace ids, request ids) or time-ordered
// (version 7: run ids).
#pragma once

#include <string>

#include "absl/time/time.h"

namespace tock {

// A new random UUID in canonical lower-case form. Thread-safe.
std::string NewUuid();

// A new version-7 UUID (RFC 9562): the 48 high bits are `now` in Unix milliseconds, the rest
// random, so ids made later sort after earlier ones (to the millisecond). Run ids are made
// so: the tables keyed by run id (history events, visibility) then take a new run's rows at
// the right edge of their B-trees, where the pages of the runs in progress already are, rather
// than at a random page each (docs/performance.md, where the write-ahead log's pages go).
// Thread-safe.
std::string NewTimeOrderedUuid(absl::Time now);

// True for the canonical 8-4-4-4-12 hex form.
bool IsUuid(const std::string& text);

}  // namespace tock
