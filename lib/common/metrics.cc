#include "lib/common/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <atomic>
#include <cstdio>
#include <exception>

namespace tock {
namespace metrics {

void Counter::Add(double by) const { impl_->Increment(by); }
double Counter::Value() const { return impl_ != nullptr ? impl_->Value() : 0; }

void Gauge::DoSet(double value) const { impl_->Set(value); }
void Gauge::Add(double by) const { impl_->Increment(by); }
double Gauge::Value() const { return impl_ != nullptr ? impl_->Value() : 0; }

void Histogram::DoObserve(double value) const { impl_->Observe(value); }
uint64_t Histogram::SampleCount() const {
  return impl_ != nullptr ? impl_->Collect().histogram.sample_count : 0;
}

const std::vector<double>& LatencyBuckets() {
  static const std::vector<double> buckets = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2,
                                              0.5,   1,     2,     5,    10,   20,   50,  100};
  return buckets;
}

}  // namespace metrics

namespace {

// A family registered wrongly is a bug in the code that names it, not a reason to stop the
// server: say it once and hand out a handle that does nothing.
void ReportBadFamily(const std::string& name, const char* what) {
  static std::atomic<bool> reported{false};
  if (!reported.exchange(true)) {
    std::fprintf(stderr, "tock: metric family %s not registered: %s\n", name.c_str(), what);
  }
}

}  // namespace

MetricsRegistry::MetricsRegistry() : registry_(std::make_shared<prometheus::Registry>()) {}
MetricsRegistry::~MetricsRegistry() = default;

std::unique_ptr<MetricsRegistry> MetricsRegistry::Disabled() {
  return std::unique_ptr<MetricsRegistry>(new MetricsRegistry(DisabledTag{}));
}

metrics::Counter MetricsRegistry::Counter(const std::string& name, const std::string& help,
                                          const MetricLabels& labels) {
  if (!registry_) return metrics::Counter();
  try {
    auto& family = prometheus::BuildCounter().Name(name).Help(help).Register(*registry_);
    return metrics::Counter(&family.Add(labels));
  } catch (const std::exception& e) {
    ReportBadFamily(name, e.what());
    return metrics::Counter();
  }
}

metrics::Gauge MetricsRegistry::Gauge(const std::string& name, const std::string& help,
                                      const MetricLabels& labels) {
  if (!registry_) return metrics::Gauge();
  try {
    auto& family = prometheus::BuildGauge().Name(name).Help(help).Register(*registry_);
    return metrics::Gauge(&family.Add(labels));
  } catch (const std::exception& e) {
    ReportBadFamily(name, e.what());
    return metrics::Gauge();
  }
}

metrics::Histogram MetricsRegistry::Histogram(const std::string& name, const std::string& help,
                                              const MetricLabels& labels,
                                              const std::vector<double>& buckets) {
  if (!registry_) return metrics::Histogram();
  try {
    auto& family = prometheus::BuildHistogram().Name(name).Help(help).Register(*registry_);
    return metrics::Histogram(
        &family.Add(labels, buckets.empty() ? metrics::LatencyBuckets() : buckets));
  } catch (const std::exception& e) {
    ReportBadFamily(name, e.what());
    return metrics::Histogram();
  }
}

MetricsRegistry& NoMetrics() {
  static MetricsRegistry* disabled = MetricsRegistry::Disabled().release();
  return *disabled;
}

std::string MetricsRegistry::TextExposition() const {
  if (!registry_) return "";
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace tock
