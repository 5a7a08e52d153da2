// Metrics (lib/common/metrics.h): handles resolved once and shared, the text exposition
// Prometheus reads, and a disabled registry that costs nothing and shows nothing.
#include "lib/common/metrics.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>
#include <vector>

namespace tock {
namespace {

// The exposition's lines, comments included.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool HasLine(const std::string& text, const std::string& line) {
  for (const std::string& l : Lines(text)) {
    if (l == line) return true;
  }
  return false;
}

TEST(MetricsTest, CounterGaugeAndHistogramAppearInTheTextFormat) {
  MetricsRegistry registry;
  metrics::Counter requests = registry.Counter("service_requests_total", "RPC requests.",
                                               {{"operation", "StartWorkflowExecution"}});
  requests.Increment();
  requests.Increment(2);
  metrics::Gauge polls =
      registry.Gauge("pending_polls", "Polls waiting.", {{"task_type", "Workflow"}});
  polls.Increment();
  polls.Increment();
  polls.Decrement();
  metrics::Histogram latency = registry.Histogram("service_latency", "Seconds per call.",
                                                  {{"operation", "StartWorkflowExecution"}});
  latency.Observe(0.003);
  latency.Observe(absl::Milliseconds(700));
  latency.Observe(1000.0);  // beyond the last bucket: only +Inf

  const std::string text = registry.TextExposition();
  EXPECT_TRUE(HasLine(text, "# HELP service_requests_total RPC requests.")) << text;
  EXPECT_TRUE(HasLine(text, "# TYPE service_requests_total counter")) << text;
  EXPECT_TRUE(HasLine(text, "service_requests_total{operation=\"StartWorkflowExecution\"} 3"))
      << text;
  EXPECT_TRUE(HasLine(text, "# TYPE pending_polls gauge")) << text;
  EXPECT_TRUE(HasLine(text, "pending_polls{task_type=\"Workflow\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, "# TYPE service_latency histogram")) << text;
  // Buckets are cumulative, in seconds.
  const std::string bucket = "service_latency_bucket{operation=\"StartWorkflowExecution\",le=";
  EXPECT_TRUE(HasLine(text, bucket + "\"0.002\"} 0")) << text;
  EXPECT_TRUE(HasLine(text, bucket + "\"0.005\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, bucket + "\"0.5\"} 1")) << text;
  EXPECT_TRUE(HasLine(text, bucket + "\"1\"} 2")) << text;
  EXPECT_TRUE(HasLine(text, bucket + "\"100\"} 2")) << text;
  EXPECT_TRUE(HasLine(text, bucket + "\"+Inf\"} 3")) << text;
  EXPECT_TRUE(HasLine(text, "service_latency_count{operation=\"StartWorkflowExecution\"} 3"))
      << text;
  EXPECT_EQ(latency.SampleCount(), 3u);
}

TEST(MetricsTest, TheSameNameAndLabelsGiveTheSameSeries) {
  MetricsRegistry registry;
  metrics::Counter a = registry.Counter("x_total", "X.", {{"k", "v"}});
  metrics::Counter b = registry.Counter("x_total", "another help is ignored", {{"k", "v"}});
  metrics::Counter other = registry.Counter("x_total", "X.", {{"k", "w"}});
  a.Increment();
  b.Increment();
  EXPECT_EQ(a.Value(), 2);
  EXPECT_EQ(other.Value(), 0);
  const std::string text = registry.TextExposition();
  EXPECT_TRUE(HasLine(text, "x_total{k=\"v\"} 2")) << text;
  EXPECT_TRUE(HasLine(text, "x_total{k=\"w\"} 0")) << text;
  EXPECT_TRUE(HasLine(text, "# HELP x_total X.")) << text;
}

TEST(MetricsTest, LabelValuesAreEscaped) {
  MetricsRegistry registry;
  registry.Counter("escaped_total", "E.", {{"operation", "a\"b\\c\nd"}}).Increment();
  EXPECT_TRUE(HasLine(registry.TextExposition(), "escaped_total{operation=\"a\\\"b\\\\c\\nd\"} 1"))
      << registry.TextExposition();
}

TEST(MetricsTest, DisabledRegistryAndDefaultHandlesDoNothing) {
  std::unique_ptr<MetricsRegistry> off = MetricsRegistry::Disabled();
  EXPECT_FALSE(off->enabled());
  metrics::Counter c = off->Counter("c_total", "C.");
  metrics::Histogram h = off->Histogram("h", "H.");
  metrics::Gauge g = off->Gauge("g", "G.");
  EXPECT_FALSE(c.enabled());
  c.Increment();
  h.Observe(1.0);
  g.Set(3);
  EXPECT_EQ(c.Value(), 0);
  EXPECT_EQ(h.SampleCount(), 0u);
  EXPECT_EQ(off->TextExposition(), "");
  EXPECT_FALSE(NoMetrics().enabled());
  metrics::Counter unset;
  unset.Increment();
  EXPECT_FALSE(unset.enabled());
}

TEST(MetricsTest, ABadFamilyGivesADisabledHandleInsteadOfStoppingTheServer) {
  MetricsRegistry registry;
  metrics::Counter bad = registry.Counter("not a name", "Bad.");
  EXPECT_FALSE(bad.enabled());
  bad.Increment();
  registry.Counter("used_total", "As a counter.").Increment();
  metrics::Gauge clash = registry.Gauge("used_total", "As a gauge.");
  EXPECT_FALSE(clash.enabled()) << "one name, one type";
}

TEST(MetricsTest, HandlesAreSafeFromManyThreads) {
  MetricsRegistry registry;
  metrics::Counter counter = registry.Counter("hits_total", "Hits.");
  metrics::Histogram histogram = registry.Histogram("hit_seconds", "Hit latency.");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        counter.Increment();
        histogram.Observe(0.01);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(counter.Value(), 40000);
  EXPECT_EQ(histogram.SampleCount(), 40000u);
}

}  // namespace
}  // namespace tock
