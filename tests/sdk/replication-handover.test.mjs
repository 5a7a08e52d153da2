// Graceful failover through the HANDOVER replication state (reference/replication.md §4.6,
// §6.3 scenario 16). On the namespace's active cluster A, `--replication-state handover`
// holds every namespace call but Temporal's allow-list: it waits, then fails UNAVAILABLE
// `Namespace replication in REPLICATION_STATE_HANDOVER state.`; the state is A's own (never
// replicated, §2.1). `tock namespace failover NS --to b --graceful` sets it, waits until B
// acknowledged every task of A's shards, then makes B active (state NORMAL on both): no
// event is lost and the workflow goes on on B. A target that does not catch up in time
// leaves the namespace NORMAL and active on A (exit 4).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { runTock, uniqueName } from './server.mjs';
import { connectClusters, eventually, grpc, history, startCluster } from './clusters.mjs';

const DEADLINE = { timeout: 60_000 };
const DAY = 86400;
const HANDOVER = 'Namespace replication in REPLICATION_STATE_HANDOVER state.';
const REPLICATION_STATE_NORMAL = 1;
const REPLICATION_STATE_HANDOVER = 2;
const EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED = 2;
const EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED = 26;
const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));

Runtime.install({ logger: new DefaultLogger('WARN') });

let a;
let b;
let rawA; // a connection to A without the SDK's retries: a refusal is seen as it is

before(async () => {
  [a, b] = await Promise.all([startCluster('a', 1), startCluster('b', 2)]);
  await connectClusters(a, b);
  rawA = await Connection.connect({ address: a.address, interceptors: [] });
}, DEADLINE);

after(async () => {
  await rawA?.close();
  await Promise.allSettled([a?.stop(), b?.stop()]);
}, DEADLINE);

async function registerGlobal() {
  const namespace = uniqueName('handover');
  await a.workflow.registerNamespace({
    namespace,
    isGlobalNamespace: true,
    clusters: [{ clusterName: 'a' }, { clusterName: 'b' }],
    activeClusterName: 'a',
    workflowExecutionRetentionPeriod: { seconds: 2 * DAY },
  });
  await eventually(() => b.workflow.describeNamespace({ namespace }), { what: `${namespace} on b` });
  return namespace;
}

const state = async (cluster, namespace) => (await cluster.workflow.describeNamespace({ namespace })).replicationConfig;

async function setPull(cluster, from, enabled) {
  const r = await runTock(cluster.address, [
    'cluster', 'upsert', '--frontend-address', from.address, `--enable-connection=${enabled}`,
  ]);
  assert.equal(r.code, 0, r.stderr);
}

// A raw StartWorkflowExecution on A: resolves {ms, err} (err undefined when it started).
async function timedStart(namespace, taskQueue = 'nobody') {
  const started = Date.now();
  try {
    await rawA.workflowService.startWorkflowExecution({
      namespace,
      workflowId: uniqueName('during'),
      workflowType: { name: 'activityRoundTrip' },
      taskQueue: { name: taskQueue },
      requestId: uniqueName('req'),
    });
    return { ms: Date.now() - started };
  } catch (err) {
    return { ms: Date.now() - started, err };
  }
}

function assertHandoverRefusal({ ms, err }, what) {
  assert.ok(err, `${what} was refused`);
  assert.equal(err.code, grpc.UNAVAILABLE, `${what}: ${err.code} ${err.details}`);
  assert.equal(err.details, HANDOVER);
  // Temporal's wait without a deadline: the namespace cache refresh interval, 2 s.
  assert.ok(ms >= 1800 && ms < 10_000, `${what} waited ${ms} ms before failing`);
}

test('16. --replication-state handover on A holds writes, then UNAVAILABLE; B stays NORMAL; normal again lets them through', DEADLINE, async () => {
  const namespace = await registerGlobal();
  const r = await runTock(a.address, ['namespace', 'update', namespace, '--replication-state', 'handover', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).replicationConfig.state, 'REPLICATION_STATE_HANDOVER');
  assert.equal((await state(a, namespace)).state, REPLICATION_STATE_HANDOVER);

  assertHandoverRefusal(await timedStart(namespace), 'a start');
  let err = await rawA.workflowService.signalWorkflowExecution({
    namespace, workflowExecution: { workflowId: 'nobody' }, signalName: 'tick', requestId: uniqueName('req'),
  }).catch((e) => e);
  assert.equal(err.code, grpc.UNAVAILABLE);
  assert.equal(err.details, HANDOVER);
  // Temporal's allow-list answers at once.
  const listed = Date.now();
  await rawA.workflowService.listWorkflowExecutions({ namespace });
  assert.ok(Date.now() - listed < 1500, 'a list is not held');
  // The state is not replicated (Temporal publishes only NORMAL): B never saw it.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal((await state(b, namespace)).state, REPLICATION_STATE_NORMAL);

  // A call waiting when the handover ends goes on (here: the state set back to NORMAL).
  const waiting = timedStart(namespace);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const back = await runTock(a.address, ['namespace', 'update', namespace, '--replication-state', 'normal']);
  assert.equal(back.code, 0, back.stderr);
  const released = await waiting;
  assert.equal(released.err, undefined, `the held start went through: ${released.err?.details}`);
  assert.ok(released.ms < 1800, `released when the state changed (${released.ms} ms)`);

  // Temporal's checks of the state change.
  const local = uniqueName('local');
  await a.workflow.registerNamespace({ namespace: local, workflowExecutionRetentionPeriod: { seconds: DAY } });
  err = await a.workflow.updateNamespace({ namespace: local, replicationConfig: { state: REPLICATION_STATE_HANDOVER } }).catch((e) => e);
  assert.equal(err.code, grpc.INVALID_ARGUMENT);
  assert.equal(err.details, 'REPLICATION_STATE_HANDOVER can only be set for global namespace');
});

// Runs `fn()` with a worker polling `taskQueue` of `namespace` on `cluster`.
async function withWorker(cluster, namespace, taskQueue, fn) {
  const connection = await NativeConnection.connect({ address: cluster.address });
  try {
    const worker = await Worker.create({ connection, namespace, taskQueue, workflowsPath, activities });
    return await worker.runUntil(fn());
  } finally {
    await connection.close();
  }
}

const encoded = (events) => events.map((e) => Buffer.from(JSON.stringify(e)).toString('base64'));

// `tock namespace failover ... --graceful` on A, in the background: resolves {code, stdout, stderr}.
function gracefulFailover(namespace, extra = []) {
  return new Promise((resolve) => {
    const child = spawn(process.env.TOCK_CLI_BIN, [
      '--address', a.address, 'namespace', 'failover', namespace, '--to', 'b', '--graceful', ...extra, '-o', 'json',
    ]);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

test('16. tock namespace failover --graceful: a start during the handover fails, no event is lost, the workflow goes on on B', DEADLINE, async () => {
  const namespace = await registerGlobal();
  const workflowId = uniqueName('wf');
  const taskQueue = uniqueName('tq');
  let runId;
  const client = new Client({ connection: a.connection, namespace });
  await withWorker(a, namespace, taskQueue, async () => {
    const handle = await client.workflow.start('greetThenTwoTicks', { taskQueue, workflowId, args: ['handover'] });
    runId = handle.firstExecutionRunId;
    await handle.signal('tick');
    // The signal is handled on A (its workflow task completed after it).
    await eventually(async () => {
      const events = await history(a, namespace, workflowId, runId);
      const signaled = events.findIndex((e) => e.eventType === EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
      assert.ok(signaled > 0 && events.length > signaled + 2, 'the signal was handled');
    }, { what: 'the first tick handled on a' });
  });
  const beforeHandover = await history(a, namespace, workflowId, runId);

  // B stops pulling, so the handover lasts until it pulls again.
  await setPull(b, a, false);
  const failover = gracefulFailover(namespace, ['--handover-timeout', '20s']);
  await eventually(async () => assert.equal((await state(a, namespace)).state, REPLICATION_STATE_HANDOVER),
    { what: 'a in handover' });
  assertHandoverRefusal(await timedStart(namespace, taskQueue), 'a start during the graceful failover');
  await setPull(b, a, true);
  const done = await failover;
  assert.equal(done.code, 0, done.stderr);
  assert.match(done.stderr, /waiting for cluster b: shard \d+: acked -?\d+ of \d+/);
  const result = JSON.parse(done.stdout);
  assert.equal(result.replicationConfig.activeClusterName, 'b');
  assert.equal(Number(result.failoverVersion), 2);

  for (const cluster of [a, b]) {
    await eventually(async () => {
      const rc = await state(cluster, namespace);
      assert.equal(rc.activeClusterName, 'b');
      assert.equal(rc.state, REPLICATION_STATE_NORMAL);
    }, { what: `b active, state NORMAL, on ${cluster.name}` });
  }
  // Every event A wrote before the handover reached B as it was.
  const onBNow = await history(b, namespace, workflowId, runId);
  assert.deepEqual(encoded(onBNow.slice(0, beforeHandover.length)), encoded(beforeHandover));

  // The workflow goes on on B: the second tick, a worker on B.
  const clientB = new Client({ connection: b.connection, namespace });
  const output = await withWorker(b, namespace, taskQueue, async () => {
    await clientB.workflow.getHandle(workflowId, runId).signal('tick');
    return clientB.workflow.getHandle(workflowId, runId).result();
  });
  assert.equal(output, 'Hello, handover! x2');
  const onB = await history(b, namespace, workflowId, runId);
  assert.equal(onB.at(-1).eventType, EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
  assert.equal(Number(onB.at(-1).version), 2, 'completed on b');
  assert.deepEqual(encoded(onB.slice(0, beforeHandover.length)), encoded(beforeHandover));
  const onA = await eventually(async () => {
    const events = await history(a, namespace, workflowId, runId);
    assert.equal(events.length, onB.length);
    return events;
  }, { what: 'b\'s events on a' });
  assert.deepEqual(encoded(onA), encoded(onB));
});

test('16. a target that never catches up: the graceful failover times out (exit 4), A is NORMAL and active again', DEADLINE, async () => {
  const namespace = await registerGlobal();
  await setPull(b, a, false);
  try {
    // Something for B to miss.
    const started = await timedStart(namespace);
    assert.equal(started.err, undefined, started.err?.details);
    const failed = await gracefulFailover(namespace, ['--handover-timeout', '2s']);
    assert.equal(failed.code, 4, `${failed.stdout}\n${failed.stderr}`);
    assert.match(failed.stderr, /cluster b did not acknowledge every replication task within 2s \(shard \d+: acked -?\d+ of \d+(, shard \d+: acked -?\d+ of \d+)*\); namespace \S+ stays active in cluster a, replication state NORMAL again/);
    const rc = await state(a, namespace);
    assert.equal(rc.activeClusterName, 'a');
    assert.equal(rc.state, REPLICATION_STATE_NORMAL);
    const again = await timedStart(namespace);
    assert.equal(again.err, undefined, `writes pass again: ${again.err?.details}`);
    assert.ok(again.ms < 1500);
  } finally {
    await setPull(b, a, true);
  }
});

test('16. graceful failover refusals: not from the standby, not to a cluster outside the namespace', DEADLINE, async () => {
  const namespace = await registerGlobal();
  let r = await runTock(b.address, ['namespace', 'failover', namespace, '--to', 'b', '--graceful']);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /namespace \S+ is active in cluster a, and this is cluster b: a graceful failover holds the writes where they are made, so run it against cluster a \(--address\)/);
  r = await runTock(a.address, ['namespace', 'failover', namespace, '--to', 'c', '--graceful']);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /cluster c is not a cluster of namespace \S+ \(a, b\)/);
  assert.equal((await state(a, namespace)).state, REPLICATION_STATE_NORMAL, 'nothing was changed');
});
