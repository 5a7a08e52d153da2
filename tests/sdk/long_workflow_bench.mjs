// Benchmark (not a test): what a workflow task costs as a workflow's history grows, with a
// real TypeScript SDK worker. A workflow of LONG sequential activities against one of SHORT,
// both run on one server by one worker: the per-step time of the long one divided by the
// short one's. With sticky execution the worker keeps each run cached and receives only the
// new events, so the ratio stays near 1; without it (the worker's cache off, the baseline run
// in the same process) every task carries and replays the whole history.
//
//   node long_workflow_bench.mjs [LONG=2000] [SHORT=100] [BASELINE_LONG=300]
// The baseline's long workflow is shorter (BASELINE_LONG): replaying the whole history at every
// step costs time quadratic in the steps (2,000 steps ran for over 15 minutes here).
// (TOCK_SERVER_BIN: the tock-server binary; bench/run.sh sets it.)
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { clientRetries, startServer, uniqueName } from './server.mjs';

const LONG = Number(process.argv[2] ?? 2000);
const SHORT = Number(process.argv[3] ?? 100);
const BASELINE_LONG = Number(process.argv[4] ?? 300);
const workflowsPath = fileURLToPath(new URL('./bench-workflows.js', import.meta.url));
Runtime.install({ logger: new DefaultLogger('WARN') });

// Milliseconds per step of a workflow of `steps` activities, run to its end.
async function perStep(client, taskQueue, steps) {
  const started = performance.now();
  const handle = await client.workflow.start('sequentialSteps', {
    taskQueue, workflowId: uniqueName('steps'), args: [steps],
  });
  await handle.result();
  return (performance.now() - started) / steps;
}

// Both workflows with one worker, its cache on (sticky) or off.
async function round(server, client, cached, long) {
  const native = await NativeConnection.connect({ address: server.address });
  try {
    const taskQueue = uniqueName('bench');
    const worker = await Worker.create({
      connection: native, taskQueue, workflowsPath, activities,
      ...(cached ? {} : { maxCachedWorkflows: 0 }),
    });
    return await worker.runUntil(async () => {
      const short = await perStep(client, taskQueue, SHORT);
      const longer = await perStep(client, taskQueue, long);
      return { steps: long, short, long: longer, ratio: longer / short };
    });
  } finally {
    await native.close();
  }
}

const server = await startServer();
const connection = await Connection.connect({ address: server.address, ...clientRetries() });
try {
  const client = new Client({ connection, namespace: 'default' });
  const fmt = (r) => `${SHORT} steps ${r.short.toFixed(2)} ms/step, ${r.steps} steps ${r.long.toFixed(2)} ms/step, ratio ${r.ratio.toFixed(2)}`;
  const sticky = await round(server, client, true, LONG);
  console.log(`sticky (cache on):      ${fmt(sticky)}`);
  const full = await round(server, client, false, BASELINE_LONG);
  console.log(`full history (cache off): ${fmt(full)}`);
  console.log(`per-step ratio long/short with sticky: ${sticky.ratio.toFixed(2)} (target <= 1.2); ` +
              `full history at ${BASELINE_LONG} steps: ${full.ratio.toFixed(2)}`);
} finally {
  await connection.close();
  await server.stop();
}
