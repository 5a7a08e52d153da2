// `tock workflow describe-state` on both clusters of a replicated run (AdminService
// DescribeMutableState, a read served on the standby): A (initial failover version 1) and B
// (2), increment 10. The run's one branch is the same on both sides, item by item: events
// written on A carry version 1, and after a failover the events written on B carry version 2,
// which becomes the last write version on both clusters.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { tockJson, uniqueName } from './server.mjs';
import { connectClusters, eventually, registerGlobal, startCluster } from './clusters.mjs';


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

function describeState(cluster, namespace, workflowId) {
  return tockJson(cluster.address, ['-n', namespace, 'workflow', 'describe-state', '--workflow-id', workflowId]);
}

// The branches as [[eventId, version], ...] per branch, with which is current.
function branches(state) {
  return state.branches.map((branch) => ({
    isCurrent: branch.isCurrent,
    items: branch.items.map((item) => [Number(item.eventId), Number(item.version)]),
  }));
}

test('describe-state: one branch, the same on both clusters, versions 1 then 2 across a failover', { timeout: 90_000 }, async () => {
  const namespace = uniqueName('state');
  await registerGlobal(a, namespace);
  await eventually(() => b.workflow.describeNamespace({ namespace }), { what: `${namespace} on b` });

  const workflowId = uniqueName('wf');
  const started = await a.workflow.startWorkflowExecution({
    namespace,
    workflowId,
    workflowType: { name: 'nobody-runs-it' },
    taskQueue: { name: uniqueName('q') },
    requestId: uniqueName('req'),
  });
  // Started and its first workflow task scheduled on A: events 1-2 at version 1.
  const onA = await describeState(a, namespace, workflowId);
  assert.equal(onA.runId, started.runId);
  assert.equal(onA.state, 'CREATED');
  assert.equal(onA.zombie, false);
  assert.equal(onA.lastWriteVersion, '1');
  assert.deepEqual(branches(onA), [{ isCurrent: true, items: [[2, 1]] }]);
  // B, the standby, describes its copy: the same.
  const onB = await eventually(async () => {
    const state = await describeState(b, namespace, workflowId);
    assert.deepEqual(branches(state), branches(onA));
    return state;
  }, { what: 'the run replicated to b', timeoutMs: 20_000 });
  assert.equal(onB.runId, started.runId);
  assert.equal(onB.isCurrentRun, true);
  assert.equal(onB.lastWriteVersion, '1');

  // Failover to B, then a signal written on B: a new item at B's version 2, on both sides.
  await a.workflow.updateNamespace({ namespace, replicationConfig: { activeClusterName: 'b' } });
  await eventually(async () => {
    assert.equal((await b.workflow.describeNamespace({ namespace })).replicationConfig.activeClusterName, 'b');
  }, { what: 'b active on b' });
  await b.workflow.signalWorkflowExecution({
    namespace,
    workflowExecution: { workflowId },
    signalName: 'poke',
    requestId: uniqueName('sig'),
  });
  const afterOnB = await describeState(b, namespace, workflowId);
  assert.equal(afterOnB.lastWriteVersion, '2');
  const [branch] = branches(afterOnB);
  assert.equal(branches(afterOnB).length, 1);
  assert.deepEqual(branch.items[0], [2, 1], 'events written on A keep version 1');
  assert.equal(branch.items.at(-1)[1], 2, 'the events written on B have version 2');
  assert.equal(branch.items.at(-1)[0], Number(afterOnB.nextEventId) - 1);
  await eventually(async () => {
    const state = await describeState(a, namespace, workflowId);
    assert.deepEqual(branches(state), branches(afterOnB));
    assert.equal(state.lastWriteVersion, '2');
  }, { what: "B's events replicated to a", timeoutMs: 20_000 });
});
