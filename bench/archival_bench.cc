// Archival throughput to S3 (issue 5): histories archived by Tock's S3 history archiver
// (proto3 JSON encoding, HistoryBlob batches, SigV4, libcurl) next to plain libcurl PUTs of
// the very same bytes (each signed, the least an S3 server accepts) to the same server, in
// the same run, alternating rounds. The server is s3rver behind the SigV4-verifying proxy of
// tests/s3 (node), on loopback.
//
// Usage: archival_bench [HISTORIES [EVENTS_PER_HISTORY [ROUNDS]]]   (run from the source root)
// Prints MB/s of history JSON for both and the ratio archiver/plain (target >= 0.8).
#include <curl/curl.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include "lib/archival/history_archive.h"
#include "lib/archival/s3_blob_store.h"
#include "lib/archival/sigv4.h"

namespace {
namespace hist = temporal::api::history::v1;
namespace enums = temporal::api::enums::v1;
using Clock = std::chrono::steady_clock;
using tock::archival::AwsCredentials;

const AwsCredentials kCredentials{"tockaccess", "tocksecret", ""};

// Remembers what an archive writes, so the baseline PUTs exactly those bytes.
class RecordingStore : public tock::archival::BlobStore {
 public:
  absl::Status Put(const std::string& key, std::string_view bytes) override {
    objects.emplace_back(key, std::string(bytes));
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> Get(const std::string&) override { return absl::NotFoundError(""); }
  absl::StatusOr<bool> Exists(const std::string&) override { return false; }
  absl::StatusOr<tock::archival::BlobListPage> List(const std::string&, int,
                                                    const std::string&) override {
    return tock::archival::BlobListPage{};
  }
  std::string Describe() const override { return "recording"; }
  std::vector<std::pair<std::string, std::string>> objects;
};

// A history like an activity workflow's: a start, then tasks and activities with payloads.
std::vector<hist::HistoryEvent> MakeHistory(int events, int seed) {
  std::vector<hist::HistoryEvent> out(events);
  const std::string payload = "{\"order\":" + std::to_string(seed) +
                              ",\"items\":[\"apple\",\"pear\",\"plum\"],\"note\":\"" +
                              std::string(160, 'x') + "\"}";
  for (int i = 0; i < events; ++i) {
    hist::HistoryEvent& e = out[i];
    e.set_event_id(i + 1);
    e.set_version(0);
    e.set_task_id(1'048'576 + i);
    e.mutable_event_time()->set_seconds(1'790'000'000 + i);
    if (i == 0) {
      e.set_event_type(enums::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
      auto* a = e.mutable_workflow_execution_started_event_attributes();
      a->mutable_workflow_type()->set_name("order");
      a->mutable_task_queue()->set_name("orders");
      auto* p = a->mutable_input()->add_payloads();
      (*p->mutable_metadata())["encoding"] = "json/plain";
      p->set_data(payload);
    } else if (i % 3 == 1) {
      e.set_event_type(enums::EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
      auto* a = e.mutable_activity_task_scheduled_event_attributes();
      a->set_activity_id(std::to_string(i));
      a->mutable_activity_type()->set_name("charge");
      a->mutable_task_queue()->set_name("orders");
      auto* p = a->mutable_input()->add_payloads();
      (*p->mutable_metadata())["encoding"] = "json/plain";
      p->set_data(payload);
    } else if (i % 3 == 2) {
      e.set_event_type(enums::EVENT_TYPE_ACTIVITY_TASK_STARTED);
      auto* a = e.mutable_activity_task_started_event_attributes();
      a->set_scheduled_event_id(i);
      a->set_identity("worker-1@bench");
      a->set_request_id("5a1e3b2c-0000-4000-8000-" + std::to_string(100000000000 + i));
    } else {
      e.set_event_type(enums::EVENT_TYPE_ACTIVITY_TASK_COMPLETED);
      auto* a = e.mutable_activity_task_completed_event_attributes();
      a->set_scheduled_event_id(i - 1);
      a->set_started_event_id(i);
      auto* p = a->mutable_result()->add_payloads();
      (*p->mutable_metadata())["encoding"] = "json/plain";
      p->set_data(payload);
    }
  }
  return out;
}

// Plain libcurl: one kept-alive handle, each PUT signed (SigV4) and sent, nothing else.
class PlainPutter {
 public:
  explicit PlainPutter(std::string endpoint) : endpoint_(std::move(endpoint)) {
    curl_ = curl_easy_init();
    authority_ = endpoint_.substr(endpoint_.find("://") + 3);
  }
  ~PlainPutter() { curl_easy_cleanup(curl_); }

  bool Put(const std::string& bucket, const std::string& key, const std::string& body) {
    const std::string path = "/" + bucket + "/" + tock::archival::UriEncodePath(key);
    const auto now = absl::Now();
    tock::archival::SigV4Request r;
    r.method = "PUT";
    r.encoded_path = path;
    r.payload_sha256_hex = tock::archival::Sha256Hex(body);
    r.headers = {{"host", authority_},
                 {"x-amz-content-sha256", r.payload_sha256_hex},
                 {"x-amz-date", tock::archival::AmzDate(now)}};
    const std::string auth = tock::archival::SignV4(r, kCredentials, "us-east-1", "s3", now);
    curl_slist* headers = nullptr;
    for (const auto& [k, v] : r.headers) headers = curl_slist_append(headers, (k + ": " + v).c_str());
    headers = curl_slist_append(headers, ("Authorization: " + auth).c_str());
    headers = curl_slist_append(headers, "Expect:");
    curl_easy_reset(curl_);
    const std::string url = endpoint_ + path;
    curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl_, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    std::string sink;
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION,
                     +[](char* d, size_t s, size_t n, void* out) {
                       static_cast<std::string*>(out)->append(d, s * n);
                       return s * n;
                     });
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &sink);
    const CURLcode rc = curl_easy_perform(curl_);
    long status = 0;
    curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    if (rc != CURLE_OK || status != 200) {
      std::cerr << "plain PUT " << key << " failed: " << curl_easy_strerror(rc) << " HTTP "
                << status << " " << sink << "\n";
      return false;
    }
    return true;
  }

 private:
  std::string endpoint_;
  std::string authority_;
  CURL* curl_;
};

struct Stack {
  pid_t pid = 0;
  std::string endpoint;
};

// node tests/s3/s3_stack.mjs: its first stdout line is {"endpoint": ..., "pid": ...}.
Stack StartStack(const std::string& dir) {
  const std::string command = "exec node --openssl-legacy-provider tests/s3/s3_stack.mjs --dir '" + dir +
                              "' --bucket bench --bucket plain 2>/dev/null";
  FILE* out = popen(command.c_str(), "r");
  Stack stack;
  if (out == nullptr) return stack;
  char line[4096];
  if (fgets(line, sizeof line, out) == nullptr) return stack;
  std::smatch m;
  const std::string text(line);
  if (std::regex_search(text, m, std::regex("\"endpoint\":\"([^\"]+)\""))) stack.endpoint = m[1];
  if (std::regex_search(text, m, std::regex("\"pid\":([0-9]+)"))) stack.pid = std::stoi(m[1]);
  // The pipe stays open: the stack runs until killed (it ends when its stdin/stdout close).
  return stack;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int histories = argc > 1 ? std::atoi(argv[1]) : 100;
  const int events = argc > 2 ? std::atoi(argv[2]) : 300;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 5;
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("tock-archival-bench-" + std::to_string(getpid())))
          .string();
  std::filesystem::create_directories(dir);
  Stack stack = StartStack(dir);
  if (stack.endpoint.empty() || stack.pid == 0) {
    std::cerr << "archival_bench: cannot start the S3 stack (node tests/s3/s3_stack.mjs; run "
                 "from the source root after scripts/setup.sh)\n";
    return 1;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);

  std::vector<std::vector<hist::HistoryEvent>> runs;
  for (int i = 0; i < histories; ++i) runs.push_back(MakeHistory(events, i));

  // The exact objects the archiver writes, for the baseline.
  RecordingStore recorded;
  tock::archival::HistoryArchive recorder(*tock::archival::ParseArchivalUri("s3://plain/tock"),
                                          recorded);
  const auto encode_start = Clock::now();
  for (int i = 0; i < histories; ++i) {
    (void)recorder.Archive({"ns-id", "bench", "wf-" + std::to_string(i), "run-" + std::to_string(i)},
                           runs[i]);
  }
  const double encode_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - encode_start).count();
  size_t bytes = 0;
  for (const auto& [k, v] : recorded.objects) bytes += v.size();

  tock::archival::S3Options options;
  options.bucket = "bench";
  options.prefix = "tock";
  options.region = "us-east-1";
  options.endpoint = stack.endpoint;
  options.force_path_style = true;
  options.credentials = kCredentials;
  auto store = tock::archival::S3BlobStore::Create(options);
  tock::archival::HistoryArchive archive(*tock::archival::ParseArchivalUri("s3://bench/tock"),
                                         **store);
  PlainPutter plain(stack.endpoint);

  std::vector<double> archiver_mbs;
  std::vector<double> plain_mbs;
  bool ok = true;
  auto run_plain = [&] {
    const auto t0 = Clock::now();
    for (const auto& [key, body] : recorded.objects) ok = ok && plain.Put("plain", "tock/" + key, body);
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  auto run_archiver = [&] {
    const auto t0 = Clock::now();
    for (int i = 0; i < histories && ok; ++i) {
      absl::Status s = archive.Archive(
          {"ns-id", "bench", "wf-" + std::to_string(i), "run-" + std::to_string(i)}, runs[i]);
      if (!s.ok()) {
        std::cerr << "archive failed: " << s << "\n";
        ok = false;
      }
    }
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  const double mb = static_cast<double>(bytes) / 1e6;
  for (int round = 0; round < rounds && ok; ++round) {
    // Alternating which goes first, so neither always follows the other's garbage.
    double plain_s = 0;
    double archiver_s = 0;
    if (round % 2 == 0) {
      plain_s = run_plain();
      archiver_s = run_archiver();
    } else {
      archiver_s = run_archiver();
      plain_s = run_plain();
    }
    plain_mbs.push_back(mb / plain_s);
    archiver_mbs.push_back(mb / archiver_s);
    std::printf("round %d: plain libcurl PUTs %.1f MB/s, archiver %.1f MB/s\n", round + 1,
                plain_mbs.back(), archiver_mbs.back());
  }
  kill(stack.pid, SIGTERM);
  std::filesystem::remove_all(dir);
  if (!ok) return 1;
  const double a = Median(archiver_mbs);
  const double p = Median(plain_mbs);
  std::printf(
      "archival to s3rver (via the SigV4-verifying proxy): %d histories x %d events, %zu objects, "
      "%.2f MB of history JSON per round\n"
      "  plain libcurl PUTs: %.1f MB/s   archiver: %.1f MB/s   ratio archiver/plain: %.2f "
      "(target >= 0.80; medians of %d rounds)\n"
      "  encoding the histories as archive JSON alone: %.1f ms per round\n",
      histories, events, recorded.objects.size(), static_cast<double>(bytes) / 1e6, p, a, a / p,
      rounds, encode_ms);
  return 0;
}
