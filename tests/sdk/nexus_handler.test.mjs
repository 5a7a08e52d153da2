// A TypeScript worker that handles Nexus operations (core 1.24, `nexusServices`) runs against
// tock-server: its Nexus pollers wait on PollNexusTaskQueue (DescribeTaskQueue of type NEXUS
// lists the worker), the worker's workflows and activities go on as usual, and its shutdown
// ends the Nexus polls at once (ShutdownWorker), so the worker stops promptly. (Before Tock
// served PollNexusTaskQueue such a worker failed after about a minute.) The calls of a Nexus
// operation from a workflow come with the caller side (issue 37).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import * as nexus from 'nexus-rpc';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { eventually } from './clusters.mjs';
import { clientRetries, startServer, uniqueName } from './server.mjs';

const DEADLINE = { timeout: 60_000 };
const TASK_QUEUE_TYPE_NEXUS = 3;
const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));
Runtime.install({ logger: new DefaultLogger('WARN') });

const payments = nexus.service('payments', { charge: nexus.operation() });
const paymentsHandler = nexus.serviceHandler(payments, {
  async charge(_ctx, input) {
    return { charged: input.amount };
  },
});

let server;
let connection;
let client;

before(async () => {
  server = await startServer();
  connection = await Connection.connect({ address: server.address, ...clientRetries() });
  client = new Client({ connection, namespace: 'default' });
}, DEADLINE);

after(async () => {
  try {
    await connection?.close();
  } finally {
    await server?.stop();
  }
}, DEADLINE);

test('a worker with Nexus services polls its Nexus queue, works, and stops promptly', DEADLINE, async () => {
  const taskQueue = uniqueName('nexus-handlers');
  const native = await NativeConnection.connect({ address: server.address });
  const identity = `${taskQueue}-worker`;
  const worker = await Worker.create({
    connection: native, namespace: 'default', taskQueue, workflowsPath, activities, identity,
    nexusServices: [paymentsHandler],
  });
  const running = worker.run();
  try {
    await eventually(async () => {
      const described = await connection.workflowService.describeTaskQueue({
        namespace: 'default', taskQueue: { name: taskQueue }, taskQueueType: TASK_QUEUE_TYPE_NEXUS });
      assert.deepEqual(described.pollers.map((p) => p.identity), [identity]);
    }, { timeoutMs: 20_000, what: 'the Nexus poller is listed' });

    const greeting = await client.workflow.execute('activityRoundTrip', {
      taskQueue, workflowId: uniqueName('nexus-worker-wf'), args: ['nexus'] });
    assert.match(greeting, /nexus/);
  } finally {
    const stopping = Date.now();
    worker.shutdown();
    await running;
    await native.close();
    // Its Nexus polls (which wait up to a minute) ended with the shutdown.
    assert.ok(Date.now() - stopping < 15_000, `the worker took ${Date.now() - stopping} ms to stop`);
  }
});
