// One run: its summary, history, timeline, pending activities, workers and queries, and the
// actions an operator takes on it (signal, query, update, cancel, terminate, reset, delete).
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, path } from '../api.js';
import { href, navigate, withQuery } from '../router.js';
import { time, span, statusName, statusClass, pretty, enumWords, parseTime } from '../format.js';
import { useLoad, ErrorBox, Facts, Dialog, ActionButton, noteRefusal, parseJsonInput } from '../ui.js';
import { HistoryView } from '../history_view.js';
import { Timeline } from '../timeline.js';
import { attributesOf, categoryOf, loadAllEvents } from '../events.js';

const TABS = [['history', 'History'], ['timeline', 'Timeline'], ['pending', 'Pending activities'],
  ['relationships', 'Relationships'], ['workers', 'Workers'], ['query', 'Queries'], ['stack', 'Stack trace']];

async function loadRun(ns, workflowId, runId, signal) {
  const describe = await call(`api/v1/namespaces/${path(ns)}/workflows/${path(workflowId)}`,
    { params: { 'execution.runId': runId }, signal });
  return { describe, run: describe.workflowExecutionInfo.execution.runId };
}

// The run's first and last events (its input; its result or failure), fetched beside the
// history so that the page does not wait for them.
async function loadEnds(ns, workflowId, run, signal) {
  const base = `api/v1/namespaces/${path(ns)}/workflows/${path(workflowId)}`;
  const [first, last] = await Promise.all([
    call(`${base}/history`, { params: { 'execution.runId': run, maximumPageSize: 1 }, signal }),
    call(`${base}/history-reverse`, { params: { 'execution.runId': run, maximumPageSize: 1 }, signal }),
  ]);
  return { first: ((first.history || {}).events || [])[0], last: ((last.history || {}).events || [])[0] };
}

export function Workflow({ ns, workflowId, runId, query }) {
  const { data, error, reload } = useLoad((signal) => loadRun(ns, workflowId, runId, signal), [ns, workflowId, runId]);
  const runKey = data ? `${data.run}/${data.describe.workflowExecutionInfo.status}` : '';
  const ends = useLoad((signal) => (data ? loadEnds(ns, workflowId, data.run, signal) : Promise.resolve(null)), [runKey]);
  const [dialog, setDialog] = useState('');
  const tab = query.tab || 'history';
  if (error) return html`<h1>${workflowId}</h1><${ErrorBox} error=${error} />`;
  if (!data) return html`<h1>${workflowId}</h1><p class="muted">Loading…</p>`;
  const info = data.describe.workflowExecutionInfo;
  const running = info.status === 'WORKFLOW_EXECUTION_STATUS_RUNNING';
  const run = data.run;
  const firstEvent = ends.data && ends.data.first;
  const lastEvent = ends.data && ends.data.last;
  const [, started] = attributesOf(firstEvent || {});
  const [, closed] = lastEvent && !running ? attributesOf(lastEvent) : ['', {}];
  const parent = info.parentExecution;
  const tabLink = (key, label) => html`<a role="tab" href=${href(['namespaces', ns, 'workflows', workflowId, run], { tab: key })}
    aria-selected=${tab === key}>${label}</a>`;
  const runTarget = { workflowExecution: { workflowId, runId: run } };
  const act = (rpc, fn) => async () => {
    try { await fn(); } catch (e) { noteRefusal(rpc, e); throw e; }
    reload();
  };
  const base = `api/v1/namespaces/${path(ns)}/workflows/${path(workflowId)}`;
  return html`
    <div class="crumbs"><a href=${href(['namespaces', ns, 'workflows'])}>Workflows</a> / ${info.type && info.type.name}</div>
    <h1><span class="mono" style="font-size:18px">${workflowId}</span>
      <span class=${statusClass(info.status)}>${statusName(info.status)}</span>
      <span class="spacer"></span>
      ${running && html`
        <${ActionButton} call="SignalWorkflowExecution" onClick=${() => setDialog('signal')}>Signal…<//>
        <${ActionButton} call="UpdateWorkflowExecution" onClick=${() => setDialog('update')}>Update…<//>
        <${ActionButton} call="RequestCancelWorkflowExecution" onClick=${() => setDialog('cancel')}>Cancel…<//>
        <${ActionButton} call="TerminateWorkflowExecution" class="danger" onClick=${() => setDialog('terminate')}>Terminate…<//>`}
      <${ActionButton} call="ResetWorkflowExecution" onClick=${() => setDialog('reset')}>Reset…<//>
      <${ActionButton} call="DeleteWorkflowExecution" class="danger" onClick=${() => setDialog('delete')}>Delete…<//>
      <button type="button" onClick=${reload}>Refresh</button>
    </h1>
    <div class="panel" style="flex:none;max-height:32vh;overflow:auto">
      <${Facts} items=${[
        ['Run', html`<span class="mono">${run}</span>`],
        ['Type', info.type && info.type.name],
        ['Task queue', info.taskQueue],
        ['Started', time(info.startTime)],
        ['Closed', info.closeTime && `${time(info.closeTime)} (${span((parseTime(info.closeTime) - parseTime(info.startTime)) / 1000)})`],
        ['History', `${info.historyLength} events, ${info.historySizeBytes || 0} bytes, ${info.stateTransitionCount || 0} transitions`],
        ['Parent', parent && html`<a href=${href(['namespaces', ns, 'workflows', parent.workflowId, parent.runId])}>${parent.workflowId}</a>`],
        ['First run', info.firstRunId && info.firstRunId !== run && html`<a href=${href(['namespaces', ns, 'workflows', workflowId, info.firstRunId])}>${info.firstRunId}</a>`],
        ['Continued from', started.continuedExecutionRunId && html`<a href=${href(['namespaces', ns, 'workflows', workflowId, started.continuedExecutionRunId])}>${started.continuedExecutionRunId}</a>`],
        ['Continued as', closed.newExecutionRunId && html`<a href=${href(['namespaces', ns, 'workflows', workflowId, closed.newExecutionRunId])}>${closed.newExecutionRunId}</a>`],
        ['Children', (data.describe.pendingChildren || []).length ? (data.describe.pendingChildren || []).map((c) =>
          html`<a href=${href(['namespaces', ns, 'workflows', c.workflowId, c.runId])}>${c.workflowId}</a> `) : undefined],
        ['Input', started.input !== undefined && html`<code>${JSON.stringify(started.input)}</code>`],
        ['Result', closed.result !== undefined && html`<code>${JSON.stringify(closed.result)}</code>`],
        ['Failure', closed.failure && html`<span class="event-failed">${closed.failure.message}</span>`],
        ['Reason', closed.reason],
      ]} />
    </div>
    <nav class="tabs" role="tablist" aria-label="Run views">${TABS.map(([k, l]) => tabLink(k, l))}</nav>
    ${tab === 'history' && html`<${HistoryView} ns=${ns} workflowId=${workflowId} runId=${run} running=${running}
      total=${info.historyLength} query=${query} />`}
    ${tab === 'timeline' && html`<${TimelineTab} ns=${ns} workflowId=${workflowId} runId=${run} />`}
    ${tab === 'pending' && html`<${PendingActivities} activities=${data.describe.pendingActivities || []} />`}
    ${tab === 'relationships' && html`<${Relationships} ns=${ns} workflowId=${workflowId} runId=${run} parent=${parent} type=${info.type && info.type.name} status=${info.status} />`}
    ${tab === 'workers' && html`<${Workers} ns=${ns} queue=${info.taskQueue} />`}
    ${tab === 'query' && html`<${Queries} ns=${ns} workflowId=${workflowId} runId=${run} />`}
    ${tab === 'stack' && html`<${StackTrace} ns=${ns} workflowId=${workflowId} runId=${run} />`}

    <${SignalDialog} open=${dialog === 'signal'} onClose=${() => setDialog('')} base=${base} target=${runTarget} act=${act} />
    <${UpdateDialog} open=${dialog === 'update'} onClose=${() => setDialog('')} base=${base} target=${runTarget} act=${act} />
    <${ReasonDialog} title="Cancel the run" label="Cancel run" open=${dialog === 'cancel'} onClose=${() => setDialog('')}
      submit=${(reason) => act('RequestCancelWorkflowExecution', () => call(`${base}/cancel`, { method: 'POST', body: { ...runTarget, reason, requestId: crypto.randomUUID() } }))()} />
    <${ReasonDialog} title="Terminate the run" label="Terminate" danger open=${dialog === 'terminate'} onClose=${() => setDialog('')}
      submit=${(reason) => act('TerminateWorkflowExecution', () => call(`${base}/terminate`, { method: 'POST', body: { ...runTarget, reason } }))()} />
    <${ResetDialog} open=${dialog === 'reset'} onClose=${() => setDialog('')} ns=${ns} base=${base} workflowId=${workflowId} run=${run}
      points=${info.autoResetPoints && info.autoResetPoints.points} />
    <${Dialog} title="Delete the run" open=${dialog === 'delete'} onClose=${() => setDialog('')} submitLabel="Delete" danger
      onSubmit=${async () => {
        try {
          await call(`tock/v1/namespaces/${path(ns)}/workflows/${path(workflowId)}`, { method: 'DELETE', params: { 'workflowExecution.runId': run } });
        } catch (e) { noteRefusal('DeleteWorkflowExecution', e); throw e; }
        navigate(['namespaces', ns, 'workflows']);
      }}>
      <p>The run and its history are deleted (a running run is terminated first). This cannot be undone.</p>
    <//>`;
}

function ReasonDialog({ title, label, danger, open, onClose, submit }) {
  const [reason, setReason] = useState('');
  return html`<${Dialog} title=${title} open=${open} onClose=${onClose} submitLabel=${label} danger=${danger}
    onSubmit=${() => submit(reason || 'from the Tock console')}>
    <label>Reason <input value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} /></label>
  <//>`;
}

function argsOf(text, what) {
  const v = parseJsonInput(text, what);
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v : [v];
}

function SignalDialog({ open, onClose, base, target, act }) {
  const [name, setName] = useState('');
  const [input, setInput] = useState('');
  const submit = () => {
    const args = argsOf(input, 'Input');
    return act('SignalWorkflowExecution', () => call(`${base}/signal/${path(name.trim())}`,
      { method: 'POST', body: { ...target, input: args, requestId: crypto.randomUUID() } }))();
  };
  return html`<${Dialog} title="Signal the run" open=${open} onClose=${onClose} onSubmit=${submit} submitLabel="Send signal">
    <label>Signal name <input required value=${name} onInput=${(e) => setName(e.currentTarget.value)} /></label>
    <label>Input (JSON; an array for several arguments) <textarea value=${input} onInput=${(e) => setInput(e.currentTarget.value)}></textarea></label>
  <//>`;
}

function UpdateDialog({ open, onClose, base, target, act }) {
  const [name, setName] = useState('');
  const [input, setInput] = useState('');
  const [result, setResult] = useState(null);
  const submit = () => act('UpdateWorkflowExecution', async () => {
    const args = argsOf(input, 'Input');
    const r = await call(`${base}/update/${path(name.trim())}`, { method: 'POST', body: {
      ...target, waitPolicy: { lifecycleStage: 'UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED' },
      request: { meta: { updateId: crypto.randomUUID() }, input: { name: name.trim(), args } } } });
    setResult(r.outcome || r);
    alert(`Update outcome:\n${pretty(r.outcome || r)}`);
  })();
  return html`<${Dialog} title="Update the run" open=${open} onClose=${onClose} onSubmit=${submit} submitLabel="Send update">
    <label>Update name <input required value=${name} onInput=${(e) => setName(e.currentTarget.value)} /></label>
    <label>Arguments (JSON; an array for several) <textarea value=${input} onInput=${(e) => setInput(e.currentTarget.value)}></textarea></label>
    ${result && html`<pre class="json">${pretty(result)}</pre>`}
  <//>`;
}

// Reset: pick the workflow task to go back to (any completed, failed or timed-out workflow
// task; the run's reset points are marked; an event id typed when the history cannot be
// read), and see first what the new run keeps, what it gets again (signals, accepted
// updates: each can be left out) and what it drops, and whether the server will refuse the
// point (a child still pending at it).
const MAX_PREVIEW_EVENTS = 100000;
const WFT_ENDS = new Set(['EVENT_TYPE_WORKFLOW_TASK_COMPLETED', 'EVENT_TYPE_WORKFLOW_TASK_FAILED', 'EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT']);
const CHILD_ENDS = /^EVENT_TYPE_(START_CHILD_WORKFLOW_EXECUTION_FAILED|CHILD_WORKFLOW_EXECUTION_(COMPLETED|FAILED|CANCELED|TIMED_OUT|TERMINATED))$/;

// What a reset to `point` does with `events` (the whole history, in order).
export function resetPreview(events, point, { signals = true, updates = true } = {}) {
  const kept = Math.max(0, point - 1);
  const reapplied = [];
  const dropped = {};
  const pendingChildren = new Map();
  for (const e of events) {
    const id = Number(e.eventId);
    const [, a] = attributesOf(e);
    if (id < point) {
      if (e.eventType === 'EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED') pendingChildren.set(id, a.workflowId);
      if (CHILD_ENDS.test(e.eventType)) pendingChildren.delete(Number(a.initiatedEventId));
      continue;
    }
    if (signals && e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED') { reapplied.push(`signal ${a.signalName}`); continue; }
    if (updates && e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED') {
      reapplied.push(`update ${(a.acceptedRequest && a.acceptedRequest.input && a.acceptedRequest.input.name) || ''}`.trim());
      continue;
    }
    const category = categoryOf(e.eventType);
    dropped[category] = (dropped[category] || 0) + 1;
  }
  return { kept, reapplied, dropped, pendingChildren: [...pendingChildren.values()] };
}

function ResetDialog({ open, onClose, base, workflowId, run, points, ns }) {
  const history = useLoad((signal) => (open ? loadAllEvents(ns, workflowId, run, signal, MAX_PREVIEW_EVENTS).then((h) => h.events)
    : Promise.resolve(null)), [open, ns, workflowId, run]);
  const resetPoints = new Set((points || []).map((p) => String(p.firstWorkflowTaskCompletedId)));
  const choices = (history.data || []).filter((e) => WFT_ENDS.has(e.eventType));
  const [picked, setPicked] = useState('');
  const [reason, setReason] = useState('');
  const [reapply, setReapply] = useState({ signals: true, updates: true });
  const fallback = points && points.length ? String(points[points.length - 1].firstWorkflowTaskCompletedId || '')
    : choices.length ? String(choices[choices.length - 1].eventId) : '';
  const eventId = picked || fallback;
  const preview = history.data && Number(eventId) >= 2 ? resetPreview(history.data, Number(eventId), reapply) : null;
  const submit = async () => {
    const id = Number(eventId);
    if (!Number.isInteger(id) || id < 2) throw new Error('pick a completed workflow task (an event id of 2 or more)');
    const exclude = [];
    if (!reapply.signals) exclude.push('RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL');
    if (!reapply.updates) exclude.push('RESET_REAPPLY_EXCLUDE_TYPE_UPDATE');
    let r;
    try {
      r = await call(`${base}/reset`, { method: 'POST', body: { workflowExecution: { workflowId, runId: run },
        reason: reason || 'reset from the Tock console', workflowTaskFinishEventId: String(id), requestId: crypto.randomUUID(),
        resetReapplyExcludeTypes: exclude } });
    } catch (e) { noteRefusal('ResetWorkflowExecution', e); throw e; }
    navigate(['namespaces', ns, 'workflows', workflowId, r.runId]);
  };
  const dropped = preview ? Object.entries(preview.dropped) : [];
  return html`<${Dialog} title="Reset the run" open=${open} onClose=${onClose} onSubmit=${submit} submitLabel="Reset" danger>
    ${(history.data || history.error) && html`<label>Back to the workflow task that ended at event
      ${choices.length ? html`<select value=${eventId} onChange=${(e) => setPicked(e.currentTarget.value)}>
        ${choices.map((e) => html`<option value=${e.eventId}>${e.eventId}: ${enumWords(e.eventType, 'EVENT_TYPE_WORKFLOW_TASK_')} ${time(e.eventTime)}${resetPoints.has(e.eventId) ? ' (reset point)' : ''}</option>`)}</select>`
        : html`<input value=${eventId} onInput=${(e) => setPicked(e.currentTarget.value)} />`}</label>`}
    <div class="toolbar">
      <label><input type="checkbox" checked=${reapply.signals} onChange=${(e) => setReapply({ ...reapply, signals: e.currentTarget.checked })} /> Re-apply later signals</label>
      <label><input type="checkbox" checked=${reapply.updates} onChange=${(e) => setReapply({ ...reapply, updates: e.currentTarget.checked })} /> Re-apply later updates</label>
    </div>
    <${ErrorBox} error=${history.error} />
    ${!preview && !history.error && html`<p class="muted">${history.loading ? 'Reading the history…' : 'Pick an event.'}</p>`}
    ${preview && html`<div class="panel" aria-label="Reset preview">
      <p>The new run keeps <strong>${preview.kept}</strong> events (1 to ${preview.kept}), then a failed workflow task (reset) and a new one.</p>
      <p>It gets again: ${preview.reapplied.length ? preview.reapplied.join(', ') : html`<span class="muted">nothing</span>`}.</p>
      <p>It drops: ${dropped.length ? dropped.map(([c, n]) => `${n} ${c}`).join(', ') : html`<span class="muted">nothing</span>`} events.</p>
      ${preview.pendingChildren.length > 0 && html`<p class="error" role="alert">The server refuses this point: child ${preview.pendingChildren.join(', ')} is still pending at it; pick a later workflow task.</p>`}
      <p class="muted">This run is terminated (if it is running).</p></div>`}
    <label>Reason <input value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} /></label>
  <//>`;
}

function TimelineTab({ ns, workflowId, runId }) {
  const { data, error } = useLoad((signal) => call(`tock/v1/namespaces/${path(ns)}/workflows/${path(workflowId)}/summary`,
    { params: { runId }, signal }), [ns, workflowId, runId]);
  if (error) return html`<${ErrorBox} error=${error} />`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  return html`<${Timeline} summary=${data} onOpen=${(eventId) => withQuery({ tab: 'history', view: 'feed', event: eventId }, { replace: false })} />`;
}

function PendingActivities({ activities }) {
  if (!activities.length) return html`<p class="muted">No pending activities.</p>`;
  return html`<table class="grid" aria-label="Pending activities">
    <thead><tr><th>Activity</th><th>State</th><th>Attempt</th><th>Last failure</th><th>Next retry</th><th>Heartbeat</th><th>Worker</th></tr></thead>
    <tbody>${activities.map((a) => html`<tr>
      <td>${a.activityType && a.activityType.name} <span class="muted">(${a.activityId})</span></td>
      <td>${enumWords(a.state, 'PENDING_ACTIVITY_STATE_')}</td>
      <td>${a.attempt || 1}${a.maximumAttempts ? ` of ${a.maximumAttempts}` : ''}</td>
      <td class="event-failed">${a.lastFailure && a.lastFailure.message}
        ${a.lastFailure && a.lastFailure.stackTrace && html`<details><summary>stack</summary><pre class="json">${a.lastFailure.stackTrace}</pre></details>`}</td>
      <td>${time(a.nextAttemptScheduleTime || a.scheduledTime)}</td>
      <td>${time(a.lastHeartbeatTime)} ${a.heartbeatDetails !== undefined && html`<code>${JSON.stringify(a.heartbeatDetails)}</code>`}</td>
      <td>${a.lastWorkerIdentity}</td></tr>`)}</tbody></table>`;
}

// The run's family: its ancestors (parent after parent) and the tree of its children, their
// children and so on, read from each run's summary (child spans). Bounded: MAX_DEPTH levels
// down, MAX_NODES runs in all.
const MAX_DEPTH = 5;
const MAX_NODES = 200;
const MAX_ANCESTORS = 20;

async function loadFamily(ns, workflowId, runId, parent, signal) {
  const ancestors = [];
  for (let p = parent; p && ancestors.length < MAX_ANCESTORS;) {
    const d = await call(`api/v1/namespaces/${path(ns)}/workflows/${path(p.workflowId)}`, { params: { 'execution.runId': p.runId }, signal })
      .catch(() => null);
    ancestors.unshift({ workflowId: p.workflowId, runId: p.runId, type: d && d.workflowExecutionInfo.type.name,
      status: d && d.workflowExecutionInfo.status });
    p = d && d.workflowExecutionInfo.parentExecution;
  }
  const root = { workflowId, runId, children: [] };
  let level = [root];
  let count = 1;
  let cut = false;
  for (let depth = 0; depth < MAX_DEPTH && level.length; depth++) {
    const summaries = await Promise.all(level.map((node) => call(`tock/v1/namespaces/${path(ns)}/workflows/${path(node.workflowId)}/summary`,
      { params: { runId: node.runId }, signal }).catch(() => null)));
    const next = [];
    level.forEach((node, i) => {
      for (const span of ((summaries[i] || {}).spans || []).filter((x) => x.kind === 'child')) {
        if (count >= MAX_NODES) { cut = true; break; }
        const child = { workflowId: span.id, runId: '', type: span.name, status: span.status, children: [] };
        node.children.push(child);
        next.push(child);
        count += 1;
      }
    });
    level = next;
    if (depth === MAX_DEPTH - 1 && next.length) cut = true;
  }
  return { ancestors, root, cut };
}

const spanStatus = (s) => (s || '').toLowerCase().replace(/_/g, ' ');

function FamilyNode({ ns, node, self }) {
  return html`<li>
    ${self ? html`<strong class="mono">${node.workflowId}</strong> <span class="muted">(this run)</span>`
      : html`<a class="mono" href=${href(['namespaces', ns, 'workflows', node.workflowId, node.runId].filter(Boolean))}>${node.workflowId}</a>${' '}
        <span class="muted">${node.type}</span> <span class="badge">${spanStatus(node.status)}</span>`}
    ${node.children.length > 0 && html`<ul>${node.children.map((c) => html`<${FamilyNode} ns=${ns} node=${c} />`)}</ul>`}
  </li>`;
}

function Relationships({ ns, workflowId, runId, parent }) {
  const { data, error } = useLoad((signal) => loadFamily(ns, workflowId, runId, parent, signal), [ns, workflowId, runId]);
  if (error) return html`<${ErrorBox} error=${error} />`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  // The ancestors nest down to this run, whose subtree follows.
  let tree = html`<${FamilyNode} ns=${ns} node=${data.root} self />`;
  for (const a of [...data.ancestors].reverse()) {
    tree = html`<li><a class="mono" href=${href(['namespaces', ns, 'workflows', a.workflowId, a.runId])}>${a.workflowId}</a>${' '}
      <span class="muted">${a.type}</span> <span class="badge">${statusName(a.status)}</span><ul>${tree}</ul></li>`;
  }
  return html`<div class="panel family" aria-label="Relationships"><ul>${tree}</ul></div>
    ${data.root.children.length === 0 && html`<p class="muted">This run started no child workflow.</p>`}
    ${data.cut && html`<p class="muted">The tree is cut at ${MAX_DEPTH} levels or ${MAX_NODES} runs; open a child to see below it.</p>`}`;
}

function Workers({ ns, queue }) {
  const { data, error } = useLoad(async (signal) => {
    const get = (type) => call(`api/v1/namespaces/${path(ns)}/task-queues/${path(queue)}`, { params: { taskQueueType: type }, signal });
    const [workflow, activity] = await Promise.all([get('TASK_QUEUE_TYPE_WORKFLOW'), get('TASK_QUEUE_TYPE_ACTIVITY')]);
    return [['workflow', workflow.pollers || []], ['activity', activity.pollers || []]];
  }, [ns, queue]);
  if (error) return html`<${ErrorBox} error=${error} />`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  return html`<table class="grid" aria-label="Workers polling the run's queues">
    <thead><tr><th>Queue</th><th>Tasks</th><th>Worker</th><th>Last poll</th><th>Rate/s</th></tr></thead>
    <tbody>${data.flatMap(([kind, pollers]) => pollers.map((p) => html`<tr><td>${queue}</td><td>${kind}</td>
      <td>${p.identity}</td><td>${time(p.lastAccessTime)}</td><td>${p.ratePerSecond}</td></tr>`))}</tbody></table>
    ${data.every(([, p]) => p.length === 0) && html`<p class="muted">No worker polled ${queue} lately.</p>`}`;
}

async function runQuery(ns, workflowId, runId, type, args) {
  const r = await call(`api/v1/namespaces/${path(ns)}/workflows/${path(workflowId)}/query/${path(type)}`, { method: 'POST',
    body: { execution: { workflowId, runId }, query: { queryType: type, queryArgs: args } } });
  if (r.queryRejected) throw new Error(`the query was rejected: the run is ${statusName(r.queryRejected.status)}`);
  return r.queryResult;
}

function Queries({ ns, workflowId, runId }) {
  const [type, setType] = useState('');
  const [args, setArgs] = useState('');
  const [out, setOut] = useState(null);
  const [error, setError] = useState(null);
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    try {
      setOut(await runQuery(ns, workflowId, runId, type.trim(), argsOf(args, 'Arguments')));
    } catch (err) {
      setOut(null);
      setError(err);
    }
  };
  return html`<form class="panel" onSubmit=${submit} style="display:flex;flex-direction:column;gap:8px">
      <label>Query type <input required value=${type} onInput=${(e) => setType(e.currentTarget.value)} /></label>
      <label>Arguments (JSON; an array for several) <textarea value=${args} onInput=${(e) => setArgs(e.currentTarget.value)}></textarea></label>
      <div><button type="submit" class="primary">Run query</button></div>
    </form>
    <${ErrorBox} error=${error} />
    ${out !== null && html`<pre class="json panel">${pretty(out)}</pre>`}`;
}

function StackTrace({ ns, workflowId, runId }) {
  const { data, error, reload } = useLoad(() => runQuery(ns, workflowId, runId, '__stack_trace'), [ns, workflowId, runId]);
  return html`<div class="toolbar"><button type="button" onClick=${reload}>Refresh</button></div>
    <${ErrorBox} error=${error} />
    ${data !== null && html`<pre class="json panel">${Array.isArray(data) ? data.join('\n') : typeof data === 'string' ? data : pretty(data)}</pre>`}`;
}
