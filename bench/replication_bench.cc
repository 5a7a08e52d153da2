// Replication benchmark (issue 13), all in one run: two tock-server clusters on this machine
// (a and b, each on its own database file, connected both ways) and the trivial worker of
// bench_worker.h on cluster a.
//   1. Throughput: rounds of N one-activity workflows on a, alternating between a namespace
//      of a alone and a global namespace replicated to b (b applying everything meanwhile,
//      on the same cores); the ratio of the medians. Target: at least 0.7x.
//   2. Lag, during the replicated rounds: for workflows sampled as they complete on a (one
//      sampler takes the latest completion whenever it is free), the time until b has the
//      completion, seen by a long poll of b's history for the close event. Target: p99 at
//      most 2 s.
//   3. Catch-up: b's connection to a disabled (a partition), M workflows run on a, then the
//      connection enabled again; the events of those workflows divided by the time until b
//      applied every task a had queued for it (b's GetReplicationStatus against a's). Every
//      workflow is then checked on b (completed, as many events as on a). Target: at least
//      5,000 events/s.
// Usage: replication_bench TOCK_SERVER [workflows per round] [rounds] [catch-up workflows]
// Exits 1 when the clusters could not be set up or a target is missed.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "bench/bench_server.h"
#include "bench/bench_worker.h"
#include "temporal/api/operatorservice/v1/service.grpc.pb.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"
#include "tock/admin/v1/service.grpc.pb.h"

namespace {

namespace wf = temporal::api::workflowservice::v1;
namespace op = temporal::api::operatorservice::v1;
namespace adm = tock::admin::v1;
namespace enums = temporal::api::enums::v1;
using tock::bench::Clock;
using tock::bench::Percentile;

constexpr char kGlobal[] = "replicated";
constexpr char kLocal[] = "local";

struct Cluster {
  std::string name;
  tock::bench::Server server;
  std::unique_ptr<wf::WorkflowService::Stub> workflow;
  std::unique_ptr<op::OperatorService::Stub> operator_;
  std::unique_ptr<adm::AdminService::Stub> admin;
};

// Starts cluster `name` (failover versions initial, initial + 10, ...) on `dir`/name.db.
std::optional<Cluster> StartCluster(const std::string& binary, const std::string& dir,
                                    const std::string& name, int initial_version) {
  const std::string config = dir + "/" + name + ".yaml";
  std::ofstream(config) << "cluster_metadata:\n"
                        << "  enable_global_namespace: true\n"
                        << "  failover_version_increment: 10\n"
                        << "  master_cluster_name: " << name << "\n"
                        << "  current_cluster_name: " << name << "\n"
                        << "  clusters:\n"
                        << "    " << name << ": {enabled: true, initial_failover_version: "
                        << initial_version << ", rpc_address: \"127.0.0.1:0\"}\n";
  Cluster c;
  c.name = name;
  c.server = tock::bench::StartServer(binary, {"--db-file", dir + "/" + name + ".db", "--config", config});
  if (c.server.pid == 0) return std::nullopt;
  auto channel = tock::bench::OpenChannel(c.server.address);
  c.workflow = wf::WorkflowService::NewStub(channel);
  c.operator_ = op::OperatorService::NewStub(channel);
  c.admin = adm::AdminService::NewStub(channel);
  return c;
}

// `from` pulls from `to` (when `enabled`).
grpc::Status Connect(Cluster& from, const Cluster& to, bool enabled) {
  op::AddOrUpdateRemoteClusterRequest req;
  req.set_frontend_address(to.server.address);
  req.set_enable_remote_cluster_connection(enabled);
  req.set_enable_replication(true);
  grpc::ClientContext ctx;
  op::AddOrUpdateRemoteClusterResponse resp;
  return from.operator_->AddOrUpdateRemoteCluster(&ctx, req, &resp);
}

grpc::Status Register(Cluster& c, const std::string& ns, bool global) {
  wf::RegisterNamespaceRequest req;
  req.set_namespace_(ns);
  req.mutable_workflow_execution_retention_period()->set_seconds(86400);
  if (global) {
    req.set_is_global_namespace(true);
    req.add_clusters()->set_cluster_name("a");
    req.add_clusters()->set_cluster_name("b");
    req.set_active_cluster_name("a");
  }
  grpc::ClientContext ctx;
  wf::RegisterNamespaceResponse resp;
  return c.workflow->RegisterNamespace(&ctx, req, &resp);
}

bool NamespaceExists(Cluster& c, const std::string& ns) {
  wf::DescribeNamespaceRequest req;
  req.set_namespace_(ns);
  grpc::ClientContext ctx;
  wf::DescribeNamespaceResponse resp;
  return c.workflow->DescribeNamespace(&ctx, req, &resp).ok();
}

// Replication status of `c` about `remote`, or nothing when the call failed.
std::optional<adm::RemoteReplicationStatus> Status(Cluster& c, const std::string& remote) {
  adm::GetReplicationStatusRequest req;
  req.set_remote_cluster(remote);
  grpc::ClientContext ctx;
  adm::GetReplicationStatusResponse resp;
  if (!c.admin->GetReplicationStatus(&ctx, req, &resp).ok() || resp.remotes().empty()) {
    return std::nullopt;
  }
  return resp.remotes(0);
}

// Whether `receiver` applied every task `source` has queued for it (source's shards:
// their last task ids, read once before).
bool CaughtUp(Cluster& receiver, const std::string& source, const std::map<int32_t, int64_t>& max_ids) {
  std::optional<adm::RemoteReplicationStatus> status = Status(receiver, source);
  if (!status.has_value()) return false;
  std::map<int32_t, int64_t> retrieved;
  for (const auto& in : status->inbound()) retrieved[in.shard_id()] = in.last_retrieved_task_id();
  for (const auto& [shard, max_id] : max_ids) {
    if (max_id <= 0) continue;
    auto it = retrieved.find(shard);
    if (it == retrieved.end() || it->second < max_id) return false;
  }
  return true;
}

// Waits (at most `limit`) until `receiver` applied everything `source` has queued for it now.
bool WaitCaughtUp(Cluster& source, Cluster& receiver, std::chrono::seconds limit) {
  std::optional<adm::RemoteReplicationStatus> out = Status(source, receiver.name);
  if (!out.has_value()) return false;
  std::map<int32_t, int64_t> max_ids;
  for (const auto& s : out->outbound()) max_ids[s.shard_id()] = s.max_task_id();
  for (const auto deadline = Clock::now() + limit; Clock::now() < deadline;
       std::this_thread::sleep_for(std::chrono::milliseconds(5))) {
    if (CaughtUp(receiver, source.name, max_ids)) return true;
  }
  return false;
}

// Samples replication lag: whenever one of its threads is free it takes the latest
// completion on a and long-polls b's history of that workflow for the close event.
class LagSampler {
 public:
  static constexpr int kThreads = 8;

  explicit LagSampler(wf::WorkflowService::Stub& b) : b_(b) {
    for (int i = 0; i < kThreads; ++i) threads_.emplace_back([this] { Run(); });
  }
  ~LagSampler() { Stop(); }

  void Completed(const std::string& workflow_id, Clock::time_point at) {
    std::lock_guard lock(mu_);
    latest_ = {workflow_id, at};
  }
  // Lets the samples in flight end (each bounded), then returns every lag measured (ms).
  std::vector<double> Stop() {
    stopping_ = true;
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
    std::lock_guard lock(mu_);
    return lags_ms_;
  }
  int failures() const { return failures_; }

 private:
  void Run() {
    while (!stopping_) {
      std::optional<std::pair<std::string, Clock::time_point>> sample;
      {
        std::lock_guard lock(mu_);
        sample.swap(latest_);
      }
      if (!sample.has_value()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
      std::optional<double> lag = Measure(sample->first, sample->second);
      std::lock_guard lock(mu_);
      if (lag.has_value()) {
        lags_ms_.push_back(*lag);
      } else {
        ++failures_;
      }
    }
  }

  // The time from `completed` until b's history of the workflow has its close event (at
  // most 60 s; a run that b does not have yet is asked for again every 2 ms).
  std::optional<double> Measure(const std::string& workflow_id, Clock::time_point completed) {
    const auto deadline = completed + std::chrono::seconds(60);
    while (Clock::now() < deadline) {
      wf::GetWorkflowExecutionHistoryRequest req;
      req.set_namespace_(kGlobal);
      req.mutable_execution()->set_workflow_id(workflow_id);
      req.set_wait_new_event(true);
      req.set_history_event_filter_type(enums::HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT);
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
      wf::GetWorkflowExecutionHistoryResponse resp;
      grpc::Status s = b_.GetWorkflowExecutionHistory(&ctx, req, &resp);
      if (s.ok() && !resp.history().events().empty()) {
        return std::chrono::duration<double, std::milli>(Clock::now() - completed).count();
      }
      if (!s.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return std::nullopt;
  }

  wf::WorkflowService::Stub& b_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::optional<std::pair<std::string, Clock::time_point>> latest_;  // guarded by mu_
  std::vector<double> lags_ms_;                                      // guarded by mu_
  std::atomic<int> failures_{0};
  std::vector<std::thread> threads_;
};

tock::bench::LoadResult RunOn(Cluster& a, const std::string& ns, const std::string& prefix,
                              int workflows, LagSampler* sampler) {
  tock::bench::WorkflowLoad load;
  load.ns = ns;
  load.id_prefix = prefix;
  load.workflows = workflows;
  load.stub_for = [&a](int) { return a.workflow.get(); };
  if (sampler != nullptr) {
    load.on_completed = [sampler](const std::string& id, Clock::time_point at) {
      sampler->Completed(id, at);
    };
  }
  return tock::bench::RunWorkflows(load);
}

// The events of workflows prefix0..prefix(n-1) on `c`, all of them closed; -1 when one is
// missing or still open there.
int64_t ClosedEvents(Cluster& c, const std::string& ns, const std::string& prefix, int n) {
  int64_t events = 0;
  for (int i = 0; i < n; ++i) {
    wf::DescribeWorkflowExecutionRequest req;
    req.set_namespace_(ns);
    req.mutable_execution()->set_workflow_id(prefix + std::to_string(i));
    grpc::ClientContext ctx;
    wf::DescribeWorkflowExecutionResponse resp;
    if (!c.workflow->DescribeWorkflowExecution(&ctx, req, &resp).ok() ||
        resp.workflow_execution_info().status() != enums::WORKFLOW_EXECUTION_STATUS_COMPLETED) {
      return -1;
    }
    events += resp.workflow_execution_info().history_length();
  }
  return events;
}

double Median(std::vector<double> v) { return Percentile(std::move(v), 0.5); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: replication_bench TOCK_SERVER [workflows per round] [rounds] "
                 "[catch-up workflows]\n";
    return 2;
  }
  const std::string binary = argv[1];
  const int workflows = argc > 2 ? std::atoi(argv[2]) : 1000;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  const int catchup_workflows = argc > 4 ? std::atoi(argv[4]) : 2000;

  char dir_template[] = "/tmp/tock-replication-bench-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  std::vector<pid_t> pids;
  auto cleanup = [&] {
    for (pid_t pid : pids) kill(pid, SIGTERM);
    for (pid_t pid : pids) waitpid(pid, nullptr, 0);
    std::filesystem::remove_all(dir);
  };
  auto fail = [&](const std::string& why) {
    std::cerr << "replication_bench: " << why << "\n";
    cleanup();
    return 1;
  };
  std::optional<Cluster> a = StartCluster(binary, dir, "a", 1);
  if (a.has_value()) pids.push_back(a->server.pid);
  std::optional<Cluster> b = StartCluster(binary, dir, "b", 2);
  if (b.has_value()) pids.push_back(b->server.pid);
  if (!a.has_value() || !b.has_value()) return fail("tock-server did not start");
  if (grpc::Status s = Connect(*a, *b, true); !s.ok()) return fail("a -> b: " + s.error_message());
  if (grpc::Status s = Connect(*b, *a, true); !s.ok()) return fail("b -> a: " + s.error_message());
  if (grpc::Status s = Register(*a, kLocal, false); !s.ok()) return fail(s.error_message());
  if (grpc::Status s = Register(*a, kGlobal, true); !s.ok()) return fail(s.error_message());
  bool replicated = false;
  for (const auto limit = Clock::now() + std::chrono::seconds(30); !replicated && Clock::now() < limit;
       std::this_thread::sleep_for(std::chrono::milliseconds(20))) {
    replicated = NamespaceExists(*b, kGlobal);
  }
  if (!replicated) return fail("the global namespace did not reach b within 30 s");

  std::printf("replication_bench: %d rounds of %d one-activity workflows on cluster a, "
              "alternating a local namespace and one replicated to b\n",
              rounds, workflows);
  std::vector<double> local_rates, replicated_rates, lags_ms;
  int lag_failures = 0;
  for (int r = 0; r < rounds; ++r) {
    const tock::bench::LoadResult local =
        RunOn(*a, kLocal, "local-" + std::to_string(r) + "-", workflows, nullptr);
    LagSampler sampler(*b->workflow);
    const tock::bench::LoadResult global =
        RunOn(*a, kGlobal, "replicated-" + std::to_string(r) + "-", workflows, &sampler);
    std::vector<double> lags = sampler.Stop();
    lag_failures += sampler.failures();
    if (local.completed != workflows || global.completed != workflows) {
      return fail("a round did not complete every workflow within 5 minutes");
    }
    if (!WaitCaughtUp(*a, *b, std::chrono::seconds(60))) {
      return fail("b did not catch up within 60 s after a round");
    }
    local_rates.push_back(local.rate());
    replicated_rates.push_back(global.rate());
    lags_ms.insert(lags_ms.end(), lags.begin(), lags.end());
    std::printf("  round %d: local %.0f workflows/s, replicated %.0f workflows/s, %zu lag samples "
                "(p50 %.0f ms, p99 %.0f ms)\n",
                r + 1, local.rate(), global.rate(), lags.size(), Percentile(lags, 0.5),
                Percentile(lags, 0.99));
  }
  const double ratio = Median(replicated_rates) / Median(local_rates);
  const double lag_p99 = Percentile(lags_ms, 0.99);

  // The partition: b stops pulling from a while a runs the catch-up workflows.
  if (grpc::Status s = Connect(*b, *a, false); !s.ok()) return fail("disabling b -> a: " + s.error_message());
  const tock::bench::LoadResult backlog = RunOn(*a, kGlobal, "catchup-", catchup_workflows, nullptr);
  if (backlog.completed != catchup_workflows) return fail("the catch-up workflows did not complete");
  const auto reconnected = Clock::now();
  if (grpc::Status s = Connect(*b, *a, true); !s.ok()) return fail("enabling b -> a: " + s.error_message());
  if (!WaitCaughtUp(*a, *b, std::chrono::seconds(300))) return fail("b did not catch up within 300 s");
  const double catchup_seconds = std::chrono::duration<double>(Clock::now() - reconnected).count();
  const int64_t events_a = ClosedEvents(*a, kGlobal, "catchup-", catchup_workflows);
  const int64_t events_b = ClosedEvents(*b, kGlobal, "catchup-", catchup_workflows);
  if (events_b < 0 || events_b != events_a) {
    return fail("after the catch-up b does not have every workflow as a has it");
  }
  const double catchup_rate = events_b / catchup_seconds;

  const bool throughput_ok = ratio >= 0.7;
  const bool lag_ok = !lags_ms.empty() && lag_p99 <= 2000 && lag_failures == 0;
  const bool catchup_ok = catchup_rate >= 5000;
  std::printf("throughput: replicated %.0f vs local %.0f workflows/s (medians): %.2fx "
              "(target >= 0.7x) %s\n",
              Median(replicated_rates), Median(local_rates), ratio, throughput_ok ? "PASS" : "FAIL");
  std::printf("lag: p50 %.0f ms, p99 %.0f ms over %zu samples, %d not seen within 60 s "
              "(target p99 <= 2000 ms) %s\n",
              Percentile(lags_ms, 0.5), lag_p99, lags_ms.size(), lag_failures, lag_ok ? "PASS" : "FAIL");
  std::printf("catch-up: %lld events of %d workflows applied in %.2f s: %.0f events/s "
              "(target >= 5000) %s\n",
              static_cast<long long>(events_b), catchup_workflows, catchup_seconds, catchup_rate,
              catchup_ok ? "PASS" : "FAIL");
  cleanup();
  return throughput_ok && lag_ok && catchup_ok ? 0 : 1;
}
