// Prometheus metrics: a registry of metric families (prometheus-cpp core underneath) and
// cheap handles to single time series.
//
//   MetricsRegistry registry;                       // or MetricsRegistry::Disabled()
//   metrics::Counter started = registry.Counter("workflow_started_total", "Runs started.",
//                                               {{"operation", "StartWorkflowExecution"}});
//   started.Increment();                            // hot path: one atomic add
//
// Resolve a label set ONCE (at start, or once per RPC method) and keep the handle: resolving
// takes the registry's and the family's locks, using a handle takes none but prometheus-cpp's
// per-series atomics (a histogram also takes its own series' mutex for two additions, never
// a lock shared with other series).
//
// A default-constructed handle, or one from a disabled registry, does nothing: engines and
// tests that do not care about metrics pass a ServerMetrics of such handles, and a server
// started without `--metrics-port` pays one branch per use.
//
// Names follow Prometheus' conventions (promtool check metrics is clean): counters end in
// `_total`, durations are histograms in seconds.
//
// Thread safety: every method of the registry and of the handles is safe from any thread.
// Handles must not outlive their registry.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace prometheus {
class Counter;
class Gauge;
class Histogram;
class Registry;
}  // namespace prometheus

namespace tock {

using MetricLabels = std::map<std::string, std::string>;
class MetricsRegistry;

namespace metrics {

class Counter {
 public:
  Counter() = default;
  void Increment(double by = 1) const {
    if (impl_ != nullptr) Add(by);
  }
  bool enabled() const { return impl_ != nullptr; }
  // The current value (tests; 0 when disabled).
  double Value() const;

 private:
  friend class ::tock::MetricsRegistry;
  explicit Counter(prometheus::Counter* impl) : impl_(impl) {}
  void Add(double by) const;
  prometheus::Counter* impl_ = nullptr;
};

class Gauge {
 public:
  Gauge() = default;
  void Set(double value) const {
    if (impl_ != nullptr) DoSet(value);
  }
  void Increment(double by = 1) const {
    if (impl_ != nullptr) Add(by);
  }
  void Decrement(double by = 1) const {
    if (impl_ != nullptr) Add(-by);
  }
  bool enabled() const { return impl_ != nullptr; }
  double Value() const;

 private:
  friend class ::tock::MetricsRegistry;
  explicit Gauge(prometheus::Gauge* impl) : impl_(impl) {}
  void DoSet(double value) const;
  void Add(double by) const;
  prometheus::Gauge* impl_ = nullptr;
};

class Histogram {
 public:
  Histogram() = default;
  void Observe(double value) const {
    if (impl_ != nullptr) DoObserve(value);
  }
  // In seconds, the unit of every duration histogram here.
  void Observe(absl::Duration d) const {
    if (impl_ != nullptr) DoObserve(absl::ToDoubleSeconds(d));
  }
  bool enabled() const { return impl_ != nullptr; }
  // How many values were observed (tests; 0 when disabled).
  uint64_t SampleCount() const;

 private:
  friend class ::tock::MetricsRegistry;
  explicit Histogram(prometheus::Histogram* impl) : impl_(impl) {}
  void DoObserve(double value) const;
  prometheus::Histogram* impl_ = nullptr;
};

// Measures an elapsed time for a latency histogram. Monotonic (steady_clock): it never reads
// a time of day, so it is not part of the Clock seam and a manual clock does not move it.
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double ElapsedSeconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Bucket upper bounds in seconds for latencies: 1 ms to 100 s in 1-2-5 steps (Temporal's
// default timer buckets, which are in milliseconds, converted to seconds).
const std::vector<double>& LatencyBuckets();

}  // namespace metrics

class MetricsRegistry {
 public:
  // An enabled registry.
  MetricsRegistry();
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // A registry whose handles do nothing and whose exposition is empty (metrics off).
  static std::unique_ptr<MetricsRegistry> Disabled();

  bool enabled() const { return registry_ != nullptr; }

  // The series of family `name` with `labels`, creating either when missing. Asking again
  // for the same name and labels returns the same series. `help` is the family's HELP text
  // (the first one given wins). A name invalid for Prometheus, or used before with another
  // type, is a programming error: the handle is then a disabled one and the problem is
  // reported on stderr once.
  metrics::Counter Counter(const std::string& name, const std::string& help,
                           const MetricLabels& labels = {});
  metrics::Gauge Gauge(const std::string& name, const std::string& help,
                       const MetricLabels& labels = {});
  // `buckets`: upper bounds, increasing; empty means metrics::LatencyBuckets().
  metrics::Histogram Histogram(const std::string& name, const std::string& help,
                               const MetricLabels& labels = {},
                               const std::vector<double>& buckets = {});

  // Every family in the Prometheus text exposition format 0.0.4 (Content-Type
  // "text/plain; version=0.0.4"). Empty when disabled.
  std::string TextExposition() const;

 private:
  struct DisabledTag {};
  explicit MetricsRegistry(DisabledTag) {}
  std::shared_ptr<prometheus::Registry> registry_;
};

// A process-wide disabled registry (engines and tests without metrics).
MetricsRegistry& NoMetrics();

// The Content-Type of TextExposition().
inline constexpr char kPrometheusTextContentType[] = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace tock
