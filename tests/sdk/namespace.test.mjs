// Namespaces through the official client (@temporalio/client 1.24.0): register, describe,
// the retention rule, duplicates, unknown names.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Connection } from '@temporalio/client';
import { startServer, uniqueName } from './server.mjs';

const GRPC_INVALID_ARGUMENT = 3;
const GRPC_NOT_FOUND = 5;
const GRPC_ALREADY_EXISTS = 6;
const NAMESPACE_STATE_REGISTERED = 1;
const DAY = 86400;
const DEADLINE = { timeout: 30_000 };

let server;
let connection;

before(async () => {
  server = await startServer();
  connection = await Connection.connect({ address: server.address, connectTimeout: 10_000 });
}, DEADLINE);

after(async () => {
  try {
    await connection?.close();
  } finally {
    await server?.stop();
  }
}, DEADLINE);

const seconds = (duration) => Number(duration?.seconds?.toString() ?? 0);

// The gRPC error a workflowService call rejects with (grpc-js ServiceError: code, details).
async function rejection(promise, expectedCode) {
  let err;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  assert.ok(err, 'expected the call to fail');
  assert.equal(err.code, expectedCode, `gRPC code ${err.code} (${err.details ?? err.message}), expected ${expectedCode}`);
  assert.equal(typeof err.details, 'string');
  return err;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

test('registers a namespace with 3 days retention and reads it back by name and by id', DEADLINE, async () => {
  const namespace = uniqueName('sdk-ns');
  await connection.workflowService.registerNamespace({
    namespace,
    workflowExecutionRetentionPeriod: { seconds: 3 * DAY },
    description: 'from the TypeScript SDK',
  });
  const described = await connection.workflowService.describeNamespace({ namespace });
  assert.equal(described.namespaceInfo.name, namespace);
  assert.equal(described.namespaceInfo.description, 'from the TypeScript SDK');
  assert.equal(described.namespaceInfo.state, NAMESPACE_STATE_REGISTERED);
  assert.match(described.namespaceInfo.id, UUID);
  assert.equal(seconds(described.config.workflowExecutionRetentionTtl), 3 * DAY);
  assert.equal(described.config.workflowExecutionRetentionTtl.seconds.toString(), '259200');

  const byId = await connection.workflowService.describeNamespace({ id: described.namespaceInfo.id });
  assert.equal(byId.namespaceInfo.name, namespace);
  assert.equal(byId.namespaceInfo.id, described.namespaceInfo.id);
  assert.equal(byId.namespaceInfo.state, NAMESPACE_STATE_REGISTERED);
  assert.equal(seconds(byId.config.workflowExecutionRetentionTtl), 3 * DAY);
});

test('every namespace gets its own id', DEADLINE, async () => {
  const names = [uniqueName('sdk-a'), uniqueName('sdk-b')];
  const ids = [];
  for (const namespace of names) {
    await connection.workflowService.registerNamespace({ namespace });
    ids.push((await connection.workflowService.describeNamespace({ namespace })).namespaceInfo.id);
  }
  ids.forEach((id) => assert.match(id, UUID));
  assert.notEqual(ids[0], ids[1]);
});

test('absent retention means 2 days', DEADLINE, async () => {
  const namespace = uniqueName('sdk-default');
  await connection.workflowService.registerNamespace({ namespace });
  const described = await connection.workflowService.describeNamespace({ namespace });
  assert.equal(seconds(described.config.workflowExecutionRetentionTtl), 2 * DAY);
});

test('retention 0 is refused with the exact message and nothing is stored', DEADLINE, async () => {
  const namespace = uniqueName('sdk-zero');
  const err = await rejection(
    connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: { seconds: 0 },
    }),
    GRPC_INVALID_ARGUMENT,
  );
  assert.ok(
    err.details.startsWith('A valid retention period is not set on request.'),
    `unexpected message: ${err.details}`,
  );
  await rejection(connection.workflowService.describeNamespace({ namespace }), GRPC_NOT_FOUND);
});

test('retention bounds: 1 day and 30 days are accepted, just outside them is refused', DEADLINE, async () => {
  for (const accepted of [DAY, 36 * 3600, 30 * DAY]) {
    const namespace = uniqueName('sdk-in');
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: { seconds: accepted },
    });
    const described = await connection.workflowService.describeNamespace({ namespace });
    assert.equal(seconds(described.config.workflowExecutionRetentionTtl), accepted);
  }
  for (const refused of [DAY - 1, 30 * DAY + 1, 31 * DAY, -DAY]) {
    const err = await rejection(
      connection.workflowService.registerNamespace({
        namespace: uniqueName('sdk-out'),
        workflowExecutionRetentionPeriod: { seconds: refused },
      }),
      GRPC_INVALID_ARGUMENT,
    );
    assert.ok(
      err.details.startsWith('A valid retention period is not set on request.'),
      `retention ${refused} s: unexpected message: ${err.details}`,
    );
  }
});

test('a duplicate name is ALREADY_EXISTS with the message the SDK test helpers match', DEADLINE, async () => {
  const namespace = uniqueName('sdk-dup');
  await connection.workflowService.registerNamespace({ namespace });
  const err = await rejection(
    connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: { seconds: 5 * DAY },
    }),
    GRPC_ALREADY_EXISTS,
  );
  assert.equal(err.details, 'Namespace already exists.');
  const described = await connection.workflowService.describeNamespace({ namespace });
  assert.equal(seconds(described.config.workflowExecutionRetentionTtl), 2 * DAY, 'the first registration stands');
});

test('an unknown namespace is NOT_FOUND, by name and by id', DEADLINE, async () => {
  const namespace = uniqueName('sdk-missing');
  const err = await rejection(connection.workflowService.describeNamespace({ namespace }), GRPC_NOT_FOUND);
  assert.equal(err.details, `Namespace ${namespace} is not found.`);
  await rejection(
    connection.workflowService.describeNamespace({ id: '0b6b5e4e-8f3a-4c2e-9d1f-2a7c9e0f4b11' }),
    GRPC_NOT_FOUND,
  );
});
