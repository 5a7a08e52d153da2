// Workflow updates through the official SDK (@temporalio 1.24.0): an update that completes, one
// a validator rejects (no event at all in the history), one whose handler fails, one waited
// for only until accepted and then polled for its result (across a kill -9 of the server),
// duplicate update ids, update-with-start (new run and existing run), the worker's cache on and
// off, replays of the histories; and Temporal's errors for bad requests. Also run against
// three hosts (ctest sdk_hosts).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import {
  Client,
  Connection,
  WithStartWorkflowOperation,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
} from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { clientRetries, hostsFromEnv, startHosts, startServer, uniqueName } from './server.mjs';

const DEADLINE = { timeout: 120_000 };
const HOOK_DEADLINE = { timeout: 60_000 };
const GRPC = { INVALID_ARGUMENT: 3, NOT_FOUND: 5, PERMISSION_DENIED: 7 };
// temporal.api.enums.v1.EventType
const UPDATE_ACCEPTED = 41;
const UPDATE_COMPLETED = 43;
const UPDATE_ADMITTED = 47;

const workflowsPath = fileURLToPath(new URL('./update-workflows.js', import.meta.url));
Runtime.install({ logger: new DefaultLogger('WARN') });

// With TOCK_SDK_HOSTS > 1 (ctest sdk_hosts): hosts on PostgreSQL, the client on the first and
// the workers on the second, so updates, their tasks and their answers cross hosts.
const hosts = hostsFromEnv();
let server;
let connection;
let client;

async function connect() {
  connection = await Connection.connect({ address: server.address, ...clientRetries() });
  client = new Client({ connection, namespace: 'default' });
}

before(async () => {
  server = hosts > 1 ? await startHosts(hosts) : await startServer();
  await connect();
}, HOOK_DEADLINE);

after(async () => {
  try {
    await connection?.close();
  } finally {
    await server?.stop();
  }
}, HOOK_DEADLINE);

// Runs `fn(taskQueue)` while a worker (cache on, or off with maxCachedWorkflows 0) polls.
async function withWorker(fn, { cache = true, taskQueue = uniqueName('tq') } = {}) {
  const nativeConnection = await NativeConnection.connect({ address: server.workerAddress ?? server.address });
  try {
    const worker = await Worker.create({
      connection: nativeConnection,
      namespace: 'default',
      taskQueue,
      workflowsPath,
      ...(cache ? {} : { maxCachedWorkflows: 0 }),
    });
    return await worker.runUntil(fn(taskQueue));
  } finally {
    await nativeConnection.close();
  }
}

const eventTypes = async (handle) => (await handle.fetchHistory()).events.map((e) => e.eventType);
const count = (types, type) => types.filter((t) => t === type).length;

async function replays(handle) {
  const history = await handle.fetchHistory();
  await Worker.runReplayHistory({ workflowsPath }, history, handle.workflowId);
}

async function rejection(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('the call was expected to fail');
}

for (const cache of [true, false]) {
  test(`updates complete, are rejected by a validator, fail, and replay (cache ${cache ? 'on' : 'off'})`, DEADLINE, async () => {
    await withWorker(async (taskQueue) => {
      const handle = await client.workflow.start('counter', { taskQueue, workflowId: uniqueName('upd'), args: [10] });
      assert.equal(await handle.executeUpdate('add', { args: [5] }), 15);
      assert.equal(await handle.executeUpdate('addPositive', { args: [2] }), 17);

      const before = (await eventTypes(handle)).length;
      const rejected = await rejection(handle.executeUpdate('addPositive', { args: [-3] }));
      assert.ok(rejected instanceof WorkflowUpdateFailedError, String(rejected));
      assert.match(rejected.cause?.message ?? '', /only positive amounts are accepted/);
      // Its workflow task was speculative: the rejection left no event at all.
      assert.equal((await eventTypes(handle)).length, before);

      const failed = await rejection(handle.executeUpdate('failingUpdate'));
      assert.ok(failed instanceof WorkflowUpdateFailedError, String(failed));
      assert.match(failed.cause?.message ?? '', /this update fails on purpose/);

      // The rejected update changed nothing; the counter goes on.
      assert.equal(await handle.executeUpdate('add', { args: [1] }), 18);
      await handle.signal('finish');
      assert.equal(await handle.result(), 18);

      // Four accepted updates (two added, the failing one, the last add); the rejection left no
      // update event.
      const types = await eventTypes(handle);
      assert.equal(count(types, UPDATE_ACCEPTED), 4);
      assert.equal(count(types, UPDATE_COMPLETED), 4);
      await replays(handle);
    }, { cache });
  });
}

test('an update id given twice runs once and answers both callers', DEADLINE, async () => {
  await withWorker(async (taskQueue) => {
    const handle = await client.workflow.start('counter', { taskQueue, workflowId: uniqueName('dup'), args: [0] });
    const updateId = randomUUID();
    const [a, b] = await Promise.all([
      handle.executeUpdate('add', { args: [7], updateId }),
      handle.executeUpdate('add', { args: [7], updateId }),
    ]);
    assert.equal(a, 7);
    assert.equal(b, 7);
    // Again after it completed: the stored outcome.
    assert.equal(await handle.executeUpdate('add', { args: [7], updateId }), 7);
    assert.equal(await handle.executeUpdate('add', { args: [1] }), 8);
    const types = await eventTypes(handle);
    assert.equal(count(types, UPDATE_ACCEPTED), 2);
    await handle.signal('finish');
    assert.equal(await handle.result(), 8);
  });
});

test('an update waited for until accepted is polled for its result, across a kill -9 of the server', { ...DEADLINE, skip: hosts > 1 && 'one host only (restart)' }, async () => {
  const taskQueue = uniqueName('tq');
  const workflowId = uniqueName('accepted');
  let updateHandle;
  await withWorker(async () => {
    const handle = await client.workflow.start('counter', { taskQueue, workflowId, args: [1] });
    updateHandle = await handle.startUpdate('addWhenReleased', {
      args: [41],
      waitForStage: WorkflowUpdateStage.ACCEPTED,
    });
    const types = await eventTypes(handle);
    assert.equal(count(types, UPDATE_ACCEPTED), 1);
    assert.equal(count(types, UPDATE_COMPLETED), 0);
  }, { taskQueue });

  // The acceptance is durable: a crashed server still knows the update after its restart.
  await connection.close();
  server = await server.restart({ kill: true });
  await connect();
  await withWorker(async () => {
    const handle = client.workflow.getHandle(workflowId);
    const again = handle.getUpdateHandle(updateHandle.updateId);
    await handle.signal('release');
    assert.equal(await again.result(), 42);
    await handle.signal('finish');
    assert.equal(await handle.result(), 42);
    await replays(handle);
  }, { taskQueue });
});

test('an accepted update of a workflow that ends first fails with Temporal\'s failure', DEADLINE, async () => {
  await withWorker(async (taskQueue) => {
    const handle = await client.workflow.start('counter', { taskQueue, workflowId: uniqueName('ended'), args: [0] });
    const update = await handle.startUpdate('addWhenReleased', { args: [1], waitForStage: WorkflowUpdateStage.ACCEPTED });
    await handle.terminate('ended before the update');
    const err = await rejection(update.result());
    assert.ok(err instanceof WorkflowUpdateFailedError, String(err));
    assert.equal(
      err.cause?.message,
      'Workflow Update failed because the Workflow completed before the Update completed.',
    );
  });
});

test('a reset applies the updates accepted after its point again, as admitted updates', DEADLINE, async () => {
  await withWorker(async (taskQueue) => {
    const workflowId = uniqueName('reset');
    const handle = await client.workflow.start('counter', { taskQueue, workflowId, args: [0] });
    assert.equal(await handle.executeUpdate('add', { args: [5] }), 5);
    assert.equal(await handle.executeUpdate('add', { args: [7] }), 12);
    await handle.signal('finish');
    assert.equal(await handle.result(), 12);
    const base = await handle.describe();
    // Back to the first workflow task's completion (event 4): both updates and the signal
    // come after it.
    const { runId } = await connection.workflowService.resetWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId, runId: base.runId },
      reason: 'reapply test',
      workflowTaskFinishEventId: 4,
      requestId: randomUUID(),
    });
    const reset = client.workflow.getHandle(workflowId, runId);
    assert.equal(await reset.result(), 12);
    const types = await eventTypes(reset);
    assert.equal(count(types, UPDATE_ADMITTED), 2);
    assert.equal(count(types, UPDATE_ACCEPTED), 2);
    await replays(reset);
  });
});

test('update-with-start starts the workflow with the update, then updates the running one', DEADLINE, async () => {
  await withWorker(async (taskQueue) => {
    const workflowId = uniqueName('uws');
    const startOperation = () =>
      new WithStartWorkflowOperation('counter', {
        workflowId,
        taskQueue,
        args: [100],
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
    const first = startOperation();
    assert.equal(await client.workflow.executeUpdateWithStart('add', { args: [1], startWorkflowOperation: first }), 101);
    const handle = await first.workflowHandle();
    const second = startOperation();
    assert.equal(await client.workflow.executeUpdateWithStart('add', { args: [2], startWorkflowOperation: second }), 103);
    assert.equal((await second.workflowHandle()).firstExecutionRunId, handle.firstExecutionRunId);
    // The first run's first workflow task carried the update: no task without it.
    const history = await handle.fetchHistory();
    assert.equal(history.events[4].eventType, UPDATE_ACCEPTED, 'the first task accepted the update');
    await handle.signal('finish');
    assert.equal(await handle.result(), 103);
    await replays(handle);
  });
});

test('update-with-start refuses a running workflow with the FAIL conflict policy', DEADLINE, async () => {
  await withWorker(async (taskQueue) => {
    const workflowId = uniqueName('uws-fail');
    const handle = await client.workflow.start('counter', { taskQueue, workflowId, args: [0] });
    const operation = new WithStartWorkflowOperation('counter', {
      workflowId,
      taskQueue,
      args: [0],
      workflowIdConflictPolicy: 'FAIL',
    });
    const err = await rejection(client.workflow.executeUpdateWithStart('add', { args: [1], startWorkflowOperation: operation }));
    assert.equal(err.name, 'WorkflowExecutionAlreadyStartedError', String(err));
    await handle.signal('finish');
    assert.equal(await handle.result(), 0);
  });
});

test('updates of a closed workflow, unknown updates and bad requests get Temporal\'s errors', DEADLINE, async () => {
  const service = connection.workflowService;
  const { namespaceInfo } = await service.describeNamespace({ namespace: 'default' });
  assert.equal(namespaceInfo.capabilities.syncUpdate, true);
  assert.equal(namespaceInfo.capabilities.asyncUpdate, true);
  const code = async (promise) => {
    const err = await rejection(promise);
    return { code: err.code, details: err.details };
  };
  const request = (workflowId, extra = {}) => ({
    namespace: 'default',
    workflowExecution: { workflowId },
    waitPolicy: { lifecycleStage: 3 },
    request: { meta: { updateId: randomUUID() }, input: { name: 'add' } },
    ...extra,
  });
  await withWorker(async (taskQueue) => {
    const workflowId = uniqueName('closed');
    const handle = await client.workflow.start('counter', { taskQueue, workflowId, args: [0] });
    assert.equal(await handle.executeUpdate('add', { args: [3], updateId: 'kept' }), 3);
    await handle.signal('finish');
    await handle.result();

    // A new update of a closed workflow is refused; a completed one still answers.
    assert.deepEqual(await code(service.updateWorkflowExecution(request(workflowId))), {
      code: GRPC.NOT_FOUND,
      details: 'workflow execution already completed',
    });
    assert.equal(await handle.getUpdateHandle('kept').result(), 3);
    assert.deepEqual(
      await code(service.pollWorkflowExecutionUpdate({
        namespace: 'default',
        updateRef: { workflowExecution: { workflowId }, updateId: 'never-sent' },
        waitPolicy: { lifecycleStage: 3 },
      })),
      { code: GRPC.NOT_FOUND, details: 'workflow execution already completed' },
    );
  });

  const workflowId = uniqueName('bad');
  await client.workflow.start('counter', { taskQueue: uniqueName('idle'), workflowId, args: [0] });
  assert.deepEqual(
    await code(service.pollWorkflowExecutionUpdate({
      namespace: 'default',
      updateRef: { workflowExecution: { workflowId }, updateId: 'never-sent' },
    })),
    { code: GRPC.NOT_FOUND, details: 'update "never-sent" not found' },
  );
  assert.deepEqual(
    await code(service.updateWorkflowExecution(request(workflowId, { waitPolicy: { lifecycleStage: 1 } }))),
    {
      code: GRPC.PERMISSION_DENIED,
      details: 'UpdateWorkflowExecution issued asynchronously and waiting on update admitted is not supported.',
    },
  );
  assert.deepEqual(
    await code(service.updateWorkflowExecution({ ...request(workflowId), request: { meta: { updateId: 'x' }, input: {} } })),
    { code: GRPC.INVALID_ARGUMENT, details: 'Update name is not set on request.' },
  );
  assert.deepEqual(
    await code(service.updateWorkflowExecution({ ...request(workflowId), request: { input: { name: 'add' } } })),
    { code: GRPC.INVALID_ARGUMENT, details: 'Update meta is not set on request.' },
  );
  assert.deepEqual(
    await code(service.executeMultiOperation({ namespace: 'default', operations: [{ updateWorkflow: request(workflowId) }] })),
    { code: GRPC.INVALID_ARGUMENT, details: 'Operations have to be exactly [Start, Update].' },
  );
  // An update nobody answers: the caller's deadline passes.
  const timedOut = await rejection(
    connection.withDeadline(Date.now() + 3000, () => service.updateWorkflowExecution(request(workflowId))),
  );
  assert.equal(timedOut.code, 4, String(timedOut)); // DEADLINE_EXCEEDED
  await client.workflow.getHandle(workflowId).terminate('done');
});
