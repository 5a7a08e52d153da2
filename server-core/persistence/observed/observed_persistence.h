// Decorators over the persistence stores: every call counted and timed per operation
// (Temporal's persistence_requests, persistence_errors and persistence_latency, label
// `operation`, e.g. "WriteExecution"), and, when configured, failed on purpose by a
// FaultInjector (fault_injector.h). Wrap what OpenPersistence returns:
//
//   persistence = ObservePersistence(std::move(*opened), env.metrics, faults.get());
//
// A NOT_FOUND answer is not counted as an error (it is how lookups say "absent").
// Without metrics and without faults the stores are returned unwrapped: nothing is added to
// any call. With metrics only, a call costs two counter additions, a histogram observation
// and two reads of the monotonic clock.
//
// Thread safety: as the wrapped stores (safe from many threads). `metrics` and `faults`
// must outlive the returned Persistence.
#pragma once

#include <memory>

#include "lib/common/metrics.h"
#include "server-core/persistence/observed/fault_injector.h"
#include "server-core/persistence/persistence.h"

namespace tock::persistence {

// `faults` may be null (no injection).
std::unique_ptr<Persistence> ObservePersistence(std::unique_ptr<Persistence> inner,
                                                MetricsRegistry& metrics, FaultInjector* faults);

}  // namespace tock::persistence
