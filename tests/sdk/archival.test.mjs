// Archival with the official SDK: a run executed by a real worker is archived to the file
// store when its retention passes (time skipped on the dev server); the archive file, and the
// history the server reads back from it (`archived: true`), replay in the SDK's replayer.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { startServer, tockJson as tockJsonAt, uniqueName } from './server.mjs';

const DEADLINE = { timeout: 90_000 };
const HOOK_DEADLINE = { timeout: 60_000 };
const namespace = 'archived';
const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));
Runtime.install({ logger: new DefaultLogger('WARN') });

let server;
let archiveDir;
let nativeConnection;
let connection;
let client;
let worker;
let running;
const taskQueue = uniqueName('archival');

const tockJson = (args) => tockJsonAt(server.address, args);

before(async () => {
  archiveDir = mkdtempSync(join(tmpdir(), 'tock-sdk-archive-'));
  server = await startServer({ args: ['--archival-dir', archiveDir, '--enable-time-skipping'] });
  await tockJson(['namespace', 'register', namespace, '--retention', '1d']);
  nativeConnection = await NativeConnection.connect({ address: server.address });
  worker = await Worker.create({ connection: nativeConnection, namespace, taskQueue, workflowsPath, activities });
  running = worker.run();
  connection = await Connection.connect({ address: server.address });
  client = new Client({ connection, namespace });
}, HOOK_DEADLINE);

after(async () => {
  try {
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await running;
    await nativeConnection?.close();
    await connection?.close();
  } finally {
    await server?.stop();
    if (archiveDir) rmSync(archiveDir, { recursive: true, force: true });
  }
}, HOOK_DEADLINE);

test('an archived history replays, from the file and read back through the server', DEADLINE, async () => {
  const workflowId = uniqueName('archived');
  const handle = await client.workflow.start('activityRoundTrip', { taskQueue, workflowId, args: ['archive'] });
  assert.equal(await handle.result(), 'Hello, archive!');
  const live = await handle.fetchHistory();

  await tockJson(['server', 'advance-time', '25h']);
  let status;
  for (let i = 0; i < 100; i++) {
    status = await tockJson(['-n', namespace, 'archival', 'status']);
    if (status.runsDeleted === '1') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(status.runsDeleted, '1', JSON.stringify(status));
  // Gone from the database: describe shows the archived record.
  const described = await tockJson(['-n', namespace, 'workflow', 'describe', '-w', workflowId]);
  assert.equal(described.archived, true);
  assert.equal(described.workflowExecutionInfo.status, 'WORKFLOW_EXECUTION_STATUS_COMPLETED');

  // The file Temporal's filestore layout names: a JSON array of History objects.
  const files = readdirSync(join(archiveDir, 'history')).filter((f) => f.endsWith('.history'));
  assert.equal(files.length, 1);
  const batches = JSON.parse(readFileSync(join(archiveDir, 'history', files[0]), 'utf8'));
  assert.ok(Array.isArray(batches));
  const fromFile = historyFromJSON({ events: batches.flatMap((b) => b.events) });
  assert.equal(fromFile.events.length, live.events.length);
  await Worker.runReplayHistory({ workflowsPath }, fromFile, workflowId);

  // Through the server: the run is gone, so GetWorkflowExecutionHistory reads the archive.
  const runId = handle.firstExecutionRunId;
  const raw = await connection.workflowService.getWorkflowExecutionHistory({
    namespace, execution: { workflowId, runId },
  });
  assert.equal(raw.archived, true);
  assert.equal(raw.history.events.length, live.events.length);
  await Worker.runReplayHistory({ workflowsPath }, raw.history, workflowId);
});
