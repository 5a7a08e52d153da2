// Chaos: hundreds of workflows mixing activities (some failing, then retried), timers and
// signals sent by the client while they wait, with a worker running, while tock-server is
// killed with SIGKILL at random moments and restarted on the same database and port; then
// the same under 1 % injected persistence faults. In the end every workflow has completed
// with the right result, its event ids are dense, every activity completion and every
// signal is in its history exactly once, and every history replays.
//
// The moments of the kills and the mix of workflows come from a seeded generator
// (TOCK_CHAOS_SEED, printed), so a failing run can be repeated; which request a kill or a
// fault hits still depends on timing.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { clientRetries, hostsFromEnv, startHosts, startServer, uniqueName } from './server.mjs';

const workflowsPath = fileURLToPath(new URL('./chaos-workflows.js', import.meta.url));
const SEED = Number(process.env.TOCK_CHAOS_SEED ?? 20261123);
// TOCK_SDK_HOSTS > 1 (ctest sdk_hosts_chaos): that many hosts on PostgreSQL; the client
// talks to the first, a worker polls each host (so every host's partition of the queue
// serves polls and holds the tasks of its shards), and the last host is the one killed (and,
// in the fencing test, frozen with SIGSTOP until the others took its shards, then let go
// on).
const HOSTS = hostsFromEnv();
// Per phase: how long all workflows may take to finish after the last restart.
const SETTLE_MS = 150_000;

// The worker's own log (reconnect warnings after every kill) would drown the test's output.
Runtime.install({ logger: new DefaultLogger('ERROR') });

// mulberry32: a small seeded generator.
function generator(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    between: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),  // an integer in [lo, hi]
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// What each workflow does: a mix where every kind is common and most workflows do several.
function plan(random, count, prefix) {
  return Array.from({ length: count }, (_, i) => {
    const spec = {
      key: `${prefix}-${i}`,
      activities: random.between(0, 3),
      failures: random.next() < 0.4 ? random.between(1, 2) : 0,
      timerMs: random.next() < 0.6 ? random.between(500, 4000) : 0,
      signals: random.next() < 0.6 ? random.between(1, 3) : 0,
    };
    if (spec.activities + spec.failures + spec.timerMs + spec.signals === 0) spec.activities = 1;
    // When the client starts it (from the start of the phase), and sends each signal (from
    // the start of the run).
    const startAt = random.between(0, 12_000);
    const signalAt = Array.from({ length: spec.signals }, () => random.between(300, 8000));
    return { workflowId: uniqueName(spec.key), spec, startAt, signalAt };
  });
}

function expectedResult({ spec, workflowId }) {
  const results = Array.from({ length: spec.activities }, (_, i) => `${spec.key}/${i}`);
  if (spec.failures > 0) results.push(`${spec.key}/ok`);
  const received = Array.from({ length: spec.signals }, (_, k) => `${workflowId}#${k}`);
  return { results, received };
}

const decode = (payload) => JSON.parse(Buffer.from(payload.data).toString('utf8'));

// The checks of one history; returns the problems found.
function checkHistory(entry, history) {
  const { workflowId, spec } = entry;
  const problems = [];
  const events = history.events;
  events.forEach((e, i) => {
    if (Number(e.eventId) !== i + 1) problems.push(`event #${i + 1} has id ${e.eventId} (ids not dense)`);
  });
  const count = (type) => events.filter((e) => e.eventType === type).length;
  if (events[0]?.eventType !== 1) problems.push('the history does not start with WorkflowExecutionStarted');
  if (count(1) !== 1) problems.push(`${count(1)} WorkflowExecutionStarted`);
  if (count(2) !== 1 || events.at(-1)?.eventType !== 2) problems.push('not one WorkflowExecutionCompleted, last');

  // Every scheduled activity completed exactly once; retries write no events.
  const scheduled = events.filter((e) => e.eventType === 10).map((e) => Number(e.eventId));
  const expectedActivities = spec.activities + (spec.failures > 0 ? 1 : 0);
  if (scheduled.length !== expectedActivities) {
    problems.push(`${scheduled.length} ActivityTaskScheduled, expected ${expectedActivities}`);
  }
  for (const id of scheduled) {
    const of = (type, attrs) =>
      events.filter((e) => e.eventType === type && Number(e[attrs].scheduledEventId) === id).length;
    const started = of(11, 'activityTaskStartedEventAttributes');
    const completed = of(12, 'activityTaskCompletedEventAttributes');
    if (started !== 1 || completed !== 1) {
      problems.push(`activity scheduled as event ${id}: ${started} started, ${completed} completed`);
    }
  }
  for (const [type, name] of [[13, 'ActivityTaskFailed'], [14, 'ActivityTaskTimedOut']]) {
    if (count(type) !== 0) problems.push(`${count(type)} ${name}`);
  }

  // Every signal sent is in the history exactly once (the payloads are unique).
  const signals = events
    .filter((e) => e.eventType === 26)
    .map((e) => decode(e.workflowExecutionSignaledEventAttributes.input.payloads[0]));
  const expected = Array.from({ length: spec.signals }, (_, k) => `${workflowId}#${k}`);
  if (JSON.stringify([...signals].sort()) !== JSON.stringify(expected)) {
    problems.push(`signals recorded ${JSON.stringify(signals)}, sent ${JSON.stringify(expected)}`);
  }

  const timers = spec.timerMs > 0 ? 1 : 0;
  if (count(17) !== timers || count(18) !== timers) {
    problems.push(`${count(17)} TimerStarted and ${count(18)} TimerFired, expected ${timers}`);
  }
  return problems;
}

// What a workflow still running is waiting for (for the failure message).
async function whyRunning(client, workflowId) {
  try {
    const handle = client.workflow.getHandle(workflowId);
    const { raw, status } = await handle.describe();
    const { events } = await handle.fetchHistory();
    return `${workflowId} ${status.name}: pending activities ${JSON.stringify(raw.pendingActivities ?? [])}, ` +
      `workflow task ${JSON.stringify(raw.pendingWorkflowTask ?? null)}, events ${events.map((e) => e.eventType).join(',')}`;
  } catch (err) {
    return `${workflowId}: ${err.message}`;
  }
}

let server;   // the server killed (with several hosts: the last host)
let cluster;  // with several hosts
const stopAll = async () => {
  if (cluster) {
    cluster.hosts[cluster.hosts.length - 1] = server;
    await cluster.stop();
  } else {
    await server?.stop();
  }
  server = cluster = undefined;
};
after(stopAll, { timeout: 30_000 });

// One phase: `count` workflows, `kills` kill -9 of the server (with `faults` injected).
// `pauses` (several hosts only): every other kill is a SIGSTOP of 3 s instead, long past
// the membership cutoff, so the others take the frozen host's shards; after SIGCONT it
// must write nothing to them (its transactions fail on the shard's range id).
async function chaos({ count, kills, faults, seed, pauses = false }) {
  const random = generator(seed);
  let started = Date.now();
  const log = (what) => console.log(`[chaos seed ${seed}, ${((Date.now() - started) / 1000).toFixed(1)} s] ${what}`);
  if (HOSTS > 1) {
    cluster = await startHosts(HOSTS);
    server = cluster.hosts[HOSTS - 1];
  } else {
    server = await startServer({ faults, metrics: true });
  }
  const port = server.address.split(':').pop();
  // Enough retries to ride out a restart (the SDK's own retries, with the same request ids).
  const connection = await Connection.connect({ address: cluster?.address ?? server.address, ...clientRetries({ maxAttempts: 30 }) });
  const client = new Client({ connection, namespace: 'default' });
  const workerAddresses = cluster ? cluster.hosts.map((host) => host.address) : [server.address];
  const nativeConnections = await Promise.all(
    workerAddresses.map((address) => NativeConnection.connect({ address })));
  const taskQueue = uniqueName('chaos');
  const executions = new Map(); // activity executions that returned, by key: >= 1 each
  const executed = (key) => executions.set(key, (executions.get(key) ?? 0) + 1);
  const workers = await Promise.all(nativeConnections.map((connection) => Worker.create({
    connection,
    namespace: 'default',
    taskQueue,
    workflowsPath,
    activities: {
      // 0-249 ms of work (fixed by the value), so that kills find activities running.
      async echo(value) {
        await sleep([...value].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % 250);
        executed(value);
        return value;
      },
      async failFirstAttempts(key, failures) {
        const { attempt } = Context.current().info;
        if (attempt <= failures) throw new Error(`attempt ${attempt} of ${key} fails on purpose`);
        executed(`${key}/ok`);
        return `${key}/ok`;
      },
    },
  })));
  const running = Promise.all(workers.map((worker) => worker.run()));
  started = Date.now();  // the schedule starts now, with the worker running
  let faultsInjected = { unavailable: 0, timeoutAfter: 0 };
  const addFaults = async () => {
    if (!faults) return;
    const now = await server.injectedFaults();
    faultsInjected = {
      unavailable: faultsInjected.unavailable + now.unavailable,
      timeoutAfter: faultsInjected.timeoutAfter + now.timeoutAfter,
    };
  };
  try {
    const entries = plan(random, count, `chaos${seed}`);
    const killAt = [];
    for (let k = 0, t = 0; k < kills; k++) killAt.push((t += random.between(1500, 5000)));
    const downFor = killAt.map(() => random.between(0, 1000));
    log(`${count} workflows on ${taskQueue}; kill -9 at ${killAt.map((t) => `${t} ms`).join(', ')}` +
      (faults ? `; persistence faults at rate ${faults.rate} (seed ${faults.seed})` : ''));

    // The kills, on their own schedule while everything else runs.
    const killer = (async () => {
      for (let k = 0; k < kills; k++) {
        await sleep(Math.max(0, started + killAt[k] - Date.now()));
        if (pauses && k % 2 === 1) {
          process.kill(server.pid, 'SIGSTOP');
          await sleep(3000);
          process.kill(server.pid, 'SIGCONT');
          log(`pause ${k + 1}: SIGSTOP for 3 s, then SIGCONT`);
          continue;
        }
        await addFaults();  // this process's count, read before it goes
        server = await server.restart({ kill: true, port, downMs: downFor[k] });
        log(`kill ${k + 1}: restarted (down ${downFor[k]} ms)`);
      }
    })();

    // Start every workflow (a start cut off by a kill is retried with its request id), send
    // its signals at their moments, and wait for its result.
    const signalErrors = [];
    // One deadline for all (its timer does not keep the process alive once all is done).
    const deadline = new Promise((_, reject) => {
      setTimeout(() => reject(new Error('no result in time')), killAt.at(-1) + SETTLE_MS).unref();
    });
    deadline.catch(() => {});
    // A restart that fails ends the phase at once (nothing could finish without a server).
    const killerFailed = killer.then(() => new Promise(() => {}));
    killerFailed.catch(() => {});  // reported by the race below, or by `await killer`
    const outcomes = await Promise.race([killerFailed, Promise.allSettled(entries.map(async (entry) => {
      await sleep(Math.max(0, started + entry.startAt - Date.now()));
      const handle = await client.workflow.start('chaosMix', {
        taskQueue,
        workflowId: entry.workflowId,
        args: [entry.spec],
        workflowTaskTimeout: '5s',
      });
      const runStarted = Date.now();
      await Promise.all(entry.signalAt.map(async (at, k) => {
        await sleep(Math.max(0, runStarted + at - Date.now()));
        try {
          await handle.signal('add', `${entry.workflowId}#${k}`);
        } catch (err) {
          signalErrors.push(`${entry.workflowId}#${k}: ${err.message} ${err.cause?.details ?? ''}`);
        }
      }));
      return handle.result();
    }).map((p) => Promise.race([p, deadline])))]);
    await killer;
    log('every workflow has an outcome');
    assert.deepEqual(signalErrors, [], 'every signal was accepted');

    const stuck = entries.filter((_, i) => outcomes[i].status === 'rejected');
    if (stuck.length > 0) {
      const why = await Promise.all(stuck.slice(0, 5).map((e) => whyRunning(client, e.workflowId)));
      assert.fail(`${stuck.length} of ${count} workflows failed or did not finish: ` +
        `${outcomes.find((o) => o.status === 'rejected').reason}\n${why.join('\n')}`);
    }
    entries.forEach((entry, i) => {
      assert.deepEqual(
        { results: outcomes[i].value.results, received: [...outcomes[i].value.received].sort() },
        expectedResult(entry),
        `${entry.workflowId}: the result`,
      );
    });

    // The histories: dense ids, every completion and signal once; then the replayer.
    const histories = [];
    for (let i = 0; i < entries.length; i += 25) {
      histories.push(...await Promise.all(entries.slice(i, i + 25).map(async (entry) => ({
        entry,
        workflowId: entry.workflowId,
        history: await client.workflow.getHandle(entry.workflowId).fetchHistory(),
      }))));
    }
    const problems = histories.flatMap(({ entry, history }) =>
      checkHistory(entry, history).map((p) => `${entry.workflowId}: ${p}`));
    assert.deepEqual(problems, [], 'every history as expected');
    let replayed = 0;
    for await (const result of Worker.runReplayHistories({ workflowsPath }, histories)) {
      assert.equal(result.error, undefined, `${result.workflowId} does not replay: ${result.error}`);
      ++replayed;
    }
    assert.equal(replayed, count);
    await addFaults();

    const reran = [...executions.values()].filter((n) => n > 1).length;
    const events = histories.reduce((n, { history }) => n + history.events.length, 0);
    // Workflow tasks lost with a server (timed out, then retried) or failed by the worker.
    const taskRetries = histories.reduce((n, { history }) =>
      n + history.events.filter((e) => e.eventType === 8 || e.eventType === 9).length, 0);
    log(`${count} workflows completed with the right results after ${kills} kills; ` +
      `${events} events, ids dense, every activity completion and signal once, all replayed; ` +
      `${reran} activities ran more than once and ${taskRetries} workflow tasks timed out or failed ` +
      '(work in flight when a server died)' +
      (faults ? `; faults injected: ${faultsInjected.unavailable} UNAVAILABLE before the call, ` +
        `${faultsInjected.timeoutAfter} DEADLINE_EXCEEDED after it` : ''));
    if (faults) {
      assert.ok(faultsInjected.unavailable >= 10 && faultsInjected.timeoutAfter >= 10,
        `too few faults injected to prove anything: ${JSON.stringify(faultsInjected)}`);
    }
  } finally {
    for (const worker of workers) worker.shutdown();
    await running;
    await Promise.all(nativeConnections.map((connection) => connection.close()));
    await connection.close();
    await stopAll();
  }
}

test('300 workflows (activities, retries, timers, signals) survive 6 kill -9 of the server', { timeout: 240_000, skip: HOSTS > 1 && 'one host only' }, async () => {
  await chaos({ count: 300, kills: 6, seed: SEED });
});

test('300 workflows survive 6 kill -9 under 1 % persistence faults', { timeout: 240_000, skip: HOSTS > 1 && 'one host only' }, async () => {
  await chaos({ count: 300, kills: 6, seed: SEED + 1, faults: { rate: 0.01, seed: SEED % 1000 + 1 } });
});

test('300 workflows survive a host killed 3 times and frozen 3 times past the cutoff', { timeout: 240_000, skip: HOSTS === 1 && 'several hosts only (TOCK_SDK_HOSTS)' }, async () => {
  await chaos({ count: 300, kills: 6, seed: SEED + 2, pauses: true });
});
