// Tock's web console in a real browser (Debian's chromium, driven by playwright-core)
// against a real tock-server whose runs were written through the official TypeScript
// client: the list and its filters, a run's history views, the timeline, actions, a
// 20,000-event history, dark mode, a reverse proxy's sub-path, accessibility (axe-core),
// read-only mode and a read-only token. Screenshots of each page go to the artifacts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createServer, request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { startServer, api } from './server.mjs';
import { connect, richRun, longRun, start, family } from './histories.mjs';
import { launch, newPage, screenshot } from './browser.mjs';
import { makeIssuer } from './tokens.mjs';

const require = createRequire(import.meta.url);
const LONG_EVENTS = 20000;

// Rows of a virtual list (only those in the page).
const rows = (page, label) => page.getByRole('grid', { name: label }).getByRole('row');

describe('the console', { timeout: 240_000 }, () => {
  let server;
  let client;
  let browser;
  before(async () => {
    server = await startServer();
    client = await connect(server.address);
    await richRun(client.svc);
    await longRun(client.svc, { events: LONG_EVENTS });
    for (let i = 0; i < 24; i++) {
      await start(client.svc, { id: `order-${String(i).padStart(2, '0')}`, type: i % 3 ? 'fulfil' : 'refund', queue: 'nobody-polls', input: { n: i } });
    }
    for (const id of ['order-00', 'order-01', 'order-02']) {
      await client.svc.terminateWorkflowExecution({ namespace: 'default', workflowExecution: { workflowId: id }, reason: 'test' });
    }
    await family(client.svc);
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await client?.close();
    await server?.stop();
  });

  test('serves its page with a security policy, its files with ETags, and its settings', async () => {
    const page = await fetch(server.console);
    assert.equal(page.status, 200);
    const policy = page.headers.get('content-security-policy');
    assert.match(policy, /default-src 'self'/);
    assert.match(policy, /script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
    const html = await page.text();
    assert.match(html, /<script type="importmap">/);
    const script = await fetch(new URL('assets/app/main.js', server.console));
    assert.equal(script.status, 200);
    assert.match(script.headers.get('content-type'), /javascript/);
    const etag = script.headers.get('etag');
    assert.match(etag, /^"[0-9a-f]{16}"$/);
    const again = await fetch(new URL('assets/app/main.js', server.console), { headers: { 'If-None-Match': etag } });
    assert.equal(again.status, 304);
    assert.equal((await fetch(new URL('assets/nothing.js', server.console))).status, 404);
    const settings = await api(server, 'api/v1/settings');
    assert.equal(settings.status, 200);
    assert.equal(settings.json.DefaultNamespace, 'default');
    assert.equal(settings.json.DisableWriteActions, false);
    assert.match(server.banner, /console:\s+http:\/\/127\.0\.0\.1:\d+\//);
  });

  test('lists the runs, filters them by status and by query (in the URL) and opens one', async () => {
    const page = await newPage(browser);
    await page.goto(`${server.console}#/namespaces/default/workflows`);
    await page.getByRole('button', { name: /^All \d+/ }).waitFor();
    await assert.doesNotReject(page.getByRole('button', { name: 'All 29' }).waitFor({ timeout: 5000 }));
    await rows(page, 'Workflows').first().waitFor();
    await screenshot(page, 'workflows');
    await page.getByRole('button', { name: /^Terminated 3/ }).click();
    await page.waitForURL(/status=Terminated/);
    await page.waitForFunction(() => document.querySelectorAll('[aria-label="Workflows"] [role=row]').length === 3);
    const terminated = await rows(page, 'Workflows').allInnerTexts();
    assert.ok(terminated.every((t) => t.includes('Terminated')), terminated.join('\n'));
    await page.getByRole('button', { name: /^All \d+/ }).click();
    await page.getByLabel('Visibility query').fill('WorkflowType = "refund"');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/query=WorkflowType/);
    await page.waitForFunction(() => document.querySelectorAll('[aria-label="Workflows"] [role=row]').length === 8);
    assert.ok((await rows(page, 'Workflows').allInnerTexts()).every((t) => t.includes('refund')));
    // The URL alone brings the same view back.
    const shared = page.url();
    const other = await newPage(browser);
    await other.goto(shared);
    await other.waitForFunction(() => document.querySelectorAll('[aria-label="Workflows"] [role=row]').length === 8);
    await other.context().close();
    // Keyboard: the first row selected and opened with Enter.
    await page.getByRole('grid', { name: 'Workflows' }).focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.waitForURL(/#\/namespaces\/default\/workflows\/order-\d\d\//);
    await page.getByRole('heading', { name: /order-\d\d/ }).waitFor();
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test("shows a run's history as a feed, compact and JSON, filters it and jumps to an event", async () => {
    const page = await newPage(browser);
    await page.goto(`${server.console}#/namespaces/default/workflows/order-rich`);
    await page.getByText('Completed', { exact: true }).first().waitFor();
    const events = rows(page, 'Events');
    await events.filter({ hasText: 'WorkflowExecutionCompleted' }).waitFor();
    assert.match(await page.locator('main').innerText(), /\{"order":42\}/); // input, in the payload shorthand
    await screenshot(page, 'workflow-history');
    await page.getByLabel('Category').selectOption('activity');
    await page.waitForURL(/cat=activity/);
    await page.waitForFunction(() => [...document.querySelectorAll('[aria-label="Events"] [role=row]')].every((r) => /ActivityTask/.test(r.textContent)));
    assert.equal(await events.count(), 6); // scheduled, started, closed: twice
    await page.getByLabel('Category').selectOption('');
    await page.getByLabel('Failures only').check();
    await page.waitForFunction(() => document.querySelectorAll('[aria-label="Events"] [role=row]').length === 1);
    assert.match(await events.first().innerText(), /ActivityTaskFailed[\s\S]*no courier available/);
    await page.getByLabel('Failures only').uncheck();
    await page.getByLabel('Search in events').fill('left at the door');
    await page.getByLabel('Search in events').press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('[aria-label="Events"] [role=row]').length === 1);
    assert.match(await events.first().innerText(), /WorkflowExecutionSignaled/);
    await page.getByLabel('Search in events').fill('');
    await page.getByLabel('Search in events').press('Enter');
    await page.getByLabel('Jump to event id').fill('5');
    await page.getByRole('button', { name: 'Go' }).click();
    await page.waitForURL(/event=5/);
    await page.getByRole('heading', { name: /^5 ActivityTaskScheduled/ }).waitFor();
    await page.getByRole('button', { name: 'Compact' }).click();
    const compact = rows(page, 'Activities, timers, children, updates and signals');
    await compact.filter({ hasText: 'charge' }).waitFor();
    assert.match(await compact.filter({ hasText: 'ship' }).innerText(), /FAILED[\s\S]*no courier available/);
    await screenshot(page, 'workflow-compact');
    await page.getByRole('button', { name: 'JSON', exact: true }).click();
    await events.filter({ hasText: '"eventType":"EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED"' }).waitFor();
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test("draws the run's activities and timer on the timeline and opens a bar's event", async () => {
    const page = await newPage(browser);
    await page.goto(`${server.console}#/namespaces/default/workflows/order-rich?tab=timeline`);
    const canvas = page.getByRole('img', { name: /Timeline of 3 activities, timers, children and updates, and 1 signals/ });
    await canvas.waitFor();
    await page.waitForFunction(() => document.querySelector('.timeline canvas').dataset.bars === '3');
    await screenshot(page, 'workflow-timeline');
    // Zoom in with the keyboard, back with 0: still three bars drawn.
    await canvas.focus();
    await page.keyboard.press('+');
    await page.keyboard.press('0');
    assert.equal(await canvas.getAttribute('data-bars'), '3');
    // A click on the timer's bar (the third lane) opens its event in the history.
    const box = await canvas.boundingBox();
    await page.mouse.click(box.x + box.width * 0.3, box.y + 28 + 22 * 2 + 11);
    await page.waitForURL(/tab=history.*event=\d+|event=\d+.*tab=history/);
    await page.getByRole('heading', { name: /TimerStarted/ }).waitFor();
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test("a child's relationships: its parent above it, its own child below, each a link", async () => {
    const page = await newPage(browser);
    await page.goto(`${server.console}#/namespaces/default/workflows/family-child?tab=relationships`);
    const tree = page.getByLabel('Relationships');
    await tree.getByText('(this run)').waitFor();
    const text = await tree.innerText();
    assert.match(text, /^family household Running\s+family-child \(this run\)\s+family-grandchild member started/i);
    await tree.getByRole('link', { name: 'family-grandchild' }).click();
    await page.getByRole('heading', { name: /family-grandchild/ }).waitFor();
    await page.getByRole('tab', { name: 'Relationships' }).click();
    await tree.getByText('(this run)').waitFor();
    assert.match(await tree.innerText(), /^family .*\s+family-child .*\s+family-grandchild \(this run\)/is);
    await page.getByText('This run started no child workflow.').waitFor();
    await screenshot(page, 'page-relationships');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('reset: the workflow task picked, a preview of what is kept, re-applied and dropped, then the new run', async () => {
    await richRun(client.svc, { id: 'order-reset', queue: 'q-reset' });
    const page = await newPage(browser);
    await page.goto(`${server.console}#/namespaces/default/workflows/order-reset`);
    await page.getByRole('button', { name: 'Reset…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Reset the run' });
    const preview = dialog.getByLabel('Reset preview');
    await dialog.getByLabel(/Back to the workflow task/).selectOption('4');
    await preview.getByText(/keeps 3 events/).waitFor();
    assert.match(await preview.innerText(), /gets again: signal note\./);
    assert.match(await preview.innerText(), /drops: .*\d+ activity.*\d+ timer/);
    await dialog.getByLabel('Re-apply later signals').uncheck();
    await preview.getByText('gets again: nothing.').waitFor();
    await dialog.getByLabel('Re-apply later signals').check();
    await dialog.getByRole('button', { name: 'Reset' }).click();
    await page.waitForURL(/order-reset\/[0-9a-f-]{36}$/);
    await page.getByRole('heading', { name: /order-reset\s+Running/ }).waitFor();
    const newRun = decodeURIComponent(page.url().split('/').pop());
    const history = await api(server, `api/v1/namespaces/default/workflows/order-reset/history?execution.runId=${newRun}`);
    const types = history.json.history.events.map((e) => e.eventType);
    assert.equal(types[3], 'EVENT_TYPE_WORKFLOW_TASK_FAILED', types.join(' '));
    assert.ok(types.includes('EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED'), 'the signal was re-applied');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('signals and terminates a running run from its page', async () => {
    await start(client.svc, { id: 'to-stop', type: 'fulfil', queue: 'nobody-polls' });
    const page = await newPage(browser);
    await page.goto(`${server.console}#/namespaces/default/workflows/to-stop`);
    await page.getByRole('button', { name: 'Signal…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Signal the run' });
    await dialog.getByLabel('Signal name').fill('approve');
    await dialog.getByLabel(/Input/).fill('{"by": "ops"}');
    await dialog.getByRole('button', { name: 'Send signal' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const history = await api(server, 'api/v1/namespaces/default/workflows/to-stop/history');
    const signaled = history.json.history.events.find((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED');
    assert.ok(signaled, 'the signal is in the history');
    assert.deepEqual(signaled.workflowExecutionSignaledEventAttributes.input, [{ by: 'ops' }]);
    await rows(page, 'Events').filter({ hasText: 'WorkflowExecutionSignaled' }).waitFor();
    // A bad JSON input is refused in the dialog, naming what is wrong.
    await page.getByRole('button', { name: 'Signal…' }).click();
    await dialog.getByLabel('Signal name').fill('approve');
    await dialog.getByLabel(/Input/).fill('{by: ops}');
    await dialog.getByRole('button', { name: 'Send signal' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'Input is not valid JSON' }).waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Terminate…' }).click();
    const terminate = page.getByRole('dialog', { name: 'Terminate the run' });
    await terminate.getByLabel('Reason').fill('stopped from the browser');
    await terminate.getByRole('button', { name: 'Terminate' }).click();
    await page.locator('h1 .badge', { hasText: 'Terminated' }).waitFor();
    const described = await api(server, 'api/v1/namespaces/default/workflows/to-stop');
    assert.equal(described.json.workflowExecutionInfo.status, 'WORKFLOW_EXECUTION_STATUS_TERMINATED');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('schedules: created from the form, paused and unpaused in bulk, triggered', async () => {
    const page = await newPage(browser);
    await page.goto(`${server.console}#/namespaces/default/schedules`);
    await page.getByRole('table', { name: 'Schedules' }).waitFor();
    for (const id of ['nightly', 'hourly']) {
      await page.getByRole('button', { name: 'Create…' }).click();
      const form = page.getByRole('dialog', { name: 'Create a schedule' });
      await form.getByLabel('Schedule ID').fill(id);
      await form.getByLabel(/^Every/).fill(id === 'nightly' ? '24h' : '1h');
      await form.getByLabel('Workflow type').fill('report');
      await form.getByLabel('Task queue').fill('nobody-polls');
      await form.getByLabel(/^Input/).fill('{"scope": "all"}');
      await form.getByRole('button', { name: 'Create' }).click();
      await page.waitForURL(new RegExp(`#/namespaces/default/schedules/${id}$`));
      await page.getByText(id === 'nightly' ? 'every 86400s' : 'every 3600s').waitFor();
      await page.getByRole('link', { name: 'Schedules' }).first().click();
    }
    await page.getByRole('link', { name: 'nightly' }).waitFor();
    await page.getByLabel('Select nightly').check();
    await page.getByLabel('Select hourly').check();
    await page.getByRole('button', { name: 'Pause 2', exact: true }).click();
    await page.getByRole('row', { name: /nightly.*Paused/ }).waitFor();
    await page.getByRole('row', { name: /hourly.*Paused/ }).waitFor();
    const described = await api(server, 'api/v1/namespaces/default/schedules/hourly');
    assert.equal(described.json.schedule.state.paused, true);
    await page.getByLabel('Select hourly').check();
    await page.getByRole('button', { name: 'Unpause 1', exact: true }).click();
    await page.getByRole('row', { name: /hourly.*Active/ }).waitFor();
    await screenshot(page, 'schedules');
    await page.getByRole('link', { name: 'hourly' }).click();
    await page.getByRole('button', { name: 'Trigger…' }).click();
    await page.getByRole('dialog', { name: 'Trigger now' }).getByRole('button', { name: 'Trigger' }).click();
    for (let i = 0; i < 100; i++) {
      const r = await api(server, 'api/v1/namespaces/default/schedules/hourly');
      if ((r.json.info.recentActions || []).length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await page.reload();
    await page.getByRole('table', { name: 'Recent actions' }).getByRole('link', { name: /^hourly/ }).waitFor();
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('a bulk terminate from the list: a preview count, then the batch job and its progress', async () => {
    for (let i = 0; i < 5; i++) await start(client.svc, { id: `cleanup-${i}`, type: 'cleanup', queue: 'nobody-polls' });
    const page = await newPage(browser);
    await page.goto(`${server.console}#/namespaces/default/workflows?query=${encodeURIComponent('WorkflowType = "cleanup"')}`);
    await page.waitForFunction(() => document.querySelectorAll('[aria-label="Workflows"] [role=row]').length === 5);
    await page.getByRole('button', { name: 'Bulk action…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Bulk action' });
    await dialog.getByText('5 workflows match.').waitFor();
    await dialog.getByLabel('Reason').fill('clean up');
    await dialog.getByRole('button', { name: 'Start batch job' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('link', { name: 'Batch jobs' }).click();
    const job = page.getByRole('table', { name: 'Batch jobs' }).getByRole('link', { name: /^tock-web-terminate-/ });
    await job.waitFor();
    await job.click();
    await page.getByText('5 of 5 (0 failed)').waitFor({ timeout: 30_000 });
    await screenshot(page, 'batch-job');
    const left = await api(server, `api/v1/namespaces/default/workflow-count?query=${encodeURIComponent('WorkflowType = "cleanup" AND ExecutionStatus = "Running"')}`);
    assert.equal(Number(left.json.count || 0), 0);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('a bulk reset: each closed run of the query goes back to its first workflow task and runs again', async () => {
    for (let i = 0; i < 2; i++) await richRun(client.svc, { id: `bulk-reset-${i}`, queue: `q-bulk-reset-${i}` });
    const query = 'WorkflowId IN ("bulk-reset-0", "bulk-reset-1")';
    const page = await newPage(browser);
    await page.goto(`${server.console}#/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
    await page.waitForFunction(() => document.querySelectorAll('[aria-label="Workflows"] [role=row]').length === 2);
    await page.getByRole('button', { name: 'Bulk action…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Bulk action' });
    await dialog.getByText('2 workflows match.').waitFor();
    await dialog.getByLabel('Action').selectOption('reset');
    await dialog.getByLabel('Back to').selectOption('first');
    await dialog.getByRole('button', { name: 'Start batch job' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('link', { name: 'Batch jobs' }).click();
    await page.getByRole('table', { name: 'Batch jobs' }).getByRole('link', { name: /^tock-web-reset-/ }).click();
    await page.getByText('2 of 2 (0 failed)').waitFor({ timeout: 30_000 });
    const running = await api(server, `api/v1/namespaces/default/workflow-count?query=${encodeURIComponent(`${query} AND ExecutionStatus = "Running"`)}`);
    assert.equal(Number(running.json.count || 0), 2, 'each run was reset into a new running run');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('imports a history file and browses it offline in the same views', async () => {
    // The file a download makes: payloads in the proto form, as the SDK replayer reads them.
    const history = await api(server, 'api/v1/namespaces/default/workflows/order-rich/history?noPayloadShorthand=true');
    const file = JSON.stringify({ events: history.json.history.events });
    const page = await newPage(browser);
    await page.goto(`${server.console}#/import`);
    await page.getByLabel('History file').setInputFiles({ name: 'not-history.json', mimeType: 'application/json', buffer: Buffer.from('{"runs": []}') });
    await page.getByRole('alert').filter({ hasText: 'no events in the file' }).waitFor();
    const requests = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.getByLabel('History file').setInputFiles({ name: 'order-rich.json', mimeType: 'application/json', buffer: Buffer.from(file) });
    await page.getByRole('heading', { name: 'order-rich.json: 20 events' }).waitFor();
    assert.deepEqual(requests, [], 'nothing is asked of the server');
    const events = rows(page, 'Events');
    await events.filter({ hasText: 'ActivityTaskFailed' }).waitFor();
    // Proto-form payloads shown short, as the server's shorthand shows them.
    await page.getByLabel('Jump to event id').fill('1');
    await page.getByRole('button', { name: 'Go' }).click();
    await page.getByRole('heading', { name: /^1 WorkflowExecutionStarted/ }).waitFor();
    assert.match(await page.locator('.detail pre').innerText(), /"input": \[\s*\{\s*"order": 42\s*\}\s*\]/);
    await page.getByRole('button', { name: 'Compact' }).click();
    await rows(page, 'Activities, timers, children, updates and signals').filter({ hasText: 'charge' }).waitFor();
    await page.getByRole('tab', { name: 'Timeline' }).click();
    await page.waitForFunction(() => document.querySelector('.timeline canvas') && document.querySelector('.timeline canvas').dataset.bars === '3');
    await screenshot(page, 'import');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('a 20,000-event history: the newest rows first, a bounded page while it scrolls to the end', async () => {
    const page = await newPage(browser);
    await page.addInitScript(() => {
      window.__longTasks = [];
      for (const type of ['longtask', 'long-animation-frame']) {
        new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push(e.duration); })
          .observe({ type, buffered: true });
      }
      // When the first event row appears, from the navigation's start.
      new MutationObserver((_, observer) => {
        if (document.querySelector('[aria-label="Events"] [role=row]')) {
          window.__firstRowMs = performance.now();
          observer.disconnect();
        }
      }).observe(document, { childList: true, subtree: true });
    });
    await page.goto(`${server.console}#/namespaces/default/workflows/long-history`);
    const list = page.getByRole('grid', { name: 'Events' });
    await list.waitFor();
    await page.waitForFunction(() => window.__firstRowMs !== undefined);
    // Newest first: the top row is the last event.
    await page.waitForFunction(() => /MarkerRecorded|WorkflowTask/.test(document.querySelector('[aria-label="Events"] [role=row]').textContent));
    const total = Number(await list.getAttribute('data-rows'));
    assert.ok(total >= LONG_EVENTS - 10, `the list spans the whole history (${total} rows)`);
    await page.waitForFunction(() => /of (\d+) events$/.test(document.querySelector('.toolbar [aria-live]').textContent) &&
      !document.querySelector('.toolbar [aria-live]').textContent.includes('loading'), null, { timeout: 60_000 });
    // Scroll to the oldest event, a screen at a time, checking the page holds a bounded
    // number of rows throughout.
    const before = await page.evaluate(() => window.__longTasks.length);
    let most = 0;
    for (let step = 0; step < 40; step++) {
      most = Math.max(most, await page.evaluate((s) => {
        const box = document.querySelector('[aria-label="Events"]');
        box.scrollTop = (box.scrollHeight * s) / 39;
        box.dispatchEvent(new Event('scroll'));
        return box.querySelectorAll('[role=row]').length;
      }, step));
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
    }
    await rows(page, 'Events').filter({ hasText: 'WorkflowExecutionStarted' }).waitFor();
    assert.ok(most < 120, `at most a screen of rows in the page (${most})`);
    const measured = await page.evaluate((from) => ({ firstRowMs: Math.round(window.__firstRowMs),
      longestTaskWhileScrollingMs: Math.round(Math.max(0, ...window.__longTasks.slice(from))) }), before);
    // Timings are reported, not asserted (the machine is shared); bench/console_bench.mjs
    // measures them against their targets.
    console.log(`20,000-event history: ${JSON.stringify(measured)}`);
    await screenshot(page, 'workflow-long-history');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test("the overview charts this host's metrics live: starts per second, backlog", async () => {
    const metrics = await fetch(`${server.http}/tock/v1/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /^task_backlog\{task_type="Workflow"\} \d+/m);
    const page = await newPage(browser);
    await page.goto(`${server.console}#/`);
    const starts = page.locator('figure[aria-label="Workflow starts per second"]');
    await starts.locator('canvas').waitFor();
    await page.waitForFunction(() => Number(document.querySelector('figure[aria-label="Workflow starts per second"]').dataset.points) >= 1);
    for (let i = 0; i < 5; i++) await start(client.svc, { id: `charted-${i}`, type: 'fulfil', queue: 'nobody-polls' });
    // The next sample after the starts shows them (a rate over the 2 s between samples).
    await page.waitForFunction(() => Number(document.querySelector('figure[aria-label="Workflow starts per second"]').dataset.last) > 0,
      null, { timeout: 10_000 });
    const backlog = await page.locator('figure[aria-label="Task backlog"]').getAttribute('data-last');
    assert.ok(Number(backlog.split(',')[0]) >= 5, `workflow tasks wait on nobody-polls (backlog ${backlog})`);
    await screenshot(page, 'page-overview-charts');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test("a task queue: its partitions (one host: the root alone), each kind's backlog and pollers", async () => {
    const partitions = await api(server, 'tock/v1/namespaces/default/task-queues/nobody-polls/partitions');
    assert.deepEqual(partitions.json.workflowTaskQueuePartitions, [{ key: 'nobody-polls', ownerHostName: server.address }]);
    const page = await newPage(browser);
    await page.goto(`${server.console}#/namespaces/default/task-queues/nobody-polls`);
    const row = page.getByRole('table', { name: 'Partitions' }).locator('tbody tr');
    await row.first().waitFor();
    assert.match(await row.first().innerText(), new RegExp(`nobody-polls\\s+${server.address.replace(/\./g, '\\.')}\\s+root`));
    const backlog = await page.getByText(/^Backlog: \d+/).first().innerText();
    assert.ok(Number(/\d+/.exec(backlog)[0]) >= 5, backlog); // runs wait on this queue (no worker polls it)
    await screenshot(page, 'page-task-queue');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('dark mode: chosen, or followed from the system', async () => {
    const page = await newPage(browser, { colorScheme: 'dark' });
    await page.goto(`${server.console}#/namespaces`);
    await page.getByRole('table', { name: 'Namespaces' }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
    await screenshot(page, 'namespaces-dark');
    await page.getByLabel('Theme').first().selectOption('light');
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'light');
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(background, 'rgb(247, 248, 250)');
    await page.reload();
    await page.getByRole('table', { name: 'Namespaces' }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'light', 'the choice is kept');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('works under a sub-path of a reverse proxy with no configuration', async () => {
    const upstream = new URL(server.http);
    const proxy = createServer((req, res) => {
      if (!req.url.startsWith('/ops/tock/')) { res.writeHead(404).end('not proxied'); return; }
      const forward = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method,
        path: req.url.slice('/ops/tock'.length), headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      });
      forward.on('error', () => res.writeHead(502).end());
      req.pipe(forward);
    });
    await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const page = await newPage(browser);
      const requested = [];
      page.on('request', (r) => requested.push(new URL(r.url()).pathname));
      await page.goto(`http://127.0.0.1:${proxy.address().port}/ops/tock/#/namespaces/default/workflows`);
      await rows(page, 'Workflows').first().waitFor();
      await page.getByRole('link', { name: 'Overview' }).click();
      await page.getByRole('table', { name: 'Hosts' }).waitFor();
      assert.ok(requested.length > 5);
      assert.deepEqual(requested.filter((p) => !p.startsWith('/ops/tock/')), [], 'every request stays under the sub-path');
      assert.deepEqual(page.errors, []);
      await page.context().close();
    } finally {
      proxy.close();
    }
  });

  test('has no serious accessibility violations (axe-core) on its pages', async () => {
    const axe = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
    // axe is injected as an inline script, which the console's policy forbids: this context
    // alone bypasses it.
    const page = await newPage(browser, { bypassCSP: true });
    const pages = [
      ['overview', '#/', 'table[aria-label="Hosts"]'],
      ['namespaces', '#/namespaces', 'table[aria-label="Namespaces"]'],
      ['namespace', '#/namespaces/default', 'table[aria-label="Search attributes"]'],
      ['workflows', '#/namespaces/default/workflows', '[aria-label="Workflows"] [role=row]'],
      ['history', '#/namespaces/default/workflows/order-rich', '[aria-label="Events"] [role=row]'],
      ['timeline', '#/namespaces/default/workflows/order-rich?tab=timeline', '.timeline canvas[data-bars="3"]'],
      ['settings', '#/settings', 'input[aria-label="Token"]'],
      ['import', '#/import', 'input[aria-label="History file"]'],
      ['schedules', '#/namespaces/default/schedules', 'table[aria-label="Schedules"]'],
      ['task-queue', '#/namespaces/default/task-queues/q-rich', 'table[aria-label="Workflow tasks: pollers"]'],
      ['archival-off', '#/namespaces/default/archival', 'text=does not archive this kind'],
      ['replication-alone', '#/replication', 'table[aria-label="Global namespaces"]'],
      ['timers', '#/namespaces/default/timers', 'table[aria-label="Timers"]'],
    ];
    const found = [];
    for (const [name, hash, ready] of pages) {
      await page.goto(`${server.console}${hash}`);
      await page.locator(ready).first().waitFor();
      if (name !== 'overview') await screenshot(page, `page-${name}`);
      await page.addScriptTag({ content: axe });
      const violations = await page.evaluate(async () => {
        const r = await window.axe.run(document, { resultTypes: ['violations'] });
        return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => `${v.id}: ${v.help} (${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join('; ')})`);
      });
      for (const v of violations) found.push(`${name}: ${v}`);
    }
    await screenshot(page, 'page-overview');
    assert.deepEqual(found, []);
    await page.context().close();
  });
});

describe('read-only', { timeout: 120_000 }, () => {
  let server;
  let client;
  let browser;
  before(async () => {
    server = await startServer({ args: ['--ui-read-only'] });
    client = await connect(server.address);
    await start(client.svc, { id: 'watched', type: 'fulfil', queue: 'nobody-polls' });
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await client?.close();
    await server?.stop();
  });

  test('--ui-read-only: no write actions in the console, and the HTTP API refuses writes', async () => {
    assert.match(server.banner, /console:\s+\S+ \(read-only\)/);
    const settings = await api(server, 'api/v1/settings');
    assert.equal(settings.json.DisableWriteActions, true);
    const page = await newPage(browser);
    await page.goto(`${server.console}#/namespaces/default/workflows/watched`);
    await page.getByRole('heading', { name: /watched/ }).waitFor();
    await rows(page, 'Events').first().waitFor();
    for (const name of ['Signal…', 'Terminate…', 'Cancel…', 'Reset…', 'Delete…']) {
      assert.equal(await page.getByRole('button', { name }).count(), 0, `${name} is hidden`);
    }
    await page.goto(`${server.console}#/namespaces/default/workflows`);
    await rows(page, 'Workflows').first().waitFor();
    assert.equal(await page.getByRole('button', { name: 'Start…' }).count(), 0);
    await screenshot(page, 'read-only-workflows');
    const refused = await api(server, 'api/v1/namespaces/default/workflows/watched/terminate', { method: 'POST', body: '{}' });
    assert.equal(refused.status, 405);
    assert.match(refused.json.message, /read-only \(--ui-read-only\): TerminateWorkflowExecution is not allowed/);
    const described = await api(server, 'api/v1/namespaces/default/workflows/watched');
    assert.equal(described.json.workflowExecutionInfo.status, 'WORKFLOW_EXECUTION_STATUS_RUNNING', 'nothing was terminated');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
});

describe('with authorization', { timeout: 120_000 }, () => {
  let server;
  let browser;
  let issuer;
  before(async () => {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'tock-web-jwks-'));
    issuer = makeIssuer(join(dir, 'jwks.json'));
    server = await startServer({ config: `authorization:\n  jwks: ${join(dir, 'jwks.json')}\n  audience: tock\n` });
    const admin = issuer.token(['temporal-system:admin']);
    const connection = await connect(server.address, admin);
    await start(connection.svc, { id: 'guarded', type: 'fulfil', queue: 'nobody-polls' });
    await connection.close();
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function useToken(page, permissions) {
    await page.goto(`${server.console}#/settings`);
    const token = issuer.token(permissions);
    await page.getByLabel('Token').fill(token);
    await page.getByRole('button', { name: 'Save token' }).click();
    return token;
  }

  test('a read-only token sees the runs but no write action, and the API refuses its writes', async () => {
    const page = await newPage(browser);
    const reader = await useToken(page, ['default:read', 'temporal-system:read']);
    await page.goto(`${server.console}#/namespaces/default/workflows/guarded`);
    await rows(page, 'Events').first().waitFor();
    await page.getByRole('button', { name: 'Refresh' }).waitFor();
    for (const name of ['Signal…', 'Terminate…', 'Cancel…', 'Reset…', 'Delete…']) {
      assert.equal(await page.getByRole('button', { name }).count(), 0, `${name} is hidden from a reader`);
    }
    const refused = await api(server, 'api/v1/namespaces/default/workflows/guarded/terminate',
      { method: 'POST', body: '{}', headers: { Authorization: `Bearer ${reader}` } });
    assert.equal(refused.status, 403);
    assert.match(refused.json.message, /TerminateWorkflowExecution on namespace "default" needs the write role/);
    // A writer sees the actions.
    await useToken(page, ['default:write']);
    await page.goto(`${server.console}#/namespaces/default/workflows/guarded`);
    await page.getByRole('button', { name: 'Terminate…' }).waitFor();
    // Without a token the console says to enter one.
    await page.goto(`${server.console}#/settings`);
    await page.getByRole('button', { name: 'Forget' }).click();
    await page.goto(`${server.console}#/namespaces/default/workflows`);
    await page.getByRole('alert').filter({ hasText: 'enter a token' }).first().waitFor();
    assert.deepEqual(page.errors.filter((e) => !/status of 40[13]/.test(e)), []);
    await page.context().close();
  });

  test('a token scoped to namespaces lists those it has roles on', async () => {
    const page = await newPage(browser);
    await useToken(page, ['default:read']); // may not list namespaces (temporal-system:read)
    await page.goto(`${server.console}#/namespaces`);
    await page.getByText('The namespaces your token has roles on').waitFor();
    const names = await page.getByRole('table', { name: 'Namespaces' }).locator('tbody tr').allInnerTexts();
    assert.equal(names.length, 1);
    assert.match(names[0], /^default/);
    await page.context().close();
  });

  test("an action the server refuses is refused in its dialog, and its button then goes", async () => {
    const page = await newPage(browser);
    await useToken(page, ['orders:admin', 'temporal-system:read']); // admin of orders only
    await page.goto(`${server.console}#/namespaces`);
    await page.getByRole('button', { name: 'Register' }).click();
    const dialog = page.getByRole('dialog', { name: 'Register a namespace' });
    await dialog.getByLabel('Name').fill('billing');
    await dialog.getByRole('button', { name: 'Register' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'RegisterNamespace on namespace "billing" needs the admin role' }).waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Register' }).waitFor({ state: 'detached' });
    await page.context().close();
  });
});
