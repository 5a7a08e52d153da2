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

let server;
let connection;

before(async () => {
  server = await startServer();
  connection = await Connection.connect({ address: server.address, connectTimeout: 10_000 });
});

after(async () => {
  await connection?.close();
  await server?.stop();
});

const seconds = (duration) => Number(duration?.seconds?.toString() ?? 0);

async function rejection(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('expected the call to fail');
}

test('registers a namespace with 3 days retention and reads it back', async () => {
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
  assert.match(described.namespaceInfo.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(seconds(described.config.workflowExecutionRetentionTtl), 3 * DAY);

  const byId = await connection.workflowService.describeNamespace({ id: described.namespaceInfo.id });
  assert.equal(byId.namespaceInfo.name, namespace);
});

test('absent retention means 2 days', async () => {
  const namespace = uniqueName('sdk-default');
  await connection.workflowService.registerNamespace({ namespace });
  const described = await connection.workflowService.describeNamespace({ namespace });
  assert.equal(seconds(described.config.workflowExecutionRetentionTtl), 2 * DAY);
});

test('retention 0 is refused with the exact message', async () => {
  const namespace = uniqueName('sdk-zero');
  const err = await rejection(
    connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: { seconds: 0 },
    }),
  );
  assert.equal(err.code, GRPC_INVALID_ARGUMENT);
  assert.ok(
    err.details.startsWith('A valid retention period is not set on request.'),
    `unexpected message: ${err.details}`,
  );
  const missing = await rejection(connection.workflowService.describeNamespace({ namespace }));
  assert.equal(missing.code, GRPC_NOT_FOUND, 'nothing was stored');
});

test('retention over 30 days is refused', async () => {
  const err = await rejection(
    connection.workflowService.registerNamespace({
      namespace: uniqueName('sdk-long'),
      workflowExecutionRetentionPeriod: { seconds: 31 * DAY },
    }),
  );
  assert.equal(err.code, GRPC_INVALID_ARGUMENT);
  assert.ok(err.details.startsWith('A valid retention period is not set on request.'));
});

test('a duplicate name is ALREADY_EXISTS with the message the SDK test helpers match', async () => {
  const namespace = uniqueName('sdk-dup');
  await connection.workflowService.registerNamespace({ namespace });
  const err = await rejection(connection.workflowService.registerNamespace({ namespace }));
  assert.equal(err.code, GRPC_ALREADY_EXISTS);
  assert.equal(err.details, 'Namespace already exists.');
});

test('an unknown namespace is NOT_FOUND', async () => {
  const err = await rejection(
    connection.workflowService.describeNamespace({ namespace: uniqueName('sdk-missing') }),
  );
  assert.equal(err.code, GRPC_NOT_FOUND);
  assert.match(err.details, /^Namespace sdk-missing-.* is not found\.$/);
});
