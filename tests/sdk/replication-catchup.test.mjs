// Partition and catch-up between two clusters (reference/replication.md §6.3 scenario 11):
// B stops pulling from A (`tock cluster upsert --enable-connection=false` on B), 50
// workflows run to completion on A, B is connected again and catches up from its ack level:
// A's replication status shows B's ack at A's last task id, and every run is on B with the
// same history, byte for byte. Then the same with B, and then A, killed (SIGKILL) in the
// middle of the catch-up and started again on its database and port: no run is lost or
// duplicated, no event either.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { runTock, tockJson, uniqueName } from './server.mjs';
import { connectClusters, eventually, registerGlobal, startCluster } from './clusters.mjs';

const DEADLINE = { timeout: 60_000 };
const RUNS = 50;
const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));

Runtime.install({ logger: new DefaultLogger('WARN') });

let a;
let b;
let namespace;
let faultsFile;  // B's test-only replication faults (--replication-faults-file)

// B's test-only replication faults from its next pull on; two pulls later B has read them.
async function setFaultsOfB(faults) {
  writeFileSync(`${faultsFile}.tmp`, JSON.stringify(faults));
  renameSync(`${faultsFile}.tmp`, faultsFile);
  await new Promise((resolve) => setTimeout(resolve, 600));
}

before(async () => {
  a = await startCluster('a', 1);
  // Beside A's database: B's own temp directory does not exist before it starts.
  faultsFile = join(a.server.dir, 'b-replication-faults.json');
  writeFileSync(faultsFile, '{}');
  b = await startCluster('b', 2, { args: ['--replication-faults-file', faultsFile] });
  await connectClusters(a, b);
  namespace = uniqueName('catchup');
  await registerGlobal(a, namespace);
  await eventually(() => b.workflow.describeNamespace({ namespace }), { what: `${namespace} on b` });
}, DEADLINE);

after(async () => {
  await Promise.allSettled([a?.stop(), b?.stop()]);
}, DEADLINE);

// `cluster` pulls from `from` or stops pulling, as an operator does it.
async function setPull(cluster, from, enabled) {
  const r = await runTock(cluster.address, [
    'cluster', 'upsert', '--frontend-address', from.address, `--enable-connection=${enabled}`,
  ]);
  assert.equal(r.code, 0, r.stderr);
}

// `count` workflows started on A and run to completion by a worker on A; their ids.
async function runOnA(count) {
  const connection = await NativeConnection.connect({ address: a.address });
  try {
    const taskQueue = uniqueName('tq');
    const worker = await Worker.create({ connection, namespace, taskQueue, workflowsPath, activities });
    const client = new Client({ connection: a.connection, namespace });
    return await worker.runUntil(Promise.all(Array.from({ length: count }, async (_, i) => {
      const handle = await client.workflow.start('activityRoundTrip', {
        taskQueue, workflowId: uniqueName(`wf${i}`), args: [`run ${i}`],
      });
      assert.equal(await handle.result(), `Hello, run ${i}!`);
      return { workflowId: handle.workflowId, runId: handle.firstExecutionRunId };
    })));
  } finally {
    await connection.close();
  }
}

// `tock cluster replication-status --remote <remote>` on `cluster`: its rows.
async function replicationStatus(cluster, remote) {
  return tockJson(cluster.address, ['cluster', 'replication-status', '--remote', remote]);
}

// What `remote` acknowledged of each of `source`'s shard queues.
async function outbound(source, remote) {
  const rows = (await replicationStatus(source, remote)).filter((r) => r.direction === 'out' && r.shardId);
  assert.ok(rows.length > 0, 'one OUT row per shard');
  return rows.map((r) => ({ shard: r.shardId, max: Number(r.maxTaskId ?? 0), acked: Number(r.ackedTaskId ?? 0) }));
}

// The last task of A's queues that B applied (B's IN rows for A), summed over the shards.
async function appliedOnB() {
  const rows = (await replicationStatus(b, 'a')).filter((r) => r.direction === 'in' && r.shardId);
  return rows.reduce((sum, r) => sum + Math.max(0, Number(r.lastRetrievedTaskId ?? 0)), 0);
}

// Waits until B acknowledged every task of A's shards (A's status says so).
async function waitCaughtUp(what) {
  return eventually(async () => {
    const shards = await outbound(a, 'b');
    for (const s of shards) assert.equal(s.acked, s.max, `shard ${s.shard}: b acked ${s.acked} of ${s.max}`);
    return shards;
  }, { what, timeoutMs: 30_000, intervalMs: 200 });
}

const encoded = (events) => events.map((e) => Buffer.from(JSON.stringify(e)).toString('base64'));

async function history(cluster, { workflowId, runId }) {
  const out = await cluster.workflow.getWorkflowExecutionHistory({ namespace, execution: { workflowId, runId } });
  return out.history.events;
}

// Every run has the same history on both clusters, and B holds exactly A's runs.
async function assertSame(runs) {
  for (let i = 0; i < runs.length; i += 10) {
    await Promise.all(runs.slice(i, i + 10).map(async (run) => {
      const [onA, onB] = await Promise.all([history(a, run), history(b, run)]);
      assert.ok(onA.length >= 11, `${run.workflowId}: a completed run with an activity (${onA.length} events)`);
      assert.deepEqual(onB.map((e) => Number(e.eventId)), onA.map((_, k) => k + 1), `${run.workflowId}: dense event ids on b`);
      assert.deepEqual(encoded(onB), encoded(onA), `${run.workflowId}: the same events on both clusters`);
    }));
  }
  const [onA, onB] = await Promise.all([listRuns(a), listRuns(b)]);
  assert.deepEqual(onB, onA, 'b has exactly the runs of a, once each');
}

async function listRuns(cluster) {
  const runs = [];
  let nextPageToken;
  for (let page = 0; page < 100; page++) {
    const out = await cluster.workflow.listWorkflowExecutions({ namespace, pageSize: 200, nextPageToken });
    for (const e of out.executions) runs.push(`${e.execution.workflowId}/${e.execution.runId}/${e.status}`);
    if (!out.nextPageToken?.length) break;
    nextPageToken = out.nextPageToken;
  }
  return runs.sort();
}

async function absentOnB(runs) {
  for (const run of runs.slice(0, 5)) {
    await assert.rejects(history(b, run), (err) => err.code === 5 /* NOT_FOUND */, `${run.workflowId} is not on b yet`);
  }
}

let done = [];

test('11. b, cut off from a, catches up from its ack level: acked = max, every history equal', DEADLINE, async () => {
  await setPull(b, a, false);
  const before = await outbound(a, 'b');
  const runs = await runOnA(RUNS);
  await absentOnB(runs);
  const partitioned = await outbound(a, 'b');
  for (const [k, s] of partitioned.entries()) {
    assert.equal(s.acked, before[k].acked, `shard ${s.shard}: b acked nothing while cut off`);
  }
  assert.ok(partitioned.some((s) => s.max > s.acked), 'a has tasks b has not acknowledged');

  await setPull(b, a, true);
  const caughtUp = await waitCaughtUp('b caught up with a');
  for (const [k, s] of caughtUp.entries()) assert.ok(s.acked >= partitioned[k].max);
  done = [...done, ...runs];
  await assertSame(done);
});

// Connects B again and kills `victim` once B applied some of the backlog but not all of it:
// B applies at most 5 tasks of a shard per pull meanwhile (a slow receiver, the test-only
// switch), so the catch-up lasts seconds however fast the machine is; after the restart B
// goes at full speed again.
async function killMidCatchUp(victim) {
  const start = await appliedOnB();
  const target = (await outbound(a, 'b')).reduce((sum, s) => sum + s.max, 0);
  await setFaultsOfB({ tasks_per_pull: 5 });
  await setPull(b, a, true);
  const seen = await eventually(async () => {
    const applied = await appliedOnB();
    assert.ok(applied > start, 'b applied nothing yet');
    return applied;
  }, { what: 'b started catching up', timeoutMs: 20_000, intervalMs: 10 });
  assert.ok(seen < target,
    `b is halfway through the backlog when killed (applied through ${seen}, from ${start} to ${target})`);
  await victim.restart({ kill: true });
  await setFaultsOfB({});
}

test('11. b killed in the middle of the catch-up resumes: nothing lost, nothing twice', DEADLINE, async () => {
  await setPull(b, a, false);
  const runs = await runOnA(RUNS);
  await absentOnB(runs);
  await killMidCatchUp(b);
  await waitCaughtUp('b caught up with a after its restart');
  done = [...done, ...runs];
  await assertSame(done);
});

test('11. a killed in the middle of b\'s catch-up: b resumes once a is back, nothing lost, nothing twice', DEADLINE, async () => {
  await setPull(b, a, false);
  const runs = await runOnA(RUNS);
  await absentOnB(runs);
  await killMidCatchUp(a);
  await waitCaughtUp('b caught up with a after a\'s restart');
  done = [...done, ...runs];
  await assertSame(done);
});
