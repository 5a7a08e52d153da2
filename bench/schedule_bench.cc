// 200 schedules firing every second for 60 s on one tock-server (real clock, SQLite).
//
//   schedule_bench TOCK_SERVER [SCHEDULES=200] [SECONDS=60]
//
// Each schedule starts a workflow every second (overlap AllowAll, on a task queue nobody
// polls) from a common start time for SECONDS seconds. Afterwards the runs are listed: every
// action must have started exactly once, and an action's lateness is its run's start time
// minus its scheduled (nominal) time, which the workflow id carries. Prints the count, the
// p50/p99/max lateness, and the ratio p99 / 500 ms (issue 12's target: at most 1).
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "bench/bench_server.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"

namespace wf = temporal::api::workflowservice::v1;
using Stub = wf::WorkflowService::Stub;

namespace {

constexpr char kType[] = "bench-scheduled";

bool CreateSchedule(Stub& stub, int i, absl::Time start, int seconds) {
  wf::CreateScheduleRequest req;
  req.set_namespace_("default");
  req.set_schedule_id(absl::StrCat("bench-", i));
  req.set_request_id(absl::StrCat("bench-", i));
  auto* spec = req.mutable_schedule()->mutable_spec();
  spec->add_interval()->mutable_interval()->set_seconds(1);
  spec->mutable_start_time()->set_seconds(absl::ToUnixSeconds(start));
  spec->mutable_end_time()->set_seconds(absl::ToUnixSeconds(start) + seconds - 1);
  auto* action = req.mutable_schedule()->mutable_action()->mutable_start_workflow();
  action->set_workflow_id(absl::StrCat("bench-", i));
  action->mutable_workflow_type()->set_name(kType);
  action->mutable_task_queue()->set_name("nobody-polls");
  req.mutable_schedule()->mutable_policies()->set_overlap_policy(
      temporal::api::enums::v1::SCHEDULE_OVERLAP_POLICY_ALLOW_ALL);
  grpc::ClientContext ctx;
  wf::CreateScheduleResponse out;
  grpc::Status s = stub.CreateSchedule(&ctx, req, &out);
  if (!s.ok()) std::fprintf(stderr, "CreateSchedule %d: %s\n", i, s.error_message().c_str());
  return s.ok();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: schedule_bench TOCK_SERVER [SCHEDULES=200] [SECONDS=60]\n");
    return 2;
  }
  const int schedules = argc > 2 ? std::atoi(argv[2]) : 200;
  const int seconds = argc > 3 ? std::atoi(argv[3]) : 60;
  const std::string dir = std::filesystem::temp_directory_path() /
                          ("schedule_bench." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  tock::bench::Server server = tock::bench::StartServer(argv[1], {"--db-file", dir + "/tock.db"});
  if (server.pid == 0) {
    std::fprintf(stderr, "tock-server did not start\n");
    return 1;
  }
  auto stub = wf::WorkflowService::NewStub(tock::bench::OpenChannel(server.address));
  // A common start a few seconds ahead (whole seconds), so every schedule has made its first
  // action's time before it comes.
  const absl::Time start = absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now()) + 5);
  int created = 0;
  for (int i = 0; i < schedules; ++i) created += CreateSchedule(*stub, i, start, seconds) ? 1 : 0;
  if (absl::Now() >= start) std::fprintf(stderr, "warning: creating the schedules took past the start\n");
  // The last action is due at start + seconds - 1; then some slack for it to be recorded.
  std::this_thread::sleep_for(absl::ToChronoMilliseconds(start + absl::Seconds(seconds + 3) - absl::Now()));

  // Every run of the type: its workflow id (with the nominal time) and start time.
  std::vector<double> lateness_ms;
  std::set<std::string> ids;
  int duplicates = 0;
  wf::ListWorkflowExecutionsRequest list;
  list.set_namespace_("default");
  list.set_page_size(1000);
  list.set_query(absl::StrCat("WorkflowType = '", kType, "'"));
  do {
    grpc::ClientContext ctx;
    wf::ListWorkflowExecutionsResponse page;
    grpc::Status s = stub->ListWorkflowExecutions(&ctx, list, &page);
    if (!s.ok()) {
      std::fprintf(stderr, "ListWorkflowExecutions: %s\n", s.error_message().c_str());
      break;
    }
    for (const auto& e : page.executions()) {
      const std::string& id = e.execution().workflow_id();
      if (!ids.insert(id).second) ++duplicates;
      absl::Time nominal;
      std::string err;
      if (id.size() < 20 || !absl::ParseTime(absl::RFC3339_full, id.substr(id.size() - 20), &nominal, &err)) {
        continue;
      }
      const absl::Time started =
          absl::FromUnixSeconds(e.start_time().seconds()) + absl::Nanoseconds(e.start_time().nanos());
      lateness_ms.push_back(absl::ToDoubleMilliseconds(started - nominal));
    }
    list.set_next_page_token(page.next_page_token());
  } while (!list.next_page_token().empty());

  kill(server.pid, SIGTERM);
  waitpid(server.pid, nullptr, 0);
  std::filesystem::remove_all(dir);

  const long expected = static_cast<long>(created) * seconds;
  const double p50 = Percentile(lateness_ms, 0.50), p99 = Percentile(lateness_ms, 0.99);
  const double max = lateness_ms.empty() ? 0 : *std::max_element(lateness_ms.begin(), lateness_ms.end());
  std::printf("schedules: %d created, every second for %d s: %ld actions expected\n", created, seconds,
              expected);
  std::printf("actions started: %zu (%d duplicate ids), missing: %ld\n", ids.size(), duplicates,
              expected - static_cast<long>(ids.size()));
  std::printf("lateness: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", p50, p99, max);
  std::printf("ratio p99 lateness / 500 ms target: %.2f (target <= 1)\n", p99 / 500.0);
  const bool ok = created == schedules && static_cast<long>(ids.size()) == expected && duplicates == 0 &&
                  p99 <= 500.0;
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
