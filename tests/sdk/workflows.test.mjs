// The official TypeScript SDK runs real workflows on tock-server: a worker polls, executes
// and completes; the client starts, signals and reads results. Every history is then
// replayed by the SDK's replayer, with the workflow cache on and off.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { WorkflowFailedError } from '@temporalio/client';
import * as activities from './activities.mjs';
import { eventually } from './clusters.mjs';
import { clientRetries, faultsFromEnv, hostsFromEnv, startHosts, startServer, uniqueName } from './server.mjs';

// Per test, and for the hooks (which start a server, bundle workflows, connect a worker).
const DEADLINE = { timeout: 90_000 };
const HOOK_DEADLINE = { timeout: 60_000 };

const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));
// TOCK_SDK_FAULT_RATE: the server fails that share of its store calls (ctest sdk_faults).
const faults = faultsFromEnv();

Runtime.install({ logger: new DefaultLogger('WARN') });

let server;
let connection;
let client;

// TOCK_SDK_HOSTS > 1: several hosts on PostgreSQL, the client on one, the workers on another.
const hosts = hostsFromEnv();

before(async () => {
  server = hosts > 1 ? await startHosts(hosts) : await startServer();
  connection = await Connection.connect({ address: server.address, ...clientRetries() });
  client = new Client({ connection, namespace: 'default' });
}, HOOK_DEADLINE);

after(async () => {
  try {
    await connection?.close();
  } finally {
    await server?.stop();
  }
}, HOOK_DEADLINE);

// The connection is closed however the test ends, Worker.create failing included: left open,
// it keeps node running after the last test and the suite waits out its ctest timeout.
async function withWorker(options, fn) {
  const nativeConnection = await NativeConnection.connect({ address: server.workerAddress ?? server.address });
  try {
    const taskQueue = uniqueName('tq');
    const worker = await Worker.create({
      connection: nativeConnection,
      namespace: 'default',
      taskQueue,
      workflowsPath,
      activities,
      ...options,
    });
    return await worker.runUntil(fn(taskQueue));
  } finally {
    await nativeConnection.close();
  }
}

async function replays(workflowId) {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  await Worker.runReplayHistory({ workflowsPath }, history, workflowId);
  return history;
}

for (const maxCachedWorkflows of [undefined, 0]) {
  const label = maxCachedWorkflows === 0 ? ' (no workflow cache)' : '';

  test(`activity round trip${label}`, DEADLINE, async () => {
    const workflowId = uniqueName('activity');
    const result = await withWorker({ maxCachedWorkflows }, (taskQueue) =>
      client.workflow.execute('activityRoundTrip', { taskQueue, workflowId, args: ['Tock'] }),
    );
    assert.equal(result, 'Hello, Tock!');
    const history = await replays(workflowId);
    const types = history.events.map((e) => e.eventType);
    assert.ok(types.length >= 11, `history too short: ${types.length}`);
    history.events.forEach((e, i) => assert.equal(Number(e.eventId), i + 1, 'event ids are dense'));
  });

  test(`timer${label}`, DEADLINE, async () => {
    const workflowId = uniqueName('timer');
    const elapsed = await withWorker({ maxCachedWorkflows }, (taskQueue) =>
      client.workflow.execute('timerThenReturn', { taskQueue, workflowId, args: [1500] }),
    );
    assert.ok(elapsed >= 1500, `workflow time moved ${elapsed} ms`);
    await replays(workflowId);
  });

  test(`continue-as-new${label}`, DEADLINE, async () => {
    const workflowId = uniqueName('countdown');
    const runs = await withWorker({ maxCachedWorkflows }, (taskQueue) =>
      client.workflow.execute('countdown', { taskQueue, workflowId, args: [3] }),
    );
    assert.equal(runs, 4);
    const description = await client.workflow.getHandle(workflowId).describe();
    assert.equal(description.status.name, 'COMPLETED');
    assert.notEqual(description.runId, description.firstExecutionRunId ?? description.raw.workflowExecutionInfo.firstRunId);
    await replays(workflowId);
  });

  test(`child workflow${label}`, DEADLINE, async () => {
    const workflowId = uniqueName('parent');
    const result = await withWorker({ maxCachedWorkflows }, (taskQueue) =>
      client.workflow.execute('parentOfChild', { taskQueue, workflowId, args: ['kid'] }),
    );
    assert.equal(result, 'child said: Hello, kid!');
    const history = await replays(workflowId);
    const started = history.events.find((e) => e.childWorkflowExecutionStartedEventAttributes);
    const completed = history.events.find((e) => e.childWorkflowExecutionCompletedEventAttributes);
    assert.ok(started && completed, 'the parent records the child start and completion');
    assert.equal(
      Number(completed.childWorkflowExecutionCompletedEventAttributes.startedEventId),
      Number(started.eventId),
    );
    const child = await client.workflow.getHandle(`${workflowId}-child`).describe();
    assert.equal(child.status.name, 'COMPLETED');
    assert.equal(child.parentExecution?.workflowId, workflowId);
    await replays(`${workflowId}-child`);
  });

  test(`signal then query${label}`, DEADLINE, async () => {
    const workflowId = uniqueName('signal');
    const [before, result, after] = await withWorker({ maxCachedWorkflows }, async (taskQueue) => {
      const handle = await client.workflow.start('waitForSignal', { taskQueue, workflowId });
      const waiting = await handle.query('status');
      await handle.signal('unblock');
      const value = await handle.result();
      return [waiting, value, await handle.query('status')];
    });
    assert.equal(before, 'waiting');
    assert.equal(result, 'unblocked');
    assert.equal(after, 'unblocked', 'a closed workflow answers queries too');
    await replays(workflowId);
  });
}

test('starting a running workflow id is ALREADY_EXISTS', DEADLINE, async () => {
  const workflowId = uniqueName('dup');
  const taskQueue = uniqueName('idle');
  await client.workflow.start('waitForSignal', { taskQueue, workflowId });
  await assert.rejects(
    client.workflow.start('waitForSignal', { taskQueue, workflowId }),
    (err) => err.name === 'WorkflowExecutionAlreadyStartedError',
  );
  await client.workflow.getHandle(workflowId).terminate('done');
  const description = await client.workflow.getHandle(workflowId).describe();
  assert.equal(description.status.name, 'TERMINATED');
});

test('an activity failing twice succeeds on its third attempt under its retry policy (workflow cache on and off)', DEADLINE, async () => {
  for (const maxCachedWorkflows of [undefined, 0]) {
    const workflowId = uniqueName('retry');
    const attempt = await withWorker({ maxCachedWorkflows }, (taskQueue) =>
      client.workflow.execute('retryUntilThirdAttempt', { taskQueue, workflowId }),
    );
    // Under injected faults an attempt whose answer was lost (the worker does not retry a
    // DEADLINE_EXCEEDED) times out and the next one runs: a later attempt may succeed.
    if (faults) assert.ok(attempt >= 3, `attempt ${attempt}`);
    else assert.equal(attempt, 3);
    const history = await replays(workflowId);
    const started = history.events.find((e) => e.activityTaskStartedEventAttributes);
    assert.equal(started.activityTaskStartedEventAttributes.attempt, attempt, 'retries write no events');
    if (!faults) assert.match(started.activityTaskStartedEventAttributes.lastFailure.message, /attempt 2/);
    assert.equal(history.events.filter((e) => e.activityTaskStartedEventAttributes).length, 1);
  }
});

test('describe shows the attempt and last failure of a retrying activity', DEADLINE, async () => {
  const workflowId = uniqueName('describe');
  await withWorker({}, async (taskQueue) => {
    const handle = await client.workflow.start('alwaysFailing', { taskQueue, workflowId });
    const deadline = Date.now() + 15_000;
    let pending;
    while (Date.now() < deadline) {
      const raw = (await handle.describe()).raw;
      pending = raw.pendingActivities?.[0];
      if (pending && pending.attempt >= 2) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(pending, 'a pending activity is listed');
    assert.ok(pending.attempt >= 2, `attempt ${pending?.attempt}`);
    assert.equal(pending.activityType.name, 'alwaysFail');
    assert.match(pending.lastFailure.message, /always fails/);
    await handle.terminate('test over');
  });
});

test('a heartbeat timeout reaches the workflow as a TimeoutFailure (workflow cache on and off)', DEADLINE, async () => {
  for (const maxCachedWorkflows of [undefined, 0]) {
    const workflowId = uniqueName('heartbeat');
    const result = await withWorker({ maxCachedWorkflows }, (taskQueue) =>
      client.workflow.execute('heartbeatTimeout', { taskQueue, workflowId }),
    );
    assert.equal(result, 'ActivityFailure: TimeoutFailure HEARTBEAT');
    await replays(workflowId);
  }
});

test('an activity nobody picks up with only a schedule-to-close timeout times out SCHEDULE_TO_START', DEADLINE, async () => {
  const workflowId = uniqueName('unpicked');
  const result = await withWorker({}, (taskQueue) =>
    client.workflow.execute('unpickedActivity', { taskQueue, workflowId, args: [uniqueName('nobody')] }),
  );
  assert.equal(result, 'ActivityFailure: TimeoutFailure SCHEDULE_TO_START');
  await replays(workflowId);
});

test('a failing workflow fails its result with the application failure (workflow cache on and off)', DEADLINE, async () => {
  for (const maxCachedWorkflows of [undefined, 0]) {
    const workflowId = uniqueName('failing');
    await withWorker({ maxCachedWorkflows }, async (taskQueue) => {
      await assert.rejects(
        client.workflow.execute('failing', { taskQueue, workflowId, args: ['broken on purpose'] }),
        (err) =>
          err instanceof WorkflowFailedError &&
          err.cause?.message === 'broken on purpose' &&
          err.cause?.type === 'TockTestFailure',
      );
    });
    const description = await client.workflow.getHandle(workflowId).describe();
    assert.equal(description.status.name, 'FAILED');
    await replays(workflowId);
  }
});

test('a cancel from the client is handled by the workflow (workflow cache on and off)', DEADLINE, async () => {
  for (const maxCachedWorkflows of [undefined, 0]) {
    const workflowId = uniqueName('cancel');
    const result = await withWorker({ maxCachedWorkflows }, async (taskQueue) => {
      const handle = await client.workflow.start('cancellable', { taskQueue, workflowId });
      await handle.query('__stack_trace').catch(() => undefined);  // wait for the first task
      await handle.cancel();
      return await handle.result();
    });
    assert.equal(result, 'cancelled and cleaned up');
    const history = await replays(workflowId);
    assert.ok(history.events.some((e) => e.workflowExecutionCancelRequestedEventAttributes));
  }
});

test('200 workflows at once', DEADLINE, async () => {
  const ids = Array.from({ length: 200 }, (_, i) => uniqueName(`many-${i}`));
  const results = await withWorker({}, (taskQueue) =>
    Promise.all(
      ids.map((workflowId, i) =>
        client.workflow.execute('activityRoundTrip', { taskQueue, workflowId, args: [`n${i}`] }),
      ),
    ),
  );
  assert.equal(results.length, 200);
  results.forEach((r, i) => assert.equal(r, `Hello, n${i}!`));
  // Every history replays (one replay worker for all 200): none was written out of order
  // under the load.
  const histories = await Promise.all(
    ids.map(async (workflowId) => ({
      workflowId,
      history: await client.workflow.getHandle(workflowId).fetchHistory(),
    })),
  );
  let replayed = 0;
  for await (const result of Worker.runReplayHistories({ workflowsPath }, histories)) {
    assert.equal(result.error, undefined, `${result.workflowId}: ${result.error}`);
    ++replayed;
  }
  assert.equal(replayed, 200);
});

test('terminate closes a waiting workflow, and its history replays (workflow cache on and off)', DEADLINE, async () => {
  for (const maxCachedWorkflows of [undefined, 0]) {
    const workflowId = uniqueName('terminate');
    await withWorker({ maxCachedWorkflows }, async (taskQueue) => {
      const handle = await client.workflow.start('waitForSignal', { taskQueue, workflowId });
      // Wait until the worker has run the first workflow task, so the history has one.
      for (let i = 0; i < 100; ++i) {
        const { events } = await handle.fetchHistory();
        if (events.some((e) => e.eventType === 7 /* WORKFLOW_TASK_COMPLETED */)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await handle.terminate('operator stop');
      await assert.rejects(handle.result(), (err) =>
        err instanceof WorkflowFailedError && err.cause?.name === 'TerminatedFailure');
      assert.equal((await handle.describe()).status.name, 'TERMINATED');
    });
    const history = await replays(workflowId);
    const last = history.events[history.events.length - 1];
    assert.equal(last.eventType, 27 /* WORKFLOW_EXECUTION_TERMINATED */);
    assert.equal(last.workflowExecutionTerminatedEventAttributes.reason, 'operator stop');
    assert.ok(history.events.some((e) => e.eventType === 7), 'a workflow task had completed');
  }
});

test('a start delay holds the first workflow task; a signal before then dispatches it at once', DEADLINE, async () => {
  const delayedId = uniqueName('delayed');
  const signalledId = uniqueName('delayed-signalled');
  await withWorker({}, async (taskQueue) => {
    const started = Date.now();
    const handle = await client.workflow.start('activityRoundTrip', {
      taskQueue, workflowId: delayedId, args: ['later'], startDelay: '1500ms',
    });
    assert.equal(await handle.result(), 'Hello, later!');
    assert.ok(Date.now() - started >= 1400, `completed after ${Date.now() - started} ms`);
    const description = await handle.describe();
    assert.ok(description.executionTime.getTime() - description.startTime.getTime() >= 1400,
      'the execution time is the start time plus the delay');

    // An hour's delay, cut short by a signal.
    const waiting = await client.workflow.start('waitForSignal', {
      taskQueue, workflowId: signalledId, startDelay: '1h',
    });
    const signalledAt = Date.now();
    await waiting.signal('unblock');
    assert.equal(await waiting.result(), 'unblocked');
    assert.ok(Date.now() - signalledAt < 30_000, 'the signal did not wait out the hour');
  });
  const history = await replays(delayedId);
  const startedAttrs = history.events[0].workflowExecutionStartedEventAttributes;
  assert.equal(Number(startedAttrs.firstWorkflowTaskBackoff.seconds ?? 0) * 1000 +
               Math.round((startedAttrs.firstWorkflowTaskBackoff.nanos ?? 0) / 1e6), 1500);
  await replays(signalledId);
  await assert.rejects(
    client.workflow.start('waitForSignal', { taskQueue: 'x', workflowId: uniqueName('bad'),
      startDelay: '1s', cronSchedule: '* * * * *' }),
    (err) => /CronSchedule and WorkflowStartDelay may not be used together/.test(
      `${err.message} ${err.cause?.details ?? ''} ${err.cause?.message ?? ''}`),
  );
});

test('list and count workflows with a visibility query', DEADLINE, async () => {
  const prefix = uniqueName('listed');
  await withWorker({}, (taskQueue) =>
    Promise.all(
      [0, 1, 2].map((i) =>
        client.workflow.execute('activityRoundTrip', { taskQueue, workflowId: `${prefix}-${i}`, args: ['x'] }),
      ),
    ),
  );
  const query = `WorkflowId STARTS_WITH '${prefix}' AND ExecutionStatus = 'Completed' ORDER BY WorkflowId ASC`;
  const listed = [];
  for await (const execution of client.workflow.list({ query })) listed.push(execution);
  assert.deepEqual(listed.map((e) => e.workflowId), [0, 1, 2].map((i) => `${prefix}-${i}`));
  assert.equal(listed[0].type, 'activityRoundTrip');
  assert.equal(listed[0].status.name, 'COMPLETED');
  const { count } = await client.workflow.count(`WorkflowId STARTS_WITH '${prefix}'`);
  assert.equal(count, 3);
  await assert.rejects(
    client.workflow.count('WorkflowId STARTS_WITH'),
    (err) => err.cause?.code === 3 && /invalid query: it ends where/.test(err.cause?.details),
  );
});

test('signalWithStart starts a workflow with the signal, then signals the running one', DEADLINE, async () => {
  const workflowId = uniqueName('sws');
  const result = await withWorker({}, async (taskQueue) => {
    const first = await client.workflow.signalWithStart('waitForSignal', {
      taskQueue, workflowId, signal: 'unblock',
    });
    return await first.result();
  });
  assert.equal(result, 'unblocked');
  const history = await replays(workflowId);
  const types = history.events.map((e) => e.eventType);
  assert.ok(history.events.some((e) => e.workflowExecutionSignaledEventAttributes));
  assert.equal(types[0], 1, 'the history starts with WorkflowExecutionStarted');
});

test('an activity completed asynchronously by workflow and activity id', DEADLINE, async () => {
  const workflowId = uniqueName('async');
  const result = await withWorker({}, async (taskQueue) => {
    const handle = await client.workflow.start('waitsForAsyncActivity', { taskQueue, workflowId });
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const pending = (await handle.describe()).raw.pendingActivities ?? [];
      if (pending[0]?.state === 2 /* STARTED */) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await client.activity.complete({ workflowId, activityId: '1' }, 'done elsewhere');
    return await handle.result();
  });
  assert.equal(result, 'done elsewhere');
  const { events } = await replays(workflowId);
  // 11 events; under injected faults a workflow task whose answer was lost times out and is
  // retried, which adds events.
  if (!faults) assert.equal(events.length, 11);
  const reversed = await connection.workflowService.getWorkflowExecutionHistoryReverse({
    namespace: 'default', execution: { workflowId }, maximumPageSize: 2,
  });
  assert.deepEqual(reversed.history.events.map((e) => Number(e.eventId)), [events.length, events.length - 1]);
  assert.ok(reversed.nextPageToken.length > 0);
});

test('cancelling a parent asks its running child to cancel (RequestCancelExternal)', DEADLINE, async () => {
  const workflowId = uniqueName('cparent');
  const result = await withWorker({}, async (taskQueue) => {
    const handle = await client.workflow.start('parentOfCancellable', { taskQueue, workflowId });
    const child = client.workflow.getHandle(`${workflowId}-child`);
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      try {
        if ((await child.describe()).historyLength >= 3) break;
      } catch {}
      await new Promise((r) => setTimeout(r, 100));
    }
    await handle.cancel();
    // The parent waits for `unblock` until this test has seen the cancel's outcome in its
    // history (see parentOfCancellable); a server that never records it fails here.
    await eventually(async () => {
      const { events } = await handle.fetchHistory();
      assert.ok(events.some((e) => e.externalWorkflowExecutionCancelRequestedEventAttributes));
    }, { what: "ExternalWorkflowExecutionCancelRequested in the parent's history" });
    await handle.signal('unblock');
    return await handle.result().catch((err) => `parent: ${err.name}`);
  });
  assert.match(result, /child returned: cancelled and cleaned up|child failed|parent:/);
  const parent = await replays(workflowId);
  assert.ok(parent.events.some((e) => e.requestCancelExternalWorkflowExecutionInitiatedEventAttributes));
  assert.ok(parent.events.some((e) => e.externalWorkflowExecutionCancelRequestedEventAttributes));
  const child = await replays(`${workflowId}-child`);
  assert.ok(child.events.some((e) => e.workflowExecutionCancelRequestedEventAttributes));
});

test('a workflow signals another workflow (SignalExternal)', DEADLINE, async () => {
  const targetId = uniqueName('target');
  const senderId = uniqueName('sender');
  const [sent, received] = await withWorker({}, async (taskQueue) => {
    const target = await client.workflow.start('waitForSignal', { taskQueue, workflowId: targetId });
    const sender = await client.workflow.execute('signaller', { taskQueue, workflowId: senderId, args: [targetId] });
    return [sender, await target.result()];
  });
  assert.equal(sent, 'signalled');
  assert.equal(received, 'unblocked');
  const history = await replays(senderId);
  assert.ok(history.events.some((e) => e.externalWorkflowExecutionSignaledEventAttributes));
});

test('a failed workflow is retried by its retry policy in a new run (workflow cache on and off)', DEADLINE, async () => {
  for (const maxCachedWorkflows of [undefined, 0]) {
    const workflowId = uniqueName('wfretry');
    const result = await withWorker({ maxCachedWorkflows }, (taskQueue) =>
      client.workflow.execute('failsOnFirstAttempt', {
        taskQueue, workflowId, retry: { maximumAttempts: 3, initialInterval: '200 milliseconds' },
      }),
    );
    assert.equal(result, 'attempt 2');
    const second = await client.workflow.getHandle(workflowId).describe();
    assert.equal(second.status.name, 'COMPLETED');
    const first = await client.workflow.getHandle(workflowId, second.raw.workflowExecutionInfo.firstRunId).fetchHistory();
    const failed = first.events.find((e) => e.workflowExecutionFailedEventAttributes);
    assert.equal(failed.workflowExecutionFailedEventAttributes.newExecutionRunId, second.runId);
    await replays(workflowId);
  }
});

test('signals racing the completion are never lost (UnhandledCommand)', DEADLINE, async () => {
  const workflowId = uniqueName('race');
  const SIGNALS = 40;
  const [seen, delivered] = await withWorker({}, async (taskQueue) => {
    const handle = await client.workflow.start('countSignals', { taskQueue, workflowId });
    const outcomes = await Promise.allSettled(
      Array.from({ length: SIGNALS }, () => handle.signal('tick')),
    );
    const ok = outcomes.filter((o) => o.status === 'fulfilled').length;
    outcomes
      .filter((o) => o.status === 'rejected')
      .forEach((o) => assert.equal(o.reason.name, 'WorkflowNotFoundError', String(o.reason)));
    return [await handle.result(), ok];
  });
  const history = await replays(workflowId);
  const signaled = history.events.filter((e) => e.workflowExecutionSignaledEventAttributes).length;
  assert.equal(signaled, delivered, 'every accepted signal is in the history');
  assert.equal(seen, signaled, 'the workflow saw every signal in its history before completing');
});

// A result() outlives the server's 20 s history long poll: the poll's expiry answers an
// empty page and the client asks again. (The expiry used to answer through a reference to a
// finished call's callback: tock-server died with SIGSEGV 20 s into any such wait.)
test('a client waiting longer than the 20 s history long poll gets its result', { timeout: 120_000 }, async () => {
  const workflowId = uniqueName('longwait');
  const elapsed = await withWorker({}, (taskQueue) =>
    client.workflow.execute('timerThenReturn', { taskQueue, workflowId, args: [23_000] }),
  );
  assert.ok(elapsed >= 23_000, `workflow time moved ${elapsed} ms`);
  assert.equal((await client.workflow.getHandle(workflowId).describe()).status.name, 'COMPLETED');
});

// Under TOCK_SDK_FAULT_RATE (ctest sdk_faults) every test above ran with that share of the
// server's store calls failing: they must have failed, or the run proved nothing.
test('persistence faults were injected (TOCK_SDK_FAULT_RATE)', { ...DEADLINE, skip: !faults && 'TOCK_SDK_FAULT_RATE is not set' }, async () => {
  const { unavailable, timeoutAfter } = await server.injectedFaults();
  console.log(`persistence faults injected at rate ${server.faults.rate} (seed ${server.faults.seed}): ` +
    `${unavailable} UNAVAILABLE before the call, ${timeoutAfter} DEADLINE_EXCEEDED after it`);
  assert.ok(unavailable >= 5 && timeoutAfter >= 5, `too few faults to prove anything: ${unavailable} + ${timeoutAfter}`);
});
