// A namespace's workflows: a visibility query (every filter in the URL), counts by status,
// saved views, chosen columns, a virtual list that loads the next page as it nears the end,
// export, start, and bulk actions through batch jobs with a preview count first.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, callAll, path } from '../api.js';
import { href, navigate, withQuery } from '../router.js';
import { time, statusName, statusClass } from '../format.js';
import { VirtualList } from '../virtual_list.js';
import { useLoad, ErrorBox, Dialog, ActionButton, noteRefusal, parseJsonInput, download } from '../ui.js';

const STATUSES = ['Running', 'Completed', 'Failed', 'Canceled', 'Terminated', 'ContinuedAsNew', 'TimedOut'];
const PAGE = 500;
const SYSTEM_VIEWS = [
  { name: 'All', query: '' },
  { name: 'Running', query: 'ExecutionStatus = "Running"' },
  { name: 'Failures', query: 'ExecutionStatus = "Failed" OR ExecutionStatus = "TimedOut"' },
  { name: 'Today', query: () => `StartTime > "${new Date(Date.now() - 86400000).toISOString()}"` },
];
const BASE_COLUMNS = [
  ['status', 'Status', '110px'], ['id', 'Workflow ID', 'minmax(160px, 2fr)'], ['type', 'Type', 'minmax(100px, 1fr)'],
  ['start', 'Start', '210px'], ['end', 'End', '210px'], ['run', 'Run ID', 'minmax(120px, 1fr)'],
];

// The list's query: the typed one, narrowed to a status when one is picked.
export function effectiveQuery(query, status) {
  if (!status) return query || '';
  const clause = `ExecutionStatus = "${status}"`;
  return query ? `(${query}) AND ${clause}` : clause;
}

function savedViews(ns) {
  try { return JSON.parse(localStorage.getItem(`tock.views.${ns}`) || '[]'); } catch { return []; }
}

function attributeText(value) {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

// Rows loaded page by page; `more()` asks for the next one (once at a time; a changed query
// starts again, and an answer for an older query is dropped).
function useRuns(ns, query) {
  const [state, setState] = useState({ rows: [], done: false, error: null, loading: false });
  const cursor = useRef({ key: '', next: '', done: false, busy: false, failed: false });
  const key = `${ns}\u0000${query}`;
  if (cursor.current.key !== key) {
    cursor.current = { key, next: '', done: false, busy: false, failed: false };
  }
  useEffect(() => setState({ rows: [], done: false, error: null, loading: false }), [key]);
  const more = async () => {
    const c = cursor.current;
    if (c.busy || c.done || c.failed) return;
    c.busy = true;
    setState((s) => ({ ...s, loading: true }));
    try {
      const page = await call(`api/v1/namespaces/${path(ns)}/workflows`,
        { params: { query, pageSize: PAGE, nextPageToken: c.next } });
      if (cursor.current !== c) return;
      c.next = page.nextPageToken || '';
      c.done = !c.next;
      setState((s) => ({ rows: s.rows.concat(page.executions || []), done: c.done, error: null, loading: false }));
    } catch (error) {
      if (cursor.current !== c) return;
      c.failed = true;
      setState((s) => ({ ...s, error, loading: false }));
    } finally {
      c.busy = false;
    }
  };
  return [state, more];
}

export function Workflows({ ns, query }) {
  const typed = query.query || '';
  const status = query.status || '';
  const listQuery = effectiveQuery(typed, status);
  const [draft, setDraft] = useState(typed);
  useEffect(() => setDraft(typed), [typed]);
  const [runs, more] = useRuns(ns, listQuery);
  useEffect(() => { more(); }, [ns, listQuery]);
  const [selected, setSelected] = useState(-1);
  const [dialog, setDialog] = useState('');
  const [views, setViews] = useState(() => savedViews(ns));

  const counts = useLoad(async (signal) => {
    const grouped = `${typed ? `${typed} ` : ''}GROUP BY ExecutionStatus`;
    const r = await call(`api/v1/namespaces/${path(ns)}/workflow-count`, { params: { query: grouped }, signal });
    const byStatus = {};
    for (const g of r.groups || []) byStatus[attributeText((g.groupValues || [])[0])] = Number(g.count || 0);
    return { total: Number(r.count || 0), byStatus };
  }, [ns, typed]);
  const attributes = useLoad((signal) => call(`api/v1/namespaces/${path(ns)}/search-attributes`, { signal }), [ns]);
  const custom = Object.keys((attributes.data && attributes.data.customAttributes) || {}).sort();

  const chosen = (query.cols || 'status,id,type,start,end').split(',').filter(Boolean);
  const columns = chosen.map((key) => BASE_COLUMNS.find(([k]) => k === key) || [key, key, 'minmax(100px, 1fr)']);
  const cell = (run, key) => {
    switch (key) {
      case 'status': return html`<span><span class=${statusClass(run.status)}>${statusName(run.status)}</span></span>`;
      case 'id': return html`<a href=${href(['namespaces', ns, 'workflows', run.execution.workflowId, run.execution.runId])}>${run.execution.workflowId}</a>`;
      case 'type': return html`<span>${run.type && run.type.name}</span>`;
      case 'start': return html`<span>${time(run.startTime)}</span>`;
      case 'end': return html`<span>${time(run.closeTime)}</span>`;
      case 'run': return html`<span class="mono">${run.execution.runId}</span>`;
      default: return html`<span>${attributeText(((run.searchAttributes || {}).indexedFields || {})[key])}</span>`;
    }
  };
  const open = (i) => {
    const run = runs.rows[i];
    if (run) navigate(['namespaces', ns, 'workflows', run.execution.workflowId, run.execution.runId]);
  };
  const toggleColumn = (key) => {
    const next = chosen.includes(key) ? chosen.filter((k) => k !== key) : [...chosen, key];
    withQuery({ cols: next.join(',') });
  };
  const saveView = () => {
    const name = prompt('Name of this view');
    if (!name) return;
    const next = [...views.filter((v) => v.name !== name), { name, query: typed }].slice(-20);
    localStorage.setItem(`tock.views.${ns}`, JSON.stringify(next));
    setViews(next);
  };

  return html`
    <h1>Workflows <span class="muted" style="font-size:14px;font-weight:400">${ns}</span>
      <${ActionButton} call="StartWorkflowExecution" class="primary" onClick=${() => setDialog('start')}>Start…<//>
    </h1>
    <form class="toolbar" role="search" onSubmit=${(e) => { e.preventDefault(); withQuery({ query: draft.trim() }, { replace: false }); }}>
      <label class="grow"><span class="visually-hidden">Visibility query</span>
        <input class="query" value=${draft} onInput=${(e) => setDraft(e.currentTarget.value)}
          placeholder='WorkflowType = "order" AND StartTime > "2026-11-01T00:00:00Z"' aria-label="Visibility query" /></label>
      <button type="submit" class="primary">Search</button>
      <select aria-label="Views" value="" onChange=${(e) => {
        const v = [...SYSTEM_VIEWS, ...views].find((x) => x.name === e.currentTarget.value);
        if (v) withQuery({ query: typeof v.query === 'function' ? v.query() : v.query, status: '' }, { replace: false });
      }}>
        <option value="">Views…</option>
        ${SYSTEM_VIEWS.map((v) => html`<option value=${v.name}>${v.name}</option>`)}
        ${views.map((v) => html`<option value=${v.name}>★ ${v.name}</option>`)}
      </select>
      <button type="button" onClick=${saveView}>Save view</button>
      <details class="columns"><summary class="button">Columns</summary>
        <div class="panel" style="position:absolute;z-index:2">
          ${[...BASE_COLUMNS.map(([k, label]) => [k, label]), ...custom.map((k) => [k, k])].map(([k, label]) => html`
            <label style="display:block"><input type="checkbox" checked=${chosen.includes(k)} onChange=${() => toggleColumn(k)} /> ${label}</label>`)}
        </div></details>
      <button type="button" onClick=${() => setDialog('export')}>Export…</button>
      <${ActionButton} call="StartBatchOperation" onClick=${() => setDialog('batch')}>Bulk action…<//>
    </form>
    <div class="counts" role="group" aria-label="Counts by status">
      <button type="button" aria-pressed=${!status} onClick=${() => withQuery({ status: '' }, { replace: false })}>
        All <strong>${counts.data ? counts.data.total : '…'}</strong></button>
      ${STATUSES.map((s) => html`<button type="button" aria-pressed=${status === s}
        onClick=${() => withQuery({ status: status === s ? '' : s }, { replace: false })}>
        ${s} <strong>${counts.data ? counts.data.byStatus[s] || 0 : '…'}</strong></button>`)}
    </div>
    <${ErrorBox} error=${runs.error || counts.error} />
    <${VirtualList} id="runs" label="Workflows" count=${runs.rows.length} rowHeight=${34}
      columns=${columns.map((c) => c[2]).join(' ')} head=${columns.map((c) => html`<span>${c[1]}</span>`)}
      row=${(i) => columns.map(([key]) => cell(runs.rows[i], key))}
      selected=${selected} onSelect=${setSelected} onOpen=${open} onNearEnd=${() => { if (!runs.done) more(); }} />
    <p class="muted" aria-live="polite" style="margin:6px 0 0">${runs.rows.length} loaded${runs.done ? '' : runs.loading ? ', loading more…' : ', more as you scroll'}</p>
    <${StartDialog} ns=${ns} open=${dialog === 'start'} onClose=${() => setDialog('')} />
    <${ExportDialog} ns=${ns} query=${listQuery} loaded=${runs.rows} done=${runs.done} open=${dialog === 'export'} onClose=${() => setDialog('')} />
    <${BatchDialog} ns=${ns} query=${listQuery} open=${dialog === 'batch'} onClose=${() => setDialog('')} />`;
}

function StartDialog({ ns, open, onClose }) {
  const [f, setF] = useState({ id: '', type: '', queue: '', input: '' });
  const set = (k) => (e) => setF({ ...f, [k]: e.currentTarget.value });
  const submit = async () => {
    const input = parseJsonInput(f.input, 'Input');
    const body = { workflowType: { name: f.type.trim() }, taskQueue: { name: f.queue.trim() }, requestId: crypto.randomUUID() };
    if (input !== undefined) body.input = Array.isArray(input) ? input : [input];
    let r;
    try {
      r = await call(`api/v1/namespaces/${path(ns)}/workflows/${path(f.id.trim())}`, { method: 'POST', body });
    } catch (e) { noteRefusal('StartWorkflowExecution', e); throw e; }
    navigate(['namespaces', ns, 'workflows', f.id.trim(), r.runId]);
  };
  return html`<${Dialog} title="Start a workflow" open=${open} onClose=${onClose} onSubmit=${submit} submitLabel="Start">
    <label>Workflow ID <input required value=${f.id} onInput=${set('id')} /></label>
    <label>Workflow type <input required value=${f.type} onInput=${set('type')} /></label>
    <label>Task queue <input required value=${f.queue} onInput=${set('queue')} /></label>
    <label>Input (JSON; an array for several arguments) <textarea value=${f.input} onInput=${set('input')}></textarea></label>
  <//>`;
}

function csvCell(text) {
  const s = String(text ?? '');
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function ExportDialog({ ns, query, loaded, done, open, onClose }) {
  const [what, setWhat] = useState('csv');
  const [scope, setScope] = useState('all');
  const submit = async () => {
    const rows = scope === 'all' && !done
      ? await callAll(`api/v1/namespaces/${path(ns)}/workflows`, 'executions', { params: { query, pageSize: 1000 }, limit: 1000000 })
      : loaded;
    if (what === 'ids') {
      download(`${ns}-workflow-ids.txt`, 'text/plain', rows.map((r) => r.execution.workflowId).join('\n') + '\n');
    } else if (what === 'json') {
      download(`${ns}-workflows.json`, 'application/json', JSON.stringify(rows, null, 2));
    } else {
      const lines = [['workflowId', 'runId', 'type', 'status', 'startTime', 'closeTime', 'taskQueue'].join(',')];
      for (const r of rows) {
        lines.push([r.execution.workflowId, r.execution.runId, r.type && r.type.name, statusName(r.status),
          r.startTime, r.closeTime, r.taskQueue].map(csvCell).join(','));
      }
      download(`${ns}-workflows.csv`, 'text/csv', lines.join('\n') + '\n');
    }
  };
  return html`<${Dialog} title="Export workflows" open=${open} onClose=${onClose} onSubmit=${submit} submitLabel="Download">
    <label>Format <select value=${what} onChange=${(e) => setWhat(e.currentTarget.value)}>
      <option value="csv">CSV (ids, type, status, times)</option><option value="json">JSON (the API's records)</option>
      <option value="ids">Workflow ids, one a line</option></select></label>
    <label>Rows <select value=${scope} onChange=${(e) => setScope(e.currentTarget.value)}>
      <option value="all">Every run the query matches</option><option value="loaded">The ${loaded.length} loaded</option></select></label>
  <//>`;
}

const BATCH_KINDS = {
  terminate: ['Terminate', (reason) => ({ terminationOperation: {} , reason })],
  cancel: ['Cancel', (reason) => ({ cancellationOperation: {}, reason })],
  signal: ['Signal', (reason, signal) => ({ signalOperation: signal, reason })],
  reset: ['Reset', (reason, signal, resetTo) => ({ resetOperation: { options: resetTo === 'first'
    ? { firstWorkflowTask: {} } : { lastWorkflowTask: {} } }, reason })],
  delete: ['Delete', (reason) => ({ deletionOperation: {}, reason })],
};

function BatchDialog({ ns, query, open, onClose }) {
  const [kind, setKind] = useState('terminate');
  const [reason, setReason] = useState('');
  const [signalName, setSignalName] = useState('');
  const [input, setInput] = useState('');
  const [resetTo, setResetTo] = useState('last');
  const [preview, setPreview] = useState(null);
  useEffect(() => {
    if (!open) return;
    setPreview(null);
    call(`api/v1/namespaces/${path(ns)}/workflow-count`, { params: { query } })
      .then((r) => setPreview(Number(r.count || 0)), (e) => setPreview(e));
  }, [open, query]);
  const submit = async () => {
    if (typeof preview !== 'number') throw new Error('the preview count has not come back yet');
    if (preview === 0) throw new Error('the query matches no workflow');
    let signal;
    if (kind === 'signal') {
      const value = parseJsonInput(input, 'Signal input');
      signal = { signal: signalName.trim() };
      if (value !== undefined) signal.input = Array.isArray(value) ? value : [value];
    }
    const jobId = `tock-web-${kind}-${Date.now()}`;
    const body = { visibilityQuery: query, jobId, ...BATCH_KINDS[kind][1](reason || `${kind} from the Tock console`, signal, resetTo) };
    try {
      await call(`api/v1/namespaces/${path(ns)}/batch-operations/${path(jobId)}`, { method: 'POST', body });
    } catch (e) { noteRefusal('StartBatchOperation', e); throw e; }
  };
  return html`<${Dialog} title="Bulk action" open=${open} onClose=${onClose} onSubmit=${submit} submitLabel="Start batch job" danger>
    <p>Query: <code>${query || '(every workflow)'}</code></p>
    <p aria-live="polite">${preview === null ? 'Counting…' : typeof preview === 'number' ? html`<strong>${preview}</strong> workflows match.` : html`<span class="error">${preview.message}</span>`}</p>
    <label>Action <select value=${kind} onChange=${(e) => setKind(e.currentTarget.value)}>
      ${Object.entries(BATCH_KINDS).map(([k, [label]]) => html`<option value=${k}>${label}</option>`)}</select></label>
    ${kind === 'signal' && html`<label>Signal name <input required value=${signalName} onInput=${(e) => setSignalName(e.currentTarget.value)} /></label>
      <label>Input (JSON) <textarea value=${input} onInput=${(e) => setInput(e.currentTarget.value)}></textarea></label>`}
    ${kind === 'reset' && html`<label>Back to <select value=${resetTo} onChange=${(e) => setResetTo(e.currentTarget.value)}>
        <option value="last">each run's last completed workflow task</option>
        <option value="first">each run's first workflow task</option></select></label>
      <p class="muted">Each run's signals after the point are applied again; a running run is terminated and continues as the new run.</p>`}
    <label>Reason <input value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} /></label>
  <//>`;
}
