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
import { attributesOf } from '../events.js';

const TABS = [['history', 'History'], ['timeline', 'Timeline'], ['pending', 'Pending activities'], ['workers', 'Workers'],
  ['query', 'Queries'], ['stack', 'Stack trace']];

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

// Reset: pick the workflow task to go back to (the run's reset points, or any event id);
// the preview says which events the new run keeps.
function ResetDialog({ open, onClose, base, workflowId, run, points, ns }) {
  const [eventId, setEventId] = useState(points && points.length ? String(points[points.length - 1].firstWorkflowTaskCompletedId || '') : '');
  const [reason, setReason] = useState('');
  const submit = async () => {
    const id = Number(eventId);
    if (!Number.isInteger(id) || id < 2) throw new Error('pick a completed workflow task (an event id of 2 or more)');
    let r;
    try {
      r = await call(`${base}/reset`, { method: 'POST', body: { workflowExecution: { workflowId, runId: run },
        reason: reason || 'reset from the Tock console', workflowTaskFinishEventId: String(id), requestId: crypto.randomUUID() } });
    } catch (e) { noteRefusal('ResetWorkflowExecution', e); throw e; }
    navigate(['namespaces', ns, 'workflows', workflowId, r.runId]);
  };
  return html`<${Dialog} title="Reset the run" open=${open} onClose=${onClose} onSubmit=${submit} submitLabel="Reset" danger>
    <label>Back to the workflow task finished at event
      ${points && points.length ? html`<select value=${eventId} onChange=${(e) => setEventId(e.currentTarget.value)}>
        ${points.map((p) => html`<option value=${p.firstWorkflowTaskCompletedId}>${p.firstWorkflowTaskCompletedId} (${time(p.createTime)}${p.binaryChecksum ? `, ${p.binaryChecksum}` : ''})</option>`)}</select>`
        : html`<input value=${eventId} onInput=${(e) => setEventId(e.currentTarget.value)} />`}</label>
    <p class="muted">The new run keeps events 1 to ${eventId || '…'} and the signals received after them; this run is terminated.</p>
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
