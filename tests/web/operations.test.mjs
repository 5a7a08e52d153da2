// The console's operator pages in a real browser against real tock-servers: archival (status,
// a run archived now, the archive searched and a run read back in the history views),
// replication between two clusters (remotes and shards, failover of a global namespace, the
// DLQ read and purged), timers (created, inspected, deleted) and a namespace as it was at an
// earlier time; the console under a public path on its own port; a codec server decoding
// payloads in the browser.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, freePort, api } from './server.mjs';
import { connect, richRun, start } from './histories.mjs';
import { launch, newPage, screenshot } from './browser.mjs';

// Waits (at most `ms`) until `check` resolves truthy; its last value.
async function until(check, what, ms = 15_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('archival', { timeout: 120_000 }, () => {
  let archives;
  let server;
  let client;
  let browser;
  before(async () => {
    archives = mkdtempSync(join(tmpdir(), 'tock-web-archives-'));
    server = await startServer({ args: ['--archival-dir', archives] });
    client = await connect(server.address);
    await richRun(client.svc, { id: 'archived-order', queue: 'q-archived' });
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await client?.close();
    await server?.stop();
    if (archives) rmSync(archives, { recursive: true, force: true });
  });

  test('status, a closed run archived now, the archive searched and the run read back', async () => {
    const page = await newPage(browser);
    await page.goto(`${server.console}#/namespaces/default/archival`);
    await page.getByRole('heading', { name: 'History', exact: true }).waitFor();
    await page.getByText(/to file:\/\/.*history/).waitFor();
    await page.getByRole('button', { name: 'Archive a run now…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Archive a closed run now' });
    await dialog.getByLabel('Workflow id').fill('archived-order');
    await dialog.getByRole('button', { name: 'Archive' }).click();
    await page.getByRole('status').filter({ hasText: /Run [0-9a-f-]{36} archived/ }).waitFor();
    const status = await api(server, 'tock/v1/namespaces/default/archival');
    assert.equal(status.json.history.archived, '1', JSON.stringify(status.json));
    // The archive searched (visibility was archived when the run closed).
    await page.getByLabel('Archived runs query').fill("WorkflowId = 'archived-order'");
    await page.getByRole('button', { name: 'Search the archive' }).click();
    assert.match(page.url(), /q=WorkflowId/);
    const found = page.getByRole('table', { name: 'Archived runs' }).getByRole('link', { name: 'archived-order' });
    await found.click();
    await page.getByText(/events, read from/).waitFor();
    await page.getByRole('grid', { name: 'Events' }).getByRole('row').first().waitFor();
    await page.getByRole('tab', { name: 'Timeline' }).click();
    await page.locator('.timeline canvas[data-bars]').waitFor();
    await screenshot(page, 'page-archived-run');
    // A run that is not closed is refused with the server's reason.
    await start(client.svc, { id: 'still-open', type: 'fulfil', queue: 'nobody-polls' });
    await page.goto(`${server.console}#/namespaces/default/archival`);
    await page.getByRole('button', { name: 'Archive a run now…' }).click();
    await dialog.getByLabel('Workflow id').fill('still-open');
    await dialog.getByRole('button', { name: 'Archive' }).click();
    await dialog.getByRole('alert').waitFor();
    assert.match(await dialog.getByRole('alert').innerText(), /closed|running|open/i);
    await screenshot(page, 'page-archival');
    assert.deepEqual(page.errors.filter((e) => !/status of 400/.test(e)), []);
    await page.context().close();
  });
});

describe('replication', { timeout: 180_000 }, () => {
  let a;
  let b;
  let browser;
  const clusterConfig = (name, version, port) => `cluster_metadata:
  enable_global_namespace: true
  failover_version_increment: 10
  master_cluster_name: ${name}
  current_cluster_name: ${name}
  clusters:
    ${name}: {enabled: true, initial_failover_version: ${version}, rpc_address: "127.0.0.1:${port}"}
`;
  before(async () => {
    const [pa, pb] = [await freePort(), await freePort()];
    a = await startServer({ port: pa, config: clusterConfig('east', 1, pa) });
    b = await startServer({ port: pb, config: clusterConfig('west', 2, pb) });
    for (const [from, to] of [[a, b], [b, a]]) {
      const r = await api(from, 'tock/v1/clusters', { method: 'POST', body: JSON.stringify({ frontendAddress: to.address, enableRemoteClusterConnection: true }) });
      assert.equal(r.status, 200, JSON.stringify(r.json));
    }
    const registered = await api(a, 'api/v1/namespaces', { method: 'POST', body: JSON.stringify({
      namespace: 'orders', workflowExecutionRetentionPeriod: '86400s', isGlobalNamespace: true,
      clusters: [{ clusterName: 'east' }, { clusterName: 'west' }], activeClusterName: 'east' }) });
    assert.equal(registered.status, 200, JSON.stringify(registered.json));
    await until(async () => (await api(b, 'api/v1/namespaces/orders')).status === 200, 'orders on west');
    const client = await connect(a.address);
    await start(client.svc, { ns: 'orders', id: 'replicated', type: 'fulfil', queue: 'nobody-polls' });
    await client.close();
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await a?.stop();
    await b?.stop();
  });

  test('remotes and their shards, a global namespace failed over, the DLQ read and purged', async () => {
    const page = await newPage(browser);
    await page.goto(`${a.console}#/replication`);
    await page.getByRole('heading', { name: /^west/ }).waitFor();
    await page.getByRole('table', { name: 'To west' }).locator('tbody tr').first().waitFor();
    assert.ok(await page.getByRole('table', { name: 'From west' }).locator('tbody tr').count() >= 1);
    const row = page.getByRole('table', { name: 'Global namespaces' }).locator('tbody tr', { hasText: 'orders' });
    assert.match(await row.innerText(), /east/);
    await screenshot(page, 'page-replication');
    await row.getByRole('button', { name: 'Fail over…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Fail over orders' });
    assert.equal(await dialog.getByLabel('Make active').inputValue(), 'west');
    await dialog.getByRole('button', { name: 'Fail over' }).click();
    await until(async () => /west\s+east, west/.test(await row.innerText()), 'the row to show west active');
    const onWest = await until(async () => {
      const r = await api(b, 'api/v1/namespaces/orders');
      return r.json.replicationConfig && r.json.replicationConfig.activeClusterName === 'west' && r;
    }, 'west to learn it is active');
    assert.equal(onWest.json.replicationConfig.activeClusterName, 'west');
    // The DLQ: read for the remote (empty), then purged (nothing to purge), both from the URL.
    await page.getByLabel('Source cluster').selectOption('west');
    await page.getByRole('button', { name: 'Read' }).click();
    await page.getByText('The DLQ holds no task of this selection.').waitFor();
    assert.match(page.url(), /source=west/);
    await page.getByRole('button', { name: 'Purge…' }).click();
    await page.getByRole('dialog', { name: "Purge the DLQ's tasks" }).getByRole('button', { name: 'Purge' }).click();
    await page.getByRole('status').filter({ hasText: '0 tasks purged.' }).waitFor();
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
});

describe('timers and namespace history', { timeout: 120_000 }, () => {
  let server;
  let browser;
  before(async () => {
    server = await startServer();
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('a timer created from the form, inspected with its retry policy, and deleted', async () => {
    const page = await newPage(browser);
    await page.goto(`${server.console}#/namespaces/default/timers`);
    await page.getByText('No timer in default.').waitFor();
    await page.getByRole('button', { name: 'Create…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create a timer' });
    await dialog.getByLabel('Id').fill('remind-7');
    await dialog.getByLabel(/Callback URL/).fill('https://hooks.example.com/remind');
    await dialog.getByLabel(/Payload/).fill('{"order": 7');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'The payload is not valid JSON' }).waitFor();
    await dialog.getByLabel(/Payload/).fill('{"order": 7}');
    await dialog.getByLabel(/at most this many attempts/).fill('5');
    await dialog.getByLabel(/first interval/).fill('30s');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'remind-7' }).waitFor();
    const facts = await page.locator('.facts').last().innerText();
    assert.match(facts, /PENDING/);
    assert.match(facts, /"maxAttempts": 5/);
    assert.match(facts, /"order": 7/);
    const listed = await api(server, 'api/v1/timers/get', { method: 'POST', body: JSON.stringify({ namespace: 'default', timerId: 'remind-7' }) });
    assert.equal(listed.json.retryPolicy.initialInterval, '30s');
    await screenshot(page, 'page-timers');
    const row = page.getByRole('table', { name: 'Timers' }).locator('tbody tr', { hasText: 'remind-7' });
    await row.getByRole('button', { name: 'Delete…' }).click();
    await page.getByRole('dialog', { name: 'Delete the timer' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('group', { name: 'Timer state' }).getByRole('button', { name: 'deleted' }).click();
    await page.getByRole('table', { name: 'Timers' }).locator('tbody tr', { hasText: 'remind-7' }).filter({ hasText: 'DELETED' }).waitFor();
    assert.match(page.url(), /state=DELETED/);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('a namespace as it was: the version valid at a time, its retention then', async () => {
    const before = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20)); // the update is stamped after `before`
    const updated = await api(server, 'api/v1/namespaces/default/update', { method: 'POST', body: JSON.stringify({ config: { workflowExecutionRetentionTtl: '864000s' } }) });
    assert.equal(updated.status, 200, JSON.stringify(updated.json));
    const page = await newPage(browser);
    await page.goto(`${server.console}#/namespaces/default`);
    await page.getByRole('table', { name: 'Version history' }).locator('tbody tr').nth(1).waitFor();
    await page.getByLabel('As of').fill(before);
    await page.getByRole('button', { name: 'Show' }).click();
    const asOf = page.locator('[aria-label="As of"].panel');
    await asOf.getByText(/version 1 \(register\)/).waitFor();
    assert.match(await asOf.innerText(), /Retention\s+2d/);
    // The current version from its row's link.
    await page.getByRole('table', { name: 'Version history' }).getByRole('link', { name: '2' }).click();
    await asOf.getByText(/version 2 \(update\)/).waitFor();
    assert.match(await asOf.innerText(), /Retention\s+10d/);
    await screenshot(page, 'page-namespace-as-of');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
});

describe('a public path, on a listener of its own', { timeout: 60_000 }, () => {
  let server;
  let client;
  let browser;
  before(async () => {
    server = await startServer({ args: ['--ui-public-path', '/ops/tock/', '--ui-port', '0'] });
    client = await connect(server.address);
    await start(client.svc, { id: 'pathed', type: 'fulfil', queue: 'nobody-polls' });
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await client?.close();
    await server?.stop();
  });

  test('--ui-public-path and --ui-port: the console at /ops/tock/ of its own port, the APIs beside it', async () => {
    const consoleUrl = new URL(server.console);
    const httpPort = new URL(server.http).port;
    assert.equal(consoleUrl.pathname, '/ops/tock/');
    assert.notEqual(consoleUrl.port, httpPort, 'the console has a port of its own');
    // The HTTP port keeps the APIs and serves no console.
    assert.equal((await fetch(`${server.http}/`)).status, 404);
    assert.equal((await fetch(`${server.http}/api/v1/namespaces/default/workflows/pathed`)).status, 200);
    // The prefix alone is sent on to the console's page, relative to where it was asked.
    const bare = await fetch(`${consoleUrl.origin}/ops/tock`, { redirect: 'manual' });
    assert.equal(bare.status, 301);
    assert.equal(bare.headers.get('location'), 'tock/');
    const page = await newPage(browser);
    const requested = [];
    page.on('request', (r) => requested.push(new URL(r.url())));
    await page.goto(`${consoleUrl.origin}/ops/tock#/namespaces/default/workflows`);
    await page.getByRole('grid', { name: 'Workflows' }).getByRole('row').first().waitFor();
    await page.getByRole('link', { name: 'pathed' }).first().click();
    await page.getByRole('heading', { name: /pathed/ }).waitFor();
    assert.ok(requested.length > 5);
    assert.deepEqual(requested.filter((u) => u.port !== consoleUrl.port || !/^\/ops\/tock(\/|$)/.test(u.pathname)).map(String), [],
      'every request goes to the console port under the public path');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
});

describe('a codec server', { timeout: 60_000 }, () => {
  const rot13 = (s) => s.replace(/[a-z]/gi, (c) => String.fromCharCode((c <= 'Z' ? 65 : 97) + ((c.toLowerCase().charCodeAt(0) - 97 + 13) % 26)));
  const b64 = (s) => Buffer.from(s).toString('base64');
  const asked = [];
  let codec;
  let server;
  let client;
  let browser;
  before(async () => {
    // A codec server as Temporal's UI expects one: CORS, POST /decode, the namespace in X-Namespace.
    codec = createServer((req, res) => {
      res.setHeader('Access-Control-Allow-Origin', '*');
      res.setHeader('Access-Control-Allow-Headers', 'content-type, x-namespace');
      if (req.method === 'OPTIONS') { res.writeHead(204).end(); return; }
      let body = '';
      req.on('data', (d) => { body += d; });
      req.on('end', () => {
        asked.push({ path: req.url, namespace: req.headers['x-namespace'] });
        const payloads = JSON.parse(body).payloads.map((p) => (Buffer.from(p.metadata.encoding, 'base64').toString() === 'binary/rot13'
          ? { metadata: { encoding: b64('json/plain') }, data: b64(rot13(Buffer.from(p.data, 'base64').toString())) } : p));
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ payloads }));
      });
    });
    await new Promise((r) => codec.listen(0, '127.0.0.1', r));
    server = await startServer({ args: ['--ui-codec-endpoint', `http://127.0.0.1:${codec.address().port}/codec`] });
    client = await connect(server.address);
    await client.svc.startWorkflowExecution({ namespace: 'default', workflowId: 'sealed', workflowType: { name: 'vault' },
      taskQueue: { name: 'nobody-polls' }, requestId: randomUUID(), identity: 'tock-web-test',
      input: { payloads: [{ metadata: { encoding: Buffer.from('binary/rot13') }, data: Buffer.from(rot13('{"secret":"swordfish"}')) }] } });
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await client?.close();
    await server?.stop();
    codec?.close();
  });

  test("--ui-codec-endpoint: the browser has the codec decode what the server cannot show", async () => {
    // The server itself sends the payload as it is stored.
    const raw = await api(server, 'api/v1/namespaces/default/workflows/sealed/history');
    assert.equal(raw.json.history.events[0].workflowExecutionStartedEventAttributes.input.payloads[0].data, b64(rot13('{"secret":"swordfish"}')));
    const page = await newPage(browser);
    await page.goto(`${server.console}#/namespaces/default/workflows/sealed`);
    await page.getByText('[{"secret":"swordfish"}]').first().waitFor(); // a plain list, as shorthand writes one
    // The history's text search finds the decoded value.
    await page.goto(`${server.console}#/namespaces/default/workflows/sealed?q=swordfish`);
    await page.getByRole('grid', { name: 'Events' }).getByRole('row').first().waitFor();
    assert.match(await page.getByRole('grid', { name: 'Events' }).getByRole('row').first().innerText(), /WorkflowExecutionStarted/);
    assert.ok(asked.length > 0 && asked.every((a) => a.path === '/codec/decode' && a.namespace === 'default'), JSON.stringify(asked));
    // A codec that fails: the payload stays as it was and the top bar says so.
    codec.close();
    await new Promise((r) => setTimeout(r, 50));
    const again = await newPage(browser);
    await again.goto(`${server.console}#/namespaces/default/workflows/sealed`);
    await again.getByRole('status').filter({ hasText: 'codec failing' }).waitFor();
    await again.context().close();
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
});
