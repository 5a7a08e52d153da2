// Batch operations through the official client (@temporalio/client 1.24.0): terminate,
// signal, cancel and delete by visibility query or by a list of executions; describe, list,
// stop; Temporal's messages for bad requests; and a rate-limited batch that goes on after
// kill -9 of the server, terminating every run it matched.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { clientRetries, startServer, uniqueName } from './server.mjs';

const DEADLINE = { timeout: 120_000 };
const GRPC_INVALID_ARGUMENT = 3;
const GRPC_NOT_FOUND = 5;
const GRPC_ALREADY_EXISTS = 6;
const GRPC_FAILED_PRECONDITION = 9;
// temporal.api.enums.v1
const RUNNING = 1;
const COMPLETED = 2;
const FAILED = 3;
const TYPE_TERMINATE = 1;
const TYPE_SIGNAL = 3;
const STATUS_TERMINATED = 5;

let server;
let connection;
let client;
let namespace;

before(async () => {
  server = await startServer();
  connection = await Connection.connect({ address: server.address, ...clientRetries() });
  namespace = uniqueName('batch');
  await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: { seconds: 86400 } });
  client = new Client({ connection, namespace });
}, DEADLINE);

after(async () => {
  try {
    await connection?.close();
  } finally {
    await server?.stop();
  }
}, DEADLINE);

const service = () => connection.workflowService;

// Starts `count` workflows on a task queue nobody polls (they stay running), all of one type.
async function startIdle(count, type) {
  const taskQueue = uniqueName('idle');
  const ids = [];
  for (let i = 0; i < count; i++) {
    const workflowId = uniqueName(`${type}-${i}`);
    await client.workflow.start(type, { taskQueue, workflowId, args: [] });
    ids.push(workflowId);
  }
  return ids;
}

async function waitForBatch(jobId, { state = COMPLETED, timeoutMs = 60_000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let described;
  while (Date.now() < deadline) {
    described = await service().describeBatchOperation({ namespace, jobId });
    if (described.state === state) return described;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`batch ${jobId} not in state ${state}: ${JSON.stringify(described)}`);
}

async function rejection(promise, code) {
  let err;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  assert.ok(err, 'expected the call to fail');
  assert.equal(err.code, code, `gRPC code ${err.code} (${err.details}), expected ${code}`);
  return err.details;
}

test('a batch terminate by query ends every matching run and reports its counts', DEADLINE, async () => {
  const targets = await startIdle(30, 'batchTarget');
  const spared = await startIdle(3, 'batchSpared');
  const jobId = randomUUID();
  await service().startBatchOperation({
    namespace,
    jobId,
    reason: 'cleanup after the incident',
    visibilityQuery: `WorkflowType = 'batchTarget' AND ExecutionStatus = 'Running'`,
    maxOperationsPerSecond: 1000,
    terminationOperation: { identity: 'sdk-test' },
  });
  const done = await waitForBatch(jobId);
  assert.equal(done.operationType, TYPE_TERMINATE);
  assert.equal(Number(done.totalOperationCount), 30);
  assert.equal(Number(done.completeOperationCount), 30);
  assert.equal(Number(done.failureOperationCount), 0);
  assert.equal(done.reason, 'cleanup after the incident');
  assert.equal(done.identity, 'sdk-test');
  assert.ok(done.closeTime, 'a finished batch has a close time');
  for (const workflowId of targets) {
    const d = await client.workflow.getHandle(workflowId).describe();
    assert.equal(d.status.name, 'TERMINATED', workflowId);
  }
  const history = await client.workflow.getHandle(targets[0]).fetchHistory();
  const last = history.events[history.events.length - 1];
  assert.equal(last.workflowExecutionTerminatedEventAttributes.reason, 'cleanup after the incident');
  for (const workflowId of spared) {
    assert.equal((await client.workflow.getHandle(workflowId).describe()).status.name, 'RUNNING');
  }
  const listed = await service().listBatchOperations({ namespace, pageSize: 10 });
  assert.ok(listed.operationInfo.some((i) => i.jobId === jobId && i.state === COMPLETED && i.operationType === TYPE_TERMINATE));

  // The job id is taken now.
  assert.match(
    await rejection(
      service().startBatchOperation({ namespace, jobId, reason: 'again', visibilityQuery: `WorkflowType = 'x'`, terminationOperation: {} }),
      GRPC_ALREADY_EXISTS,
    ),
    /already exists/,
  );
  // Cancel the spared ones by list, then delete them by query.
  const cancelJob = randomUUID();
  await service().startBatchOperation({
    namespace,
    jobId: cancelJob,
    reason: 'cancel',
    executions: spared.map((workflowId) => ({ workflowId })),
    cancellationOperation: {},
  });
  assert.equal(Number((await waitForBatch(cancelJob)).completeOperationCount), 3);
  const deleteJob = randomUUID();
  await service().startBatchOperation({
    namespace, jobId: deleteJob, reason: 'delete', visibilityQuery: `WorkflowType = 'batchSpared'`, deletionOperation: {},
  });
  await waitForBatch(deleteJob);
  for (const workflowId of spared) {
    await rejection(service().describeWorkflowExecution({ namespace, execution: { workflowId } }), GRPC_NOT_FOUND);
  }
});

test('a batch signal reaches every matching run', DEADLINE, async () => {
  const targets = await startIdle(5, 'batchSignalled');
  const jobId = randomUUID();
  await service().startBatchOperation({
    namespace,
    jobId,
    reason: 'wake up',
    visibilityQuery: `WorkflowType = 'batchSignalled'`,
    signalOperation: { signal: 'unblock', identity: 'sdk-test' },
  });
  const done = await waitForBatch(jobId);
  assert.equal(done.operationType, TYPE_SIGNAL);
  assert.equal(Number(done.completeOperationCount), 5);
  for (const workflowId of targets) {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const signalled = history.events.filter((e) => e.workflowExecutionSignaledEventAttributes);
    assert.equal(signalled.length, 1, workflowId);
    assert.equal(signalled[0].workflowExecutionSignaledEventAttributes.signalName, 'unblock');
  }
});

test('bad batch requests get Temporal messages; stop refuses an unknown or finished job', DEADLINE, async () => {
  const start = (fields) => service().startBatchOperation({ namespace, ...fields });
  assert.equal(
    await rejection(start({ jobId: 'j', visibilityQuery: `WorkflowType = 'x'`, terminationOperation: {} }), GRPC_INVALID_ARGUMENT),
    'must provide required parameters: BatchType,Reason,Namespace, AND one of (Query OR Executions)',
  );
  assert.equal(
    await rejection(start({ jobId: '', reason: 'r', visibilityQuery: `WorkflowType = 'x'`, terminationOperation: {} }), GRPC_INVALID_ARGUMENT),
    'JobId is not set on request.',
  );
  assert.match(
    await rejection(start({ jobId: 'j2', reason: 'r', visibilityQuery: `Nope = 'x'`, terminationOperation: {} }), GRPC_INVALID_ARGUMENT),
    /unknown field 'Nope'/,
  );
  assert.equal(
    await rejection(start({ jobId: 'j3', reason: 'r', visibilityQuery: `WorkflowType = 'x'`, signalOperation: {} }), GRPC_INVALID_ARGUMENT),
    'SignalName is not set on request.',
  );
  assert.equal(
    await rejection(service().describeBatchOperation({ namespace, jobId: 'nope' }), GRPC_NOT_FOUND),
    'batch operation nope not found',
  );
  assert.equal(
    await rejection(service().stopBatchOperation({ namespace, jobId: 'nope', reason: 'r' }), GRPC_NOT_FOUND),
    'batch operation nope not found',
  );
  const listed = await service().listBatchOperations({ namespace });
  const finished = listed.operationInfo.find((i) => i.state === COMPLETED);
  assert.ok(finished, 'an earlier test left a finished batch');
  assert.match(
    await rejection(service().stopBatchOperation({ namespace, jobId: finished.jobId, reason: 'r' }), GRPC_FAILED_PRECONDITION),
    /is not running/,
  );
});

test('a stopped batch is FAILED and leaves the rest alone', DEADLINE, async () => {
  await startIdle(20, 'batchStopped');
  const jobId = randomUUID();
  await service().startBatchOperation({
    namespace, jobId, reason: 'slow', visibilityQuery: `WorkflowType = 'batchStopped'`,
    maxOperationsPerSecond: 4, terminationOperation: {},
  });
  // Stopped once it has terminated a run: it is then in the middle of its page of 5 s.
  const running = `WorkflowType = 'batchStopped' AND ExecutionStatus = 'Running'`;
  const deadline = Date.now() + 10_000;
  while ((await client.workflow.count(running)).count === 20 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  await service().stopBatchOperation({ namespace, jobId, reason: 'changed my mind' });
  // The stop answers once the batch's runner has ended, its last act writing its counts: the
  // batch does nothing more, so what is read now is final and needs no wait.
  const stopped = await service().describeBatchOperation({ namespace, jobId });
  assert.equal(stopped.state, FAILED);
  const count = await client.workflow.count(running);
  assert.ok(count.count < 20, 'the batch terminated nothing before the stop');
  assert.ok(count.count >= 10, `most runs are left running (${count.count})`);
  const handled = Number(stopped.completeOperationCount) + Number(stopped.failureOperationCount);
  assert.equal(count.count, 20 - handled, `the runs terminated are those the batch counts: ${JSON.stringify(stopped)}`);
});

test('a rate-limited batch goes on after kill -9 of the server and terminates every run', DEADLINE, async () => {
  const targets = await startIdle(40, 'batchCrash');
  const jobId = randomUUID();
  await service().startBatchOperation({
    namespace, jobId, reason: 'survives a crash', visibilityQuery: `WorkflowType = 'batchCrash'`,
    maxOperationsPerSecond: 20, terminationOperation: {},
  });
  // About a third done, then the server dies.
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const count = await client.workflow.count(`WorkflowType = 'batchCrash' AND ExecutionStatus = 'Terminated'`);
    if (count.count >= 12) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const port = server.address.split(':').pop();
  await connection.close();
  server = await server.restart({ kill: true, port });
  connection = await Connection.connect({ address: server.address, ...clientRetries() });
  client = new Client({ connection, namespace });
  const done = await waitForBatch(jobId, { timeoutMs: 60_000 });
  assert.equal(Number(done.failureOperationCount), 0);
  assert.ok(Number(done.completeOperationCount) >= 40, `every run was handled (${done.completeOperationCount})`);
  for (const workflowId of targets) {
    const d = await client.workflow.getHandle(workflowId).describe();
    assert.equal(d.status.code, STATUS_TERMINATED, workflowId);
  }
  assert.equal(
    (await client.workflow.count(`WorkflowType = 'batchCrash' AND ExecutionStatus = 'Running'`)).count,
    0,
  );
});
