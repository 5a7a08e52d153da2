// Worker Deployments with real TypeScript workers (core 1.24, workerDeploymentOptions with
// useWorkerVersioning): two builds of one deployment register by polling; a versioned
// worker gets tasks only once its version is current (Temporal's rule); after
// SetWorkerDeploymentCurrentVersion new runs start on the new build while a run pinned to the
// old one stays there and an auto-upgrade run moves; a ramp sends about its share of new runs
// to the ramping build; a pinned run's child and continue-as-new inherit its version.
// Mirrors Temporal's features/deployment_versioning routing_pinned,
// routing_auto_upgrade and routing_with_ramp.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { eventually } from './clusters.mjs';
import { clientRetries, hostsFromEnv, startHosts, startServer, uniqueName } from './server.mjs';

const DEADLINE = { timeout: 120_000 };
const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));
const STATUS_CURRENT = 2;
const STATUS_DRAINING = 4;
Runtime.install({ logger: new DefaultLogger('WARN') });

let server;
let connection;
let client;

// With TOCK_SDK_HOSTS > 1 (ctest sdk_hosts): hosts on one PostgreSQL database, the client on
// the first, the workers on the second, so routing changes made through one host steer the
// matching of another.
const hosts = hostsFromEnv();

before(async () => {
  server = hosts > 1 ? await startHosts(hosts) : await startServer();
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

// Starts a worker of `buildId` (its default behaviour `behavior`) and waits until its
// version has registered both of the queue's types (workflow and activity).
async function startWorker(native, taskQueue, deploymentName, buildId, behavior) {
  const worker = await Worker.create({
    connection: native, namespace: 'default', taskQueue, workflowsPath, activities,
    workerDeploymentOptions: { version: { deploymentName, buildId }, useWorkerVersioning: true,
      defaultVersioningBehavior: behavior },
  });
  const running = worker.run();
  await eventually(async () => {
    const r = await connection.workflowService.describeWorkerDeploymentVersion({
      namespace: 'default', deploymentVersion: { deploymentName, buildId } });
    assert.equal(r.workerDeploymentVersionInfo.taskQueueInfos.length, 2);
  }, { timeoutMs: 30_000, what: `${buildId} registered` });
  return { worker, running };
}

// Runs `body({ taskQueue, deploymentName, start })` on a fresh task queue and deployment;
// `start(buildId, behavior)` starts a worker of that build. The workers stop after.
async function withDeployment(prefix, body) {
  const taskQueue = uniqueName(prefix);
  const deploymentName = uniqueName('billing');
  const native = await NativeConnection.connect({ address: server.workerAddress ?? server.address });
  const workers = [];
  const start = async (buildId, behavior) => {
    workers.push(await startWorker(native, taskQueue, deploymentName, buildId, behavior));
  };
  try {
    await body({ taskQueue, deploymentName, start });
  } finally {
    for (const { worker } of workers) worker.shutdown();
    await Promise.allSettled(workers.map((w) => w.running));
    await native.close();
  }
}

async function setCurrent(deploymentName, buildId) {
  const service = connection.workflowService;
  const d = await service.describeWorkerDeployment({ namespace: 'default', deploymentName });
  return service.setWorkerDeploymentCurrentVersion({ namespace: 'default', deploymentName, buildId,
    conflictToken: d.conflictToken, identity: 'deployments-test' });
}

// The build that completed the run's last workflow task.
async function lastBuild(workflowId) {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const completed = history.events.filter((e) => e.workflowTaskCompletedEventAttributes);
  return completed.at(-1)?.workflowTaskCompletedEventAttributes.deploymentVersion?.buildId;
}

test('new runs follow the current version, pinned runs stay, auto-upgrade runs move', DEADLINE, () => withDeployment('deploy', async ({ taskQueue, deploymentName, start }) => {
  await start('v1', 'PINNED');
  await setCurrent(deploymentName, 'v1');
  const pinned = await client.workflow.start('waitForSignal', { taskQueue, workflowId: uniqueName('pinned') });
  const upgrading = await client.workflow.start('waitForSignal', {
    taskQueue, workflowId: uniqueName('upgrading'), versioningOverride: 'AUTO_UPGRADE' });
  // Each ran its first task on v1 (a query makes sure the task was taken).
  assert.equal(await pinned.query('status'), 'waiting');
  assert.equal(await upgrading.query('status'), 'waiting');
  assert.equal(await lastBuild(pinned.workflowId), 'v1');
  assert.equal(await lastBuild(upgrading.workflowId), 'v1');

  await start('v2', 'AUTO_UPGRADE');
  const set = await setCurrent(deploymentName, 'v2');
  assert.equal(set.previousDeploymentVersion.buildId, 'v1');
  const described = await connection.workflowService.describeWorkerDeployment({ namespace: 'default', deploymentName });
  const status = (build) => described.workerDeploymentInfo.versionSummaries
    .find((v) => v.deploymentVersion.buildId === build).status;
  assert.equal(status('v2'), STATUS_CURRENT);
  assert.equal(status('v1'), STATUS_DRAINING);

  const fresh = await client.workflow.start('timerThenReturn', { taskQueue, workflowId: uniqueName('fresh'), args: [1] });
  assert.ok(await fresh.result() >= 1, 'the run slept and returned');
  assert.equal(await lastBuild(fresh.workflowId), 'v2', 'a new run starts on the current version');

  await pinned.signal('unblock');
  await upgrading.signal('unblock');
  assert.equal(await pinned.result(), 'unblocked');
  assert.equal(await upgrading.result(), 'unblocked');
  assert.equal(await lastBuild(pinned.workflowId), 'v1', 'the pinned run stayed on v1');
  assert.equal(await lastBuild(upgrading.workflowId), 'v2', 'the auto-upgrade run moved to v2');
}));

test('a pinned run passes its version to its child and its continuation, unless it upgrades', DEADLINE, () => withDeployment('family', async ({ taskQueue, deploymentName, start }) => {
  await start('v1', 'PINNED');
  await setCurrent(deploymentName, 'v1');
  const stay = await client.workflow.start('pinnedFamily', { taskQueue, workflowId: uniqueName('stay'), args: [false] });
  const up = await client.workflow.start('pinnedFamily', { taskQueue, workflowId: uniqueName('up'), args: [true] });
  assert.equal(await stay.query('status'), 'waiting');
  assert.equal(await up.query('status'), 'waiting');

  await start('v2', 'AUTO_UPGRADE');
  await setCurrent(deploymentName, 'v2');
  await stay.signal('unblock');
  await up.signal('unblock');
  // The continued runs return what workflowInfo().targetWorkerDeploymentVersionChanged said.
  assert.equal(await stay.result(), true, 'the pinned run saw its queue target v2');
  assert.equal(await up.result(), true);
  assert.equal(await lastBuild(`${stay.workflowId}-child`), 'v1', 'the child inherited v1');
  assert.equal(await lastBuild(`${up.workflowId}-child`), 'v1', 'the child inherited v1');
  assert.equal(await lastBuild(stay.workflowId), 'v1', 'continue-as-new stayed on v1');
  assert.equal(await lastBuild(up.workflowId), 'v2', 'continue-as-new with AUTO_UPGRADE moved to v2');
}));

test('a ramp sends about its percentage of new runs to the ramping version', DEADLINE, () => withDeployment('ramp', async ({ taskQueue, deploymentName, start }) => {
  await start('v1', 'PINNED');
  await start('v2', 'PINNED');
  await setCurrent(deploymentName, 'v1');
  const d = await connection.workflowService.describeWorkerDeployment({ namespace: 'default', deploymentName });
  await connection.workflowService.setWorkerDeploymentRampingVersion({ namespace: 'default', deploymentName,
    buildId: 'v2', percentage: 50, conflictToken: d.conflictToken, identity: 'deployments-test' });
  const ids = Array.from({ length: 40 }, (_, i) => `${taskQueue}-run-${i}`);
  await Promise.all(ids.map((workflowId) => client.workflow.execute('timerThenReturn', { taskQueue, workflowId, args: [1] })));
  const builds = await Promise.all(ids.map(lastBuild));
  const ramped = builds.filter((b) => b === 'v2').length;
  assert.equal(builds.filter((b) => b === 'v1').length + ramped, ids.length, builds.join(','));
  assert.ok(ramped >= 8 && ramped <= 32, `${ramped} of ${ids.length} runs on the 50 % ramp`);
}));
