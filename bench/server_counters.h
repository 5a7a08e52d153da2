// Counters of a benchmark's servers that do not depend on the machine's speed: what the
// database did (transactions, the state transitions they held, SQLite's write-ahead log
// pages), the API calls served, the calls between hosts (all from GET /metrics), and the
// context switches of every thread of the server (/proc/PID/task/*/status). Read before and
// after a load; the difference divided by the workflows run is what each workflow cost.
#pragma once

#include <curl/curl.h>
#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tock::bench {

struct ServerCounters {
  double transactions = 0;  // persistence_transactions_total
  double transitions = 0;   // persistence_transitions_total (commits)
  double wal_pages = 0;     // persistence_wal_pages_total (SQLite; 0 on PostgreSQL)
  double api_calls = 0;     // service_requests_total, every method
  double host_calls = 0;    // host_calls_total
  double context_switches = 0;

  ServerCounters& operator+=(const ServerCounters& o) {
    transactions += o.transactions;
    transitions += o.transitions;
    wal_pages += o.wal_pages;
    api_calls += o.api_calls;
    host_calls += o.host_calls;
    context_switches += o.context_switches;
    return *this;
  }
  ServerCounters operator-(const ServerCounters& o) const {
    ServerCounters d = *this;
    d.transactions -= o.transactions;
    d.transitions -= o.transitions;
    d.wal_pages -= o.wal_pages;
    d.api_calls -= o.api_calls;
    d.host_calls -= o.host_calls;
    d.context_switches -= o.context_switches;
    return d;
  }
};

// The sum of the samples of metric `name` in Prometheus text `text` (every label set).
inline double SumSamples(const std::string& text, const std::string& name) {
  double sum = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name, 0) != 0) continue;
    const char next = line.size() > name.size() ? line[name.size()] : '\0';
    if (next != ' ' && next != '{') continue;  // another metric sharing the prefix
    sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

// Voluntary and involuntary context switches of every thread of process `pid` now.
inline double ContextSwitches(pid_t pid) {
  double sum = 0;
  std::error_code ec;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0 ||
          line.rfind("nonvoluntary_ctxt_switches:", 0) == 0) {
        sum += std::stod(line.substr(line.find(':') + 1));
      }
    }
  }
  return sum;
}

// The counters of the server `pid` whose metrics are served at `metrics_url`; the metrics
// part is left 0 when they cannot be fetched.
inline ServerCounters ReadServerCounters(pid_t pid, const std::string& metrics_url) {
  ServerCounters c;
  c.context_switches = ContextSwitches(pid);
  std::string text;
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return c;
  curl_easy_setopt(curl, CURLOPT_URL, metrics_url.c_str());
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION,
                   +[](char* data, size_t size, size_t n, void* out) {
                     static_cast<std::string*>(out)->append(data, size * n);
                     return size * n;
                   });
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &text);
  const bool fetched = curl_easy_perform(curl) == CURLE_OK;
  curl_easy_cleanup(curl);
  if (!fetched) return c;
  c.transactions = SumSamples(text, "persistence_transactions_total");
  c.transitions = SumSamples(text, "persistence_transitions_total");
  c.wal_pages = SumSamples(text, "persistence_wal_pages_total");
  c.api_calls = SumSamples(text, "service_requests_total");
  c.host_calls = SumSamples(text, "host_calls_total");
  return c;
}

}  // namespace tock::bench
