// The benchmarks' trivial worker, speaking the API directly: starters start N one-activity
// workflows (start -> workflow task -> activity -> workflow task -> complete) while workflow
// and activity pollers drive them to completion; it reports how many completed, how long it
// took and each workflow's start-to-close latency.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "temporal/api/workflowservice/v1/service.grpc.pb.h"

namespace tock::bench {

using Clock = std::chrono::steady_clock;
using WorkflowStub = temporal::api::workflowservice::v1::WorkflowService::Stub;

inline double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

// Calls `call` until it is not a transient failure (bounded: 12 tries, 5 ms doubling to
// 200 ms between them), as an SDK worker retries its calls.
template <typename Call>
grpc::Status WithRetries(Call call) {
  grpc::Status s;
  auto wait = std::chrono::milliseconds(5);
  for (int attempt = 0; attempt < 12; ++attempt) {
    s = call();
    if (s.error_code() != grpc::StatusCode::UNAVAILABLE &&
        s.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
      return s;
    }
    std::this_thread::sleep_for(wait);
    wait = std::min(wait * 2, std::chrono::milliseconds(200));
  }
  return s;
}

// The trivial worker's decision: schedule the activity first, complete once it returned. It
// asks for the activity eagerly, as the SDKs do by default: a server that hands it back in
// the completion's answer saves its trip through the activity queue.
// A worker of a deployment version says which version it is on every poll and completion.
struct WorkerVersion {
  std::string deployment;  // empty: an unversioned worker
  std::string build_id;
  bool versioned() const { return !deployment.empty(); }
  void Fill(temporal::api::deployment::v1::WorkerDeploymentOptions* options) const {
    options->set_deployment_name(deployment);
    options->set_build_id(build_id);
    options->set_worker_versioning_mode(temporal::api::enums::v1::WORKER_VERSIONING_MODE_VERSIONED);
  }
};

inline temporal::api::workflowservice::v1::RespondWorkflowTaskCompletedRequest Decide(
    const std::string& ns, const temporal::api::workflowservice::v1::PollWorkflowTaskQueueResponse& task,
    const WorkerVersion& version = {}) {
  namespace enums = temporal::api::enums::v1;
  temporal::api::workflowservice::v1::RespondWorkflowTaskCompletedRequest req;
  req.set_namespace_(ns);
  req.set_task_token(task.task_token());
  req.set_identity("bench");
  if (version.versioned()) {
    // Pinned: the routing path that checks the run's own version on every task.
    version.Fill(req.mutable_deployment_options());
    req.set_versioning_behavior(enums::VERSIONING_BEHAVIOR_PINNED);
  }
  bool activity_done = false;
  for (const auto& e : task.history().events()) {
    activity_done |= e.event_type() == enums::EVENT_TYPE_ACTIVITY_TASK_COMPLETED;
  }
  auto* command = req.add_commands();
  if (activity_done) {
    command->set_command_type(enums::COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION);
    command->mutable_complete_workflow_execution_command_attributes();
  } else {
    command->set_command_type(enums::COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK);
    auto* a = command->mutable_schedule_activity_task_command_attributes();
    a->set_activity_id("1");
    a->mutable_activity_type()->set_name("work");
    a->mutable_start_to_close_timeout()->set_seconds(30);
    a->set_request_eager_execution(true);
  }
  return req;
}

// Works an activity task: completes it at once (the trivial activity).
inline void CompleteActivity(WorkflowStub* stub, const std::string& ns,
                             const temporal::api::workflowservice::v1::PollActivityTaskQueueResponse& task) {
  namespace wf = temporal::api::workflowservice::v1;
  wf::RespondActivityTaskCompletedRequest req;
  req.set_namespace_(ns);
  req.set_task_token(task.task_token());
  req.set_identity("bench");
  WithRetries([&] {
    grpc::ClientContext ctx;
    wf::RespondActivityTaskCompletedResponse resp;
    return stub->RespondActivityTaskCompleted(&ctx, req, &resp);
  });
}

struct WorkflowLoad {
  std::string ns = "default";
  std::string queue = "bench";
  std::string id_prefix = "bench-";  // workflow ids are id_prefix + 0..workflows-1
  int workflows = 0;
  int pollers = 8;  // of each kind
  int starters = 8;
  // Versioned workers: their version is made current before the first start.
  WorkerVersion version;
  // The stub caller k uses (starter k, workflow poller k, activity poller k + 1).
  std::function<WorkflowStub*(int)> stub_for;
  // Called once per workflow when the worker's completing call returned (optional).
  std::function<void(const std::string& workflow_id, Clock::time_point)> on_completed;
};

// Makes `version` its deployment's current version once its pollers registered it (their
// first poll does); false if that did not happen within 30 s.
inline bool MakeCurrent(WorkflowStub* stub, const std::string& ns, const WorkerVersion& version) {
  namespace wf = temporal::api::workflowservice::v1;
  wf::SetWorkerDeploymentCurrentVersionRequest req;
  req.set_namespace_(ns);
  req.set_deployment_name(version.deployment);
  req.set_build_id(version.build_id);
  req.set_identity("bench");
  grpc::Status s;
  for (const auto limit = Clock::now() + std::chrono::seconds(30); Clock::now() < limit;
       std::this_thread::sleep_for(std::chrono::milliseconds(50))) {
    grpc::ClientContext ctx;
    wf::SetWorkerDeploymentCurrentVersionResponse resp;
    s = stub->SetWorkerDeploymentCurrentVersion(&ctx, req, &resp);
    if (s.ok()) return true;
  }
  std::fprintf(stderr, "SetWorkerDeploymentCurrentVersion: %s\n", s.error_message().c_str());
  return false;
}

struct LoadResult {
  int completed = 0;
  double seconds = 0;  // from the first start to the last completion (or the 5 min limit)
  std::vector<double> latencies_ms;
  double rate() const { return seconds > 0 ? completed / seconds : 0; }
};

inline LoadResult RunWorkflows(const WorkflowLoad& load) {
  namespace wf = temporal::api::workflowservice::v1;
  namespace enums = temporal::api::enums::v1;
  LoadResult result;
  std::mutex mu;
  std::map<std::string, Clock::time_point> started_at;
  std::set<std::string> finished;
  std::atomic<int> completed{0};
  std::atomic<bool> done{false};

  auto workflow_poller = [&](WorkflowStub* stub) {
    while (!done) {
      wf::PollWorkflowTaskQueueRequest poll;
      poll.set_namespace_(load.ns);
      poll.mutable_task_queue()->set_name(load.queue);
      poll.set_identity("bench");
      if (load.version.versioned()) load.version.Fill(poll.mutable_deployment_options());
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
      wf::PollWorkflowTaskQueueResponse task;
      if (!stub->PollWorkflowTaskQueue(&ctx, poll, &task).ok() || task.task_token().empty()) continue;
      wf::RespondWorkflowTaskCompletedRequest req = Decide(load.ns, task, load.version);
      wf::RespondWorkflowTaskCompletedResponse resp;
      grpc::Status s = WithRetries([&] {
        grpc::ClientContext rctx;
        resp.Clear();
        return stub->RespondWorkflowTaskCompleted(&rctx, req, &resp);
      });
      if (!s.ok() && s.error_code() != grpc::StatusCode::NOT_FOUND) continue;
      // Activities handed back eagerly are this worker's to run.
      for (const auto& activity : resp.activity_tasks()) CompleteActivity(stub, load.ns, activity);
      if (req.commands(0).command_type() != enums::COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION) continue;
      const auto now = Clock::now();
      const std::string& id = task.workflow_execution().workflow_id();
      {
        std::lock_guard lock(mu);
        if (!finished.insert(id).second) continue;
        result.latencies_ms.push_back(
            std::chrono::duration<double, std::milli>(now - started_at[id]).count());
      }
      if (load.on_completed) load.on_completed(id, now);
      if (++completed == load.workflows) done = true;
    }
  };
  auto activity_poller = [&](WorkflowStub* stub) {
    while (!done) {
      wf::PollActivityTaskQueueRequest poll;
      poll.set_namespace_(load.ns);
      poll.mutable_task_queue()->set_name(load.queue);
      poll.set_identity("bench");
      if (load.version.versioned()) load.version.Fill(poll.mutable_deployment_options());
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
      wf::PollActivityTaskQueueResponse task;
      if (!stub->PollActivityTaskQueue(&ctx, poll, &task).ok() || task.task_token().empty()) continue;
      CompleteActivity(stub, load.ns, task);
    }
  };

  std::vector<std::thread> threads;
  for (int i = 0; i < load.pollers; ++i) threads.emplace_back(workflow_poller, load.stub_for(i));
  for (int i = 0; i < load.pollers; ++i) threads.emplace_back(activity_poller, load.stub_for(i + 1));
  if (load.version.versioned() && !MakeCurrent(load.stub_for(0), load.ns, load.version)) {
    done = true;
    for (auto& t : threads) t.join();
    return result;
  }
  const auto begin = Clock::now();
  std::vector<std::thread> starters;
  std::atomic<int> next{0};
  for (int st = 0; st < load.starters; ++st) {
    starters.emplace_back([&, stub = load.stub_for(st)] {
      for (int i = next++; i < load.workflows; i = next++) {
        wf::StartWorkflowExecutionRequest req;
        req.set_namespace_(load.ns);
        req.set_workflow_id(load.id_prefix + std::to_string(i));
        req.mutable_workflow_type()->set_name("bench");
        req.mutable_task_queue()->set_name(load.queue);
        req.set_request_id(load.id_prefix + "req-" + std::to_string(i));
        {
          std::lock_guard lock(mu);
          started_at[req.workflow_id()] = Clock::now();
        }
        WithRetries([&] {
          grpc::ClientContext ctx;
          wf::StartWorkflowExecutionResponse resp;
          return stub->StartWorkflowExecution(&ctx, req, &resp);
        });
      }
    });
  }
  for (auto& t : starters) t.join();
  const auto limit = Clock::now() + std::chrono::minutes(5);
  while (!done && Clock::now() < limit) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  result.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  result.completed = completed;
  done = true;
  for (auto& t : threads) t.join();
  return result;
}

}  // namespace tock::bench
