// Active and standby clusters (reference/replication.md §4.1-4.3, §6.3 scenarios 5 and 6).
// 5: with A active and B its standby (no forwarding), B refuses every write with Temporal's
//    NamespaceNotActive (FAILED_PRECONDITION, exact message, NamespaceNotActiveFailure
//    detail), serves reads, lets workers poll (they get no workflow or activity task), and
//    refuses to delete the namespace; A refuses to forget B while the namespace uses it.
// 6: D started with selected-apis-forwarding sends Start, Signal and Query on a namespace
//    active in C to C; the worker's completions and calls that ask not to be redirected are
//    refused, and a local namespace of D never forwards. E, with all-apis-forwarding, sends
//    reads and completions too.
// (Runs do not replicate yet, so a query answered by a standby's worker is not tested.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import proto from '@temporalio/proto';
import { uniqueName } from './server.mjs';
import { connectClusters, eventually, grpc, registerGlobal, rejection, startCluster } from './clusters.mjs';
import * as activities from './activities.mjs';

const DEADLINE = { timeout: 90_000 };
const HOOK_DEADLINE = { timeout: 60_000 };
const DAY = 86400;
const { google, temporal } = proto;
const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));

Runtime.install({ logger: new DefaultLogger('WARN') });

let a;
let b;
let c;
let d;
let e;

before(async () => {
  [a, b, c, d, e] = await Promise.all([
    startCluster('a', 1),
    startCluster('b', 2),
    startCluster('c', 3),
    startCluster('d', 4, { args: ['--dc-redirection-policy', 'selected-apis-forwarding'] }),
    startCluster('e', 5, { args: ['--dc-redirection-policy', 'all-apis-forwarding'] }),
  ]);
  await connectClusters(a, b);
  await connectClusters(c, d);
  await connectClusters(c, e);
}, HOOK_DEADLINE);

after(async () => {
  await Promise.allSettled([a?.stop(), b?.stop(), c?.stop(), d?.stop(), e?.stop()]);
}, HOOK_DEADLINE);

// Waits until `cluster` knows the namespace (namespace replication).
async function replicated(cluster, namespace) {
  await eventually(() => cluster.workflow.describeNamespace({ namespace }), {
    what: `${namespace} on ${cluster.name}`,
  });
}

// The NamespaceNotActiveFailure in a gRPC error's grpc-status-details-bin trailer.
function notActiveDetail(err) {
  const bin = err.metadata?.get('grpc-status-details-bin')?.[0];
  assert.ok(bin && typeof bin !== 'string', 'the error carries grpc-status-details-bin');
  const { details } = google.rpc.Status.decode(bin);
  const entry = details.find((x) => x.type_url?.endsWith('temporal.api.errordetails.v1.NamespaceNotActiveFailure'));
  assert.ok(entry, `a NamespaceNotActiveFailure detail among ${details.map((x) => x.type_url)}`);
  const { namespace, currentCluster, activeCluster } =
    temporal.api.errordetails.v1.NamespaceNotActiveFailure.decode(entry.value);
  return { namespace, currentCluster, activeCluster };
}

async function assertNotActive(promise, namespace, current, active) {
  const err = await rejection(promise, grpc.FAILED_PRECONDITION);
  assert.equal(err.details,
    `Namespace: ${namespace} is active in cluster: ${active}, while current cluster ${current} is a standby cluster.`);
  assert.deepEqual(notActiveDetail(err), { namespace, currentCluster: current, activeCluster: active });
}

const startRequest = (namespace, workflowId, taskQueue, extra = {}) => ({
  namespace,
  workflowId,
  workflowType: { name: 'waitForSignal' },
  taskQueue: { name: taskQueue },
  requestId: uniqueName('req'),
  ...extra,
});

async function withWorker(cluster, namespace, taskQueue, fn) {
  const connection = await NativeConnection.connect({ address: cluster.address });
  try {
    const worker = await Worker.create({ connection, namespace, taskQueue, workflowsPath, activities });
    return await worker.runUntil(fn());
  } finally {
    await connection.close();
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- Scenario 5 -------------------------------------------------------------------------

const ns5 = uniqueName('standby');

test('5. a standby refuses writes with NamespaceNotActive and its detail', DEADLINE, async () => {
  await registerGlobal(a, ns5, ['a', 'b'], 'a');
  await replicated(b, ns5);
  // A run on the active side to aim at.
  const workflowId = uniqueName('wf');
  const { runId } = await a.workflow.startWorkflowExecution(startRequest(ns5, workflowId, uniqueName('tq')));
  const execution = { workflowId, runId };

  await assertNotActive(b.workflow.startWorkflowExecution(startRequest(ns5, uniqueName('wf'), 'tq')), ns5, 'b', 'a');
  await assertNotActive(b.workflow.signalWorkflowExecution({
    namespace: ns5, workflowExecution: execution, signalName: 'unblock', requestId: uniqueName('req'),
  }), ns5, 'b', 'a');
  await assertNotActive(b.workflow.signalWithStartWorkflowExecution({
    ...startRequest(ns5, uniqueName('wf'), 'tq'), signalName: 'unblock',
  }), ns5, 'b', 'a');
  await assertNotActive(b.workflow.terminateWorkflowExecution({
    namespace: ns5, workflowExecution: execution, reason: 'test',
  }), ns5, 'b', 'a');
  await assertNotActive(b.workflow.requestCancelWorkflowExecution({
    namespace: ns5, workflowExecution: execution, requestId: uniqueName('req'),
  }), ns5, 'b', 'a');
  await assertNotActive(b.workflow.resetWorkflowExecution({
    namespace: ns5, workflowExecution: execution, reason: 'test', workflowTaskFinishEventId: 3,
    requestId: uniqueName('req'),
  }), ns5, 'b', 'a');
  await assertNotActive(b.workflow.respondActivityTaskCompleted({
    namespace: ns5, taskToken: Buffer.from('made-up'),
  }), ns5, 'b', 'a');
  // The active side still takes them.
  await a.workflow.terminateWorkflowExecution({ namespace: ns5, workflowExecution: execution, reason: 'test' });
});

test('5. a standby serves reads', DEADLINE, async () => {
  const described = await b.workflow.describeNamespace({ namespace: ns5 });
  assert.equal(described.replicationConfig.activeClusterName, 'a');
  const listed = await b.workflow.listWorkflowExecutions({ namespace: ns5, pageSize: 10 });
  assert.ok(Array.isArray(listed.executions));
  const counted = await b.workflow.countWorkflowExecutions({ namespace: ns5 });
  assert.ok(counted.count !== undefined);
  await b.workflow.describeTaskQueue({ namespace: ns5, taskQueue: { name: 'tq' } });
  await b.workflow.listSchedules({ namespace: ns5, maximumPageSize: 10 });
  // A run this cluster does not hold: NOT_FOUND, not NamespaceNotActive.
  const unknown = { workflowId: uniqueName('nope') };
  await rejection(b.workflow.describeWorkflowExecution({ namespace: ns5, execution: unknown }), grpc.NOT_FOUND);
  await rejection(b.workflow.getWorkflowExecutionHistory({ namespace: ns5, execution: unknown }), grpc.NOT_FOUND);
});

test('5. workers poll a standby without errors and get no task', DEADLINE, async () => {
  const taskQueue = uniqueName('tq');
  // A run on A with that task queue, and no worker on A: its first workflow task waits.
  const workflowId = uniqueName('wf');
  const { runId } = await a.workflow.startWorkflowExecution(startRequest(ns5, workflowId, taskQueue));
  const connection = await NativeConnection.connect({ address: b.address });
  try {
    const worker = await Worker.create({ connection, namespace: ns5, taskQueue, workflowsPath, activities });
    await worker.runUntil(async () => {
      await sleep(3000);
      // The polls reached matching (they were not refused): B lists the worker as a poller.
      for (const taskQueueType of [1, 2]) {
        const { pollers } = await b.workflow.describeTaskQueue({ namespace: ns5, taskQueue: { name: taskQueue }, taskQueueType });
        assert.ok(pollers.length > 0, `B lists the worker polling task queue type ${taskQueueType}`);
      }
    });
    assert.equal(worker.getState(), 'STOPPED');
  } finally {
    await connection.close();
  }
  // No workflow task of the run was started, on either side.
  const WORKFLOW_TASK_STARTED = 6;
  for (const cluster of [a, b]) {
    let history;
    try {
      ({ history } = await cluster.workflow.getWorkflowExecutionHistory({ namespace: ns5, execution: { workflowId, runId } }));
    } catch (err) {
      if (cluster === b && err.code === grpc.NOT_FOUND) continue; // not replicated (yet)
      throw err;
    }
    assert.ok(!history.events.some((e) => e.eventType === WORKFLOW_TASK_STARTED),
      `no workflow task started on ${cluster.name}: ${history.events.map((e) => e.eventType)}`);
  }
  await a.workflow.terminateWorkflowExecution({ namespace: ns5, workflowExecution: { workflowId, runId }, reason: 'test' });
});

test('5. a standby does not delete the namespace; the active side does not forget the standby', DEADLINE, async () => {
  let err = await rejection(b.operator.deleteNamespace({ namespace: ns5 }), grpc.FAILED_PRECONDITION);
  assert.equal(err.details,
    `namespace ${ns5} is passive in current cluster b: remove cluster b from cluster list or make namespace active in this cluster and retry`);
  err = await rejection(a.operator.removeRemoteCluster({ clusterName: 'b' }), grpc.FAILED_PRECONDITION);
  assert.equal(err.details, `cannot remove cluster "b": still referenced by namespace "${ns5}"`);
});

// ---- Scenario 6 -------------------------------------------------------------------------

const ns6 = uniqueName('forwarded');

test('6. Start, Signal and Query sent to the standby reach the active cluster', DEADLINE, async () => {
  await registerGlobal(c, ns6, ['c', 'd'], 'c');
  await replicated(d, ns6);
  const taskQueue = uniqueName('tq');
  const onD = new Client({ connection: d.connection, namespace: ns6 });
  const onC = new Client({ connection: c.connection, namespace: ns6 });
  const workflowId = uniqueName('wf');
  await withWorker(c, ns6, taskQueue, async () => {
    const handle = await onD.workflow.start('waitForSignal', { taskQueue, workflowId });
    // The run lives on C.
    const described = await c.workflow.describeWorkflowExecution({
      namespace: ns6, execution: { workflowId, runId: handle.firstExecutionRunId },
    });
    assert.equal(described.workflowExecutionInfo.execution.runId, handle.firstExecutionRunId);

    // The query is answered by C's worker.
    assert.equal(await onD.workflow.getHandle(workflowId).query('status'), 'waiting');
    await onD.workflow.getHandle(workflowId).signal('unblock');
    assert.equal(await onC.workflow.getHandle(workflowId).result(), 'unblocked');
    assert.equal(await onD.workflow.getHandle(workflowId).query('status'), 'unblocked');
  });
});

test('6. completions are not forwarded, nor calls that ask not to be', DEADLINE, async () => {
  await assertNotActive(d.workflow.respondActivityTaskCompleted({
    namespace: ns6, taskToken: Buffer.from('made-up'),
  }), ns6, 'd', 'c');
  await assertNotActive(d.workflow.respondWorkflowTaskCompleted({
    namespace: ns6, taskToken: Buffer.from('made-up'),
  }), ns6, 'd', 'c');
  await assertNotActive(d.connection.withMetadata({ 'xdc-redirection': 'false' }, () =>
    d.workflow.startWorkflowExecution(startRequest(ns6, uniqueName('wf'), 'tq'))), ns6, 'd', 'c');
});

test('6. a local namespace of the forwarding cluster never forwards', DEADLINE, async () => {
  const local = uniqueName('local');
  await d.workflow.registerNamespace({ namespace: local, workflowExecutionRetentionPeriod: { seconds: DAY } });
  const workflowId = uniqueName('wf');
  const { runId } = await d.workflow.startWorkflowExecution(startRequest(local, workflowId, 'tq'));
  const described = await d.workflow.describeWorkflowExecution({ namespace: local, execution: { workflowId, runId } });
  assert.equal(described.workflowExecutionInfo.execution.runId, runId);
  await rejection(c.workflow.describeNamespace({ namespace: local }), grpc.NOT_FOUND);
});

test('6. all-apis-forwarding sends reads and completions to the active cluster too', DEADLINE, async () => {
  const ns = uniqueName('all-apis');
  await registerGlobal(c, ns, ['c', 'e'], 'c');
  await replicated(e, ns);
  const workflowId = uniqueName('wf');
  const { runId } = await e.workflow.startWorkflowExecution(startRequest(ns, workflowId, uniqueName('tq')));
  // Read through E: answered by C, which holds the run.
  const described = await e.workflow.describeWorkflowExecution({ namespace: ns, execution: { workflowId, runId } });
  assert.equal(described.workflowExecutionInfo.execution.runId, runId);
  // A completion through E is C's to judge: not NamespaceNotActive.
  const err = await rejection(e.workflow.respondActivityTaskCompleted({ namespace: ns, taskToken: Buffer.from('made-up') }),
    grpc.INVALID_ARGUMENT);
  assert.doesNotMatch(err.details, /standby/);
  // The namespace calls stay local.
  assert.equal((await e.workflow.describeNamespace({ namespace: ns })).replicationConfig.activeClusterName, 'c');
  await c.workflow.terminateWorkflowExecution({ namespace: ns, workflowExecution: { workflowId, runId }, reason: 'test' });
});
