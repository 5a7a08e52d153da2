// Several tock-server clusters for the replication tests (reference/replication.md §6.3):
// each cluster is one server with its own database, named in its config, all with
// failover version increment 10 (A initial version 1, B 2, ...), connected to each other
// through OperatorService.AddOrUpdateRemoteCluster, like operators do.
import assert from 'node:assert/strict';
import { Connection } from '@temporalio/client';
import { startServer } from './server.mjs';

// The YAML config of cluster `name` (its rpc_address is the address it binds: port 0).
export function clusterConfig(name, initialVersion, { increment = 10, global = true } = {}) {
  return [
    'cluster_metadata:',
    `  enable_global_namespace: ${global}`,
    `  failover_version_increment: ${increment}`,
    `  master_cluster_name: ${name}`,
    `  current_cluster_name: ${name}`,
    '  clusters:',
    `    ${name}: {enabled: true, initial_failover_version: ${initialVersion}, rpc_address: "127.0.0.1:0"}`,
    '',
  ].join('\n');
}

// Starts cluster `name`: { name, server, connection, address, stop() }.
export async function startCluster(name, initialVersion, options = {}) {
  const { args = [], ...configOptions } = options;
  let server = await startServer({ config: clusterConfig(name, initialVersion, configOptions), args });
  const connection = await Connection.connect({ address: server.address, connectTimeout: 10_000 });
  return {
    name,
    server,
    connection,
    address: server.address,
    workflow: connection.workflowService,
    operator: connection.operatorService,
    // Stops the server (SIGKILL with `kill`, as a crash) and starts it again on the same
    // database and port; the connection reconnects by itself.
    async restart({ kill = true } = {}) {
      server = await server.restart({ kill });
      this.server = server;
    },
    async stop() {
      try {
        await connection.close();
      } finally {
        await server.stop();
      }
    },
  };
}

// `from` connects to `to` (one direction: `from` pulls from `to`).
export async function upsert(from, to, { enableConnection = true } = {}) {
  await from.operator.addOrUpdateRemoteCluster({
    frontendAddress: to.address,
    enableRemoteClusterConnection: enableConnection,
    enableReplication: true,
  });
}

// Both directions, as Temporal's docs say: "All operations should be executed in both Clusters".
export async function connectClusters(a, b) {
  await upsert(a, b);
  await upsert(b, a);
}

// Calls `probe` until it returns without throwing (its value), at most `timeoutMs`; then
// fails with the last error.
export async function eventually(probe, { timeoutMs = 15_000, intervalMs = 100, what = 'the condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      return await probe();
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what} did not hold within ${timeoutMs} ms; last error: ${last?.stack ?? last}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

// The gRPC error a call rejects with; checks its code.
export async function rejection(promise, expectedCode) {
  let err;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  assert.ok(err, 'expected the call to fail');
  assert.equal(err.code, expectedCode, `gRPC code ${err.code} (${err.details ?? err.message}), expected ${expectedCode}`);
  return err;
}

export const grpc = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  FAILED_PRECONDITION: 9,
  UNAVAILABLE: 14,
};

// Registers global namespace `namespace` on `cluster`, of the clusters named in `clusters`,
// active in `active` (retention 2 days; `extra` adds or overrides fields).
export async function registerGlobal(cluster, namespace, clusters = ['a', 'b'], active = 'a', extra = {}) {
  await cluster.workflow.registerNamespace({
    namespace,
    isGlobalNamespace: true,
    clusters: clusters.map((clusterName) => ({ clusterName })),
    activeClusterName: active,
    workflowExecutionRetentionPeriod: { seconds: 2 * 86400 },
    ...extra,
  });
}

// The events of a run on `cluster` (no run id: the current run).
export async function history(cluster, namespace, workflowId, runId = '') {
  const out = await cluster.workflow.getWorkflowExecutionHistory({ namespace, execution: { workflowId, runId } });
  return out.history.events;
}
