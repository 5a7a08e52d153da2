// ResetWorkflowExecution through the official SDK (@temporalio 1.24.0): a completed run and a
// running one reset to their first workflow task, signals after the point reapplied (or not,
// with reapply type NONE), the new run finished by the worker and its history replayed; the
// base run terminated when it ran; Temporal's messages for points that are not workflow tasks.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { clientRetries, startServer, uniqueName } from './server.mjs';

const DEADLINE = { timeout: 90_000 };
const HOOK_DEADLINE = { timeout: 60_000 };
const GRPC_INVALID_ARGUMENT = 3;
// temporal.api.enums.v1
const WORKFLOW_TASK_COMPLETED = 7;
const WORKFLOW_TASK_FAILED = 9;
const SIGNALED = 26;
const TERMINATED = 27;
const CAUSE_RESET_WORKFLOW = 20;
const REAPPLY_NONE = 2;

const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));
Runtime.install({ logger: new DefaultLogger('WARN') });

let server;
let connection;
let client;

before(async () => {
  server = await startServer();
  connection = await Connection.connect({ address: server.address, ...clientRetries() });
  client = new Client({ connection, namespace: 'default' });
}, HOOK_DEADLINE);

after(async () => {
  try {
    await connection?.close();
  } finally {
    await server?.stop();
  }
}, HOOK_DEADLINE);

async function withWorker(fn) {
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  try {
    const taskQueue = uniqueName('tq');
    const worker = await Worker.create({ connection: nativeConnection, namespace: 'default', taskQueue, workflowsPath, activities });
    return await worker.runUntil(fn(taskQueue));
  } finally {
    await nativeConnection.close();
  }
}

const reset = (workflowId, runId, point, extra = {}) =>
  connection.workflowService.resetWorkflowExecution({
    namespace: 'default',
    workflowExecution: { workflowId, runId },
    reason: 'redo the greeting',
    workflowTaskFinishEventId: point,
    requestId: randomUUID(),
    ...extra,
  });

async function firstCompletedTask(handle) {
  const history = await handle.fetchHistory();
  return Number(history.events.find((e) => e.eventType === WORKFLOW_TASK_COMPLETED).eventId);
}

async function waitFor(handle, predicate) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const history = await handle.fetchHistory();
    if (predicate(history.events)) return history;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail('the history never got there');
}

test('a completed run reset to its first workflow task runs again with its signals reapplied', DEADLINE, async () => {
  const workflowId = uniqueName('reset-done');
  await withWorker(async (taskQueue) => {
    const handle = await client.workflow.start('greetThenTwoTicks', { taskQueue, workflowId, args: ['Tock'] });
    await handle.signal('tick');
    await handle.signal('tick');
    assert.equal(await handle.result(), 'Hello, Tock! x2');
    const base = (await handle.describe()).runId;
    const point = await firstCompletedTask(handle);

    const { runId } = await reset(workflowId, base, point);
    assert.notEqual(runId, base);
    const fresh = client.workflow.getHandle(workflowId, runId);
    assert.equal(await fresh.result(), 'Hello, Tock! x2', 'the reapplied signals let it finish');

    const history = await fresh.fetchHistory();
    const failed = history.events.find((e) => e.eventType === WORKFLOW_TASK_FAILED);
    assert.equal(Number(failed.eventId), point, 'the reset task fails at the point');
    const attrs = failed.workflowTaskFailedEventAttributes;
    assert.equal(attrs.cause, CAUSE_RESET_WORKFLOW);
    assert.equal(attrs.baseRunId, base);
    assert.equal(attrs.newRunId, runId);
    assert.equal(attrs.failure.message, 'redo the greeting');
    assert.equal(history.events.filter((e) => e.eventType === SIGNALED).length, 2);
    await Worker.runReplayHistory({ workflowsPath }, history, workflowId);

    const baseDescribed = await connection.workflowService.describeWorkflowExecution({ namespace: 'default', execution: { workflowId, runId: base } });
    assert.equal(baseDescribed.workflowExtendedInfo.resetRunId, runId);
    assert.equal(baseDescribed.workflowExecutionInfo.status, 2 /* COMPLETED: it had closed */);
    const freshDescribed = await connection.workflowService.describeWorkflowExecution({ namespace: 'default', execution: { workflowId, runId } });
    assert.ok(freshDescribed.workflowExtendedInfo.lastResetTime, 'the reset is recorded');
  });
});

test('a running run is terminated by its reset, and the new run goes on', DEADLINE, async () => {
  const workflowId = uniqueName('reset-running');
  await withWorker(async (taskQueue) => {
    const handle = await client.workflow.start('greetThenTwoTicks', { taskQueue, workflowId, args: ['Reset'] });
    await handle.signal('tick');
    await waitFor(handle, (events) => events.filter((e) => e.eventType === WORKFLOW_TASK_COMPLETED).length >= 2);
    const base = (await handle.describe()).runId;
    const { runId } = await reset(workflowId, base, await firstCompletedTask(handle));

    const baseHistory = await client.workflow.getHandle(workflowId, base).fetchHistory();
    const last = baseHistory.events[baseHistory.events.length - 1];
    assert.equal(last.eventType, TERMINATED);
    assert.equal(last.workflowExecutionTerminatedEventAttributes.reason, 'redo the greeting');

    // The new run is the current one: a signal by workflow id reaches it.
    await client.workflow.getHandle(workflowId).signal('tick');
    assert.equal(await client.workflow.getHandle(workflowId, runId).result(), 'Hello, Reset! x2');
    await Worker.runReplayHistory({ workflowsPath }, await client.workflow.getHandle(workflowId, runId).fetchHistory(), workflowId);
  });
});

test('reapply type NONE leaves the signals out; points that are not workflow tasks are refused', DEADLINE, async () => {
  const workflowId = uniqueName('reset-none');
  await withWorker(async (taskQueue) => {
    const handle = await client.workflow.start('greetThenTwoTicks', { taskQueue, workflowId, args: ['None'] });
    // Signals only after the first workflow task completed: they all follow the point.
    await waitFor(handle, (events) => events.some((e) => e.eventType === WORKFLOW_TASK_COMPLETED));
    await handle.signal('tick');
    await handle.signal('tick');
    await handle.result();
    const base = (await handle.describe()).runId;
    const point = await firstCompletedTask(handle);

    const rejection = async (promise) => {
      let err;
      try {
        await promise;
      } catch (e) {
        err = e;
      }
      assert.equal(err?.code, GRPC_INVALID_ARGUMENT, `${err?.details}`);
      return err.details;
    };
    assert.equal(await rejection(reset(workflowId, base, 1)), 'Workflow task finish ID must be > 1 && <= workflow last event ID.');
    assert.equal(await rejection(reset(workflowId, base, 10_000)), 'Workflow task finish ID must be > 1 && <= workflow last event ID.');
    assert.equal(
      await rejection(reset(workflowId, base, 2)),
      'Can only reset workflow to event ID in range [WorkflowTaskScheduled +1, WorkflowTaskStarted + 1]: 2',
    );

    const { runId } = await reset(workflowId, base, point, { resetReapplyType: REAPPLY_NONE });
    const fresh = client.workflow.getHandle(workflowId, runId);
    await waitFor(fresh, (events) => events.filter((e) => e.eventType === WORKFLOW_TASK_COMPLETED).length >= 2);
    const history = await fresh.fetchHistory();
    // A signal that came before the point is part of the copied history; none is reapplied.
    assert.equal(history.events.filter((e) => e.eventType === SIGNALED && Number(e.eventId) > point).length, 0);
    assert.equal((await fresh.describe()).status.name, 'RUNNING', 'it waits for signals it never got');
    await fresh.terminate('test done');
  });
});

test('a reset batch resets every matching run to its first workflow task, once', DEADLINE, async () => {
  const prefix = uniqueName('batch-reset');
  await withWorker(async (taskQueue) => {
    const bases = [];
    for (let i = 0; i < 3; i++) {
      const handle = await client.workflow.start('greetThenTwoTicks', { taskQueue, workflowId: `${prefix}-${i}`, args: [`B${i}`] });
      await handle.signal('tick');
      await handle.signal('tick');
      await handle.result();
      bases.push((await handle.describe()).runId);
    }
    const jobId = randomUUID();
    await connection.workflowService.startBatchOperation({
      namespace: 'default',
      jobId,
      reason: 'batch redo',
      visibilityQuery: `WorkflowId STARTS_WITH '${prefix}-'`,
      resetOperation: { options: { firstWorkflowTask: {} } },
    });
    const deadline = Date.now() + 30_000;
    let described;
    while (Date.now() < deadline) {
      described = await connection.workflowService.describeBatchOperation({ namespace: 'default', jobId });
      if (described.state === 2 /* COMPLETED */) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(described.state, 2, JSON.stringify(described));
    assert.equal(Number(described.completeOperationCount), 3);
    assert.equal(Number(described.failureOperationCount), 0);
    for (let i = 0; i < 3; i++) {
      const current = client.workflow.getHandle(`${prefix}-${i}`);
      assert.equal(await current.result(), `Hello, B${i}! x2`);
      const runId = (await current.describe()).runId;
      assert.notEqual(runId, bases[i], 'the current run is the reset one');
      const history = await current.fetchHistory();
      const failed = history.events.find((e) => e.eventType === WORKFLOW_TASK_FAILED);
      assert.equal(failed.workflowTaskFailedEventAttributes.baseRunId, bases[i], 'reset from the base run, not again');
    }
  });
});
