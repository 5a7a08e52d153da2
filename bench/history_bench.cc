// Fetching a long history through tock-server next to reading the same rows raw from SQLite.
//
// One workflow gets 10,000 events (signals); then, in the same run:
//   fetch  - GetWorkflowExecutionHistory over gRPC, every page, parsed into the API's
//            History (what an SDK or `tock workflow show` does);
//   wire   - the same calls, the response kept as received bytes (transfer, no parse);
//   parse  - parsing those received bytes alone (the client's share of `fetch`), on the heap
//            as the generated stub does, and into a protobuf Arena;
//   raw    - SELECT of the same rows from the database file the server wrote;
//   http   - every page of Temporal's HTTP API (GET .../history, payload shorthand on),
//            the JSON parsed (what a script or the web console does) by simdjson, a parser
//            as fast as a browser's JSON.parse (nlohmann's took 6 times the server's time).
// The targets: fetch/raw <= 2; http at least half fetch's throughput (fetch/http >= 0.5).
#include <google/protobuf/arena.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/support/byte_buffer.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <curl/curl.h>

#include "bench/bench_server.h"
#include "simdjson.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"

namespace {

namespace wf = temporal::api::workflowservice::v1;
using Clock = std::chrono::steady_clock;

constexpr int kEvents = 10'000;
int kRounds = 15;  // argv[2] overrides (profiling)
constexpr char kMethod[] =
    "/temporal.api.workflowservice.v1.WorkflowService/GetWorkflowExecutionHistory";

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

wf::GetWorkflowExecutionHistoryRequest PageRequest(const std::string& token) {
  wf::GetWorkflowExecutionHistoryRequest req;
  req.set_namespace_("default");
  req.mutable_execution()->set_workflow_id("long-history");
  req.set_next_page_token(token);
  return req;
}

// One page as the bytes that arrived.
std::string FetchPageBytes(grpc::GenericStub& stub, const std::string& token) {
  std::string serialized = PageRequest(token).SerializeAsString();
  grpc::Slice slice(serialized);
  grpc::ByteBuffer request(&slice, 1), response;
  grpc::ClientContext ctx;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, kMethod, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  if (!done.get_future().get().ok()) return "";
  std::vector<grpc::Slice> slices;
  (void)response.Dump(&slices);
  std::string out;
  for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

// Field 3 (next_page_token) of a GetWorkflowExecutionHistoryResponse, found by skipping the
// other top-level fields on the wire, so that `wire` times no parse of the events.
std::string NextPageToken(const std::string& bytes) {
  size_t i = 0;
  auto varint = [&]() -> uint64_t {
    uint64_t v = 0;
    for (int shift = 0; i < bytes.size(); shift += 7) {
      const auto b = static_cast<uint8_t>(bytes[i++]);
      v |= uint64_t{b & 0x7fu} << shift;
      if (b < 0x80) break;
    }
    return v;
  };
  while (i < bytes.size()) {
    const uint64_t key = varint();
    if ((key & 7) == 0) {
      varint();
    } else if ((key & 7) == 2) {
      const uint64_t len = varint();
      if (key >> 3 == 3) return bytes.substr(i, len);
      i += len;
    } else {
      return "";  // no other wire types at the top level of this message
    }
  }
  return "";
}

// The server binary from the command line, and the rounds (usage on stderr when it is wrong).
std::optional<std::string> ParseArgs(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: history_bench TOCK_SERVER [rounds]\n";
    return std::nullopt;
  }
  if (argc > 2) kRounds = std::stoi(argv[2]);
  return std::string(argv[1]);
}

// Starts the workflow "long-history" (no worker) and signals it until it has kEvents events,
// from 8 callers.
void WriteLongHistory(wf::WorkflowService::Stub& stub) {
  {
    wf::StartWorkflowExecutionRequest req;
    req.set_namespace_("default");
    req.set_workflow_id("long-history");
    req.mutable_workflow_type()->set_name("bench");
    req.mutable_task_queue()->set_name("nobody-polls");
    grpc::ClientContext ctx;
    wf::StartWorkflowExecutionResponse resp;
    stub.StartWorkflowExecution(&ctx, req, &resp);
  }
  std::vector<std::thread> signallers;
  std::atomic<int> next_signal{0};
  for (int s = 0; s < 8; ++s) {
    signallers.emplace_back([&] {
      while (next_signal++ < kEvents - 2) {
        wf::SignalWorkflowExecutionRequest req;
        req.set_namespace_("default");
        req.mutable_workflow_execution()->set_workflow_id("long-history");
        req.set_signal_name("tick");
        grpc::ClientContext ctx;
        wf::SignalWorkflowExecutionResponse resp;
        stub.SignalWorkflowExecution(&ctx, req, &resp);
      }
    });
  }
  for (auto& t : signallers) t.join();
}

// fetch: every page through the generated stub, parsed. The events fetched.
int FetchParsed(wf::WorkflowService::Stub& stub) {
  int fetched = 0;
  std::string token;
  do {
    grpc::ClientContext ctx;
    wf::GetWorkflowExecutionHistoryResponse resp;
    if (!stub.GetWorkflowExecutionHistory(&ctx, PageRequest(token), &resp).ok()) break;
    fetched += resp.history().events_size();
    token = resp.next_page_token();
  } while (!token.empty());
  return fetched;
}

// wire: every page as the bytes that arrived.
std::vector<std::string> FetchWire(grpc::GenericStub& generic) {
  std::vector<std::string> pages;
  std::string token;
  do {
    pages.push_back(FetchPageBytes(generic, token));
    token = NextPageToken(pages.back());
  } while (!token.empty());
  return pages;
}

void ParseOnHeap(const std::vector<std::string>& pages) {
  for (const auto& p : pages) {
    wf::GetWorkflowExecutionHistoryResponse resp;
    resp.ParseFromString(p);
  }
}

void ParseInArena(const std::vector<std::string>& pages) {
  for (const auto& p : pages) {
    google::protobuf::Arena arena;
    auto* resp =
        google::protobuf::Arena::CreateMessage<wf::GetWorkflowExecutionHistoryResponse>(&arena);
    resp->ParseFromString(p);
  }
}

size_t AppendBody(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// http: every page from Temporal's HTTP API at `base` (http://IP:PORT/api/v1), the JSON
// parsed; `http_wire_ms` gets the time spent receiving (transfer and the server's work). The
// events fetched.
int FetchHttp(CURL* curl, const std::string& base, double& http_wire_ms, size_t& json_bytes) {
  int fetched = 0;
  json_bytes = 0;
  simdjson::dom::parser parser;
  std::string token;
  http_wire_ms = 0;
  do {
    std::string url = base + "/namespaces/default/workflows/long-history/history";
    if (!token.empty()) {
      char* escaped = curl_easy_escape(curl, token.c_str(), static_cast<int>(token.size()));
      url += std::string("?nextPageToken=") + escaped;
      curl_free(escaped);
    }
    std::string body;
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    const auto t0 = Clock::now();
    if (curl_easy_perform(curl) != CURLE_OK) break;
    http_wire_ms += MsSince(t0);
    json_bytes += body.size();
    simdjson::dom::element page;
    if (parser.parse(body).get(page) != simdjson::SUCCESS) break;
    simdjson::dom::array events;
    if (page["history"]["events"].get(events) != simdjson::SUCCESS) break;
    fetched += static_cast<int>(events.size());
    std::string_view next;
    token = page["nextPageToken"].get(next) == simdjson::SUCCESS ? std::string(next) : "";
  } while (!token.empty());
  return fetched;
}

// The times of each round of fetch, wire, parse and http (milliseconds), and what the last
// round got.
struct FetchTimes {
  std::vector<double> fetch_ms, wire_ms, parse_ms, arena_parse_ms, http_ms, http_wire_ms;
  int fetched = 0, http_fetched = 0;
  size_t wire_bytes = 0, json_bytes = 0;
};

FetchTimes TimeFetches(wf::WorkflowService::Stub& stub, grpc::GenericStub& generic,
                       const std::string& http_base) {
  FetchTimes times;
  CURL* curl = curl_easy_init();
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  for (int round = 0; round < kRounds; ++round) {
    auto t0 = Clock::now();
    double http_wire_ms = 0;
    times.http_fetched = FetchHttp(curl, http_base, http_wire_ms, times.json_bytes);
    times.http_ms.push_back(MsSince(t0));
    times.http_wire_ms.push_back(http_wire_ms);

    t0 = Clock::now();
    times.fetched = FetchParsed(stub);
    times.fetch_ms.push_back(MsSince(t0));

    t0 = Clock::now();
    const std::vector<std::string> pages = FetchWire(generic);
    times.wire_ms.push_back(MsSince(t0));
    times.wire_bytes = 0;
    for (const auto& p : pages) times.wire_bytes += p.size();

    t0 = Clock::now();
    ParseOnHeap(pages);
    times.parse_ms.push_back(MsSince(t0));

    t0 = Clock::now();
    ParseInArena(pages);
    times.arena_parse_ms.push_back(MsSince(t0));
  }
  curl_easy_cleanup(curl);
  return times;
}

// The times of each round of the raw read (milliseconds), the rows the last one read, and a
// checksum of the rows (printed, so the reads cannot be optimised away).
struct RawReads {
  std::vector<double> raw_ms;
  int raw_rows = 0;
  unsigned checksum = 0;
};

// raw: the history rows of "long-history", read from the database file `db_path` (closed by
// the server) kRounds times.
RawReads TimeRawReads(const std::string& db_path) {
  RawReads reads;
  sqlite3* db = nullptr;
  sqlite3_open(db_path.c_str(), &db);
  sqlite3_stmt* run_q = nullptr;
  sqlite3_prepare_v2(db, "SELECT run_id FROM current_executions WHERE workflow_id = 'long-history'",
                     -1, &run_q, nullptr);
  std::string run_id;
  if (sqlite3_step(run_q) == SQLITE_ROW) {
    run_id = reinterpret_cast<const char*>(sqlite3_column_text(run_q, 0));
  }
  sqlite3_finalize(run_q);
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(db, "SELECT data FROM history_batches WHERE run_id = ? ORDER BY first_event_id", -1,
                     &q, nullptr);
  for (int round = 0; round < kRounds; ++round) {
    auto t0 = Clock::now();
    reads.raw_rows = 0;
    // Each row's bytes, looked at in place (no copy): the cheapest honest read.
    sqlite3_bind_text(q, 1, run_id.c_str(), -1, SQLITE_STATIC);
    while (sqlite3_step(q) == SQLITE_ROW) {
      const auto* blob = static_cast<const unsigned char*>(sqlite3_column_blob(q, 0));
      const int size = sqlite3_column_bytes(q, 0);
      if (size > 0) reads.checksum += blob[size - 1];
      ++reads.raw_rows;
    }
    sqlite3_reset(q);
    reads.raw_ms.push_back(MsSince(t0));
  }
  sqlite3_finalize(q);
  sqlite3_close(db);
  return reads;
}

// The medians and the ratios against the raw read.
void PrintResults(const FetchTimes& times, const RawReads& reads) {
  const double fetch = Median(times.fetch_ms), wire = Median(times.wire_ms),
               parse = Median(times.parse_ms), raw = Median(reads.raw_ms);
  std::printf("history of %d events, %.2f MB on the wire (medians of %d rounds)\n", times.fetched,
              times.wire_bytes / 1e6, kRounds);
  std::printf("fetch, parsed into History       %6.2f ms\n", fetch);
  std::printf("  of which: transfer (bytes)     %6.2f ms\n", wire);
  std::printf("            client parse         %6.2f ms  (%.2f ms into an arena)\n", parse,
              Median(times.arena_parse_ms));
  std::printf("raw SQLite read of %d rows    %6.2f ms\n", reads.raw_rows, raw);
  std::printf("ratio fetch/raw                  %6.2f   (target <= 2.00)\n", fetch / raw);
  std::printf("ratio transfer/raw               %6.2f   (checksum %u)\n", wire / raw,
              reads.checksum);
  const double http = Median(times.http_ms);
  std::printf("HTTP API, %d events as JSON (%.2f MB) parsed %6.2f ms\n", times.http_fetched,
              times.json_bytes / 1e6, http);
  std::printf("  of which: transfer (bytes)     %6.2f ms\n", Median(times.http_wire_ms));
  std::printf("ratio HTTP/gRPC throughput       %6.2f   (fetch/http; target >= 0.50)\n", fetch / http);
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<std::string> server_binary = ParseArgs(argc, argv);
  if (!server_binary.has_value()) return 2;
  char dir_template[] = "/tmp/tock-bench-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  tock::bench::Server server =
      tock::bench::StartServer(*server_binary, {"--db-file", dir + "/tock.db", "--http-port", "0"},
                               "http api");
  if (server.pid == 0) {
    std::cerr << "tock-server did not start\n";
    return 1;
  }
  auto channel = tock::bench::OpenChannel(server.address);
  auto stub = wf::WorkflowService::NewStub(channel);
  grpc::GenericStub generic(channel);
  WriteLongHistory(*stub);
  const FetchTimes times = TimeFetches(*stub, generic, server.banner_value);
  kill(server.pid, SIGTERM);
  waitpid(server.pid, nullptr, 0);
  // The same rows, read raw from the database the server wrote (now closed).
  const RawReads reads = TimeRawReads(dir + "/tock.db");
  std::filesystem::remove_all(dir);
  PrintResults(times, reads);
  return times.fetched == kEvents && times.http_fetched == kEvents ? 0 : 1;
}
