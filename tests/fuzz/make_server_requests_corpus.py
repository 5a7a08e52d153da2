#!/usr/bin/env python3
"""Writes the seed corpus of the server_requests fuzz target (tests/fuzz/corpus/server_requests).

Each file is one byte (the method's index among the unary methods of WorkflowService,
OperatorService and tock.admin.v1.AdminService, sorted by "/service/method" path, as
server_requests.cc orders them) followed by the request encoded by `protoc --encode` from
the text format below.

    tests/fuzz/make_server_requests_corpus.py BUILD_DIR   (a configured build directory:
                                                           its temporal-api-protos/)
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/fuzz/corpus/server_requests"

SERVICES = [
    ("temporal/api/workflowservice/v1/service.proto", "temporal.api.workflowservice.v1", "WorkflowService"),
    ("temporal/api/operatorservice/v1/service.proto", "temporal.api.operatorservice.v1", "OperatorService"),
    ("tock/admin/v1/service.proto", "tock.admin.v1", "AdminService"),
]

START = """namespace: "default" workflow_id: "wf-1" workflow_type { name: "order" }
task_queue { name: "q" } identity: "fuzz" request_id: "r-1"
input { payloads { metadata { key: "encoding" value: "json/plain" } data: "{\\"a\\":1}" } }
workflow_execution_timeout { seconds: 3600 } workflow_run_timeout { seconds: 600 }
workflow_task_timeout { seconds: 10 }
retry_policy { initial_interval { seconds: 1 } backoff_coefficient: 2 maximum_attempts: 3 }
memo { fields { key: "m" value { data: "x" } } }
header { fields { key: "h" value { data: "y" } } }"""

SEEDS = [
    ("register_namespace", "RegisterNamespace",
     'namespace: "orders" description: "d" owner_email: "a@b.c" '
     'workflow_execution_retention_period { seconds: 86400 }'),
    ("register_archival", "RegisterNamespace",
     'namespace: "arch" workflow_execution_retention_period { seconds: 86400 } '
     'history_archival_state: ARCHIVAL_STATE_ENABLED history_archival_uri: "file:///tmp/x"'),
    ("describe_namespace", "DescribeNamespace", 'namespace: "default"'),
    ("describe_namespace_id", "DescribeNamespace", 'id: "not-a-uuid"'),
    ("list_namespaces", "ListNamespaces", "page_size: 2"),
    ("update_namespace", "UpdateNamespace",
     'namespace: "orders" update_info { description: "e" data { key: "k" value: "v" } } '
     'config { workflow_execution_retention_ttl { seconds: 172800 } }'),
    ("deprecate_namespace", "DeprecateNamespace", 'namespace: "orders"'),
    ("start_workflow", "StartWorkflowExecution", START),
    ("start_cron", "StartWorkflowExecution",
     START.replace("wf-1", "wf-cron") + ' cron_schedule: "*/5 * * * *"'),
    ("start_bad_timeouts", "StartWorkflowExecution",
     START.replace("wf-1", "wf-bad").replace("workflow_run_timeout { seconds: 600 }",
                                             "workflow_run_timeout { seconds: -1 nanos: 2000000000 }")),
    ("start_delay", "StartWorkflowExecution",
     START.replace("wf-1", "wf-delay") + " workflow_start_delay { seconds: 5 }"),
    ("signal", "SignalWorkflowExecution",
     'namespace: "default" workflow_execution { workflow_id: "wf-1" } signal_name: "go" '
     'input { payloads { data: "1" } } identity: "fuzz"'),
    ("signal_with_start", "SignalWithStartWorkflowExecution",
     'namespace: "default" workflow_id: "wf-sws" workflow_type { name: "order" } '
     'task_queue { name: "q" } signal_name: "go" identity: "fuzz"'),
    ("history", "GetWorkflowExecutionHistory",
     'namespace: "default" execution { workflow_id: "wf-1" } maximum_page_size: 2'),
    ("history_wait", "GetWorkflowExecutionHistory",
     'namespace: "default" execution { workflow_id: "wf-1" } wait_new_event: true '
     "history_event_filter_type: HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT"),
    ("history_reverse", "GetWorkflowExecutionHistoryReverse",
     'namespace: "default" execution { workflow_id: "wf-1" } maximum_page_size: 1'),
    ("describe_workflow", "DescribeWorkflowExecution",
     'namespace: "default" execution { workflow_id: "wf-1" }'),
    ("poll_workflow_task", "PollWorkflowTaskQueue",
     'namespace: "default" task_queue { name: "q" } identity: "fuzz"'),
    ("poll_activity_task", "PollActivityTaskQueue",
     'namespace: "default" task_queue { name: "q" } identity: "fuzz"'),
    ("complete_workflow_task", "RespondWorkflowTaskCompleted",
     'task_token: "\\001\\002bogus" identity: "fuzz" commands { command_type: '
     "COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK schedule_activity_task_command_attributes { "
     'activity_id: "a" activity_type { name: "act" } task_queue { name: "q" } '
     "start_to_close_timeout { seconds: 5 } } } commands { command_type: "
     "COMMAND_TYPE_START_TIMER start_timer_command_attributes { timer_id: \"t\" "
     "start_to_fire_timeout { seconds: 1 } } }"),
    ("fail_workflow_task", "RespondWorkflowTaskFailed",
     'task_token: "x" cause: WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND failure { message: "m" }'),
    ("complete_activity", "RespondActivityTaskCompleted",
     'task_token: "x" result { payloads { data: "2" } }'),
    ("complete_activity_by_id", "RespondActivityTaskCompletedById",
     'namespace: "default" workflow_id: "wf-1" activity_id: "a"'),
    ("heartbeat", "RecordActivityTaskHeartbeat", 'task_token: "x" details { payloads { data: "3" } }'),
    ("cancel", "RequestCancelWorkflowExecution",
     'namespace: "default" workflow_execution { workflow_id: "wf-1" } identity: "fuzz"'),
    ("terminate", "TerminateWorkflowExecution",
     'namespace: "default" workflow_execution { workflow_id: "wf-cron" } reason: "r"'),
    ("query", "QueryWorkflow",
     'namespace: "default" execution { workflow_id: "wf-1" } query { query_type: "q" }'),
    ("list", "ListWorkflowExecutions",
     "namespace: \"default\" page_size: 5 query: \"WorkflowType = 'order' AND "
     "(ExecutionStatus = 'Running' OR StartTime > '2026-01-01T00:00:00Z') ORDER BY StartTime\""),
    ("count", "CountWorkflowExecutions",
     "namespace: \"default\" query: \"WorkflowId STARTS_WITH 'wf' AND TaskQueue IN ('q', 'r')\""),
    ("list_open", "ListOpenWorkflowExecutions",
     'namespace: "default" maximum_page_size: 5 type_filter { name: "order" }'),
    ("list_closed", "ListClosedWorkflowExecutions",
     'namespace: "default" maximum_page_size: 5 status_filter { status: WORKFLOW_EXECUTION_STATUS_COMPLETED }'),
    ("list_archived", "ListArchivedWorkflowExecutions",
     "namespace: \"default\" page_size: 5 query: \"((WorkflowId = 'a'))\""),
    ("system_info", "GetSystemInfo", ""),
    ("cluster_info", "GetClusterInfo", ""),
    ("reset_sticky", "ResetStickyTaskQueue", 'namespace: "default" execution { workflow_id: "wf-1" }'),
    ("describe_task_queue", "DescribeTaskQueue", 'namespace: "default" task_queue { name: "q" }'),
    ("search_attributes", "GetSearchAttributes", ""),
    ("list_search_attributes", "ListSearchAttributes", 'namespace: "default"'),
    ("advance_time", "AdvanceTime", "duration { seconds: 3600 }"),
    ("describe_cluster", "DescribeCluster", ""),
    ("namespace_history", "GetNamespaceHistory", 'namespace: "default"'),
    ("archival_status", "GetArchivalStatus", 'namespace: "default"'),
]


def methods(build: pathlib.Path):
    found = {}  # method name -> (path, request type)
    paths = []
    for rel, package, service in SERVICES:
        proto = build / "temporal-api-protos" / rel
        if not proto.exists():
            proto = ROOT / "proto" / rel
        text = proto.read_text()
        for m in re.finditer(r"rpc\s+(\w+)\s*\(\s*(stream\s+)?([\w.]+)\s*\)\s*returns\s*\(\s*(stream\s+)?", text):
            name, client_stream, request, server_stream = m.groups()
            if client_stream or server_stream:
                continue
            path = f"/{package}.{service}/{name}"
            paths.append(path)
            found.setdefault(name, (path, request if "." in request else f"{package}.{request}"))
    paths.sort()
    return paths, found


def main():
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build").resolve()
    paths, found = methods(build)
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.iterdir():
        old.unlink()
    includes = [f"-I{build / 'temporal-api-protos'}", f"-I{ROOT / 'proto'}", "-I/usr/include"]
    for file_name, method, text in SEEDS:
        if method not in found:
            sys.exit(f"no unary method {method}")
        path, request = found[method]
        rel = next(r for r, p, s in SERVICES if path.startswith(f"/{p}.{s}/"))
        encoded = subprocess.run(
            ["protoc", *includes, f"--encode={request}", rel],
            input=text.encode(), capture_output=True)
        if encoded.returncode != 0:
            sys.exit(f"{file_name}: {encoded.stderr.decode()}")
        encoded = encoded.stdout
        (OUT / file_name).write_bytes(bytes([paths.index(path)]) + encoded)
    print(f"{len(SEEDS)} inputs over {len(paths)} methods in {OUT}")


if __name__ == "__main__":
    main()
