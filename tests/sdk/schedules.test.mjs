// Schedules through the official client (@temporalio/client 1.24.0, client.schedule.*) on a
// time-skipping tock-server (`tock server advance-time` moves the clock, so an hour of a
// schedule takes a second): schedules that fire, the overlap policies (Skip, BufferOne,
// AllowAll, CancelOther, TerminateOther), pause and unpause, pause on failure, remaining
// actions, trigger, backfill, update with its conflict token, list, delete, Temporal's errors
// for bad requests; and on a real clock, a kill -9 of the server that loses no action and
// duplicates none.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import {
  Client,
  Connection,
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
} from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { startServer, tockJson, uniqueName } from './server.mjs';

const DEADLINE = { timeout: 120_000 };
const HOOK_DEADLINE = { timeout: 60_000 };
const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));
Runtime.install({ logger: new DefaultLogger('WARN') });

let server;
let nativeConnection;
let connection;
let client;
let worker;
let running;
const taskQueue = uniqueName('sched');

// Moves the server's clock. The server answers once its schedule runner has looked at every
// schedule due by the new time and recorded what it did (schedulesSettled), so a check right
// after it that a schedule has NOT acted fails when the runner acts wrongly, without a sleep.
async function advance(duration) {
  const moved = await tockJson(server.address, ['server', 'advance-time', duration]);
  assert.equal(moved.schedulesSettled, true, `the schedule runner did not settle: ${JSON.stringify(moved)}`);
}

// Polls `probe` (async) until `done(value)`, within ~20 s of real time.
async function waitFor(probe, done, what) {
  let value;
  for (let i = 0; i < 200; i++) {
    value = await probe();
    if (done(value)) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`${what} never happened; last: ${JSON.stringify(value, (k, v) => (typeof v === 'bigint' ? String(v) : v))}`);
}

const describe = (handle) => handle.describe();
const T0 = 1_767_225_600; // 2026-01-01T00:00:00Z
// Everything an error says (the SDK wraps the gRPC error).
const errText = (err) => [err.message, err.details, err.cause?.message, err.cause?.details].filter(Boolean).join(' | ');
const taken = (d) => d.info.numActionsTaken;

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

function startAction(workflowType, args = [], workflowId = uniqueName(workflowType)) {
  return { type: 'startWorkflow', workflowType, args, taskQueue, workflowId };
}

test('namespaces report that they support schedules', DEADLINE, async () => {
  const ns = await connection.workflowService.describeNamespace({ namespace: 'default' });
  assert.equal(ns.namespaceInfo.supportsSchedules, true);
  const info = await connection.workflowService.getSystemInfo({});
  assert.equal(info.capabilities.supportsSchedules, true);
});

test('a schedule fires on its calendar as the clock moves, naming runs by their time', DEADLINE, async () => {
  const scheduleId = uniqueName('hourly');
  const action = startAction('timerThenReturn', [0]);
  const handle = await client.schedule.create({
    scheduleId,
    spec: { cronExpressions: ['0 * * * *'] },
    action,
  });
  const d = await describe(handle);
  // The cron string comes back compiled into a structured calendar (Temporal's canonical form).
  assert.equal(d.spec.calendars.length, 1);
  assert.deepEqual(d.spec.calendars[0].minute, [{ start: 0, end: 0, step: 1 }]);
  assert.equal(d.policies.overlap, ScheduleOverlapPolicy.SKIP);
  assert.equal(d.info.nextActionTimes.length, 10);
  for (const t of d.info.nextActionTimes) assert.equal(t.getUTCMinutes() * 60 + t.getUTCSeconds(), 0);
  assert.equal(taken(d), 0);

  for (let n = 1; n <= 3; n++) {
    await advance('1h');
    // (The run stays in runningActions until the next action looks: Temporal's refresh.)
    const d = await waitFor(() => describe(handle), (x) => taken(x) === n, `action ${n}`);
    // Closed before the clock moves again, or the next action would overlap it (Skip).
    const last = d.info.recentActions[n - 1].action.workflow;
    await client.workflow.getHandle(last.workflowId, last.firstExecutionRunId).result();
  }
  const after3 = await describe(handle);
  assert.equal(after3.info.recentActions.length, 3);
  for (const a of after3.info.recentActions) {
    // <workflow id>-<nominal time, RFC 3339>
    assert.equal(a.action.workflow.workflowId, `${action.workflowId}-${a.scheduledAt.toISOString().replace('.000Z', 'Z')}`);
    assert.equal(a.scheduledAt.getUTCMinutes(), 0);
    const run = client.workflow.getHandle(a.action.workflow.workflowId, a.action.workflow.firstExecutionRunId);
    assert.equal(typeof (await run.result()), 'number');
  }
  await handle.delete();
  await assert.rejects(handle.describe(), ScheduleNotFoundError);
});

test('an interval with a phase fires at phase + k * interval', DEADLINE, async () => {
  const handle = await client.schedule.create({
    scheduleId: uniqueName('interval'),
    spec: { intervals: [{ every: '1h', offset: '15m' }] },
    action: startAction('timerThenReturn', [0]),
  });
  const d = await describe(handle);
  for (const t of d.info.nextActionTimes) {
    assert.equal(t.getUTCMinutes(), 15);
    assert.equal(t.getUTCSeconds(), 0);
  }
  const matching = await connection.workflowService.listScheduleMatchingTimes({
    namespace: 'default', scheduleId: handle.scheduleId,
    startTime: { seconds: T0 }, endTime: { seconds: T0 + 3 * 3600 },
  });
  assert.deepEqual(matching.startTime.map((t) => Number(t.seconds)), [T0 + 900, T0 + 4500, T0 + 8100]);
  await handle.delete();
});

// A schedule every hour of `waitForSignal` runs (they stay running until signalled), advanced
// twice: the second action overlaps the first.
async function overlapping(overlap) {
  const action = startAction('waitForSignal');
  const handle = await client.schedule.create({
    scheduleId: uniqueName(`overlap-${overlap}`),
    spec: { intervals: [{ every: '1h' }] },
    action,
    policies: { overlap },
  });
  await advance('1h');
  const first = await waitFor(() => describe(handle), (x) => taken(x) === 1, 'the first action');
  await advance('1h');
  return { handle, first: first.info.recentActions[0].action.workflow };
}

test('overlap Skip: an action while one runs is skipped and counted', DEADLINE, async () => {
  const { handle, first } = await overlapping(ScheduleOverlapPolicy.SKIP);
  const d = await waitFor(() => describe(handle), (x) => x.info.numActionsSkippedOverlap === 1, 'the skip');
  assert.equal(taken(d), 1);
  assert.equal(d.info.runningActions.length, 1);
  await client.workflow.getHandle(first.workflowId).signal('unblock');
  await handle.delete();
});

test('overlap BufferOne: the overlapping action starts once the running one closes', DEADLINE, async () => {
  const { handle, first } = await overlapping(ScheduleOverlapPolicy.BUFFER_ONE);
  await waitFor(() => connection.workflowService.describeSchedule({ namespace: 'default', scheduleId: handle.scheduleId }),
    (x) => Number(x.info.bufferSize) === 1, 'the buffered start');
  assert.equal(taken(await describe(handle)), 1);
  await client.workflow.getHandle(first.workflowId).signal('unblock');
  const d = await waitFor(() => describe(handle), (x) => taken(x) === 2, 'the buffered action');
  assert.equal(d.info.numActionsSkippedOverlap, 0);
  await client.workflow.getHandle(d.info.recentActions[1].action.workflow.workflowId).signal('unblock');
  await handle.delete();
});

test('overlap AllowAll: both run at once', DEADLINE, async () => {
  const { handle, first } = await overlapping(ScheduleOverlapPolicy.ALLOW_ALL);
  const d = await waitFor(() => describe(handle), (x) => taken(x) === 2, 'the second action');
  const second = d.info.recentActions[1].action.workflow;
  const statuses = await Promise.all([first, second].map(async (w) =>
    (await client.workflow.getHandle(w.workflowId).describe()).status.name));
  assert.deepEqual(statuses, ['RUNNING', 'RUNNING']);
  for (const w of [first, second]) await client.workflow.getHandle(w.workflowId).signal('unblock');
  await handle.delete();
});

test('overlap TerminateOther and CancelOther: the running one is ended, the new one starts', DEADLINE, async () => {
  for (const [overlap, status] of [[ScheduleOverlapPolicy.TERMINATE_OTHER, 'TERMINATED'],
                                   [ScheduleOverlapPolicy.CANCEL_OTHER, 'CANCELLED']]) {
    const { handle, first } = await overlapping(overlap);
    const d = await waitFor(() => describe(handle), (x) => taken(x) === 2, `the second action (${overlap})`);
    const old = await client.workflow.getHandle(first.workflowId).describe();
    assert.equal(old.status.name, status);
    const second = d.info.recentActions[1].action.workflow;
    assert.equal((await client.workflow.getHandle(second.workflowId).describe()).status.name, 'RUNNING');
    await client.workflow.getHandle(second.workflowId).signal('unblock');
    await handle.delete();
  }
});

test('pause stops actions, unpause resumes them without catching up the pause', DEADLINE, async () => {
  const handle = await client.schedule.create({
    scheduleId: uniqueName('pause'),
    spec: { intervals: [{ every: '1h' }] },
    action: startAction('timerThenReturn', [0]),
    policies: { overlap: ScheduleOverlapPolicy.ALLOW_ALL },
  });
  await handle.pause('maintenance');
  let d = await describe(handle);
  assert.equal(d.state.paused, true);
  assert.equal(d.state.note, 'maintenance');
  await advance('3h'); // answers once the runner has looked at the schedules due
  assert.equal(taken(await describe(handle)), 0, 'no action while paused');
  await handle.unpause('back');
  await advance('1h');
  d = await describe(handle);
  assert.equal(taken(d), 1, 'one action after unpause: the 3 hours paused are not caught up');
  assert.equal(d.state.paused, false);
  assert.equal(d.state.note, 'back');
  await handle.delete();
});

test('pauseOnFailure pauses the schedule when a run fails', DEADLINE, async () => {
  const action = startAction('failing', ['boom']);
  const handle = await client.schedule.create({
    scheduleId: uniqueName('pause-on-failure'),
    spec: { intervals: [{ every: '1h' }] },
    action,
    policies: { pauseOnFailure: true },
  });
  await advance('1h');
  const d1 = await waitFor(() => describe(handle), (x) => taken(x) === 1, 'the failing action');
  await assert.rejects(client.workflow.getHandle(d1.info.recentActions[0].action.workflow.workflowId).result());
  await advance('1h'); // the next action sees the failure first
  const d = await waitFor(() => describe(handle), (x) => x.state.paused, 'the pause');
  assert.match(d.state.note, new RegExp(`^paused due to workflow failure: ${action.workflowId}-.*: boom$`));
  assert.equal(taken(d), 1);
  await handle.delete();
});

test('remaining actions run out', DEADLINE, async () => {
  const handle = await client.schedule.create({
    scheduleId: uniqueName('limited'),
    spec: { intervals: [{ every: '1h' }] },
    action: startAction('timerThenReturn', [0]),
    policies: { overlap: ScheduleOverlapPolicy.ALLOW_ALL },
    state: { remainingActions: 2 },
  });
  assert.equal((await describe(handle)).info.nextActionTimes.length, 2);
  for (let i = 0; i < 4; i++) await advance('1h');
  const d = await describe(handle);
  assert.equal(taken(d), 2, 'two actions, none after the last');
  assert.equal(d.state.remainingActions, 0);
  assert.equal(d.info.nextActionTimes.length, 0);
  await handle.delete();
});

test('a finished schedule is deleted 7 days after its last action (Temporal\'s retention)', DEADLINE, async () => {
  const handle = await client.schedule.create({
    scheduleId: uniqueName('finished'),
    spec: { intervals: [{ every: '1h' }] },
    action: startAction('timerThenReturn', [0]),
    state: { remainingActions: 1 },
  });
  await advance('1h');
  await waitFor(() => describe(handle), (x) => taken(x) === 1, 'the one action');
  await advance('6d');
  assert.equal(taken(await describe(handle)), 1, 'kept within the 7 days');
  await advance('1d');
  await assert.rejects(handle.describe(), ScheduleNotFoundError, 'deleted 7 days after its last action');
});

test('trigger starts an action now, even when paused', DEADLINE, async () => {
  const handle = await client.schedule.create({
    scheduleId: uniqueName('trigger'),
    spec: { cronExpressions: ['0 0 1 1 *'] },
    action: startAction('timerThenReturn', [0]),
    state: { paused: true },
  });
  await handle.trigger();
  const d = await waitFor(() => describe(handle), (x) => taken(x) === 1, 'the triggered action');
  assert.ok(Math.abs(d.info.recentActions[0].takenAt - d.info.recentActions[0].scheduledAt) < 5000);
  await handle.delete();
});

test('backfill takes every action of a past range (start inclusive)', DEADLINE, async () => {
  const action = startAction('timerThenReturn', [0]);
  const handle = await client.schedule.create({
    scheduleId: uniqueName('backfill'),
    spec: { cronExpressions: ['*/10 * * * *'] },
    action,
    state: { paused: true },
  });
  const end = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 24 * 3_600_000);
  const start = new Date(end.getTime() - 3_600_000);
  await handle.backfill({ start, end, overlap: ScheduleOverlapPolicy.ALLOW_ALL });
  const d = await waitFor(() => describe(handle), (x) => taken(x) === 7, 'seven backfilled actions');
  const times = d.info.recentActions.map((a) => a.scheduledAt.getTime()).sort();
  assert.equal(times[0], start.getTime());
  assert.equal(times[6], end.getTime());
  await handle.delete();
});

test('update replaces the schedule; a stale conflict token is refused', DEADLINE, async () => {
  const handle = await client.schedule.create({
    scheduleId: uniqueName('update'),
    spec: { cronExpressions: ['0 12 * * *'] },
    action: startAction('timerThenReturn', [0]),
  });
  const before = await connection.workflowService.describeSchedule({ namespace: 'default', scheduleId: handle.scheduleId });
  await handle.update((s) => ({ ...s, spec: { intervals: [{ every: '30m' }] }, state: { note: 'faster' } }));
  const d = await describe(handle);
  assert.deepEqual(d.spec.calendars, []);
  assert.equal(d.spec.intervals[0].every, 30 * 60_000);
  assert.equal(d.state.note, 'faster');
  assert.ok(d.info.lastUpdatedAt);
  const stale = { ...before.schedule };
  await assert.rejects(
    connection.workflowService.updateSchedule({
      namespace: 'default', scheduleId: handle.scheduleId, schedule: stale,
      conflictToken: before.conflictToken, requestId: uniqueName('r'),
    }),
    (err) => err.code === 9 && /mismatched conflict token/.test(errText(err)),
  );
  await handle.delete();
});

test('list shows schedules with their next times; bad requests get Temporal\'s errors', DEADLINE, async () => {
  const prefix = uniqueName('listed');
  for (const n of ['a', 'b', 'c']) {
    await client.schedule.create({ scheduleId: `${prefix}-${n}`, spec: { cronExpressions: ['0 9 * * *'] },
      action: startAction('timerThenReturn', [0]) });
  }
  const listed = [];
  for await (const s of client.schedule.list({ pageSize: 2 })) if (s.scheduleId.startsWith(prefix)) listed.push(s);
  assert.deepEqual(listed.map((s) => s.scheduleId), [`${prefix}-a`, `${prefix}-b`, `${prefix}-c`]);
  assert.equal(listed[0].action.workflowType, 'timerThenReturn');
  assert.equal(listed[0].info.nextActionTimes.length, 5);
  const byQuery = [];
  for await (const s of client.schedule.list({ query: `ScheduleId STARTS_WITH '${prefix}' AND ScheduleId != '${prefix}-b'` })) {
    byQuery.push(s.scheduleId);
  }
  assert.deepEqual(byQuery, [`${prefix}-a`, `${prefix}-c`]);

  await assert.rejects(
    client.schedule.create({ scheduleId: `${prefix}-a`, spec: { cronExpressions: ['0 9 * * *'] },
      action: startAction('timerThenReturn', [0]) }),
    ScheduleAlreadyRunning,
  );
  await assert.rejects(
    client.schedule.create({ scheduleId: `${prefix}-bad`, spec: { cronExpressions: ['61 * * * *'] },
      action: startAction('timerThenReturn', [0]) }),
    // The SDK turns the server's "Invalid schedule spec: X" into a TypeError("X").
    (err) => err instanceof TypeError && err.message === 'Minute is not in range [0-59]',
  );
  await assert.rejects(
    client.schedule.create({ scheduleId: `${prefix}-tz`, spec: { cronExpressions: ['0 9 * * *'], timezone: 'Nowhere/Land' },
      action: startAction('timerThenReturn', [0]) }),
    (err) => err instanceof TypeError && err.message === 'unknown time zone Nowhere/Land',
  );
  await assert.rejects(client.schedule.getHandle(`${prefix}-none`).describe(), ScheduleNotFoundError);
  await assert.rejects(client.schedule.getHandle(`${prefix}-none`).delete(), ScheduleNotFoundError);
  for (const n of ['a', 'b', 'c']) await client.schedule.getHandle(`${prefix}-${n}`).delete();
});

test('kill -9 of the server loses no action and duplicates none', { timeout: 180_000 }, async () => {
  // A real clock: one action a second, runs nobody polls (they stay running, ALLOW_ALL).
  const real = await startServer();
  const port = real.address.split(':').pop();
  let current = real;
  const conn = await Connection.connect({ address: real.address });
  try {
    const c = new Client({ connection: conn });
    const type = uniqueName('EverySecond');
    const handle = await c.schedule.create({
      scheduleId: uniqueName('crash'),
      spec: { intervals: [{ every: '1s' }] },
      action: { type: 'startWorkflow', workflowType: type, taskQueue: uniqueName('nobody'), workflowId: uniqueName('tick') },
      policies: { overlap: ScheduleOverlapPolicy.ALLOW_ALL },
    });
    await new Promise((r) => setTimeout(r, 3500));
    current = await current.restart({ kill: true, port, downMs: 2000 });
    await new Promise((r) => setTimeout(r, 3500));
    current = await current.restart({ kill: true, port });
    await new Promise((r) => setTimeout(r, 2500));
    await handle.pause('done');
    await new Promise((r) => setTimeout(r, 1500)); // an action in flight is recorded

    const d = await handle.describe();
    const runs = [];
    for await (const w of c.workflow.list({ query: `WorkflowType = '${type}'` })) runs.push(w);
    const ids = runs.map((w) => w.workflowId);
    assert.equal(new Set(ids).size, ids.length, 'no workflow id twice');
    const seconds = ids.map((id) => Date.parse(id.slice(-20)) / 1000).sort((a, b) => a - b);
    // Every second from the first to the last, the 2 s down included (caught up).
    assert.equal(seconds.length, seconds[seconds.length - 1] - seconds[0] + 1,
      `a gap among ${JSON.stringify(seconds)}`);
    assert.ok(seconds.length >= 9, `only ${seconds.length} actions`);
    assert.equal(d.info.numActionsTaken, seconds.length, 'every run started is counted once');
    await handle.delete();
  } finally {
    await conn.close();
    await current.stop();
  }
});
