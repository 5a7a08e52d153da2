// History replication under injected faults (reference/replication.md §6.3): two clusters,
// A (initial failover version 1) and B (2), one history shard each, B started with
// --replication-faults-file (the test-only switch: B reads the JSON file before each pull).
// Scenario 12: a task B drops is filled by a resend (GetWorkflowExecutionRawHistory).
// Scenario 15: a poison workflow's tasks go to B's replication DLQ after the retry budget
// while the other workflows of its shard keep replicating; `tock cluster dlq` reads, merges
// and purges it. A SyncActivity task in the DLQ keeps what it was (the activity) and a merge
// applies the activity's state as A has it then (GetDLQReplicationMessages). With tasks
// delivered in reverse order (the reorder fault) B still ends with A's histories.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { runTock, startServer, sumSamples, tockJson, uniqueName } from './server.mjs';
import { clusterConfig, connectClusters, eventually, history, registerGlobal } from './clusters.mjs';

const DEADLINE = { timeout: 90_000 };
const COMPLETED = 2;
const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));

let a;
let b;
let faultsFile;

// A cluster of one server with one history shard and metrics; `args` go to tock-server.
async function startOneShardCluster(name, initialVersion, args = []) {
  const server = await startServer({
    config: `${clusterConfig(name, initialVersion)}history:\n  shards: 1\n`,
    args,
    metrics: true,
  });
  const connection = await Connection.connect({ address: server.address, connectTimeout: 10_000 });
  return {
    name,
    server,
    connection,
    address: server.address,
    workflow: connection.workflowService,
    operator: connection.operatorService,
    async stop() {
      try {
        await connection.close();
      } finally {
        await server.stop();
      }
    },
  };
}

// B's faults from now on (B reads the file before its next pull, every 250 ms).
async function setFaults(faults) {
  // Renamed into place: B never reads half a file.
  writeFileSync(`${faultsFile}.tmp`, JSON.stringify(faults));
  renameSync(`${faultsFile}.tmp`, faultsFile);
  // Two pulls: B has read the new content.
  await new Promise((resolve) => setTimeout(resolve, 600));
}

before(async () => {
  a = await startOneShardCluster('a', 1);
  // The file lives beside B's database: B's own temp directory does not exist before it starts.
  const dir = a.server.dir;
  faultsFile = join(dir, 'b-replication-faults.json');
  writeFileSync(faultsFile, '{}');
  b = await startOneShardCluster('b', 2, ['--replication-faults-file', faultsFile]);
  await connectClusters(a, b);
}, DEADLINE);

after(async () => {
  await Promise.allSettled([a?.stop(), b?.stop()]);
}, DEADLINE);

async function globalNamespace(prefix) {
  const namespace = uniqueName(prefix);
  await registerGlobal(a, namespace);
  await eventually(() => b.workflow.describeNamespace({ namespace }), { what: `${namespace} on b` });
  return namespace;
}

// Runs `fn(taskQueue)` with an SDK worker polling A in `namespace`.
async function withWorkerOnA(namespace, fn) {
  const connection = await NativeConnection.connect({ address: a.address });
  try {
    const taskQueue = uniqueName('tq');
    const worker = await Worker.create({ connection, namespace, taskQueue, workflowsPath, activities });
    return await worker.runUntil(fn(taskQueue));
  } finally {
    await connection.close();
  }
}

// Everything of each event (ids, versions, task ids, times, attributes).
const encoded = (events) => events.map((e) => Buffer.from(JSON.stringify(e)).toString('base64'));

// Waits until B holds exactly A's history of the run, and returns it.
async function sameHistoryOnB(namespace, workflowId, runId, what) {
  const onA = await history(a, namespace, workflowId, runId);
  await eventually(async () => {
    const onB = await history(b, namespace, workflowId, runId);
    assert.deepEqual(encoded(onB), encoded(onA));
  }, { what, timeoutMs: 20_000 });
  return onA;
}

const injected = async (kind) =>
  sumSamples(await b.server.scrape(), 'replication_injected_faults_total', (labels) => labels.includes(`kind="${kind}"`));

// The DLQ rows of tasks that carry events (the others carry an activity's state).
const eventRows = (rows) => rows.filter((r) => r.kind === 'DLQ_TASK_KIND_HISTORY');

const dlqOfB = () => tockJson(b.address, ['cluster', 'dlq', 'read', '--remote', 'a']);

test('12. a history task B drops is filled by a resend: the histories are identical, the DLQ is empty', DEADLINE, async () => {
  const namespace = await globalNamespace('drop');
  const client = new Client({ connection: a.connection, namespace });
  const workflowId = uniqueName('dropped');
  const dropsBefore = await injected('drop');
  const { runId } = await withWorkerOnA(namespace, async (taskQueue) => {
    const handle = await client.workflow.start('waitForSignal', { taskQueue, workflowId });
    // B has the run's first events before the drop is armed, so the task dropped is the
    // signal's and the ones after it (the workflow task, the completion) find the gap.
    await eventually(async () => {
      const events = await history(b, namespace, workflowId, handle.firstExecutionRunId);
      assert.ok(events.length >= 3, `${events.length} events on b`);
    }, { what: 'the started run on b' });
    await setFaults({ drop_workflow_id: workflowId });
    await handle.signal('unblock');
    assert.equal(await handle.result(), 'unblocked');
    return { runId: handle.firstExecutionRunId };
  });
  const events = await sameHistoryOnB(namespace, workflowId, runId, 'the completed run on b, gap filled');
  assert.ok(events.some((e) => e.workflowExecutionSignaledEventAttributes), 'the signal is in the history');
  assert.equal(await injected('drop'), dropsBefore + 1, 'B dropped exactly one task');
  const described = await b.workflow.describeWorkflowExecution({ namespace, execution: { workflowId, runId } });
  assert.equal(described.workflowExecutionInfo.status, COMPLETED);
  assert.deepEqual(await dlqOfB(), [], 'a resend is not a failure: nothing in the DLQ');
  await setFaults({});
});

test('15. a poison workflow goes to B\'s DLQ without blocking the others; dlq read lists it, merge applies it, purge empties it', { timeout: 120_000 }, async () => {
  const namespace = await globalNamespace('poison');
  const client = new Client({ connection: a.connection, namespace });
  const poison = uniqueName('poison');
  const others = [uniqueName('healthy'), uniqueName('healthy'), uniqueName('healthy')];
  await setFaults({ fail_workflow_ids: [poison] });

  // The poison workflow starts first: with one shard, the others' tasks are behind its own.
  const runs = await withWorkerOnA(namespace, async (taskQueue) => {
    const started = [];
    for (const workflowId of [poison, ...others]) {
      started.push(await client.workflow.start('activityRoundTrip', { taskQueue, workflowId, args: [workflowId] }));
    }
    for (const handle of started) await handle.result();
    return Object.fromEntries(started.map((h) => [h.workflowId, h.firstExecutionRunId]));
  });

  // No head-of-line blocking: every other workflow is complete on B, identical.
  for (const workflowId of others) {
    await sameHistoryOnB(namespace, workflowId, runs[workflowId], `healthy workflow ${workflowId} on b`);
  }
  // The poison workflow's tasks: all of them in B's DLQ, none applied.
  const onA = await history(a, namespace, poison, runs[poison]);
  const dlq = await eventually(async () => {
    const rows = await dlqOfB();
    const last = eventRows(rows).at(-1);
    assert.ok(last && Number(last.nextEventId) === onA.length + 1, `the DLQ holds the run's last events: ${JSON.stringify(rows)}`);
    return rows;
  }, { what: `${poison}'s tasks in b's DLQ`, timeoutMs: 20_000 });
  assert.ok(eventRows(dlq).length >= 2, `several tasks: ${JSON.stringify(dlq)}`);
  for (const row of dlq) {
    assert.equal(row.sourceCluster, 'a');
    assert.equal(row.sourceShardId, 1);
    assert.equal(row.workflowId, poison);
    assert.equal(row.runId, runs[poison]);
  }
  let next = 1;
  for (const row of eventRows(dlq)) {
    assert.equal(Number(row.firstEventId), next, 'the tasks follow each other, none missing');
    assert.equal(Number(row.version), 1);
    next = Number(row.nextEventId);
  }
  assert.match(dlq[0].lastError, /injected replication fault: every task of workflow .* fails/);
  assert.ok(dlq.slice(1).every((r) => r.lastError === 'an earlier task of this workflow is in the DLQ'),
    JSON.stringify(dlq.map((r) => r.lastError)));
  assert.ok(dlq.every((r, i) => i === 0 || Number(r.taskId) > Number(dlq[i - 1].taskId)), 'in task id order');
  await assert.rejects(b.workflow.describeWorkflowExecution({ namespace, execution: { workflowId: poison, runId: runs[poison] } }),
    (err) => err.code === 5 /* NOT_FOUND */, 'nothing of the poison workflow is applied on b');

  // The table shows the same tasks, with the source and its shard; the status counts them.
  const table = await runTock(b.address, ['cluster', 'dlq', 'read', '--remote', 'a', '-o', 'table']);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^REMOTE\s+SHARD\s+TASK ID\s+KIND\s+WORKFLOW ID\s+RUN ID\s+EVENTS\s+VERSION\s+ADDED\s+ERROR/);
  assert.equal(table.stdout.split('\n').filter((l) => l.includes(poison)).length, dlq.length, table.stdout);
  const status = await tockJson(b.address, ['cluster', 'replication-status', '--remote', 'a']);
  const shard = status.find((r) => r.direction === 'in' && r.shardId === 1);
  assert.equal(Number(shard?.dlqTasks), dlq.length, JSON.stringify(status));

  // While the fault holds, a merge fails again and keeps everything.
  const failed = await runTock(b.address, ['cluster', 'dlq', 'merge', '--remote', 'a', '-o', 'json']);
  assert.equal(failed.code, 1, failed.stderr);
  const stillThere = JSON.parse(failed.stdout);
  assert.equal(Number(stillThere.mergedTasks), 0);
  assert.equal(Number(stillThere.remainingTasks), dlq.length);
  assert.equal((await dlqOfB()).length, dlq.length);

  // Fault removed: the merge applies every task, the run is complete on B, identical.
  await setFaults({});
  const merged = await tockJson(b.address, ['cluster', 'dlq', 'merge', '--remote', 'a']);
  assert.equal(Number(merged.mergedTasks), dlq.length, JSON.stringify(merged));
  assert.equal(Number(merged.remainingTasks), 0);
  await sameHistoryOnB(namespace, poison, runs[poison], 'the merged run on b');
  const described = await b.workflow.describeWorkflowExecution({ namespace, execution: { workflowId: poison, runId: runs[poison] } });
  assert.equal(described.workflowExecutionInfo.status, COMPLETED);
  assert.deepEqual(await dlqOfB(), []);

  // Purge: another poison workflow's tasks are deleted, never applied.
  const purgedId = uniqueName('purged');
  await setFaults({ fail_workflow_ids: [purgedId] });
  const purgedRun = await withWorkerOnA(namespace, async (taskQueue) => {
    const handle = await client.workflow.start('activityRoundTrip', { taskQueue, workflowId: purgedId, args: ['x'] });
    await handle.result();
    return handle.firstExecutionRunId;
  });
  const purgedLength = (await history(a, namespace, purgedId, purgedRun)).length;
  const queued = await eventually(async () => {
    const rows = await dlqOfB();
    assert.ok(rows.length > 0 && Number(eventRows(rows).at(-1)?.nextEventId) === purgedLength + 1, JSON.stringify(rows));
    return rows.length;
  }, { what: `${purgedId}'s tasks in b's DLQ`, timeoutMs: 20_000 });
  const refused = await runTock(b.address, ['cluster', 'dlq', 'purge', '--remote', 'a']);
  assert.equal(refused.code, 2, 'off a terminal a purge needs --yes');
  const purged = await tockJson(b.address, ['cluster', 'dlq', 'purge', '--remote', 'a', '--yes']);
  assert.equal(Number(purged.purgedTasks), queued);
  assert.deepEqual(await dlqOfB(), []);
  await setFaults({});
});

const TASK_QUEUE_KIND_NORMAL = 1;
const PENDING_ACTIVITY_STATE_SCHEDULED = 1;
const TIMEOUT_TYPE_HEARTBEAT = 4;

test('15b. SyncActivity tasks in B\'s DLQ say which activity they were; merge applies its heartbeat details and attempt on B', { timeout: 90_000 }, async () => {
  const namespace = await globalNamespace('activity-dlq');
  const taskQueue = uniqueName('tq');
  const activityQueue = `${taskQueue}-activities`;
  const workflowId = uniqueName('poison-activity');
  await setFaults({ fail_workflow_ids: [workflowId] });
  const client = new Client({ connection: a.connection, namespace });
  const scheduled = await withWorkerOnA(namespace, async (workerQueue) => {
    await client.workflow.start('heartbeatSurvivesFailover', { taskQueue: workerQueue, workflowId, args: [activityQueue] });
    return eventually(async () => {
      const event = (await history(a, namespace, workflowId)).find((e) => e.activityTaskScheduledEventAttributes);
      assert.ok(event, 'the activity is scheduled on a');
      return Number(event.eventId);
    }, { what: 'the activity scheduled on a' });
  });
  // Attempt 1 on A: started by hand, heartbeats 100, then its heartbeat timeout (3 s)
  // schedules attempt 2: none of that is an event, only SyncActivity tasks carry it.
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
  await eventually(async () => assert.equal((await pendingOn(a)).attempt, 2), { what: 'attempt 2 on a', timeoutMs: 20_000 });

  // B has pulled everything A's shard holds now: every task of the workflow is in its DLQ.
  const outOfA = (await tockJson(a.address, ['cluster', 'replication-status', '--remote', 'b']))
    .find((r) => r.direction === 'out' && r.shardId === 1);
  const rows = await eventually(async () => {
    const inB = (await tockJson(b.address, ['cluster', 'replication-status', '--remote', 'a']))
      .find((r) => r.direction === 'in' && r.shardId === 1);
    assert.ok(Number(inB.lastRetrievedTaskId) >= Number(outOfA.maxTaskId), JSON.stringify({ inB, outOfA }));
    return (await dlqOfB()).filter((r) => r.workflowId === workflowId);
  }, { what: 'b pulled all of a\'s tasks', timeoutMs: 20_000 });
  const activityRows = rows.filter((r) => r.kind === 'DLQ_TASK_KIND_SYNC_ACTIVITY');
  assert.ok(activityRows.length >= 1, JSON.stringify(rows));
  for (const row of activityRows) {
    assert.equal(Number(row.scheduledEventId), scheduled, 'the activity the task was about');
    assert.equal(Number(row.version), 1);
    assert.equal(Number(row.firstEventId), 0);
  }
  assert.ok(eventRows(rows).length >= 1, JSON.stringify(rows));
  const table = await runTock(b.address, ['cluster', 'dlq', 'read', '--remote', 'a', '-o', 'table']);
  assert.equal(table.code, 0, table.stderr);
  // KIND activity, EVENTS the activity's scheduled event id.
  const activityLine = new RegExp(`\\s{2}activity\\s{2}.*\\s{2}activity ${scheduled}\\s{2}`);
  const activityLines = table.stdout.split('\n').filter((l) => l.includes(workflowId) && activityLine.test(l));
  assert.equal(activityLines.length, activityRows.length, table.stdout);

  // Fault removed: the merge applies the history and then the activity's state as A has it.
  await setFaults({});
  const merged = await tockJson(b.address, ['cluster', 'dlq', 'merge', '--remote', 'a']);
  assert.equal(Number(merged.mergedTasks), rows.length, JSON.stringify(merged));
  assert.equal(Number(merged.remainingTasks), 0);
  assert.deepEqual(await dlqOfB(), []);
  const pending = await pendingOn(b);
  assert.equal(pending.attempt, 2, JSON.stringify(pending));
  assert.equal(pending.state, PENDING_ACTIVITY_STATE_SCHEDULED);
  assert.equal(Buffer.from(pending.heartbeatDetails.payloads[0].data).toString(), '100');
  assert.equal(pending.lastFailure.timeoutFailureInfo.timeoutType, TIMEOUT_TYPE_HEARTBEAT);
  await client.workflow.getHandle(workflowId).terminate('test done');
});

test('tasks B gets in reverse order within a pull still give A\'s histories: gaps resent, duplicates skipped', DEADLINE, async () => {
  const namespace = await globalNamespace('reorder');
  const client = new Client({ connection: a.connection, namespace });
  // Paused while the workflows run: their tasks wait in A's queue and come in one page.
  await setFaults({ pause: true });
  const runs = await withWorkerOnA(namespace, async (taskQueue) => {
    const started = [];
    for (let i = 0; i < 3; i++) {
      started.push(await client.workflow.start('activityRoundTrip', { taskQueue, workflowId: uniqueName('reordered'), args: [`r${i}`] }));
    }
    for (const handle of started) await handle.result();
    return started.map((h) => [h.workflowId, h.firstExecutionRunId]);
  });
  const before = await injected('reorder');
  // Each workflow's last task (its completion) comes first: the run is new on B, so its
  // whole history is fetched (a resend); its earlier tasks then come as duplicates.
  await setFaults({ reorder: true });
  for (const [workflowId, runId] of runs) {
    await sameHistoryOnB(namespace, workflowId, runId, `reordered workflow ${workflowId} on b`);
    const described = await b.workflow.describeWorkflowExecution({ namespace, execution: { workflowId, runId } });
    assert.equal(described.workflowExecutionInfo.status, COMPLETED);
  }
  assert.ok(await injected('reorder') > before, 'B reversed at least one page');
  assert.deepEqual(await dlqOfB(), [], 'nothing failed: nothing in the DLQ');
  await setFaults({});
});
