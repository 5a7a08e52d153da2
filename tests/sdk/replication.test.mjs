// Multi-cluster replication between two tock-server clusters on loopback
// (reference/replication.md §6.3): A (initial failover version 1) and B (2), increment 10,
// each with its own database, connected through OperatorService like operators do.
// Scenarios 1-4: connecting and its refusals; namespaces created, updated and failed over
// on either cluster reach the other. Scenario 7 (history replication, happy path).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { uniqueName } from './server.mjs';
import {
  connectClusters, eventually, grpc, history, registerGlobal, rejection, startCluster, upsert,
} from './clusters.mjs';

const DEADLINE = { timeout: 60_000 };
const DAY = 86400;
const REPLICATION_STATE_NORMAL = 1;

let a;
let b;

before(async () => {
  a = await startCluster('a', 1);
  b = await startCluster('b', 2);
}, DEADLINE);

after(async () => {
  await Promise.allSettled([a?.stop(), b?.stop()]);
}, DEADLINE);

const clusterNamed = (list, name) => list.clusters.find((c) => c.clusterName === name);

const describe = (cluster, namespace) => cluster.workflow.describeNamespace({ namespace });

test('1. clusters connect both ways; each lists the other with its id, address, shards and version', DEADLINE, async () => {
  await connectClusters(a, b);
  const infoB = await b.workflow.getClusterInfo({});
  const infoA = await a.workflow.getClusterInfo({});
  assert.match(infoB.clusterId, /^[0-9a-f-]{36}$/);
  assert.notEqual(infoA.clusterId, infoB.clusterId);

  const onA = await a.operator.listClusters({});
  const bOnA = clusterNamed(onA, 'b');
  assert.ok(bOnA, `b is listed on a: ${JSON.stringify(onA.clusters.map((c) => c.clusterName))}`);
  assert.equal(bOnA.clusterId, infoB.clusterId);
  assert.equal(bOnA.address, b.address);
  assert.equal(bOnA.historyShardCount, infoB.historyShardCount);
  assert.equal(Number(bOnA.initialFailoverVersion), 2);
  assert.equal(bOnA.isConnectionEnabled, true);
  const aOnA = clusterNamed(onA, 'a');
  assert.equal(aOnA.clusterId, infoA.clusterId);
  assert.equal(Number(aOnA.initialFailoverVersion), 1);

  const aOnB = clusterNamed(await b.operator.listClusters({}), 'a');
  assert.equal(aOnB.clusterId, infoA.clusterId);
  assert.equal(aOnB.address, a.address);

  // Upserting again is an update: the connection can be switched off and on.
  await upsert(a, b, { enableConnection: false });
  assert.equal(clusterNamed(await a.operator.listClusters({}), 'b').isConnectionEnabled, false);
  await upsert(a, b);
  assert.equal(clusterNamed(await a.operator.listClusters({}), 'b').isConnectionEnabled, true);
});

test('1. refusals: self, increment, global namespaces off, initial version taken, unreachable, another cluster under a known name, unknown name', DEADLINE, async () => {
  const invalid = 'Unable connect to remote cluster with invalid config: ';
  let err = await rejection(a.operator.addOrUpdateRemoteCluster({ frontendAddress: a.address, enableRemoteClusterConnection: true }),
    grpc.INVALID_ARGUMENT);
  assert.equal(err.details, `${invalid}Cannot update current cluster metadata from rpc calls.`);

  const others = [];
  try {
    const wideIncrement = await startCluster('c', 3, { increment: 100 });
    others.push(wideIncrement);
    err = await rejection(upsert(a, wideIncrement), grpc.INVALID_ARGUMENT);
    assert.equal(err.details, `${invalid}Cannot add remote cluster due to failover version increment mismatch.`);

    const local = await startCluster('d', 4, { global: false });
    others.push(local);
    err = await rejection(upsert(a, local), grpc.INVALID_ARGUMENT);
    assert.equal(err.details, `${invalid}Cannot add remote cluster as global namespace is not supported.`);

    const sameVersion = await startCluster('e', 2);
    others.push(sameVersion);
    err = await rejection(upsert(a, sameVersion), grpc.INVALID_ARGUMENT);
    assert.equal(err.details, `${invalid}Cannot add remote cluster due to initial failover version conflict.`);

    // A new cluster that calls itself b (another database, another id).
    const impostor = await startCluster('b', 2);
    others.push(impostor);
    err = await rejection(upsert(a, impostor), grpc.INVALID_ARGUMENT);
    assert.equal(err.details, 'Unable to persist cluster info with error: <nil>.');
    assert.equal(clusterNamed(await a.operator.listClusters({}), 'b').address, b.address, 'b is unchanged');

    const closed = impostor.address;
    await impostor.stop();
    others.pop();
    err = await rejection(a.operator.addOrUpdateRemoteCluster({ frontendAddress: closed, enableRemoteClusterConnection: true }),
      grpc.UNAVAILABLE);
    assert.match(err.details, new RegExp(`^Unable connect to remote cluster ${closed} with error: .+\\.$`));
  } finally {
    await Promise.allSettled(others.map((c) => c.stop()));
  }

  err = await rejection(a.operator.removeRemoteCluster({ clusterName: 'nosuch' }), grpc.NOT_FOUND);
  assert.equal(err.details, 'The cluster to be deleted cannot be found in clusters cache.');
  const names = (await a.operator.listClusters({})).clusters.map((c) => c.clusterName).sort();
  assert.deepEqual(names, ['a', 'b'], 'nothing refused was stored');
});

test('2. a global namespace registered on A appears on B; local ones and ones without B do not', DEADLINE, async () => {
  await connectClusters(a, b);
  const local = uniqueName('local');
  await a.workflow.registerNamespace({ namespace: local, workflowExecutionRetentionPeriod: { seconds: DAY } });
  const onlyA = uniqueName('only-a');
  await registerGlobal(a, onlyA, ['a'], 'a');
  const namespace = uniqueName('global');
  await registerGlobal(a, namespace, ['a', 'b'], 'a', { description: 'replicated' });
  const onA = await describe(a, namespace);

  const onB = await eventually(() => describe(b, namespace), { what: `${namespace} on b` });
  assert.equal(onB.namespaceInfo.id, onA.namespaceInfo.id);
  assert.equal(onB.namespaceInfo.description, 'replicated');
  assert.equal(Number(onB.failoverVersion), 1);
  assert.equal(onB.isGlobalNamespace, true);
  assert.equal(onB.replicationConfig.activeClusterName, 'a');
  assert.deepEqual(onB.replicationConfig.clusters.map((c) => c.clusterName).sort(), ['a', 'b']);
  assert.equal(onB.replicationConfig.state, REPLICATION_STATE_NORMAL);
  assert.equal(Number(onB.config.workflowExecutionRetentionTtl.seconds), 2 * DAY);

  // Registered before the global one, so B has pulled past them.
  await rejection(describe(b, local), grpc.NOT_FOUND);
  await rejection(describe(b, onlyA), grpc.NOT_FOUND);
});

test('3. updates replicate from either cluster', DEADLINE, async () => {
  await connectClusters(a, b);
  const namespace = uniqueName('updated');
  await registerGlobal(a, namespace, ['a', 'b'], 'a');
  await eventually(() => describe(b, namespace), { what: `${namespace} on b` });

  await a.workflow.updateNamespace({
    namespace,
    updateInfo: { description: 'from a' },
    config: { workflowExecutionRetentionTtl: { seconds: 5 * DAY } },
  });
  await eventually(async () => {
    const onB = await describe(b, namespace);
    assert.equal(onB.namespaceInfo.description, 'from a');
    assert.equal(Number(onB.config.workflowExecutionRetentionTtl.seconds), 5 * DAY);
  }, { what: 'the update of a on b' });

  // Any cluster may update a global namespace (Temporal has no master check for updates).
  await b.workflow.updateNamespace({ namespace, updateInfo: { description: 'from b', data: { team: 'ops' } } });
  await eventually(async () => {
    const onA = await describe(a, namespace);
    assert.equal(onA.namespaceInfo.description, 'from b');
    assert.equal(onA.namespaceInfo.data.team, 'ops');
  }, { what: 'the update of b on a' });
  // And it does not come back as another change: both keep the same last config.
  const onB = await describe(b, namespace);
  assert.equal(onB.namespaceInfo.description, 'from b');
});

test('4. failover on A reaches B (version 2), failing back on B reaches A (11), a no-op keeps the version', DEADLINE, async () => {
  await connectClusters(a, b);
  const namespace = uniqueName('failover');
  await registerGlobal(a, namespace, ['a', 'b'], 'a');
  await eventually(() => describe(b, namespace), { what: `${namespace} on b` });

  const toB = await a.workflow.updateNamespace({ namespace, replicationConfig: { activeClusterName: 'b' } });
  assert.equal(Number(toB.failoverVersion), 2);
  const versions = (d) => d.failoverHistory.map((f) => Number(f.failoverVersion));
  await eventually(async () => {
    const onB = await describe(b, namespace);
    assert.equal(onB.replicationConfig.activeClusterName, 'b');
    assert.equal(Number(onB.failoverVersion), 2);
    assert.equal(onB.replicationConfig.state, REPLICATION_STATE_NORMAL);
    assert.equal(versions(onB).at(-1), 2);
  }, { what: 'the failover to b on b' });

  const back = await b.workflow.updateNamespace({ namespace, replicationConfig: { activeClusterName: 'a' } });
  assert.equal(Number(back.failoverVersion), 11);
  await eventually(async () => {
    const onA = await describe(a, namespace);
    assert.equal(onA.replicationConfig.activeClusterName, 'a');
    assert.equal(Number(onA.failoverVersion), 11);
    assert.deepEqual(versions(onA).slice(-2), [2, 11]);
  }, { what: 'the failback to a on a' });
  const onB = await describe(b, namespace);
  assert.deepEqual(versions(onB).slice(-2), [2, 11]);

  const same = await a.workflow.updateNamespace({ namespace, replicationConfig: { activeClusterName: 'a' } });
  assert.equal(Number(same.failoverVersion), 11, 'failing over to the active cluster changes nothing');
});

const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));

// Runs `fn(taskQueue)` with an SDK worker polling `cluster` in `namespace`.
async function withWorker(cluster, namespace, fn) {
  const connection = await NativeConnection.connect({ address: cluster.address });
  try {
    const taskQueue = uniqueName('tq');
    const worker = await Worker.create({ connection, namespace, taskQueue, workflowsPath, activities });
    return await worker.runUntil(fn(taskQueue));
  } finally {
    await connection.close();
  }
}

// What replication must keep of each event: all of it (ids, versions, task ids, times).
const encoded = (events) => events.map((e) => Buffer.from(JSON.stringify(e)).toString('base64'));

test('7. a workflow run on A is on B with the same events, ids, versions and task ids', { timeout: 90_000 }, async () => {
  await connectClusters(a, b);
  const namespace = uniqueName('happy');
  await registerGlobal(a, namespace, ['a', 'b'], 'a');
  await eventually(() => describe(b, namespace), { what: `${namespace} on b` });
  const client = new Client({ connection: a.connection, namespace });
  const workflowId = uniqueName('wf');
  const { runId, result } = await withWorker(a, namespace, async (taskQueue) => {
    const handle = await client.workflow.start('activityRoundTrip', { taskQueue, workflowId, args: ['replica'] });
    return { runId: handle.firstExecutionRunId, result: await handle.result() };
  });
  assert.equal(result, 'Hello, replica!');
  const onA = await history(a, namespace, workflowId, runId);
  assert.ok(onA.length >= 11, `a completed run with an activity has at least 11 events, got ${onA.length}`);
  assert.ok(onA.every((e) => Number(e.version) === 1), 'every event of A carries version 1');
  const onB = await eventually(async () => {
    const events = await history(b, namespace, workflowId, runId);
    assert.equal(events.length, onA.length);
    return events;
  }, { what: `the run's ${onA.length} events on b`, timeoutMs: 20_000 });
  assert.deepEqual(encoded(onB), encoded(onA));
  const described = await b.workflow.describeWorkflowExecution({ namespace, execution: { workflowId, runId } });
  assert.equal(described.workflowExecutionInfo.status, 2 /* COMPLETED */);
});

async function waitForEvent(cluster, namespace, workflowId, runId, eventType, what) {
  return eventually(async () => {
    const events = await history(cluster, namespace, workflowId, runId);
    const found = events.find((e) => e.eventType === eventType);
    assert.ok(found, `no event of type ${eventType} yet`);
    return events;
  }, { what, timeoutMs: 20_000 });
}

const EVENT_TYPE_TIMER_STARTED = 17;
const EVENT_TYPE_TIMER_FIRED = 18;
const EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED = 2;

test('8. a timer started on A fires on B after a failover; A gets B\'s events; both histories are equal', { timeout: 120_000 }, async () => {
  await connectClusters(a, b);
  const namespace = uniqueName('timer-failover');
  await registerGlobal(a, namespace, ['a', 'b'], 'a');
  await eventually(() => describe(b, namespace), { what: `${namespace} on b` });
  const workflowId = uniqueName('wf');
  let runId;
  await withWorker(a, namespace, async (taskQueue) => {
    const handle = await new Client({ connection: a.connection, namespace }).workflow.start('timerThenReturn', {
      taskQueue, workflowId, args: [6000],
    });
    runId = handle.firstExecutionRunId;
    await waitForEvent(a, namespace, workflowId, runId, EVENT_TYPE_TIMER_STARTED, 'the timer started on a');
    // The worker's task queue is the same name on B: the workflow goes on there.
    await waitForEvent(b, namespace, workflowId, runId, EVENT_TYPE_TIMER_STARTED, 'the timer replicated to b');
    const toB = await a.workflow.updateNamespace({ namespace, replicationConfig: { activeClusterName: 'b' } });
    assert.equal(Number(toB.failoverVersion), 2);
    await eventually(async () => {
      assert.equal((await describe(b, namespace)).replicationConfig.activeClusterName, 'b');
    }, { what: 'b active on b' });
    // Resume on B with a worker on the same task queue.
    const connection = await NativeConnection.connect({ address: b.address });
    try {
      const worker = await Worker.create({ connection, namespace, taskQueue, workflowsPath, activities });
      await worker.runUntil(waitForEvent(b, namespace, workflowId, runId, EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
        'the run completed on b'));
    } finally {
      await connection.close();
    }
  });
  const onB = await history(b, namespace, workflowId, runId);
  const fired = onB.find((e) => e.eventType === EVENT_TYPE_TIMER_FIRED);
  assert.equal(Number(fired.version), 2, 'the timer fired on b, after the failover');
  assert.equal(Number(onB.at(-1).version), 2);
  const onA = await eventually(async () => {
    const events = await history(a, namespace, workflowId, runId);
    assert.equal(events.length, onB.length);
    return events;
  }, { what: 'b\'s events on a', timeoutMs: 20_000 });
  assert.deepEqual(encoded(onA), encoded(onB));
});

test('10. workflow-id rules hold across a failover: RejectDuplicate refused on B, AllowDuplicate starts a run that reaches A', { timeout: 90_000 }, async () => {
  await connectClusters(a, b);
  const namespace = uniqueName('id-rules');
  await registerGlobal(a, namespace, ['a', 'b'], 'a');
  await eventually(() => describe(b, namespace), { what: `${namespace} on b` });
  const workflowId = uniqueName('wf');
  const first = await withWorker(a, namespace, async (taskQueue) => {
    const handle = await new Client({ connection: a.connection, namespace }).workflow.start('activityRoundTrip', {
      taskQueue, workflowId, args: ['first'],
    });
    await handle.result();
    return { runId: handle.firstExecutionRunId, taskQueue };
  });
  await waitForEvent(b, namespace, workflowId, first.runId, EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, 'the first run completed on b');
  await a.workflow.updateNamespace({ namespace, replicationConfig: { activeClusterName: 'b' } });
  await eventually(async () => {
    assert.equal((await describe(b, namespace)).replicationConfig.activeClusterName, 'b');
  }, { what: 'b active on b' });
  const onB = new Client({ connection: b.connection, namespace });
  await assert.rejects(
    onB.workflow.start('activityRoundTrip', {
      taskQueue: first.taskQueue, workflowId, args: ['again'], workflowIdReusePolicy: 'REJECT_DUPLICATE',
    }),
    (err) => err.name === 'WorkflowExecutionAlreadyStartedError',
  );
  const second = await withWorker(b, namespace, async (taskQueue) => {
    const handle = await onB.workflow.start('activityRoundTrip', {
      taskQueue, workflowId, args: ['second'], workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    });
    assert.equal(await handle.result(), 'Hello, second!');
    return handle.firstExecutionRunId;
  });
  assert.notEqual(second, first.runId);
  const onA = await waitForEvent(a, namespace, workflowId, second, EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
    'the second run completed on a');
  assert.ok(onA.every((e) => Number(e.version) === 2), 'the second run is all b\'s (version 2)');
  // Both clusters agree on the workflow's current run.
  for (const cluster of [a, b]) {
    const d = await cluster.workflow.describeWorkflowExecution({ namespace, execution: { workflowId } });
    assert.equal(d.workflowExecutionInfo.execution.runId, second, `current run on ${cluster.name}`);
  }
});
