// Crash safety: 50 workflows wait on durable timers; tock-server is killed with SIGKILL
// halfway and restarted on the same database and port. Every workflow must complete, with
// no event lost or duplicated and event ids dense.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { clientRetries, startServer, uniqueName } from './server.mjs';

const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));
const WORKFLOWS = 50;
const TIMER_MS = 4000;

Runtime.install({ logger: new DefaultLogger('ERROR') });

let server;

after(async () => {
  await server?.stop();
}, { timeout: 30_000 });

test('workflows waiting on timers survive kill -9 of the server', { timeout: 120_000 }, async () => {
  server = await startServer();
  const port = server.address.split(':').pop();
  const connection = await Connection.connect({ address: server.address, ...clientRetries() });
  const client = new Client({ connection, namespace: 'default' });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const taskQueue = uniqueName('crash');
  const worker = await Worker.create({
    connection: nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowsPath,
    activities: { async greet(name) { return `Hello, ${name}!`; } },
  });
  const running = worker.run();
  try {
    const ids = Array.from({ length: WORKFLOWS }, (_, i) => uniqueName(`crash-${i}`));
    await Promise.all(
      ids.map((workflowId) =>
        client.workflow.start('timerThenReturn', { taskQueue, workflowId, args: [TIMER_MS] }),
      ),
    );
    // Let the workers start the timers, then kill the server mid-wait.
    await new Promise((r) => setTimeout(r, TIMER_MS / 2));
    server = await server.restart({ kill: true, port });

    const results = await Promise.all(
      ids.map((workflowId) => client.workflow.getHandle(workflowId).result()),
    );
    results.forEach((elapsed) => assert.ok(elapsed >= TIMER_MS, `timer fired early: ${elapsed}`));

    const histories = [];
    for (const workflowId of ids) {
      const history = await client.workflow.getHandle(workflowId).fetchHistory();
      histories.push({ workflowId, history });
      const types = history.events.map((e) => e.eventType);
      history.events.forEach((e, i) => assert.equal(Number(e.eventId), i + 1, `${workflowId}: ids dense`));
      const count = (t) => types.filter((x) => x === t).length;
      assert.equal(count(1), 1, `${workflowId}: one WorkflowExecutionStarted`);
      assert.equal(count(2), 1, `${workflowId}: one WorkflowExecutionCompleted`);
      assert.equal(count(17), 1, `${workflowId}: one TimerStarted`);
      assert.equal(count(18), 1, `${workflowId}: one TimerFired`);
    }
    // One replay worker for all (a worker per history would bundle the workflows 50 times).
    let replayed = 0;
    for await (const result of Worker.runReplayHistories({ workflowsPath }, histories)) {
      assert.equal(result.error, undefined, `${result.workflowId} does not replay: ${result.error}`);
      ++replayed;
    }
    assert.equal(replayed, WORKFLOWS);
  } finally {
    worker.shutdown();
    await running;
    await nativeConnection.close();
    await connection.close();
  }
});
