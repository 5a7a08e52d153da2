// Sticky execution (Temporal's sticky task queues): after a worker completes a workflow task
// with sticky_attributes, the run's next workflow task goes to that worker's own queue with
// only the events it has not seen; a task nobody takes there within the schedule-to-start
// timeout moves to the normal queue with the whole history (WorkflowTaskTimedOut,
// SCHEDULE_TO_START); ShutdownWorker and ResetStickyTaskQueue end stickiness at once. The
// protocol is driven by hand with the official client's gRPC service (what an SDK worker
// sends), then a real TypeScript worker runs long workflows, a query and a worker change.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { clientRetries, startServer, sumSamples, uniqueName } from './server.mjs';

const DEADLINE = { timeout: 90_000 };
const HOOK_DEADLINE = { timeout: 60_000 };
const NAMESPACE = 'default';
const NORMAL = 1;  // temporal.api.enums.v1.TaskQueueKind
const STICKY = 2;
// temporal.api.enums.v1.EventType
const WORKFLOW_TASK_SCHEDULED = 5;
const WORKFLOW_TASK_STARTED = 6;
const WORKFLOW_TASK_TIMED_OUT = 8;
const TIMEOUT_TYPE_SCHEDULE_TO_START = 2;

const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));
const updateWorkflowsPath = fileURLToPath(new URL('./update-workflows.js', import.meta.url));
Runtime.install({ logger: new DefaultLogger('WARN') });

let server;
let connection;
let client;
let service;

before(async () => {
  server = await startServer({ metrics: true });
  connection = await Connection.connect({ address: server.address, ...clientRetries() });
  client = new Client({ connection, namespace: NAMESPACE });
  service = connection.workflowService;
}, HOOK_DEADLINE);

after(async () => {
  try {
    await connection?.close();
  } finally {
    await server?.stop();
  }
}, HOOK_DEADLINE);

const ids = (task) => task.history.events.map((e) => Number(e.eventId));

// A worker by hand: its identity, its normal queue and its sticky queue.
function handWorker(taskQueue, name) {
  const sticky = `${taskQueue}-${name}-sticky`;
  const poll = (queue, timeoutMs = 20_000) => connection.withDeadline(Date.now() + timeoutMs, () =>
    service.pollWorkflowTaskQueue({ namespace: NAMESPACE, taskQueue: queue, identity: name }));
  return {
    sticky,
    pollNormal: () => poll({ name: taskQueue, kind: NORMAL }),
    pollSticky: (timeoutMs) => poll({ name: sticky, kind: STICKY, normalName: taskQueue }, timeoutMs),
    // Completes with no commands, naming the sticky queue (as an SDK with its cache on does).
    complete: (task, scheduleToStartSeconds = 10) => service.respondWorkflowTaskCompleted({
      namespace: NAMESPACE, taskToken: task.taskToken, identity: name, commands: [],
      stickyAttributes: {
        workerTaskQueue: { name: sticky, kind: STICKY, normalName: taskQueue },
        scheduleToStartTimeout: { seconds: scheduleToStartSeconds },
      },
    }),
  };
}

// A workflow started and its first workflow task completed by `worker`, which is now sticky;
// then one sticky poll, answered empty, tells the server the worker is there.
async function stickyRun(taskQueue, worker, scheduleToStartSeconds) {
  const handle = await client.workflow.start('waitForSignal', { taskQueue, workflowId: uniqueName('sticky') });
  const first = await worker.pollNormal();
  assert.deepEqual(ids(first), [1, 2, 3], 'the first task carries the whole history');
  await worker.complete(first, scheduleToStartSeconds);
  assert.equal((await worker.pollSticky(1_000)).taskToken?.length ?? 0, 0);
  return handle;
}

test('a sticky worker gets the next workflow task on its own queue with only the new events', DEADLINE, async () => {
  const taskQueue = uniqueName('tq');
  const worker = handWorker(taskQueue, 'w1');
  const handle = await stickyRun(taskQueue, worker);
  const next = worker.pollSticky();
  await handle.signal('unblock');
  const task = await next;
  // 4 WorkflowTaskCompleted, 5 WorkflowExecutionSignaled, 6 WorkflowTaskScheduled, 7 started.
  assert.deepEqual(ids(task), [4, 5, 6, 7]);
  assert.equal(Number(task.previousStartedEventId), 3);
  const scheduled = task.history.events[2].workflowTaskScheduledEventAttributes.taskQueue;
  assert.equal(scheduled.name, worker.sticky);
  assert.equal(scheduled.kind, STICKY);
  assert.equal(task.workflowExecutionTaskQueue.name, taskQueue, 'the normal queue stays the workflow\'s');
  await worker.complete(task);
  // Queries follow the same rule: the sticky worker answers them.
  const query = worker.pollSticky();
  const answer = handle.query('status');
  const queryTask = await query;
  assert.equal(queryTask.query.queryType, 'status');
  await service.respondQueryTaskCompleted({
    namespace: NAMESPACE, taskToken: queryTask.taskToken, completedType: 1,
    queryResult: { payloads: [{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"sticky"') }] },
  });
  assert.equal(await answer, 'sticky');
  await handle.terminate();
});

test('a sticky task no worker takes in time moves to the normal queue with the whole history', DEADLINE, async () => {
  const taskQueue = uniqueName('tq');
  const worker = handWorker(taskQueue, 'w2');
  // The worker polled its sticky queue a moment ago, then went away (killed).
  const handle = await stickyRun(taskQueue, worker, 1);
  await handle.signal('unblock');
  const other = handWorker(taskQueue, 'w3');
  const task = await other.pollNormal();
  assert.equal(ids(task)[0], 1, 'the whole history');
  const types = task.history.events.map((e) => e.eventType);
  const timedOut = task.history.events[types.indexOf(WORKFLOW_TASK_TIMED_OUT)];
  assert.ok(timedOut, `a WorkflowTaskTimedOut: ${types}`);
  assert.equal(timedOut.workflowTaskTimedOutEventAttributes.timeoutType, TIMEOUT_TYPE_SCHEDULE_TO_START);
  assert.equal(Number(timedOut.workflowTaskTimedOutEventAttributes.startedEventId), 0);
  const last = task.history.events.at(-2);
  assert.equal(last.eventType, WORKFLOW_TASK_SCHEDULED);
  assert.equal(last.workflowTaskScheduledEventAttributes.taskQueue.kind, NORMAL);
  assert.equal(task.attempt, 1, 'a schedule-to-start timeout is not a failed attempt');
  await handle.terminate();
});

test('ShutdownWorker moves the tasks waiting on the worker\'s sticky queue to the normal queue at once', DEADLINE, async () => {
  const taskQueue = uniqueName('tq');
  const worker = handWorker(taskQueue, 'w4');
  // A schedule-to-start timeout far beyond the test: only the shutdown can move the task.
  const handle = await stickyRun(taskQueue, worker, 600);
  await handle.signal('unblock');
  await service.shutdownWorker({ namespace: NAMESPACE, identity: 'w4', stickyTaskQueue: worker.sticky, taskQueue });
  const task = await handWorker(taskQueue, 'w5').pollNormal();
  assert.equal(ids(task)[0], 1, 'the whole history');
  await handle.terminate();
});

test('ResetStickyTaskQueue sends the next workflow task to the normal queue with the whole history', DEADLINE, async () => {
  const taskQueue = uniqueName('tq');
  const worker = handWorker(taskQueue, 'w6');
  const handle = await stickyRun(taskQueue, worker, 600);
  await service.resetStickyTaskQueue({ namespace: NAMESPACE, execution: { workflowId: handle.workflowId } });
  await handle.signal('unblock');
  const task = await worker.pollNormal();
  assert.equal(ids(task)[0], 1, 'the whole history');
  assert.equal(task.history.events.at(-2).workflowTaskScheduledEventAttributes.taskQueue.kind, NORMAL);
  await handle.terminate();
});

test('an update\'s task waits on the sticky queue and moves to the normal queue when nobody takes it', DEADLINE, async () => {
  const taskQueue = uniqueName('tq');
  const worker = handWorker(taskQueue, 'w8');
  const handle = await stickyRun(taskQueue, worker, 1);
  // The update's speculative task goes to the sticky queue; the worker is gone.
  const update = service.updateWorkflowExecution({
    namespace: NAMESPACE, workflowExecution: { workflowId: handle.workflowId },
    waitPolicy: { lifecycleStage: 2 }, request: { meta: { updateId: 'u1' }, input: { name: 'add' } },
  }).catch((err) => err);
  const task = await handWorker(taskQueue, 'w9').pollNormal();
  assert.equal(ids(task)[0], 1, 'the whole history');
  const events = task.history.events;
  const timedOut = events.findIndex((e) => e.eventType === WORKFLOW_TASK_TIMED_OUT);
  assert.ok(timedOut > 0, `a WorkflowTaskTimedOut: ${events.map((e) => e.eventType)}`);
  assert.equal(events[timedOut].workflowTaskTimedOutEventAttributes.timeoutType, TIMEOUT_TYPE_SCHEDULE_TO_START);
  assert.equal(events[timedOut - 1].workflowTaskScheduledEventAttributes.taskQueue.kind, STICKY,
    'the update\'s task was scheduled on the sticky queue');
  assert.equal(events.at(-2).workflowTaskScheduledEventAttributes.taskQueue.kind, NORMAL);
  assert.deepEqual(task.messages.map((m) => m.protocolInstanceId), ['u1'], 'the task carries the update');
  await handle.terminate();
  await update;
});

test('a real sticky worker gets updates on its sticky queue', DEADLINE, async () => {
  const taskQueue = uniqueName('tq');
  const native = await NativeConnection.connect({ address: server.address });
  try {
    const worker = await Worker.create({ connection: native, taskQueue, activities, workflowsPath: updateWorkflowsPath });
    await worker.runUntil(async () => {
      const handle = await client.workflow.start('counter', { taskQueue, workflowId: uniqueName('updates'), args: [0] });
      assert.equal(await handle.executeUpdate('add', { args: [2] }), 2);
      assert.equal(await handle.executeUpdate('add', { args: [3] }), 5);
      const scheduled = (await handle.fetchHistory()).events.filter((e) => e.eventType === WORKFLOW_TASK_SCHEDULED);
      assert.deepEqual(scheduled.slice(1).map((e) => e.workflowTaskScheduledEventAttributes.taskQueue.kind), [STICKY, STICKY],
        'both updates\' tasks went to the worker\'s sticky queue');
      await handle.terminate();
    });
  } finally {
    await native.close();
  }
});

test('a real worker runs a long workflow sticky, answers a query, and another worker finishes it', DEADLINE, async () => {
  const taskQueue = uniqueName('tq');
  const steps = 40;
  const handle = await client.workflow.start('stepsAroundATick', { taskQueue, workflowId: uniqueName('steps'), args: [steps] });
  const run = async (fn) => {
    const native = await NativeConnection.connect({ address: server.address });
    try {
      const worker = await Worker.create({ connection: native, taskQueue, workflowsPath, activities });
      return await worker.runUntil(fn());
    } finally {
      await native.close();
    }
  };
  // The first worker runs the first half and stops (a graceful shutdown: ShutdownWorker).
  await run(async () => {
    for (let i = 0; i < 600 && (await handle.query('progress')) < steps / 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(await handle.query('progress'), steps / 2);
  });
  // A second worker, with an empty cache, finishes from the whole history.
  await handle.signal('tick');
  assert.equal(await run(() => handle.result()), steps);
  const history = await handle.fetchHistory();
  const stickyTasks = history.events.filter((e) => e.workflowTaskScheduledEventAttributes?.taskQueue?.kind === STICKY);
  assert.ok(stickyTasks.length >= steps - 4, `most workflow tasks went to a sticky queue (${stickyTasks.length})`);
});

// The SDK's cache holds one run: three runs at once evict each other. A sticky task for a
// run its worker evicted carries only the new events; the worker reads the whole history
// (GetWorkflowExecutionHistory) and answers, and the run stays sticky to the end.
test('a real worker whose cache holds one run finishes three runs that evict each other', DEADLINE, async () => {
  const taskQueue = uniqueName('tq');
  const steps = 6;
  const handles = [];
  for (let i = 0; i < 3; i++) {
    const handle = await client.workflow.start('stepsAroundATick', { taskQueue, workflowId: uniqueName('evicted'), args: [steps] });
    await handle.signal('tick');
    handles.push(handle);
  }
  const historyReads = async () => sumSamples(await server.scrape(), 'service_requests_total',
    (labels) => labels.includes('operation="GetWorkflowExecutionHistory"'));
  const before = await historyReads();
  const native = await NativeConnection.connect({ address: server.address });
  try {
    const worker = await Worker.create({ connection: native, taskQueue, workflowsPath, activities, maxCachedWorkflows: 1 });
    // Waited for by describe, not result(): the client's own history reads are not counted.
    await worker.runUntil(async () => {
      for (let i = 0; i < 600; i++) {
        const statuses = await Promise.all(handles.map(async (h) => (await h.describe()).status.name));
        if (statuses.every((s) => s === 'COMPLETED')) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error('the runs did not complete');
    });
  } finally {
    await native.close();
  }
  assert.ok(await historyReads() > before, 'the worker never read a whole history: no run was evicted');
  for (const handle of handles) {
    assert.equal(await handle.result(), steps);
    const kinds = (await handle.fetchHistory()).events
      .filter((e) => e.workflowTaskScheduledEventAttributes)
      .map((e) => e.workflowTaskScheduledEventAttributes.taskQueue.kind);
    assert.deepEqual(kinds.slice(1), kinds.slice(1).map(() => STICKY), 'every task after the first was sticky');
  }
});

// return_new_workflow_task: a worker running a local activity longer than its workflow task
// timeout (2 s) heartbeats with completions that force a new workflow task; each such task
// comes back started in the completion's answer (scheduled and started in one commit, so at
// the same time), not through the sticky queue and a poll.
test('a real worker\'s workflow task heartbeats get their next task in the completion\'s answer', DEADLINE, async () => {
  const taskQueue = uniqueName('tq');
  const native = await NativeConnection.connect({ address: server.address });
  try {
    const worker = await Worker.create({ connection: native, taskQueue, activities, workflowsPath });
    await worker.runUntil(async () => {
      const handle = await client.workflow.start('slowLocalActivity', {
        taskQueue, workflowId: uniqueName('local'), args: [4500], workflowTaskTimeout: '2 seconds',
      });
      assert.equal(await handle.result(), 4500);
      const events = (await handle.fetchHistory()).events;
      const handedBack = events.filter((e, i) => e.eventType === WORKFLOW_TASK_SCHEDULED && i > 1 &&
        events[i + 1]?.eventType === WORKFLOW_TASK_STARTED &&
        Number(events[i + 1].eventTime.seconds) === Number(e.eventTime.seconds) &&
        events[i + 1].eventTime.nanos === e.eventTime.nanos);
      assert.ok(handedBack.length >= 1,
        `a heartbeat's next task was scheduled and started in one commit (${JSON.stringify(events.map((e) => e.eventType))})`);
      assert.equal(events.filter((e) => e.eventType === WORKFLOW_TASK_TIMED_OUT).length, 0, 'no workflow task timed out');
    });
  } finally {
    await native.close();
  }
});

// A worker in a process of its own (worker-process.mjs); resolves once it polls.
function workerProcess(taskQueue, stickyScheduleToStart) {
  const script = fileURLToPath(new URL('./worker-process.mjs', import.meta.url));
  const child = spawn(process.execPath, [script, server.address, taskQueue, stickyScheduleToStart],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => { if (String(d).includes('ready')) resolve(child); });
    child.on('exit', (code) => reject(new Error(`the worker process exited (${code}) before it was ready`)));
  });
}

test('a sticky worker killed with kill -9 mid-workflow: its task times out to the normal queue and another worker finishes', DEADLINE, async () => {
  const taskQueue = uniqueName('tq');
  const steps = 20;
  const handle = await client.workflow.start('stepsAroundATick', { taskQueue, workflowId: uniqueName('killed'), args: [steps] });
  const child = await workerProcess(taskQueue, '1s');
  try {
    for (let i = 0; i < 600 && (await handle.query('progress')) < steps / 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(await handle.query('progress'), steps / 2, 'the first worker ran the first half');
  } finally {
    child.kill('SIGKILL');
  }
  await new Promise((resolve) => child.once('exit', resolve));
  // The run's next task goes to the dead worker's sticky queue; nobody takes it there.
  await handle.signal('tick');
  const native = await NativeConnection.connect({ address: server.address });
  try {
    const worker = await Worker.create({ connection: native, taskQueue, workflowsPath, activities });
    assert.equal(await worker.runUntil(handle.result()), steps);
  } finally {
    await native.close();
  }
  const events = (await handle.fetchHistory()).events;
  // The task on the dead worker's sticky queue timed out: schedule-to-start when nobody took
  // it, or start-to-close when the dead worker's last poll (its cancellation not seen yet by
  // the server, on a busy machine) took it. Either way the next task went to the normal queue.
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  const stickyTimedOut = events.filter((e) => e.eventType === WORKFLOW_TASK_TIMED_OUT).filter((e) => {
    const scheduled = byId.get(Number(e.workflowTaskTimedOutEventAttributes.scheduledEventId));
    return scheduled?.workflowTaskScheduledEventAttributes?.taskQueue?.kind === STICKY;
  });
  assert.ok(stickyTimedOut.length > 0, 'the sticky task timed out');
  const next = events.find((e) => Number(e.eventId) > Number(stickyTimedOut[0].eventId) &&
    e.eventType === WORKFLOW_TASK_SCHEDULED);
  assert.equal(next?.workflowTaskScheduledEventAttributes?.taskQueue?.kind, NORMAL,
    'the next task went to the normal queue');
  const stickyTasks = events.filter((e) => e.workflowTaskScheduledEventAttributes?.taskQueue?.kind === STICKY);
  assert.ok(stickyTasks.length >= steps / 2 - 2, `the first half ran sticky (${stickyTasks.length})`);
});
