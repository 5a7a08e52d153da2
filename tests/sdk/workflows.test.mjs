// The official TypeScript SDK runs real workflows on tock-server: a worker polls, executes
// and completes; the client starts, signals and reads results. Every history is then
// replayed by the SDK's replayer, with the workflow cache on and off.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { startServer, uniqueName } from './server.mjs';

const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));

Runtime.install({ logger: new DefaultLogger('WARN') });

let server;
let connection;
let client;

before(async () => {
  server = await startServer();
  connection = await Connection.connect({ address: server.address });
  client = new Client({ connection, namespace: 'default' });
});

after(async () => {
  await connection?.close();
  await server?.stop();
});

async function withWorker(options, fn) {
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const taskQueue = uniqueName('tq');
  const worker = await Worker.create({
    connection: nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowsPath,
    activities: {
      async greet(name) {
        return `Hello, ${name}!`;
      },
    },
    ...options,
  });
  try {
    return await worker.runUntil(fn(taskQueue));
  } finally {
    await nativeConnection.close();
  }
}

async function replays(workflowId) {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  await Worker.runReplayHistory({ workflowsPath }, history);
  return history;
}

for (const maxCachedWorkflows of [undefined, 0]) {
  const label = maxCachedWorkflows === 0 ? ' (no workflow cache)' : '';

  test(`activity round trip${label}`, async () => {
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

  test(`timer${label}`, async () => {
    const workflowId = uniqueName('timer');
    const elapsed = await withWorker({ maxCachedWorkflows }, (taskQueue) =>
      client.workflow.execute('timerThenReturn', { taskQueue, workflowId, args: [1500] }),
    );
    assert.ok(elapsed >= 1500, `workflow time moved ${elapsed} ms`);
    await replays(workflowId);
  });

  test(`signal then query${label}`, async () => {
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

test('starting a running workflow id is ALREADY_EXISTS', async () => {
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
