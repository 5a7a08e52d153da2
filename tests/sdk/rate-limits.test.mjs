// The TypeScript SDK under the frontend's rate limits (issue 15): a namespace held at its
// limit by a noisy client keeps completing workflows — the worker's calls and polls that
// are refused RESOURCE_EXHAUSTED (Temporal's ResourceExhaustedFailure) are retried by the SDK
// with backoff — and the server did refuse calls meanwhile (its error counter says so).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { clientRetries, startServer, sumSamples, uniqueName } from './server.mjs';

const DEADLINE = { timeout: 30_000 };
const HOOK_DEADLINE = { timeout: 30_000 };
const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));

Runtime.install({ logger: new DefaultLogger('ERROR') });

// 20 calls and 10 polls a second for the namespace: a few times what the workflows below
// need, and far less than the noisy client asks for.
const CONFIG = `namespaces: [limited]
limits:
  namespace_rps_overrides: {limited: 20}
  namespace_poll_rps_overrides: {limited: 10}
`;

let server;
let connection;

before(async () => {
  server = await startServer({ config: CONFIG, metrics: true });
  connection = await Connection.connect({ address: server.address, ...clientRetries({ maxAttempts: 30 }) });
}, HOOK_DEADLINE);

after(async () => {
  try {
    await connection?.close();
  } finally {
    await server?.stop();
  }
}, HOOK_DEADLINE);

test('a worker keeps completing workflows while its namespace is held at its limit', DEADLINE, async () => {
  const client = new Client({ connection, namespace: 'limited' });
  const refusals = async () =>
    sumSamples(await server.scrape(), 'service_error_with_type_total', (l) => l.includes('error_type="ResourceExhausted"'));
  assert.equal(await refusals(), 0);

  // The noisy client: describes the namespace as fast as it is let, until the workflows end.
  let done = false;
  let noisyCalls = 0;
  const noisy = (async () => {
    while (!done) {
      await connection.workflowService.describeNamespace({ namespace: 'limited' });
      noisyCalls++;
    }
  })();

  const nativeConnection = await NativeConnection.connect({ address: server.address });
  try {
    const taskQueue = uniqueName('tq');
    const worker = await Worker.create({ connection: nativeConnection, namespace: 'limited', taskQueue, workflowsPath, activities });
    const results = await worker.runUntil(async () => {
      const handles = await Promise.all(
        [1, 2, 3, 4, 5].map((i) =>
          client.workflow.start('activityRoundTrip', { taskQueue, workflowId: uniqueName(`limited-${i}`), args: [`n${i}`] }),
        ),
      );
      try {
        return await Promise.all(handles.map((h) => h.result()));
      } finally {
        done = true;
        await noisy;
      }
    });
    assert.deepEqual(results, ['Hello, n1!', 'Hello, n2!', 'Hello, n3!', 'Hello, n4!', 'Hello, n5!']);
  } finally {
    done = true;
    await nativeConnection.close();
  }
  assert.ok(noisyCalls > 0);
  // The limit was reached: calls of the namespace were refused and retried.
  assert.ok((await refusals()) > 0, 'no call was refused: the namespace was never at its limit');
});
