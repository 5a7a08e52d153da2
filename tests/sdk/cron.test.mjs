// Cron schedules and run timeouts with the official SDK on a time-skipping tock-server: the
// first run waits for the schedule, each run hands its result to the next (lastResult), runs
// follow the schedule as the clock moves, a bad schedule is refused, terminating the waiting
// run ends the schedule; a run that times out is retried by its retry policy.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { runTock, startServer, uniqueName } from './server.mjs';

const DEADLINE = { timeout: 90_000 };
const HOOK_DEADLINE = { timeout: 60_000 };
const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));
Runtime.install({ logger: new DefaultLogger('WARN') });

let server;
let nativeConnection;
let connection;
let client;
let worker;
let running;
const taskQueue = uniqueName('cron');

async function advance(duration) {
  const r = await runTock(server.address, ['server', 'advance-time', duration]);
  assert.equal(r.code, 0, r.stderr);
}

async function runsOf(workflowId) {
  const runs = [];
  for await (const r of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(r);
  return runs.sort((a, b) => a.startTime - b.startTime);
}

async function waitForRuns(workflowId, done) {
  let runs = [];
  for (let i = 0; i < 200; i++) {
    runs = await runsOf(workflowId);
    if (done(runs)) return runs;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`runs never got there: ${JSON.stringify(runs.map((r) => [r.runId, r.status.name]))}`);
}

before(async () => {
  server = await startServer({ args: ['--enable-time-skipping'] });
  nativeConnection = await NativeConnection.connect({ address: server.address });
  worker = await Worker.create({ connection: nativeConnection, taskQueue, workflowsPath, activities });
  running = worker.run();
  connection = await Connection.connect({ address: server.address });
  client = new Client({ connection });
}, HOOK_DEADLINE);

after(async () => {
  try {
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await running;
    await nativeConnection?.close();
    await connection?.close();
  } finally {
    await server?.stop();
  }
}, HOOK_DEADLINE);

test('a cron workflow runs on its schedule and hands each result to the next run', DEADLINE, async () => {
  const workflowId = uniqueName('every-minute');
  const handle = await client.workflow.start('cronCounter', { taskQueue, workflowId, cronSchedule: '* * * * *' });

  // The first run waits for the next minute.
  const first = (await handle.fetchHistory()).events[0];
  assert.equal(first.workflowExecutionStartedEventAttributes.cronSchedule, '* * * * *');
  const wait = Number(first.workflowExecutionStartedEventAttributes.firstWorkflowTaskBackoff.seconds);
  assert.ok(wait >= 1 && wait <= 60, `first run waits ${wait}s`);
  assert.equal((await runsOf(workflowId)).length, 1);

  for (let n = 1; n <= 3; n++) {
    await advance('1m');
    await waitForRuns(workflowId, (runs) => runs.filter((r) => r.status.name === 'COMPLETED').length === n &&
                                            runs.length === n + 1);
  }
  const runs = await runsOf(workflowId);
  const results = [];
  for (const run of runs.filter((r) => r.status.name === 'COMPLETED')) {
    const events = (await client.workflow.getHandle(workflowId, run.runId).fetchHistory()).events;
    const completed = events.at(-1).workflowExecutionCompletedEventAttributes;
    assert.ok(completed.newExecutionRunId, 'a completed cron run names the next run');
    results.push(JSON.parse(Buffer.from(completed.result.payloads[0].data).toString()));
  }
  assert.deepEqual(results, [1, 2, 3]);

  // The waiting run was started by the schedule, with the last result and a backoff.
  const waiting = runs.at(-1);
  assert.equal(waiting.status.name, 'RUNNING');
  const started = (await client.workflow.getHandle(workflowId, waiting.runId).fetchHistory()).events[0]
    .workflowExecutionStartedEventAttributes;
  assert.equal(started.initiator, 3 /* CONTINUE_AS_NEW_INITIATOR_CRON_SCHEDULE */);
  assert.ok(Number(started.firstWorkflowTaskBackoff.seconds) > 0);
  assert.equal(JSON.parse(Buffer.from(started.lastCompletionResult.payloads[0].data).toString()), 3);

  // Terminating the waiting run ends the schedule.
  await client.workflow.getHandle(workflowId).terminate('enough');
  await advance('5m');
  await new Promise((r) => setTimeout(r, 500));
  const after = await runsOf(workflowId);
  assert.equal(after.length, 4);
  assert.equal(after.at(-1).status.name, 'TERMINATED');
});

test('a schedule that cannot be read is refused', DEADLINE, async () => {
  // The SDK wraps the server's INVALID_ARGUMENT; its message is the cause's.
  const refusedWith = (pattern) => (err) => {
    assert.match(err.cause?.message ?? err.message, pattern);
    return true;
  };
  await assert.rejects(
    client.workflow.start('cronCounter', { taskQueue, workflowId: uniqueName('bad'), cronSchedule: '61 * * * *' }),
    refusedWith(/invalid CronSchedule\. "61 \* \* \* \*": minute "61" is outside 0-59/));
  await assert.rejects(
    client.workflow.start('cronCounter', { taskQueue, workflowId: uniqueName('never'), cronSchedule: '0 0 30 2 *' }),
    refusedWith(/invalid CronSchedule, no time can be found to satisfy the schedule/));
});

test('a run that reaches its run timeout is retried by its retry policy', DEADLINE, async () => {
  const workflowId = uniqueName('run-timeout');
  const handle = await client.workflow.start('waitForSignal', {
    taskQueue, workflowId, workflowRunTimeout: '1m',
    retry: { maximumAttempts: 2, initialInterval: '1s' },
  });
  await advance('61s');
  await waitForRuns(workflowId, (runs) => runs.length === 2 && runs[0].status.name === 'TIMED_OUT');
  await advance('2s');  // the retry's backoff
  await advance('61s');
  const runs = await waitForRuns(workflowId, (runs) => runs.every((r) => r.status.name === 'TIMED_OUT'));
  assert.equal(runs.length, 2);
  const firstClose = (await client.workflow.getHandle(workflowId, runs[0].runId).fetchHistory()).events.at(-1)
    .workflowExecutionTimedOutEventAttributes;
  assert.equal(firstClose.newExecutionRunId, runs[1].runId);
  const second = (await client.workflow.getHandle(workflowId, runs[1].runId).fetchHistory()).events;
  assert.equal(second[0].workflowExecutionStartedEventAttributes.attempt, 2);
  assert.equal(second[0].workflowExecutionStartedEventAttributes.initiator, 2 /* RETRY */);
  assert.equal(second.at(-1).workflowExecutionTimedOutEventAttributes.retryState, 4 /* MAXIMUM_ATTEMPTS_REACHED */);
  // The client follows the chain to the last run and reports the timeout.
  await assert.rejects(handle.result(), (err) => err.name === 'WorkflowFailedError');
});

test('the execution timeout ends a chain of retries', DEADLINE, async () => {
  const workflowId = uniqueName('execution-timeout');
  const handle = await client.workflow.start('waitForSignal', {
    taskQueue, workflowId, workflowRunTimeout: '1m', workflowExecutionTimeout: '90s',
    retry: { maximumAttempts: 100, initialInterval: '1s' },  // more than the timeout allows
  });
  const first = (await handle.fetchHistory()).events[0].workflowExecutionStartedEventAttributes;
  assert.ok(first.workflowExecutionExpirationTime, 'the start event carries the execution expiration');
  await advance('61s');  // run 1 times out: retried (1 s backoff)
  await waitForRuns(workflowId, (runs) => runs.length === 2);
  await advance('31s');  // 92 s after the start: the execution timeout, not the run's
  const runs = await waitForRuns(workflowId, (runs) => runs.every((r) => r.status.name === 'TIMED_OUT'));
  assert.equal(runs.length, 2, 'no retry after the execution timeout');
  const last = (await client.workflow.getHandle(workflowId, runs[1].runId).fetchHistory()).events.at(-1)
    .workflowExecutionTimedOutEventAttributes;
  assert.equal(last.retryState, 3 /* TIMEOUT */);
  assert.ok(!last.newExecutionRunId);
});
