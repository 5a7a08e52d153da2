// Failover with work in flight between two tock-server clusters on loopback
// (reference/replication.md §4.5, §6.3 scenario 9): A (initial failover version 1) and B (2),
// increment 10, each with its own database.
//  9a. A workflow task started on A (the test holds it, as a worker that went quiet) is
//      failed on B by B's first write after the failover, with cause
//      WORKFLOW_TASK_FAILED_CAUSE_FAILOVER_CLOSE_COMMAND and B's version; a new one goes to
//      B's workers; the late completion sent to A is refused with NamespaceNotActive.
//  9b. (Temporal's TestActivityHeartbeatFailover) an activity heartbeats `100` on A, its
//      worker stops, the heartbeat timeout passes; after the failover B shows the pending
//      activity with those details and the HEARTBEAT timeout as its last failure, and a
//      worker of B runs attempt 2 with the details.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { uniqueName } from './server.mjs';
import { connectClusters, eventually, grpc, history, registerGlobal, rejection, startCluster } from './clusters.mjs';

const TASK_QUEUE_KIND_NORMAL = 1;
const EVENT_TYPE_WORKFLOW_TASK_SCHEDULED = 5;
const EVENT_TYPE_WORKFLOW_TASK_STARTED = 6;
const EVENT_TYPE_WORKFLOW_TASK_FAILED = 9;
const EVENT_TYPE_ACTIVITY_TASK_SCHEDULED = 10;
const EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED = 26;
const EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED = 2;
const WORKFLOW_TASK_FAILED_CAUSE_FAILOVER_CLOSE_COMMAND = 18;
const PENDING_ACTIVITY_STATE_SCHEDULED = 1;
const TIMEOUT_TYPE_HEARTBEAT = 4;
const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));

let a;
let b;

before(async () => {
  a = await startCluster('a', 1);
  b = await startCluster('b', 2);
  await connectClusters(a, b);
}, { timeout: 60_000 });

after(async () => {
  await Promise.allSettled([a?.stop(), b?.stop()]);
}, { timeout: 60_000 });

// A global namespace active on A, known to B.
async function globalNamespace(prefix) {
  const namespace = uniqueName(prefix);
  await registerGlobal(a, namespace);
  await eventually(() => b.workflow.describeNamespace({ namespace }), { what: `${namespace} on b` });
  return namespace;
}

async function failOverToB(namespace) {
  const toB = await a.workflow.updateNamespace({ namespace, replicationConfig: { activeClusterName: 'b' } });
  assert.equal(Number(toB.failoverVersion), 2);
  await eventually(async () => {
    assert.equal((await b.workflow.describeNamespace({ namespace })).replicationConfig.activeClusterName, 'b');
  }, { what: 'b active on b' });
}

async function waitForEvent(cluster, namespace, workflowId, eventType, what) {
  return eventually(async () => {
    const events = await history(cluster, namespace, workflowId);
    assert.ok(events.some((e) => e.eventType === eventType), `no event of type ${eventType} yet`);
    return events;
  }, { what, timeoutMs: 20_000 });
}

// Both clusters end with the same events (ids, versions, task ids, times, attributes).
async function expectSameHistories(namespace, workflowId) {
  const encoded = (events) => events.map((e) => Buffer.from(JSON.stringify(e)).toString('base64'));
  const onB = await history(b, namespace, workflowId);
  await eventually(async () => {
    assert.deepEqual(encoded(await history(a, namespace, workflowId)), encoded(onB));
  }, { what: 'the same history on a and b', timeoutMs: 20_000 });
}

test('9a. a workflow task started on A is failed on B by its first write after the failover and rescheduled for B\'s workers', { timeout: 120_000 }, async () => {
  const namespace = await globalNamespace('wft-failover');
  const taskQueue = uniqueName('tq');
  const workflowId = uniqueName('wf');
  await new Client({ connection: a.connection, namespace }).workflow.start('waitForSignal', { taskQueue, workflowId });
  // A worker of A takes the first workflow task and goes quiet.
  const held = await a.workflow.pollWorkflowTaskQueue({
    namespace, taskQueue: { name: taskQueue, kind: TASK_QUEUE_KIND_NORMAL }, identity: 'quiet-worker-on-a',
  });
  assert.ok(held.taskToken?.length, 'A handed out the workflow task');
  await waitForEvent(b, namespace, workflowId, EVENT_TYPE_WORKFLOW_TASK_STARTED, 'the started task on b');
  await failOverToB(namespace);

  await new Client({ connection: b.connection, namespace }).workflow.getHandle(workflowId).signal('unblock');
  const events = await history(b, namespace, workflowId);
  assert.deepEqual(events.map((e) => e.eventType), [
    1, EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, EVENT_TYPE_WORKFLOW_TASK_STARTED, EVENT_TYPE_WORKFLOW_TASK_FAILED,
    EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
  ]);
  const failed = events[3].workflowTaskFailedEventAttributes;
  assert.equal(failed.cause, WORKFLOW_TASK_FAILED_CAUSE_FAILOVER_CLOSE_COMMAND);
  assert.equal(Number(failed.scheduledEventId), 2);
  assert.equal(Number(failed.startedEventId), 3);
  assert.deepEqual(events.map((e) => Number(e.version)), [1, 1, 1, 2, 2, 2]);

  // The worker of A answers late: A is a standby now.
  const late = await rejection(a.workflow.respondWorkflowTaskCompleted({
    namespace, taskToken: held.taskToken, identity: 'quiet-worker-on-a', commands: [],
  }), grpc.FAILED_PRECONDITION);
  assert.equal(late.details, `Namespace: ${namespace} is active in cluster: b, while current cluster a is a standby cluster.`);

  // B's worker gets the new task, with the signal, and completes the workflow.
  const connection = await NativeConnection.connect({ address: b.address });
  try {
    const worker = await Worker.create({ connection, namespace, taskQueue, workflowsPath, activities });
    const result = await worker.runUntil(new Client({ connection: b.connection, namespace }).workflow
      .getHandle(workflowId).result());
    assert.equal(result, 'unblocked');
  } finally {
    await connection.close();
  }
  await expectSameHistories(namespace, workflowId);
});

test('9b. an activity\'s heartbeat details, attempt and last failure reach B, whose worker runs attempt 2 with them', { timeout: 120_000 }, async () => {
  const namespace = await globalNamespace('heartbeat-failover');
  const taskQueue = uniqueName('tq');
  const activityQueue = `${taskQueue}-activities`;
  const workflowId = uniqueName('wf');
  const connectionA = await NativeConnection.connect({ address: a.address });
  try {
    const workerA = await Worker.create({ connection: connectionA, namespace, taskQueue, workflowsPath, activities });
    await workerA.runUntil(async () => {
      await new Client({ connection: a.connection, namespace }).workflow.start('heartbeatSurvivesFailover', {
        taskQueue, workflowId, args: [activityQueue],
      });
      await waitForEvent(a, namespace, workflowId, EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, 'the activity scheduled on a');
    });
  } finally {
    await connectionA.close();
  }
  // The activity's worker on A: it takes attempt 1, heartbeats 100, and stops.
  const task = await a.workflow.pollActivityTaskQueue({
    namespace, taskQueue: { name: activityQueue, kind: TASK_QUEUE_KIND_NORMAL }, identity: 'worker-on-a',
  });
  assert.equal(task.attempt, 1);
  const json = (value) => ({ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(value)) });
  await a.workflow.recordActivityTaskHeartbeat({ namespace, taskToken: task.taskToken, details: { payloads: [json(100)] } });
  const pendingOn = async (cluster) => {
    const d = await cluster.workflow.describeWorkflowExecution({ namespace, execution: { workflowId } });
    assert.equal(d.pendingActivities.length, 1);
    return d.pendingActivities[0];
  };
  // The heartbeat timeout (3 s) passes on A, which schedules attempt 2.
  await eventually(async () => assert.equal((await pendingOn(a)).attempt, 2), { what: 'attempt 2 on a', timeoutMs: 20_000 });
  await failOverToB(namespace);

  const pending = await eventually(async () => {
    const p = await pendingOn(b);
    assert.equal(p.attempt, 2);
    return p;
  }, { what: 'attempt 2 on b', timeoutMs: 20_000 });
  assert.equal(pending.state, PENDING_ACTIVITY_STATE_SCHEDULED);
  assert.equal(Buffer.from(pending.heartbeatDetails.payloads[0].data).toString(), '100');
  assert.equal(pending.lastFailure.timeoutFailureInfo.timeoutType, TIMEOUT_TYPE_HEARTBEAT);

  // B's workers: the workflow's and the activity's.
  const connectionB = await NativeConnection.connect({ address: b.address });
  try {
    const workflowWorker = await Worker.create({ connection: connectionB, namespace, taskQueue, workflowsPath, activities });
    const activityWorker = await Worker.create({ connection: connectionB, namespace, taskQueue: activityQueue, activities });
    const result = await workflowWorker.runUntil(activityWorker.runUntil(
      new Client({ connection: b.connection, namespace }).workflow.getHandle(workflowId).result()));
    assert.deepEqual(result, { attempt: 2, heartbeatDetails: 100 });
  } finally {
    await connectionB.close();
  }
  const events = await waitForEvent(b, namespace, workflowId, EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, 'completed on b');
  assert.equal(Number(events.at(-1).version), 2);
  await expectSameHistories(namespace, workflowId);
});
