// `tock shell` in a real pseudo-terminal (tmux): TAB completion of a namespace from the
// server, describe, \output json, the history inspector (event, find, timeline, branches),
// Ctrl-C during `follow` (the session survives), exit, and the history file written.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "lib/client/connection.h"
#include "tests/support/process.h"

namespace tock::testing {
namespace {

namespace wf = temporal::api::workflowservice::v1;
namespace enums = temporal::api::enums::v1;
using Clock = std::chrono::steady_clock;

// One tmux server of its own (-L), so the test never touches a user's sessions.
class Tmux {
 public:
  explicit Tmux(std::string socket) : socket_(std::move(socket)) {}
  ~Tmux() { Run({"kill-server"}); }

  ProcessResult Run(std::vector<std::string> args) {
    args.insert(args.begin(), {TMUX_BIN, "-L", socket_});
    return RunProcess(args, {}, "", std::chrono::seconds(10));
  }
  void Start(const std::string& command) {
    ProcessResult r = Run({"new-session", "-d", "-s", "t", "-x", "180", "-y", "50", command});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Keep the pane after the command exits, so the test can see that it did.
    Run({"set-option", "-t", "t", "remain-on-exit", "on"});
  }
  void Keys(const std::vector<std::string>& keys) {
    std::vector<std::string> args = {"send-keys", "-t", "t"};
    args.insert(args.end(), keys.begin(), keys.end());
    Run(args);
  }
  void Type(const std::string& text) { Keys({"-l", text}); }
  void Line(const std::string& text) {
    Type(text);
    Keys({"Enter"});
  }
  // The whole pane with its scrollback, wrapped lines joined.
  std::string Screen() { return Run({"capture-pane", "-p", "-J", "-t", "t", "-S", "-3000"}).out; }
  // Waits (at most 10 s) until the screen holds `count` matches of `pattern`.
  std::string WaitFor(const std::string& pattern, int count = 1) {
    const std::regex re(pattern);
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    std::string screen;
    while (Clock::now() < deadline) {
      screen = Screen();
      auto begin = std::sregex_iterator(screen.begin(), screen.end(), re);
      if (std::distance(begin, std::sregex_iterator()) >= count) return screen;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "the screen never showed " << count << " x /" << pattern << "/:\n" << screen;
    return screen;
  }
  bool PaneDead() { return Run({"display-message", "-p", "-t", "t", "#{pane_dead}"}).out == "1\n"; }

 private:
  std::string socket_;
};

// Plays a worker through the API: schedules activity "charge" and a 200 ms timer, completes
// the activity, then completes the workflow once the timer has fired.
void RunWorkflowToCompletion(client::Connection& c, const std::string& workflow_id) {
  wf::StartWorkflowExecutionRequest start;
  start.set_namespace_("default");
  start.set_workflow_id(workflow_id);
  start.mutable_workflow_type()->set_name("order");
  start.mutable_task_queue()->set_name("repl-q");
  start.set_request_id(workflow_id);
  ASSERT_TRUE(c.Call(&wf::WorkflowService::Stub::StartWorkflowExecution, c.workflow(), start).ok());
  auto poll_workflow_task = [&] {
    wf::PollWorkflowTaskQueueRequest poll;
    poll.set_namespace_("default");
    poll.mutable_task_queue()->set_name("repl-q");
    return c.Call(&wf::WorkflowService::Stub::PollWorkflowTaskQueue, c.workflow(), poll);
  };
  auto task = poll_workflow_task();
  ASSERT_TRUE(task.ok() && !task->task_token().empty()) << task.status();
  wf::RespondWorkflowTaskCompletedRequest first;
  first.set_namespace_("default");
  first.set_task_token(task->task_token());
  auto* activity = first.add_commands();
  activity->set_command_type(enums::COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK);
  auto* a = activity->mutable_schedule_activity_task_command_attributes();
  a->set_activity_id("1");
  a->mutable_activity_type()->set_name("charge");
  a->mutable_start_to_close_timeout()->set_seconds(30);
  auto* timer = first.add_commands();
  timer->set_command_type(enums::COMMAND_TYPE_START_TIMER);
  timer->mutable_start_timer_command_attributes()->set_timer_id("t1");
  timer->mutable_start_timer_command_attributes()->mutable_start_to_fire_timeout()->set_nanos(
      200'000'000);
  ASSERT_TRUE(
      c.Call(&wf::WorkflowService::Stub::RespondWorkflowTaskCompleted, c.workflow(), first).ok());

  wf::PollActivityTaskQueueRequest poll_activity;
  poll_activity.set_namespace_("default");
  poll_activity.mutable_task_queue()->set_name("repl-q");
  auto activity_task =
      c.Call(&wf::WorkflowService::Stub::PollActivityTaskQueue, c.workflow(), poll_activity);
  ASSERT_TRUE(activity_task.ok() && !activity_task->task_token().empty());
  wf::RespondActivityTaskCompletedRequest done;
  done.set_namespace_("default");
  done.set_task_token(activity_task->task_token());
  ASSERT_TRUE(
      c.Call(&wf::WorkflowService::Stub::RespondActivityTaskCompleted, c.workflow(), done).ok());

  // Workflow tasks until the timer has fired, then complete.
  for (int round = 0; round < 10; ++round) {
    task = poll_workflow_task();
    ASSERT_TRUE(task.ok() && !task->task_token().empty());
    bool fired = false;
    for (const auto& e : task->history().events()) {
      fired |= e.event_type() == enums::EVENT_TYPE_TIMER_FIRED;
    }
    wf::RespondWorkflowTaskCompletedRequest next;
    next.set_namespace_("default");
    next.set_task_token(task->task_token());
    if (fired) {
      next.add_commands()->set_command_type(enums::COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION);
    }
    ASSERT_TRUE(
        c.Call(&wf::WorkflowService::Stub::RespondWorkflowTaskCompleted, c.workflow(), next).ok());
    if (fired) return;
  }
  FAIL() << "the timer never fired";
}

TEST(ReplTest, CompletionDescribeJsonInspectorFollowInterruptAndHistoryFile) {
  TempDir dir;
  ServerProcess server(TOCK_SERVER_BIN);
  ASSERT_TRUE(server.Start({"--db-file", dir.File("tock.db")})) << server.error();
  const std::string tock = TOCK_CLI_BIN;
  auto cli = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {tock, "--address", server.address()});
    return RunProcess(args);
  };
  ASSERT_EQ(cli({"namespace", "register", "inspect-zebra", "--retention", "3d"}).exit_code, 0);
  client::ConnectionOptions options;
  options.address = server.address();
  auto connection = client::Connection::Open(options);
  ASSERT_TRUE(connection.ok());
  RunWorkflowToCompletion(**connection, "order-1");
  ASSERT_EQ(
      cli({"workflow", "start", "--type", "waiter", "--task-queue", "nobody", "--id", "follow-1"})
          .exit_code,
      0);

  Tmux tmux("tock-repl-test-" + std::to_string(getpid()));
  const std::string state = dir.File("state");
  tmux.Start("env TERM=xterm XDG_STATE_HOME=" + state + " " + tock + " --address " +
             server.address() + " shell");
  const std::string prompt = "tock " + server.address() + " default> ";
  tmux.WaitFor(std::regex_replace(prompt, std::regex(R"([.\[\]])"), R"(\$&)"));

  // TAB completes a namespace name fetched from the server.
  tmux.Type("namespace describe inspect-z");
  tmux.Keys({"Tab"});
  tmux.WaitFor("namespace describe inspect-zebra");
  tmux.Keys({"Enter"});
  tmux.WaitFor("Name: +inspect-zebra");
  tmux.WaitFor("Retention: +3d");

  // The same through \output json: the JSON of the API.
  tmux.Line("\\output json");
  tmux.Line("namespace describe inspect-zebra");
  tmux.WaitFor(R"("name": "inspect-zebra")");

  // The history inspector.
  tmux.Line("\\output table");
  tmux.Line("open order-1");
  tmux.WaitFor("history of order-1: \\d+ events");
  tmux.WaitFor("default \\[order-1\\]> ");
  tmux.Line("event 1");
  tmux.WaitFor("workflowExecutionStartedEventAttributes.workflowType.name: +order");
  tmux.Line("find TimerFired");
  tmux.WaitFor("Timer Fired +startedEventId=");
  tmux.Line("timeline");
  tmux.WaitFor("activity +charge #1 +\\+[0-9.]+s +[0-9.]+s +1 +Completed +\\|[ =]*=[ =]*\\|");
  tmux.WaitFor("timer +t1 \\(200ms\\) .* Fired +\\|");
  tmux.WaitFor("workflow +order .* Completed");
  // The run's branches from the server: one, current, never forked (empty token).
  tmux.Line("branches");
  tmux.WaitFor("BRANCH +CURRENT +TOKEN +EVENTS +VERSION");
  tmux.WaitFor("\n0 +yes +- +1-\\d+ +0 *\n");
  tmux.WaitFor("last write version 0");
  // export writes the history (payloads) to a new file its owner's only.
  const std::string exported = dir.File("order-1.json");
  tmux.Line("export " + exported);
  tmux.WaitFor("wrote \\d+ events to ");
  struct stat exported_stat {};
  ASSERT_EQ(stat(exported.c_str(), &exported_stat), 0);
  EXPECT_EQ(exported_stat.st_mode & 0777, 0600u);
  tmux.Line("back");

  // follow streams a new event; Ctrl-C stops it and the session goes on.
  tmux.Line("open follow-1");
  tmux.WaitFor("default \\[follow-1\\]> ");
  tmux.Line("follow");  // prints only events after those already loaded
  ASSERT_EQ(cli({"workflow", "signal", "--workflow-id", "follow-1", "--name", "poke"}).exit_code,
            0);
  tmux.WaitFor("Workflow Execution Signaled +.*signalName=poke");
  tmux.Keys({"C-c"});
  tmux.WaitFor("default \\[follow-1\\]> ", 2);
  tmux.Line("find poke");
  tmux.WaitFor("Workflow Execution Signaled", 2);
  tmux.Line("back");

  // use switches the session's namespace (the prompt shows it); an unknown one is refused.
  tmux.Line("use no-such-ns");
  tmux.WaitFor("error: Namespace no-such-ns is not found\\.");
  tmux.Line("use inspect-zebra");
  tmux.WaitFor("inspect-zebra> ");
  tmux.Line("\\timing on");
  tmux.Line("namespace describe -o jsonl");
  tmux.WaitFor(R"("name":"inspect-zebra")");
  tmux.WaitFor("Time: [0-9.]+ ms");

  // A failing command prints its error and the session goes on.
  tmux.Line("namespace describe no-such-namespace");
  tmux.WaitFor("error: Namespace no-such-namespace is not found\\.");
  tmux.Line("exit");
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!tmux.PaneDead() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(tmux.PaneDead()) << tmux.Screen();

  // Command lines may hold secrets: the history and the directory Tock made for it are the
  // owner's only.
  struct stat st {};
  ASSERT_EQ(stat((state + "/tock/history").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat((state + "/tock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  std::ifstream history(state + "/tock/history");
  ASSERT_TRUE(history.good()) << "no history file under XDG_STATE_HOME";
  std::stringstream raw;
  raw << history.rdbuf();
  // libedit writes the file in vis(3) encoding: a space is \040.
  std::stringstream lines;
  lines << std::regex_replace(raw.str(), std::regex(R"(\\040)"), " ");
  EXPECT_NE(lines.str().find("namespace describe inspect-zebra"), std::string::npos) << lines.str();
  EXPECT_NE(lines.str().find("open order-1"), std::string::npos) << lines.str();
}

TEST(ReplTest, BareTockOnATerminalOpensTheShellWithReverseSearch) {
  TempDir dir;
  ServerProcess server(TOCK_SERVER_BIN);
  ASSERT_TRUE(server.Start({})) << server.error();
  Tmux tmux("tock-repl-bare-" + std::to_string(getpid()));
  tmux.Start("env TERM=xterm XDG_STATE_HOME=" + dir.File("state") +
             " TOCK_ADDRESS=" + server.address() + " " + TOCK_CLI_BIN);
  tmux.WaitFor("default> ");
  tmux.Line("cluster describe -o jsonl");
  tmux.WaitFor(R"("currentClusterName":"active")");
  tmux.Line("namespace list -o jsonl");
  tmux.WaitFor(R"("name":"default")");
  // The third prompt: keys sent before it could meet the terminal set-up of the new line
  // (libedit may drop input typed ahead of it) on a loaded machine.
  tmux.WaitFor("default> ", 3);
  // Ctrl-R finds the earlier line by a fragment; Enter runs it again.
  tmux.Keys({"C-r"});
  tmux.Type("clus");
  tmux.Keys({"Enter"});
  tmux.WaitFor(R"("currentClusterName":"active")", 2);
  tmux.Line("exit");
}

}  // namespace
}  // namespace tock::testing
