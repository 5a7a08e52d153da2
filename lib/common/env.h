// The Env: what a server's parts get from outside instead of reaching for globals (DESIGN.md
// "Seams"): the clock, the logger and the metrics registry. Built once in main (tock-server,
// `tock server start-dev`) and passed down; tests build one over a ManualClock, NullLogger()
// and NoMetrics().
//
// The Env only refers: whoever builds it owns the three objects and keeps them alive while
// anything built from the Env runs. Each of them is safe to use from any thread.
#pragma once

#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "lib/common/metrics.h"

namespace tock {

struct Env {
  Clock& clock;
  Logger& logger;
  MetricsRegistry& metrics;
};

// The real clock, a logger that drops everything and no metrics: for callers that do not
// configure logging or metrics (tests, benchmarks in process).
inline Env QuietEnv(Clock& clock = RealClock()) { return Env{clock, NullLogger(), NoMetrics()}; }

}  // namespace tock
