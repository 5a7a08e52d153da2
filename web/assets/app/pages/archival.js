// A namespace's archival: the state of each kind (the cluster's switch, the namespace's state
// and URI, runs pending, archived and skipped, failing runs with their last error and next
// attempt), archiving a closed run now, and the archived runs a query finds, each browsed in
// the history views from the archive.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, path } from '../api.js';
import { href, withQuery } from '../router.js';
import { time, statusName, statusClass } from '../format.js';
import { useLoad, ErrorBox, Facts, Dialog, ActionButton, noteRefusal } from '../ui.js';
import { StaticHistory } from './import.js';
import { loadAllEvents } from '../events.js';

const MAX_EVENTS = 200000; // an archived history is read whole into the page

function KindStatus({ title, kind }) {
  if (!kind) return null;
  return html`<div class="panel"><h3 style="margin-top:0">${title}</h3><${Facts} items=${[
    ['Cluster', kind.clusterEnabled ? 'archives this kind' : 'does not archive this kind'],
    ['Namespace', `${kind.state || 'disabled'}${kind.uri ? ` to ${kind.uri}` : ''}`],
    ['Pending', String(kind.pending || 0)], ['Archived', String(kind.archived || 0)],
    ['Skipped', String(kind.skipped || 0)],
  ]} /></div>`;
}

export function Archival({ ns, query }) {
  const status = useLoad((signal) => call(`tock/v1/namespaces/${path(ns)}/archival`, { signal }), [ns]);
  const q = query.q || '';
  const [text, setText] = useState(q);
  const archived = useLoad((signal) => (query.list === undefined && !q ? Promise.resolve(null)
    : call(`api/v1/namespaces/${path(ns)}/archived-workflows`, { params: { query: q, pageSize: 100 }, signal })), [ns, q, query.list]);
  const [triggering, setTriggering] = useState(false);
  const [target, setTarget] = useState({ workflowId: '', runId: '' });
  const [triggered, setTriggered] = useState(null);
  const s = status.data;
  const trigger = async () => {
    try {
      setTriggered(await call(`tock/v1/namespaces/${path(ns)}/archival`, { method: 'POST',
        body: { workflowId: target.workflowId.trim(), runId: target.runId.trim() } }));
    } catch (e) { noteRefusal('TriggerArchival', e); throw e; }
    status.reload();
  };
  return html`<h1>Archival <span class="muted" style="font-size:14px;font-weight:400">${ns}</span>
      <${ActionButton} call="TriggerArchival" onClick=${() => setTriggering(true)}>Archive a run now…<//>
      <button type="button" onClick=${status.reload}>Refresh</button></h1>
    <${ErrorBox} error=${status.error} />
    ${triggered && html`<div class="panel" role="status"><strong>Run ${triggered.runId} archived.</strong>
      <${Facts} items=${[['History', triggered.historyArchivalUri], ['Visibility', triggered.visibilityArchivalUri],
        ['Deleted from the database', triggered.deleteTime && `at ${time(triggered.deleteTime)} (its retention)`]]} /></div>`}
    ${s && html`<div class="columns">
        <${KindStatus} title="History" kind=${s.history} /><${KindStatus} title="Visibility" kind=${s.visibility} /></div>
      <p>Runs deleted after their retention: <strong>${s.runsDeleted || 0}</strong>; failing now: <strong>${s.failing || 0}</strong></p>
      ${(s.failures || []).length > 0 && html`<table class="grid" aria-label="Failing archivals">
        <thead><tr><th>Workflow</th><th>Run</th><th>Attempts</th><th>Last error</th><th>Next attempt</th></tr></thead>
        <tbody>${s.failures.map((f) => html`<tr><td>${f.workflowId}</td><td class="mono">${f.runId}</td><td>${f.attempts}</td>
          <td>${f.lastError}</td><td>${time(f.nextAttemptTime)}</td></tr>`)}</tbody></table>`}`}

    <h2>Archived runs</h2>
    <form class="toolbar" onSubmit=${(e) => { e.preventDefault(); withQuery({ q: text.trim(), list: '1' }); }}>
      <label class="grow"><span class="visually-hidden">Archived runs query</span>
        <input class="query" aria-label="Archived runs query" placeholder="WorkflowType = 'order' AND CloseTime > '2026-11-01T00:00:00Z' (empty: every run)"
          value=${text} onInput=${(e) => setText(e.currentTarget.value)} /></label>
      <button type="submit" class="primary">Search the archive</button>
    </form>
    <${ErrorBox} error=${archived.error} />
    ${archived.data && html`<table class="grid" aria-label="Archived runs">
      <thead><tr><th>Workflow</th><th>Run</th><th>Type</th><th>Status</th><th>Closed</th></tr></thead>
      <tbody>${(archived.data.executions || []).map((r) => html`<tr>
        <td><a href=${href(['namespaces', ns, 'archival', r.execution.workflowId, r.execution.runId])}>${r.execution.workflowId}</a></td>
        <td class="mono">${r.execution.runId}</td><td>${r.type && r.type.name}</td>
        <td><span class=${statusClass(r.status)}>${statusName(r.status)}</span></td><td>${time(r.closeTime)}</td></tr>`)}</tbody></table>
      ${(archived.data.executions || []).length === 0 && html`<p class="muted">No archived run matches.</p>`}`}

    <${Dialog} title="Archive a closed run now" open=${triggering} onClose=${() => setTriggering(false)} onSubmit=${trigger} submitLabel="Archive">
      <label>Workflow id <input required value=${target.workflowId} onInput=${(e) => setTarget({ ...target, workflowId: e.currentTarget.value })} /></label>
      <label>Run id (empty: its latest run) <input value=${target.runId} onInput=${(e) => setTarget({ ...target, runId: e.currentTarget.value })} /></label>
      <p class="muted">The run stays in the database until its retention passes; reads then come from the archive.</p>
    <//>`;
}

export function ArchivedRun({ ns, workflowId, runId, query }) {
  // Read from the database while the run is there, else from the history archive.
  const { data, error } = useLoad((signal) => loadAllEvents(ns, workflowId, runId, signal, MAX_EVENTS), [ns, workflowId, runId]);
  return html`<div class="crumbs"><a href=${href(['namespaces', ns, 'archival'], { list: '1' })}>Archival</a></div>
    <h1><span class="mono" style="font-size:18px">${workflowId}</span> <span class="muted mono" style="font-size:13px">${runId}</span></h1>
    <${ErrorBox} error=${error} />
    ${!data && !error && html`<p class="muted">Reading the history…</p>`}
    ${data && html`<p class="muted">${data.events.length} events, read from ${data.archived ? 'the archive' : 'the database (the run is still within its retention)'}.</p>
      <${StaticHistory} events=${data.events} segments=${['namespaces', ns, 'archival', workflowId, runId]} query=${query} label="Archived history views" />`}`;
}
