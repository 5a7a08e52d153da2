// Custom search attributes through the official SDK (@temporalio 1.24.0): the OperatorService
// calls, attributes set at start (untyped and typed) and upserted by a workflow, list and
// count queries on them (with GROUP BY ExecutionStatus), Temporal's messages for bad values,
// and the upserting workflow's history replayed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { defineSearchAttributeKey } from '@temporalio/common';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { clientRetries, startServer, uniqueName } from './server.mjs';

const DEADLINE = { timeout: 90_000 };
const HOOK_DEADLINE = { timeout: 60_000 };
const GRPC_INVALID_ARGUMENT = 3;
const GRPC_NOT_FOUND = 5;
// temporal.api.enums.v1.IndexedValueType
const TEXT = 1;
const KEYWORD = 2;
const INT = 3;
const DOUBLE = 4;
const BOOL = 5;
const DATETIME = 6;
const KEYWORD_LIST = 7;
// temporal.api.enums.v1.WorkflowTaskFailedCause
const BAD_SEARCH_ATTRIBUTES = 23;

const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));
Runtime.install({ logger: new DefaultLogger('WARN') });

let server;
let connection;
let client;
let namespace;

before(async () => {
  server = await startServer();
  connection = await Connection.connect({ address: server.address, ...clientRetries() });
  namespace = uniqueName('sa');
  await connection.workflowService.registerNamespace({
    namespace,
    workflowExecutionRetentionPeriod: { seconds: 86400 },
  });
  client = new Client({ connection, namespace });
}, HOOK_DEADLINE);

after(async () => {
  try {
    await connection?.close();
  } finally {
    await server?.stop();
  }
}, HOOK_DEADLINE);

async function withWorker(fn) {
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  try {
    const taskQueue = uniqueName('tq');
    const worker = await Worker.create({
      connection: nativeConnection,
      namespace,
      taskQueue,
      workflowsPath,
      activities,
    });
    return await worker.runUntil(fn(taskQueue));
  } finally {
    await nativeConnection.close();
  }
}

async function rejection(promise, code) {
  let err;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  assert.ok(err, 'expected the call to fail');
  const grpc = err.code !== undefined ? err : err.cause;
  assert.equal(grpc?.code, code, `gRPC code ${grpc?.code} (${err.message}), expected ${code}`);
  return grpc.details ?? err.message;
}

async function listIds(query) {
  const ids = [];
  for await (const execution of client.workflow.list({ query })) ids.push(execution.workflowId);
  return ids.sort();
}

const operator = () => connection.operatorService;

test('custom search attributes are added, listed, typed, and refused with Temporal messages', DEADLINE, async () => {
  await operator().addSearchAttributes({
    namespace,
    searchAttributes: { CustomerId: KEYWORD, Amount: INT, Notes: TEXT, Tags: KEYWORD_LIST, Score: DOUBLE, Paid: BOOL, DueAt: DATETIME },
  });
  // Adding the same again is accepted and changes nothing.
  await operator().addSearchAttributes({ namespace, searchAttributes: { CustomerId: KEYWORD } });
  const listed = await operator().listSearchAttributes({ namespace });
  assert.deepEqual(
    Object.fromEntries(Object.entries(listed.customAttributes).sort()),
    { Amount: INT, CustomerId: KEYWORD, DueAt: DATETIME, Notes: TEXT, Paid: BOOL, Score: DOUBLE, Tags: KEYWORD_LIST },
  );
  assert.equal(listed.systemAttributes.WorkflowId, KEYWORD);
  assert.equal(listed.systemAttributes.StartTime, DATETIME);
  // Temporal's SQL visibility: the namespace maps pre-allocated fields to the names.
  const described = await connection.workflowService.describeNamespace({ namespace });
  assert.equal(described.config.customSearchAttributeAliases.Keyword01, 'CustomerId');
  assert.equal(described.config.customSearchAttributeAliases.KeywordList01, 'Tags');

  assert.equal(
    await rejection(operator().addSearchAttributes({ namespace, searchAttributes: { WorkflowId: KEYWORD } }), GRPC_INVALID_ARGUMENT),
    'Search attribute WorkflowId is reserved by system.',
  );
  assert.equal(
    await rejection(operator().addSearchAttributes({ namespace, searchAttributes: { Amount: KEYWORD } }), GRPC_INVALID_ARGUMENT),
    'Search attribute Amount already exists.',
  );
  assert.equal(
    await rejection(operator().addSearchAttributes({ namespace, searchAttributes: {} }), GRPC_INVALID_ARGUMENT),
    'SearchAttributes are not set on request.',
  );
  assert.equal(
    await rejection(
      operator().addSearchAttributes({ namespace, searchAttributes: { Int2: INT, Int3: INT, Int4: INT } }),
      GRPC_INVALID_ARGUMENT,
    ),
    'Unable to create search attributes: cannot have more than 3 search attribute of type Int.',
  );
  assert.equal(
    (await operator().listSearchAttributes({ namespace })).customAttributes.Int2,
    undefined,
    'a refused request adds nothing',
  );
  assert.equal(
    await rejection(operator().removeSearchAttributes({ namespace, searchAttributes: ['Nope'] }), GRPC_NOT_FOUND),
    "Search attribute Nope doesn't exist.",
  );
  assert.equal(
    await rejection(operator().removeSearchAttributes({ namespace, searchAttributes: ['RunId'] }), GRPC_INVALID_ARGUMENT),
    'Unable to remove non-custom search attributes: RunId.',
  );

  const start = (searchAttributes) =>
    client.workflow.start('upsertsSearchAttributes', { taskQueue: uniqueName('nobody'), workflowId: uniqueName('bad'), args: [{}], searchAttributes });
  assert.match(
    await rejection(start({ Amount: ['abc'] }), GRPC_INVALID_ARGUMENT),
    /^invalid value for search attribute Amount of type Int: \[abc\]$/,
  );
  assert.equal(await rejection(start({ Nope: ['x'] }), GRPC_INVALID_ARGUMENT), 'search attribute Nope is not defined');
});

test('attributes set at start and upserted are found by list and count queries, and the history replays', DEADLINE, async () => {
  const customerId = defineSearchAttributeKey('CustomerId', 'KEYWORD');
  const amount = defineSearchAttributeKey('Amount', 'INT');
  const notes = defineSearchAttributeKey('Notes', 'TEXT');
  const dueAt = defineSearchAttributeKey('DueAt', 'DATETIME');
  const ids = await withWorker(async (taskQueue) => {
    const started = [];
    for (let i = 0; i < 6; i++) {
      const workflowId = uniqueName(`order-${i}`);
      const options = { taskQueue, workflowId, args: [{ Amount: [i * 100], Tags: ['even', `t${i}`].slice(i % 2) }] };
      if (i % 2 === 0) {
        // Typed attributes (the SDK's current API).
        options.typedSearchAttributes = [
          { key: customerId, value: i < 4 ? 'c-42' : 'c-7' },
          { key: notes, value: `Order ${i} shipped late` },
          { key: dueAt, value: new Date(Date.UTC(2026, 10, 25 + i)) },
        ];
      } else {
        // Untyped (legacy) attributes: arrays of values.
        options.searchAttributes = { CustomerId: [i < 4 ? 'c-42' : 'c-7'], Notes: [`order ${i} cancelled`], Paid: [true], Score: [i + 0.5] };
      }
      const handle = await client.workflow.start('upsertsSearchAttributes', options);
      started.push(workflowId);
      assert.deepEqual(await handle.result(), ['Amount', 'Tags']);
    }
    // One stays running, without an upsert, to show the status grouping.
    const running = uniqueName('order-open');
    await client.workflow.start('waitForSignal', {
      taskQueue: uniqueName('nobody'),
      workflowId: running,
      searchAttributes: { CustomerId: ['c-42'] },
    });
    started.push(running);
    return started;
  });
  const [o0, o1, o2, o3, o4, o5, open] = ids;

  assert.deepEqual(await listIds(`CustomerId = 'c-42'`), [o0, o1, o2, o3, open].sort());
  assert.deepEqual(await listIds(`CustomerId = 'c-42' AND Amount >= 200`), [o2, o3].sort());
  assert.deepEqual(await listIds(`Amount BETWEEN 100 AND 300 AND Amount != 200`), [o1, o3].sort());
  assert.deepEqual(await listIds(`Notes = 'shipped late'`), [o0, o2, o4].sort());
  assert.deepEqual(await listIds(`Notes = 'CANCELLED'`), [o1, o3, o5].sort());
  assert.deepEqual(await listIds(`Tags = 'even'`), [o0, o2, o4].sort());
  assert.deepEqual(await listIds(`Tags IN ('t1', 't3')`), [o1, o3].sort());
  assert.deepEqual(await listIds(`Paid = true AND Score > 2`), [o3, o5].sort());
  assert.deepEqual(await listIds(`DueAt >= '2026-11-27T00:00:00Z'`), [o2, o4].sort());
  assert.deepEqual(await listIds(`CustomerId STARTS_WITH 'c-4' AND Amount IS NULL`), [open]);
  assert.deepEqual(await listIds(`WorkflowId IN ('${o0}', '${o5}') ORDER BY Amount DESC`), [o0, o5].sort());

  const ordered = [];
  for await (const e of client.workflow.list({ query: `CustomerId = 'c-42' AND Amount IS NOT NULL ORDER BY Amount DESC` })) {
    ordered.push(e.workflowId);
  }
  assert.deepEqual(ordered, [o3, o2, o1, o0]);

  assert.equal((await client.workflow.count(`CustomerId = 'c-42'`)).count, 5);
  const grouped = await client.workflow.count(`CustomerId = 'c-42' GROUP BY ExecutionStatus`);
  assert.equal(grouped.count, 5);
  const byStatus = Object.fromEntries(grouped.groups.map((g) => [g.groupValues[0], g.count]));
  assert.deepEqual(byStatus, { Running: 1, Completed: 4 });

  const described = await client.workflow.getHandle(o0).describe();
  assert.deepEqual(described.searchAttributes.Amount, [0]);
  assert.deepEqual(described.searchAttributes.CustomerId, ['c-42']);

  const history = await client.workflow.getHandle(o1).fetchHistory();
  const types = history.events.map((e) => e.eventType);
  assert.ok(types.includes(40 /* UPSERT_WORKFLOW_SEARCH_ATTRIBUTES */), 'the upsert is in the history');
  await Worker.runReplayHistory({ workflowsPath }, history, o1);

  // A query on an attribute the namespace does not have is refused, naming it.
  assert.match(
    await rejection(listIds(`Unknown = 'x'`), GRPC_INVALID_ARGUMENT),
    /unknown field 'Unknown' at position 1/,
  );
  assert.match(await rejection(listIds(`Amount = 'x'`), GRPC_INVALID_ARGUMENT), /not a value of Amount; it takes an integer/);
  await client.workflow.getHandle(open).terminate('done');
});

test('a workflow upserting a value of the wrong type fails its task with BAD_SEARCH_ATTRIBUTES', DEADLINE, async () => {
  const workflowId = uniqueName('bad-upsert');
  await withWorker(async (taskQueue) => {
    const handle = await client.workflow.start('upsertsSearchAttributes', { taskQueue, workflowId, args: [{ Amount: ['not a number'] }] });
    const deadline = Date.now() + 30_000;
    let failed;
    while (!failed && Date.now() < deadline) {
      const history = await handle.fetchHistory();
      failed = history.events.find((e) => e.workflowTaskFailedEventAttributes);
      if (!failed) await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(failed, 'the workflow task failed');
    assert.equal(failed.workflowTaskFailedEventAttributes.cause, BAD_SEARCH_ATTRIBUTES);
    assert.match(failed.workflowTaskFailedEventAttributes.failure.message, /invalid value for search attribute Amount of type Int/);
    await handle.terminate('test done');
  });
});

test('a removed attribute is no longer accepted nor queryable, and a new one does not inherit its values', DEADLINE, async () => {
  await operator().removeSearchAttributes({ namespace, searchAttributes: ['Score'] });
  assert.equal((await operator().listSearchAttributes({ namespace })).customAttributes.Score, undefined);
  assert.match(await rejection(listIds(`Score > 1`), GRPC_INVALID_ARGUMENT), /unknown field 'Score'/);
  await operator().addSearchAttributes({ namespace, searchAttributes: { Rating: DOUBLE } });
  const described = await connection.workflowService.describeNamespace({ namespace });
  assert.equal(described.config.customSearchAttributeAliases.Double02, 'Rating', 'a field never used is taken first');
  assert.equal(described.config.customSearchAttributeAliases.Double01, undefined, 'the freed field stays free');
  // Score's old values stay in its freed column; Rating does not see them.
  assert.deepEqual(await listIds(`Rating > 0`), []);
});
