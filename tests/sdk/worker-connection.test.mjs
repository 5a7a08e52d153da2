// The SDK worker's native connection (Rust sdk-core inside @temporalio/worker 1.24.0) calls
// GetSystemInfo when it connects and refuses servers that answer it wrongly.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { startServer } from './server.mjs';

const DEADLINE = { timeout: 30_000 };
const NAMESPACE_STATE_REGISTERED = 1;

let server;

before(async () => {
  server = await startServer();
}, DEADLINE);

after(async () => {
  await server?.stop();
}, DEADLINE);

async function withClient(fn) {
  const connection = await Connection.connect({ address: server.address, connectTimeout: 10_000 });
  try {
    return await fn(connection);
  } finally {
    await connection.close();
  }
}

test('the banner names the version and the bound 127.0.0.1 address', DEADLINE, () => {
  assert.match(server.banner, /^Tock server \S+ listening on 127\.0\.0\.1:[1-9][0-9]*$/);
  assert.ok(server.banner.endsWith(` listening on ${server.address}`));
});

test('NativeConnection.connect succeeds against tock-server and closes', DEADLINE, async () => {
  const connection = await NativeConnection.connect({ address: server.address });
  let closed = false;
  try {
    assert.ok(connection);
    await connection.close();
    closed = true;
  } finally {
    if (!closed) await connection.close().catch(() => {});
  }
});

test('NativeConnection.connect fails once the server is gone (so the test above can fail)', DEADLINE, async () => {
  // The address of a server that has just stopped.
  const other = await startServer();
  const address = other.address;
  await other.stop();
  await assert.rejects(NativeConnection.connect({ address }));
});

test('GetSystemInfo advertises sdk metadata', DEADLINE, async () => {
  await withClient(async (connection) => {
    const info = await connection.workflowService.getSystemInfo({});
    assert.ok(info.capabilities, 'GetSystemInfo returns capabilities');
    assert.equal(info.capabilities.sdkMetadata, true);
    assert.equal(info.capabilities.signalAndQueryHeader, true);
    assert.equal(info.capabilities.eagerWorkflowStart, true, 'eager.test.mjs starts workflows eagerly');
  });
});

test('the default namespace exists for workers', DEADLINE, async () => {
  await withClient(async (connection) => {
    const described = await connection.workflowService.describeNamespace({ namespace: 'default' });
    assert.equal(described.namespaceInfo.name, 'default');
    assert.equal(described.namespaceInfo.state, NAMESPACE_STATE_REGISTERED);
  });
});
