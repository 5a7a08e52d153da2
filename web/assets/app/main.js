// The console's entry: reads the server's settings, then draws the shell (top bar, side
// navigation) around the page the URL names.
import { render } from 'preact';
import { effect } from '@preact/signals';
import { html } from './html.js';
import { call } from './api.js';
import { codecError } from './codec.js';
import { route, href } from './router.js';
import { settings, theme, timeZone, token, readOnly, applyTheme, whoami, currentNamespace } from './state.js';
import { Overview } from './pages/overview.js';
import { Namespaces, NamespaceDetail } from './pages/namespaces.js';
import { Workflows } from './pages/workflows.js';
import { Workflow } from './pages/workflow.js';
import { Settings } from './pages/settings.js';
import { Schedules, ScheduleDetail } from './pages/schedules.js';
import { Batches, BatchDetail } from './pages/batches.js';
import { TaskQueues, TaskQueue } from './pages/task_queues.js';
import { Import } from './pages/import.js';
import { Archival, ArchivedRun } from './pages/archival.js';
import { Replication } from './pages/replication.js';
import { Timers } from './pages/timers.js';

// The page for the URL's segments: [component, props, nav key].
function pageFor(segments, query) {
  const [a, ns, b, id, run] = segments;
  if (a === 'namespaces' && ns && b === 'workflows' && id) {
    return [Workflow, { ns, workflowId: id, runId: run || '', query }, 'workflows'];
  }
  if (a === 'namespaces' && ns && b === 'workflows') return [Workflows, { ns, query }, 'workflows'];
  if (a === 'namespaces' && ns && b === 'schedules' && id) return [ScheduleDetail, { ns, id, query }, 'schedules'];
  if (a === 'namespaces' && ns && b === 'schedules') return [Schedules, { ns, query }, 'schedules'];
  if (a === 'namespaces' && ns && b === 'batches' && id) return [BatchDetail, { ns, id, query }, 'batches'];
  if (a === 'namespaces' && ns && b === 'batches') return [Batches, { ns, query }, 'batches'];
  if (a === 'namespaces' && ns && b === 'task-queues' && id) return [TaskQueue, { ns, queue: id, query }, 'task-queues'];
  if (a === 'namespaces' && ns && b === 'task-queues') return [TaskQueues, { ns, query }, 'task-queues'];
  if (a === 'namespaces' && ns && b === 'archival' && id && run) return [ArchivedRun, { ns, workflowId: id, runId: run, query }, 'archival'];
  if (a === 'namespaces' && ns && b === 'archival') return [Archival, { ns, query }, 'archival'];
  if (a === 'namespaces' && ns && b === 'timers') return [Timers, { ns, query }, 'timers'];
  if (a === 'namespaces' && ns) return [NamespaceDetail, { ns, query }, 'namespaces'];
  if (a === 'namespaces') return [Namespaces, { query }, 'namespaces'];
  if (a === 'replication') return [Replication, { query }, 'replication'];
  if (a === 'settings') return [Settings, { query }, 'settings'];
  if (a === 'import') return [Import, { query }, 'import'];
  if (!a) return [Overview, { query }, 'overview'];
  return [NotFound, { segments }, ''];
}

function NotFound({ segments }) {
  return html`<h1>No such page</h1><p class="muted">#/${segments.join('/')} is not a page of this console.
    <a href="#/">Overview</a></p>`;
}

// The namespace the pages work in: the URL's, else the last one used, else the server's default.
function namespaceOf(segments) {
  if (segments[0] === 'namespaces' && segments[1]) {
    localStorage.setItem('tock.namespace', segments[1]);
    return segments[1];
  }
  return localStorage.getItem('tock.namespace') || (settings.value && settings.value.DefaultNamespace) || 'default';
}

function Shell() {
  const { segments, query } = route.value;
  const [Page, props, nav] = pageFor(segments, query);
  const ns = namespaceOf(segments);
  currentNamespace.value = ns;
  const link = (key, label, target) => html`<a href=${target} aria-current=${nav === key ? 'page' : undefined}>${label}</a>`;
  return html`<div class="shell">
    <header class="topbar">
      <a class="brand" href="#/">Tock</a>
      <span class="muted">namespace <strong>${ns}</strong></span>
      ${readOnly.value && html`<span class="badge" title="The server was started with --ui-read-only">read-only</span>`}
      ${codecError.value && html`<span class="badge bad" role="status" title=${codecError.value}>codec failing</span>`}
      <span class="spacer"></span>
      <label>Time zone
        <select value=${timeZone.value} onChange=${(e) => { timeZone.value = e.currentTarget.value; }}>
          <option value="local">Local</option><option value="UTC">UTC</option>
          ${!['local', 'UTC'].includes(timeZone.value) && html`<option value=${timeZone.value}>${timeZone.value}</option>`}
        </select></label>
      <label>Theme
        <select value=${theme.value} onChange=${(e) => { theme.value = e.currentTarget.value; }}>
          <option value="system">System</option><option value="light">Light</option><option value="dark">Dark</option>
        </select></label>
      <a href="#/settings" title="Token, time zone and codec">${token.value ? 'Token set' : 'Settings'}</a>
    </header>
    <nav class="nav" aria-label="Console">
      ${link('overview', 'Overview', '#/')}
      ${link('namespaces', 'Namespaces', href(['namespaces']))}
      ${link('replication', 'Replication', href(['replication']))}
      <div class="group">${ns}</div>
      ${link('workflows', 'Workflows', href(['namespaces', ns, 'workflows']))}
      ${link('schedules', 'Schedules', href(['namespaces', ns, 'schedules']))}
      ${link('batches', 'Batch jobs', href(['namespaces', ns, 'batches']))}
      ${link('task-queues', 'Task queues', href(['namespaces', ns, 'task-queues']))}
      ${link('archival', 'Archival', href(['namespaces', ns, 'archival']))}
      ${link('timers', 'Timers', href(['namespaces', ns, 'timers']))}
      <div class="group">Console</div>
      ${link('import', 'Import a history', href(['import']))}
      ${link('settings', 'Settings', href(['settings']))}
    </nav>
    <main id="main" class=${[Workflow, Workflows, Import, ArchivedRun].includes(Page) ? 'fill' : ''}>
      <${Page} ...${props} key=${segments.slice(0, 5).join('/')} />
    </main>
  </div>`;
}

async function boot() {
  effect(applyTheme);
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', applyTheme);
  try {
    settings.value = await call('api/v1/settings');
  } catch {
    settings.value = { DefaultNamespace: 'default' }; // a server without the console's settings
  }
  // Who the token is, again whenever it changes (null when the server cannot say).
  effect(() => {
    const asked = token.value;
    call('tock/v1/whoami').then((w) => { if (token.value === asked) whoami.value = w; },
      () => { if (token.value === asked) whoami.value = null; });
  });
  document.getElementById('app').replaceChildren();
  render(html`<${Shell} />`, document.getElementById('app'));
}

boot();
