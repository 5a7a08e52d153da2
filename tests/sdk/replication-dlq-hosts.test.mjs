// The replication DLQ of a cluster of two tock-server hosts sharing PostgreSQL (the ctest
// fixture `postgres`; the file skips itself without it): cluster B (two hosts, four history
// shards, the test-only replication faults file) pulls from cluster A (one server on SQLite,
// four shards). Six workflows whose tasks fail on B land in B's DLQ, on several of A's
// shards; a merge sent to a host that does not own one of those shards still merges every
// task (each shard's part by its owner), and B then has every run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@temporalio/client';
import { Connection } from '@temporalio/client';
import { startHosts, startServer, tockJson, uniqueName } from './server.mjs';
import { clusterConfig, connectClusters, eventually, registerGlobal } from './clusters.mjs';

const POSTGRES = process.env.TOCK_POSTGRES_FIXTURE_FILE;

test('a DLQ merge sent to any host of B merges every shard\'s tasks on its owner', {
  timeout: 120_000,
  skip: !POSTGRES && 'needs the PostgreSQL fixture (TOCK_POSTGRES_FIXTURE_FILE)',
}, async () => {
  const server = await startServer({ config: `${clusterConfig('a', 1)}history:\n  shards: 4\n` });
  let hosts;
  let connection;
  let connectionA;
  try {
    connectionA = await Connection.connect({ address: server.address, connectTimeout: 10_000 });
    const a = { name: 'a', server, address: server.address, connection: connectionA, workflow: connectionA.workflowService, operator: connectionA.operatorService };
    const faultsFile = join(server.dir, 'b-replication-faults.json');
    const setFaults = (faults) => {
      writeFileSync(`${faultsFile}.tmp`, JSON.stringify(faults));
      renameSync(`${faultsFile}.tmp`, faultsFile);
    };
    setFaults({});
    hosts = await startHosts(2, {
      config: `${clusterConfig('b', 2)}history:\n  shards: 4\n`,
      args: ['--replication-faults-file', faultsFile],
    });
    connection = await Connection.connect({ address: hosts.address, connectTimeout: 10_000 });
    const b = { name: 'b', address: hosts.address, workflow: connection.workflowService, operator: connection.operatorService };
    await connectClusters(a, b);
    const namespace = uniqueName('dlq-hosts');
    await registerGlobal(a, namespace);
    await eventually(() => b.workflow.describeNamespace({ namespace }), { what: `${namespace} on b`, timeoutMs: 20_000 });

    const ids = Array.from({ length: 6 }, (_, i) => uniqueName(`poison${i}`));
    setFaults({ fail_workflow_ids: ids });
    await new Promise((resolve) => setTimeout(resolve, 600)); // every host read it
    const client = new Client({ connection: a.connection, namespace });
    for (const workflowId of ids) {
      await client.workflow.start('nobodyRunsThis', { taskQueue: uniqueName('nobody'), workflowId });
    }
    const dlqOfB = (address) => tockJson(address, ['cluster', 'dlq', 'read', '--remote', 'a']);
    const rows = await eventually(async () => {
      const rows = await dlqOfB(hosts.addresses[1]);
      assert.deepEqual(new Set(rows.map((r) => r.workflowId)), new Set(ids), JSON.stringify(rows));
      return rows;
    }, { what: 'every poison workflow in b\'s DLQ', timeoutMs: 30_000 });
    const shards = [...new Set(rows.map((r) => r.sourceShardId))];

    // A host that does not own the (local) shard of one of the rows: the one the merge goes to.
    const owners = Object.fromEntries((await tockJson(hosts.address, ['cluster', 'shards'])).map((s) => [s.shardId, s.owner]));
    const owner = owners[shards[0]];
    const index = hosts.hosts.findIndex((h) => h.address !== owner);
    assert.ok(index >= 0 && owners[shards[0]] !== hosts.addresses[index], JSON.stringify({ owners, shards }));

    setFaults({});
    await new Promise((resolve) => setTimeout(resolve, 600));
    const merged = await tockJson(hosts.addresses[index], ['cluster', 'dlq', 'merge', '--remote', 'a']);
    assert.equal(Number(merged.mergedTasks), rows.length, JSON.stringify({ merged, shards, owners }));
    assert.equal(Number(merged.remainingTasks), 0);
    assert.deepEqual(await dlqOfB(hosts.address), []);
    for (const workflowId of ids) {
      const d = await b.workflow.describeWorkflowExecution({ namespace, execution: { workflowId } });
      assert.equal(d.workflowExecutionInfo.execution.workflowId, workflowId);
    }
  } finally {
    await connection?.close();
    await connectionA?.close();
    await hosts?.stop();
    await server.stop();
  }
});
