// `tock workflow ...` black-box: the built CLI against tock-server, with a real TypeScript
// SDK worker executing the workflows; `show -o json` is fed to the SDK's replayer.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { runTock, startServer, tockJson as tockJsonAt, uniqueName } from './server.mjs';

// Per test, and for the hooks (which start a server, bundle workflows, connect a worker).
const DEADLINE = { timeout: 90_000 };
const HOOK_DEADLINE = { timeout: 60_000 };

const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));
const updateWorkflowsPath = fileURLToPath(new URL('./update-workflows.js', import.meta.url));
Runtime.install({ logger: new DefaultLogger('WARN') });

let server;
let nativeConnection;
let worker;
let running;
const taskQueue = uniqueName('cli');

const tock = (args) => runTock(server.address, args);
const tockJson = (args) => tockJsonAt(server.address, args);

before(async () => {
  server = await startServer();
  nativeConnection = await NativeConnection.connect({ address: server.address });
  worker = await Worker.create({ connection: nativeConnection, taskQueue, workflowsPath, activities });
  running = worker.run();
}, HOOK_DEADLINE);

after(async () => {
  try {
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await running;
    await nativeConnection?.close();
  } finally {
    await server?.stop();
  }
}, HOOK_DEADLINE);

test('execute prints the decoded result', DEADLINE, async () => {
  const out = await tockJson(['workflow', 'execute', '--type', 'activityRoundTrip', '--task-queue', taskQueue,
                              '--id', uniqueName('exec'), '--input', '"CLI"']);
  assert.equal(out.result, 'Hello, CLI!');
  assert.equal(out.status, 'Workflow Execution Completed');
});

test('start, describe, result, show, and show -o json replays', DEADLINE, async () => {
  const id = uniqueName('start');
  const started = await tockJson(['workflow', 'start', '-t', 'activityRoundTrip', '-q', taskQueue, '-w', id, '-i', '"x"']);
  assert.equal(started.workflowId, id);
  assert.match(started.runId, /^[0-9a-f-]{36}$/);
  const result = await tockJson(['workflow', 'result', '-w', id]);
  assert.equal(result.result, 'Hello, x!');

  const described = await tockJson(['workflow', 'describe', '-w', id]);
  assert.equal(described.workflowExecutionInfo.status, 'WORKFLOW_EXECUTION_STATUS_COMPLETED');
  assert.equal(described.workflowExecutionInfo.type.name, 'activityRoundTrip');
  const card = await tock(['workflow', 'describe', '-w', id, '-o', 'card']);
  assert.match(card.stdout, /Status:\s+Completed/);

  const table = await tock(['workflow', 'show', '-w', id, '-o', 'table']);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^ID\s+TIME\s+TYPE\s+DETAILS/);
  assert.match(table.stdout, /Workflow Execution Started/);
  assert.match(table.stdout, /Activity Task Completed .*result=Hello, x!/);

  const history = await tockJson(['workflow', 'show', '-w', id]);
  assert.ok(history.events.length >= 11);
  // Exactly what an operator would do with the file: parse it as the SDK's History JSON.
  await Worker.runReplayHistory({ workflowsPath }, historyFromJSON(history), id);

  const lines = await tock(['workflow', 'show', '-w', id, '-o', 'jsonl']);
  const events = lines.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(events.length, history.events.length);
});

test('signal, query, follow and cancel, terminate', DEADLINE, async () => {
  const id = uniqueName('signal');
  await tockJson(['workflow', 'start', '-t', 'waitForSignal', '-q', taskQueue, '-w', id]);
  const waiting = await tockJson(['workflow', 'query', '-w', id, '--type', 'status']);
  assert.equal(waiting.result, 'waiting');
  const follow = tock(['workflow', 'show', '-w', id, '--follow', '-o', 'jsonl']);
  await tockJson(['workflow', 'signal', '-w', id, '--name', 'unblock']);
  const followed = await follow;
  assert.equal(followed.code, 0, followed.stderr);
  const types = followed.stdout.trim().split('\n').map((l) => JSON.parse(l).eventType);
  assert.equal(types.at(-1), 'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED', 'follow ends when the run closes');
  assert.ok(types.includes('EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED'));

  const cancelId = uniqueName('cancel');
  await tockJson(['workflow', 'start', '-t', 'cancellable', '-q', taskQueue, '-w', cancelId]);
  await tockJson(['workflow', 'query', '-w', cancelId, '--type', '__stack_trace']).catch(() => undefined);
  await tockJson(['workflow', 'cancel', '-w', cancelId, '--reason', 'test']);
  const cancelled = await tockJson(['workflow', 'result', '-w', cancelId]);
  assert.equal(cancelled.result, 'cancelled and cleaned up');

  const termId = uniqueName('term');
  await tockJson(['workflow', 'start', '-t', 'waitForSignal', '-q', taskQueue, '-w', termId]);
  await tockJson(['workflow', 'terminate', '-w', termId, '--reason', 'stuck']);
  const again = await tock(['workflow', 'terminate', '-w', termId]);
  assert.equal(again.code, 3, 'a closed workflow cannot be terminated again');
  assert.match(again.stderr, /^error: Workflow execution already completed\./);
  const failed = await tock(['workflow', 'result', '-w', termId]);
  assert.equal(failed.code, 5);
  assert.match(failed.stderr, /closed as Workflow Execution Terminated/);
});

test('list and count with queries; errors name the problem', DEADLINE, async () => {
  const prefix = uniqueName('listcli');
  for (const i of [0, 1]) {
    await tockJson(['workflow', 'execute', '-t', 'activityRoundTrip', '-q', taskQueue, '-w', `${prefix}-${i}`, '-i', '1']);
  }
  const q = `WorkflowId STARTS_WITH '${prefix}' ORDER BY WorkflowId ASC`;
  const listed = await tockJson(['workflow', 'list', '--query', q]);
  assert.deepEqual(listed.map((e) => e.execution.workflowId), [`${prefix}-0`, `${prefix}-1`]);
  const limited = await tock(['workflow', 'list', '--query', q, '--limit', '1', '-o', 'jsonl']);
  assert.equal(limited.stdout.trim().split('\n').length, 1);
  const count = await tockJson(['workflow', 'count', '--query', `WorkflowId STARTS_WITH '${prefix}'`]);
  assert.equal(count.count, 2);

  const bad = await tock(['workflow', 'list', '--query', 'Nope = 1']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^error: invalid query: unknown field 'Nope' at position 1/);
  const missing = await tock(['workflow', 'describe', '-w', uniqueName('missing')]);
  assert.equal(missing.code, 3);
  assert.match(missing.stderr, /^error: Workflow execution not found\./);
  const badInput = await tock(['workflow', 'start', '-t', 'x', '-q', taskQueue, '-i', '{not json']);
  assert.equal(badInput.code, 2);
  assert.match(badInput.stderr, /invalid --input/);
  const noConfirm = await tock(['workflow', 'delete', '-w', `${prefix}-0`]);
  assert.equal(noConfirm.code, 2);
  assert.match(noConfirm.stderr, /--yes/);
  await tockJson(['workflow', 'delete', '-w', `${prefix}-0`, '--yes']);
  const gone = await tock(['workflow', 'describe', '-w', `${prefix}-0`]);
  assert.equal(gone.code, 3, 'a deleted run is gone');
  assert.equal((await tockJson(['workflow', 'count', '--query', `WorkflowId STARTS_WITH '${prefix}'`])).count, 1);
  const pollers = await tockJson(['task-queue', 'describe', '-q', taskQueue]);
  assert.ok(pollers.length >= 1, 'the worker polls the queue');
});

test('workflow update execute, start, result and describe against the SDK counter', DEADLINE, async () => {
  // update-workflows.js (the workflows of updates.test.mjs) on a queue of its own.
  const updateQueue = uniqueName('cli-upd');
  const updateWorker = await Worker.create({
    connection: nativeConnection, taskQueue: updateQueue, workflowsPath: updateWorkflowsPath,
  });
  await updateWorker.runUntil((async () => {
    const id = uniqueName('counter');
    await tockJson(['workflow', 'start', '-t', 'counter', '-q', updateQueue, '-w', id, '-i', '10']);
    const added = await tockJson(['workflow', 'update', 'execute', '-w', id, '--name', 'add', '-i', '5']);
    assert.equal(added.result, 15);
    assert.equal(added.name, 'add');

    // The validator refuses: exit 1 with its message, nothing changed.
    const rejected = await tock(['workflow', 'update', 'execute', '-w', id, '--name', 'addPositive',
                                 '--input', '-1', '--update-id', 'neg-1']);
    assert.equal(rejected.code, 1, rejected.stderr);
    assert.equal(rejected.stderr,
                 `error: update "neg-1" of workflow "${id}" failed: only positive amounts are accepted\n`);
    const failed = await tock(['workflow', 'update', 'execute', '-w', id, '--name', 'failingUpdate']);
    assert.equal(failed.code, 1, failed.stderr);
    assert.match(failed.stderr, /failed: this update fails on purpose\n$/);

    // Accepted, then completed once released by a signal.
    const started = await tockJson(['workflow', 'update', 'start', '-w', id, '--name', 'addWhenReleased',
                                    '-i', '1', '--update-id', 'rel-1', '--wait-for-stage', 'accepted']);
    assert.equal(started.stage, 'UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ACCEPTED');
    assert.equal(started.updateId, 'rel-1');
    const accepted = await tockJson(['workflow', 'update', 'describe', '-w', id, '--update-id', 'rel-1']);
    assert.equal(accepted.stage, 'UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ACCEPTED');
    assert.equal(accepted.result, undefined);
    await tockJson(['workflow', 'signal', '-w', id, '--name', 'release']);
    const result = await tockJson(['workflow', 'update', 'result', '-w', id, '--update-id', 'rel-1']);
    assert.equal(result.result, 16);
    const completed = await tockJson(['workflow', 'update', 'describe', '-w', id, '--update-id', 'rel-1']);
    assert.equal(completed.stage, 'UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED');
    assert.equal(completed.result, 16);

    await tockJson(['workflow', 'signal', '-w', id, '--name', 'finish']);
    assert.equal((await tockJson(['workflow', 'result', '-w', id])).result, 16);
    const closed = await tock(['workflow', 'update', 'execute', '-w', id, '--name', 'add', '-i', '1']);
    assert.equal(closed.code, 3);
    assert.equal(closed.stderr, 'error: workflow execution already completed\n');
  })());
});
