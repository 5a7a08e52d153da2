// Conflict resolution between two tock-server clusters (reference/replication.md §3.5, §6.3
// scenarios 13 and 14): A (initial failover version 1) and B (2), increment 10. A partition
// lets both clusters write the same workflow; when it heals, the histories become a tree, the
// branch with the higher version wins on both sides, signals of the losing branch are applied
// again, and a run that loses to a newer run of its workflow id is terminated by the cluster
// that wrote it last (or kept as a zombie where it arrives late). A losing branch that a
// standby finds has its signals forwarded to the active cluster (AdminService.ReapplyEvents).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tockJson, uniqueName } from './server.mjs';
import { connectClusters, eventually, history, registerGlobal, startCluster, upsert } from './clusters.mjs';

const DEADLINE = { timeout: 90_000 };
const EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED = 26;
const EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED = 27;
const STATUS_RUNNING = 1;
const STATUS_TERMINATED = 5;

let a;
let b;
let faultsDir;

// A's test-only replication faults (--replication-faults-file), read before each pull.
function setFaultsOfA(faults) {
  const file = join(faultsDir, 'a-faults.json');
  writeFileSync(`${file}.tmp`, JSON.stringify(faults));
  renameSync(`${file}.tmp`, file);
}

before(async () => {
  faultsDir = mkdtempSync(join(tmpdir(), 'tock-conflicts-'));
  setFaultsOfA({});
  a = await startCluster('a', 1, { args: ['--replication-faults-file', join(faultsDir, 'a-faults.json')] });
  b = await startCluster('b', 2);
}, DEADLINE);

after(async () => {
  await Promise.allSettled([a?.stop(), b?.stop()]);
  if (faultsDir) rmSync(faultsDir, { recursive: true, force: true });
}, DEADLINE);

async function registerOnA(namespace) {
  await registerGlobal(a, namespace);
  await eventually(() => b.workflow.describeNamespace({ namespace }), { what: `${namespace} on b` });
}

// B takes over the namespace on its own: A does not hear of it while it does not pull from B.
async function failOverOnB(namespace) {
  const out = await b.workflow.updateNamespace({ namespace, replicationConfig: { activeClusterName: 'b' } });
  assert.equal(Number(out.failoverVersion), 2);
}

async function start(cluster, namespace, workflowId) {
  const out = await cluster.workflow.startWorkflowExecution({
    namespace,
    workflowId,
    workflowType: { name: 'noWorkerHere' },
    taskQueue: { name: uniqueName('tq') },
    requestId: uniqueName('request'),
  });
  return out.runId;
}

async function signal(cluster, namespace, workflowId, name) {
  await cluster.workflow.signalWorkflowExecution({
    namespace,
    workflowExecution: { workflowId },
    signalName: name,
    requestId: uniqueName('signal'),
  });
}

// "id v<version> <signal name or type>" per event: what the scenario compares.
const summary = (events) => events.map((e) => {
  const name = e.workflowExecutionSignaledEventAttributes?.signalName;
  return `${e.eventId} v${e.version} ${name ?? e.eventType}`;
});

// `tock workflow describe-state`: the run's branches as {isCurrent, items: [[id, version]]}.
async function describeState(cluster, namespace, workflowId, runId) {
  const state = await tockJson(cluster.address,
    ['-n', namespace, 'workflow', 'describe-state', '--workflow-id', workflowId, '--run-id', runId]);
  state.branchItems = state.branches.map((branch) => ({
    isCurrent: branch.isCurrent,
    items: branch.items.map((item) => [Number(item.eventId), Number(item.version)]),
  }));
  return state;
}

async function describeRun(cluster, namespace, workflowId, runId) {
  return cluster.workflow.describeWorkflowExecution({ namespace, execution: { workflowId, runId } });
}

test('13. split brain: both clusters signal the run; the v2 branch wins on both, the v1 signal is applied again on it once', DEADLINE, async () => {
  await connectClusters(a, b);
  const namespace = uniqueName('split-brain');
  await registerOnA(namespace);
  const workflowId = uniqueName('wf');
  const runId = await start(a, namespace, workflowId);
  await eventually(async () => {
    assert.equal((await history(b, namespace, workflowId, runId)).length, 2);
  }, { what: 'the run on b' });

  // A stops pulling from B: it keeps writing at version 1 while B writes at version 2.
  await upsert(a, b, { enableConnection: false });
  await failOverOnB(namespace);
  await signal(b, namespace, workflowId, 's2');
  await signal(a, namespace, workflowId, 's1');

  // B still pulls from A: A's `3 v1 s1` lands on a branch of its own on B, which loses to
  // B's current one (version 2), and s1 is applied again there as B's event 4.
  const expected = ['1 v1 1', '2 v1 5', '3 v2 s2', '4 v2 s1'];
  const onB = await eventually(async () => {
    const events = await history(b, namespace, workflowId, runId);
    assert.deepEqual(summary(events), expected);
    return events;
  }, { what: 's1 applied again on b', timeoutMs: 20_000 });

  // A hears of B again: B's branch (version 2) beats A's own `3 v1 s1`, A's state is rebuilt
  // from it, and s1 is not applied a second time.
  await upsert(a, b);
  await eventually(async () => {
    const events = await history(a, namespace, workflowId, runId);
    assert.deepEqual(summary(events), expected);
    assert.deepEqual(events.map((e) => Number(e.taskId)), onB.map((e) => Number(e.taskId)));
  }, { what: 'b\'s branch on a', timeoutMs: 20_000 });
  await eventually(async () => {
    const ns = await a.workflow.describeNamespace({ namespace });
    assert.equal(ns.replicationConfig.activeClusterName, 'b');
    assert.equal(Number(ns.failoverVersion), 2);
  }, { what: 'b active on a' });
  // Both keep running the same state: B (active) takes another signal, and A gets it.
  await signal(b, namespace, workflowId, 's3');
  await eventually(async () => {
    assert.deepEqual(summary(await history(a, namespace, workflowId, runId)), [...expected, '5 v2 s3']);
  }, { what: 's3 on a' });
  for (const cluster of [a, b]) {
    const run = await describeRun(cluster, namespace, workflowId, runId);
    assert.equal(run.workflowExecutionInfo.status, STATUS_RUNNING);
    assert.equal(Number(run.workflowExecutionInfo.historyLength), 5);
    // Two branches on each: the v1 one that lost, and the current one at version 2.
    const state = await describeState(cluster, namespace, workflowId, runId);
    assert.deepEqual(state.branchItems.filter((branch) => branch.isCurrent),
      [{ isCurrent: true, items: [[2, 1], [5, 2]] }], cluster.name);
    assert.deepEqual(state.branchItems.filter((branch) => !branch.isCurrent),
      [{ isCurrent: false, items: [[3, 1]] }], cluster.name);
    assert.equal(state.lastWriteVersion, '2');
    assert.equal(state.zombie, false);
  }
  // Signalling on A (standby now) is refused rather than forked again.
  await assert.rejects(signal(a, namespace, workflowId, 'late'), /is active in cluster: b, while current cluster a is a standby cluster/);
});

test('13b. a standby finds a losing branch: its signal is forwarded to the active cluster, applied there once', DEADLINE, async () => {
  await connectClusters(a, b);
  const namespace = uniqueName('forward');
  await registerOnA(namespace);
  const workflowId = uniqueName('wf');
  const runId = await start(a, namespace, workflowId);
  // B becomes active (version 2) the normal way; then A stops pulling B's history (the
  // namespace still reaches it: a namespace naming a disconnected cluster cannot change).
  await a.workflow.updateNamespace({ namespace, replicationConfig: { activeClusterName: 'b' } });
  await eventually(async () => {
    assert.equal(Number((await b.workflow.describeNamespace({ namespace })).failoverVersion), 2);
    assert.equal((await history(b, namespace, workflowId, runId)).length, 2);
  }, { what: 'b active with the run' });
  setFaultsOfA({ pause: true });
  try {
    await partitionedThenHealed(namespace, workflowId, runId);
  } finally {
    setFaultsOfA({});
  }
});

// 13b, from A's pause on: each cluster writes its own branch; B's reaches A last.
async function partitionedThenHealed(namespace, workflowId, runId) {
  await new Promise((resolve) => setTimeout(resolve, 1000));  // A reads it before its next pulls
  await signal(b, namespace, workflowId, 's-b');  // 3 v2 s-b, which A does not receive
  // A takes the namespace back (version 11) and is signaled too.
  const back = await a.workflow.updateNamespace({ namespace, replicationConfig: { activeClusterName: 'a' } });
  assert.equal(Number(back.failoverVersion), 11);
  await signal(a, namespace, workflowId, 's-a');
  // On B, A's newer branch wins; B's own s-b branch loses without being applied again there
  // (B was not active when it lost it).
  await eventually(async () => {
    assert.deepEqual(summary(await history(b, namespace, workflowId, runId)), ['1 v1 1', '2 v1 5', '3 v11 s-a']);
  }, { what: 'a\'s branch on b', timeoutMs: 20_000 });
  await eventually(async () => {
    assert.equal(Number((await b.workflow.describeNamespace({ namespace })).failoverVersion), 11);
  }, { what: 'a active on b' });
  // An operator fails over to B (version 12); A hears of it before B's old branch reaches it.
  const again = await b.workflow.updateNamespace({ namespace, replicationConfig: { activeClusterName: 'b' } });
  assert.equal(Number(again.failoverVersion), 12);
  await eventually(async () => {
    assert.equal(Number((await a.workflow.describeNamespace({ namespace })).failoverVersion), 12);
  }, { what: 'b active on a' });
  setFaultsOfA({});
  // On A (standby now) B's `3 v2 s-b` loses to A's `3 v11 s-a`: A forwards s-b to B, which
  // applies it again as its own event; A receives that like any other.
  const expected = ['1 v1 1', '2 v1 5', '3 v11 s-a', '4 v12 s-b'];
  for (const cluster of [b, a]) {
    await eventually(async () => {
      assert.deepEqual(summary(await history(cluster, namespace, workflowId, runId)), expected);
    }, { what: `s-b applied again, seen on ${cluster.name}`, timeoutMs: 20_000 });
  }
  const state = await describeState(a, namespace, workflowId, runId);
  assert.deepEqual(state.branchItems.filter((branch) => !branch.isCurrent),
    [{ isCurrent: false, items: [[2, 1], [3, 2]] }], 'a keeps b\'s losing branch');
}

test('14. zombie: runs of one workflow id started on both sides of a partition; the newer wins, A terminates its own', DEADLINE, async () => {
  await connectClusters(a, b);
  const namespace = uniqueName('zombie');
  await registerOnA(namespace);
  // Full partition: neither pulls from the other (B fails over before it stops pulling from
  // A: like Temporal, a namespace update naming a cluster whose connection is off is refused).
  await upsert(a, b, { enableConnection: false });
  await failOverOnB(namespace);
  await upsert(b, a, { enableConnection: false });
  const workflowId = uniqueName('wf');
  const r1 = await start(a, namespace, workflowId);
  const r2 = await start(b, namespace, workflowId);
  assert.notEqual(r1, r2);

  await upsert(a, b);
  await upsert(b, a);
  // On A, r2 (version 2) is newer than r1, which A wrote last: A terminates r1 itself, with
  // Temporal's reason and details, at r1's version; r2 becomes the current run.
  const terminated = await eventually(async () => {
    const events = await history(a, namespace, workflowId, r1);
    const last = events.at(-1);
    assert.equal(last.eventType, EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED);
    return last;
  }, { what: 'r1 terminated on a', timeoutMs: 20_000 });
  const attrs = terminated.workflowExecutionTerminatedEventAttributes;
  assert.equal(attrs.reason, 'Terminate Workflow Due To Version Conflict.');
  assert.equal(Buffer.from(attrs.details.payloads[0].data).toString(), '"terminated by version: 2"');
  assert.equal(Number(terminated.version), 1);

  for (const cluster of [a, b]) {
    await eventually(async () => {
      // The current run (no run id) is r2 on both; r1 is there too, terminated.
      const current = await describeRun(cluster, namespace, workflowId, '');
      assert.equal(current.workflowExecutionInfo.execution.runId, r2);
      assert.equal(current.workflowExecutionInfo.status, STATUS_RUNNING);
      const old = await describeRun(cluster, namespace, workflowId, r1);
      assert.equal(old.workflowExecutionInfo.status, STATUS_TERMINATED);
    }, { what: `r2 current and r1 terminated on ${cluster.name}`, timeoutMs: 20_000 });
  }
  // On B, r1 arrived older than the running r2: a zombie, closed by A's termination.
  const zombie = await describeState(b, namespace, workflowId, r1);
  assert.equal(zombie.zombie, true);
  assert.equal(zombie.isCurrentRun, false);
  assert.equal((await describeState(a, namespace, workflowId, r1)).zombie, false);
  // Both hold the same histories of both runs.
  for (const runId of [r1, r2]) {
    const onA = await history(a, namespace, workflowId, runId);
    await eventually(async () => {
      assert.deepEqual(summary(await history(b, namespace, workflowId, runId)), summary(onA));
    }, { what: `run ${runId} equal on both` });
  }
  // The winner goes on on B (active): a signal reaches it and is replicated to A.
  await signal(b, namespace, workflowId, 'after');
  await eventually(async () => {
    const events = await history(a, namespace, workflowId, r2);
    assert.ok(events.some((e) => e.eventType === EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED));
  }, { what: 'the signal to r2 on a' });
});
