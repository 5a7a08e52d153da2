// Worker heartbeats with a real TypeScript worker (core 1.24): DescribeNamespace says
// worker_heartbeats, so the worker's runtime sends RecordWorkerHeartbeat every interval (1 s
// here), and ListWorkers, CountWorkers and DescribeWorker show it: its SDK, host, task queue,
// status and pollers; a query narrows the list; its shutdown's last heartbeat says it stopped.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { eventually } from './clusters.mjs';
import { clientRetries, startServer, uniqueName } from './server.mjs';

const DEADLINE = { timeout: 60_000 };
const WORKER_STATUS_RUNNING = 1;
const WORKER_STATUS_SHUTTING_DOWN = 2;
const WORKER_STATUS_SHUTDOWN = 3;
const VERSIONING_BEHAVIOR_PINNED = 1;
const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));
Runtime.install({ logger: new DefaultLogger('WARN'), workerHeartbeatInterval: '1s' });

let server;
let connection;

before(async () => {
  server = await startServer();
  connection = await Connection.connect({ address: server.address, ...clientRetries() });
}, DEADLINE);

after(async () => {
  try {
    await connection?.close();
  } finally {
    await server?.stop();
  }
}, DEADLINE);

test('a running worker heartbeats and is listed, counted and described', DEADLINE, async () => {
  const service = connection.workflowService;
  const taskQueue = uniqueName('heartbeats');
  const native = await NativeConnection.connect({ address: server.address });
  try {
    const worker = await Worker.create({ connection: native, namespace: 'default', taskQueue, workflowsPath, activities });
    await worker.runUntil(async () => {
      const query = `TaskQueue = '${taskQueue}'`;
      // The worker heartbeats every second.
      const listed = await eventually(async () => {
        const r = await service.listWorkers({ namespace: 'default', query });
        assert.equal(r.workers.length, 1);
        return r;
      }, { timeoutMs: 20_000, what: 'the worker in ListWorkers' });
      const w = listed.workers[0];
      assert.equal(w.taskQueue, taskQueue);
      assert.equal(w.sdkName, 'temporal-typescript');
      assert.match(w.sdkVersion, /^1\.24\./);
      assert.equal(w.status, WORKER_STATUS_RUNNING);
      assert.ok(w.workerInstanceKey.length > 0 && w.hostName.length > 0, JSON.stringify(w));
      const counted = await service.countWorkers({ namespace: 'default', query: `${query} AND WorkerStatus = 'Running'` });
      assert.equal(Number(counted.count), 1);
      const none = await service.countWorkers({ namespace: 'default', query: `${query} AND SdkName = 'temporal-go'` });
      assert.equal(Number(none.count), 0);
      const described = await service.describeWorker({ namespace: 'default', workerInstanceKey: w.workerInstanceKey });
      const heartbeat = described.workerInfo.workerHeartbeat;
      assert.equal(heartbeat.workerInstanceKey, w.workerInstanceKey);
      assert.ok(heartbeat.heartbeatTime, 'the heartbeat carries its time');
      assert.ok(heartbeat.workflowPollerInfo, 'and its pollers');
    });
    // Its shutdown (ShutdownWorker) carries its last heartbeat: the worker is listed as no
    // longer running at once, not five minutes later.
    const stopped = await service.listWorkers({ namespace: 'default', query: `TaskQueue = '${taskQueue}'` });
    assert.equal(stopped.workers.length, 1);
    assert.ok([WORKER_STATUS_SHUTTING_DOWN, WORKER_STATUS_SHUTDOWN].includes(stopped.workers[0].status),
      `status ${stopped.workers[0].status}`);
  } finally {
    await native.close();
  }
});

// A worker of a Worker Deployment version (useWorkerVersioning) reports its versioning
// behaviour and version with each workflow task it completes; the history keeps them on the
// WorkflowTaskCompleted events (Temporal records them there: reference/api_2026.md §3.3.5),
// and the run's TemporalWorkerDeployment* search attributes name them.
test('a versioned worker\'s behaviour and version are recorded on its workflow tasks', DEADLINE, async () => {
  const taskQueue = uniqueName('versioned');
  const native = await NativeConnection.connect({ address: server.address });
  try {
    const worker = await Worker.create({
      connection: native, namespace: 'default', taskQueue, workflowsPath, activities,
      workerDeploymentOptions: { version: { deploymentName: 'billing', buildId: 'v1' }, useWorkerVersioning: true,
        defaultVersioningBehavior: 'PINNED' },
    });
    const client = new Client({ connection, namespace: 'default' });
    const workflowId = uniqueName('pinned');
    await worker.runUntil(async () => {
      // A versioned worker gets tasks once its version is current (Temporal's rule): its
      // first poll registered the version.
      const service = connection.workflowService;
      await eventually(() => service.describeWorkerDeployment({ namespace: 'default', deploymentName: 'billing' }),
        { timeoutMs: 20_000, what: 'the version registered by the worker\'s poll' });
      await service.setWorkerDeploymentCurrentVersion({ namespace: 'default', deploymentName: 'billing',
        buildId: 'v1', identity: 'workers-test', ignoreMissingTaskQueues: true });
      await client.workflow.execute('timerThenReturn', { taskQueue, workflowId, args: [10] });
    });
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const completed = history.events.filter((e) => e.workflowTaskCompletedEventAttributes);
    assert.ok(completed.length >= 1);
    for (const e of completed) {
      const a = e.workflowTaskCompletedEventAttributes;
      assert.equal(a.versioningBehavior, VERSIONING_BEHAVIOR_PINNED);
      assert.equal(a.deploymentVersion.deploymentName, 'billing');
      assert.equal(a.deploymentVersion.buildId, 'v1');
    }
    // The run's search attributes name them as Temporal's server does.
    const described = await connection.workflowService.describeWorkflowExecution({ namespace: 'default', execution: { workflowId } });
    const fields = described.workflowExecutionInfo.searchAttributes.indexedFields;
    const value = (name) => JSON.parse(Buffer.from(fields[name].data).toString());
    assert.equal(value('TemporalWorkerDeployment'), 'billing');
    assert.equal(value('TemporalWorkerDeploymentVersion'), 'billing:v1');
    assert.equal(value('TemporalWorkflowVersioningBehavior'), 'Pinned');
  } finally {
    await native.close();
  }
});
