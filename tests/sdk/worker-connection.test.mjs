// The SDK worker's native connection (Rust sdk-core inside @temporalio/worker 1.24.0) calls
// GetSystemInfo when it connects and refuses servers that answer it wrongly.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { startServer } from './server.mjs';

let server;

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.stop();
});

test('NativeConnection.connect succeeds against tock-server', async () => {
  const connection = await NativeConnection.connect({ address: server.address });
  try {
    assert.ok(connection);
  } finally {
    await connection.close();
  }
});

test('GetSystemInfo advertises sdk metadata', async () => {
  const connection = await Connection.connect({ address: server.address });
  try {
    const info = await connection.workflowService.getSystemInfo({});
    assert.equal(info.capabilities.sdkMetadata, true);
    assert.equal(info.capabilities.signalAndQueryHeader, true);
    assert.ok(!info.capabilities.eagerWorkflowStart);
  } finally {
    await connection.close();
  }
});

test('the default namespace exists for workers', async () => {
  const connection = await Connection.connect({ address: server.address });
  try {
    const described = await connection.workflowService.describeNamespace({ namespace: 'default' });
    assert.equal(described.namespaceInfo.name, 'default');
  } finally {
    await connection.close();
  }
});
