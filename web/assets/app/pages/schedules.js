// A namespace's schedules: the list (select several to pause or unpause at once), one
// schedule's spec, recent and upcoming actions, and trigger, backfill, pause, edit, delete;
// a form to create one (an interval or a cron line, the workflow it starts).
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, path } from '../api.js';
import { href, navigate } from '../router.js';
import { time } from '../format.js';
import { useLoad, ErrorBox, Facts, Dialog, ActionButton, noteRefusal, parseJsonInput } from '../ui.js';
import { durationJson } from './namespaces.js';

const base = (ns) => `api/v1/namespaces/${path(ns)}/schedules`;
const OVERLAP = ['SCHEDULE_OVERLAP_POLICY_SKIP', 'SCHEDULE_OVERLAP_POLICY_BUFFER_ONE', 'SCHEDULE_OVERLAP_POLICY_BUFFER_ALL',
  'SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER', 'SCHEDULE_OVERLAP_POLICY_TERMINATE_OTHER', 'SCHEDULE_OVERLAP_POLICY_ALLOW_ALL'];

function specText(spec = {}) {
  const parts = [];
  for (const i of spec.interval || []) parts.push(`every ${i.interval}${i.phase ? ` (offset ${i.phase})` : ''}`);
  for (const c of spec.cronString || []) parts.push(`cron ${c}`);
  for (const c of spec.structuredCalendar || []) parts.push(`calendar ${JSON.stringify(c)}`);
  return parts.join('; ') || '—';
}

async function patch(ns, id, body, rpc = 'PatchSchedule') {
  try {
    await call(`${base(ns)}/${path(id)}/patch`, { method: 'POST', body: { patch: body, requestId: crypto.randomUUID() } });
  } catch (e) { noteRefusal(rpc, e); throw e; }
}

export function Schedules({ ns }) {
  const { data, error, reload } = useLoad((signal) => call(base(ns), { params: { maximumPageSize: 1000 }, signal }), [ns]);
  const [chosen, setChosen] = useState(new Set());
  const [creating, setCreating] = useState(false);
  const [bulkError, setBulkError] = useState(null);
  const list = (data && data.schedules) || [];
  const toggle = (id) => {
    const next = new Set(chosen);
    next.has(id) ? next.delete(id) : next.add(id);
    setChosen(next);
  };
  const bulk = async (pause) => {
    setBulkError(null);
    try {
      for (const id of chosen) await patch(ns, id, pause ? { pause: 'paused from the Tock console' } : { unpause: 'unpaused from the Tock console' });
    } catch (e) { setBulkError(e); }
    setChosen(new Set());
    reload();
  };
  return html`
    <h1>Schedules <span class="muted" style="font-size:14px;font-weight:400">${ns}</span>
      <${ActionButton} call="CreateSchedule" class="primary" onClick=${() => setCreating(true)}>Create…<//>
      <${ActionButton} call="PatchSchedule" disabled=${chosen.size === 0} onClick=${() => bulk(true)}>Pause ${chosen.size || ''}<//>
      <${ActionButton} call="PatchSchedule" disabled=${chosen.size === 0} onClick=${() => bulk(false)}>Unpause ${chosen.size || ''}<//>
    </h1>
    <${ErrorBox} error=${error || bulkError} />
    <table class="grid" aria-label="Schedules">
      <thead><tr><th><span class="visually-hidden">Select</span></th><th>Schedule</th><th>Workflow type</th><th>Spec</th><th>State</th><th>Next run</th><th>Last run</th></tr></thead>
      <tbody>${list.map((s) => {
        const info = s.info || {};
        const recent = (info.recentActions || [])[info.recentActions ? info.recentActions.length - 1 : 0];
        return html`<tr>
          <td><input type="checkbox" aria-label=${`Select ${s.scheduleId}`} checked=${chosen.has(s.scheduleId)} onChange=${() => toggle(s.scheduleId)} /></td>
          <td><a href=${href(['namespaces', ns, 'schedules', s.scheduleId])}>${s.scheduleId}</a></td>
          <td>${info.workflowType && info.workflowType.name}</td>
          <td>${specText(info.spec)}</td>
          <td>${info.paused ? html`<span class="badge s-canceled">Paused</span>` : html`<span class="badge s-running">Active</span>`}</td>
          <td>${time((info.futureActionTimes || [])[0])}</td>
          <td>${recent && time(recent.actualTime)}</td></tr>`;
      })}</tbody></table>
    ${data && list.length === 0 && html`<p class="muted">No schedules in ${ns}.</p>`}
    <${ScheduleForm} ns=${ns} open=${creating} onClose=${() => setCreating(false)} onSaved=${(id) => navigate(['namespaces', ns, 'schedules', id])} />`;
}

// Create (no `existing`) or edit a schedule: an interval or cron lines, and its workflow.
function ScheduleForm({ ns, open, onClose, onSaved, existing }) {
  const action = (existing && existing.schedule.action.startWorkflow) || {};
  const spec = (existing && existing.schedule.spec) || {};
  const [f, setF] = useState(() => ({
    id: existing ? existing.id : '',
    every: (spec.interval || []).map((i) => i.interval).join(' '),
    cron: (spec.cronString || []).join('\n'),
    workflowId: action.workflowId || '', type: (action.workflowType || {}).name || '',
    queue: (action.taskQueue || {}).name || '', input: action.input !== undefined ? JSON.stringify(action.input) : '',
  }));
  const set = (k) => (e) => setF({ ...f, [k]: e.currentTarget.value });
  const submit = async () => {
    const interval = f.every.trim() ? f.every.trim().split(/\s+/).map((d) => ({ interval: durationJson(d) })) : [];
    const cronString = f.cron.split('\n').map((l) => l.trim()).filter(Boolean);
    if (!interval.length && !cronString.length) throw new Error('give an interval (1h, 30m) or a cron line');
    const input = parseJsonInput(f.input, 'Input');
    const schedule = { spec: { interval, cronString }, action: { startWorkflow: { workflowId: f.workflowId.trim() || f.id.trim(),
      workflowType: { name: f.type.trim() }, taskQueue: { name: f.queue.trim() },
      input: input === undefined ? undefined : (Array.isArray(input) ? input : [input]) } } };
    if (existing) {
      schedule.policies = existing.schedule.policies;
      schedule.state = existing.schedule.state;
    }
    try {
      await call(`${base(ns)}/${path(f.id.trim())}${existing ? '/update' : ''}`, { method: 'POST',
        body: { schedule, requestId: crypto.randomUUID(), conflictToken: existing ? existing.conflictToken : undefined } });
    } catch (e) { noteRefusal(existing ? 'UpdateSchedule' : 'CreateSchedule', e); throw e; }
    onSaved(f.id.trim());
  };
  return html`<${Dialog} title=${existing ? `Edit schedule ${existing.id}` : 'Create a schedule'} open=${open} onClose=${onClose}
    onSubmit=${submit} submitLabel=${existing ? 'Save' : 'Create'}>
    ${!existing && html`<label>Schedule ID <input required value=${f.id} onInput=${set('id')} /></label>`}
    <label>Every (durations, space-separated: 1h 30m) <input value=${f.every} onInput=${set('every')} /></label>
    <label>Or cron lines, one a line (0 9 * * MON-FRI) <textarea value=${f.cron} onInput=${set('cron')}></textarea></label>
    <label>Workflow ID (default: the schedule's) <input value=${f.workflowId} onInput=${set('workflowId')} /></label>
    <label>Workflow type <input required value=${f.type} onInput=${set('type')} /></label>
    <label>Task queue <input required value=${f.queue} onInput=${set('queue')} /></label>
    <label>Input (JSON) <textarea value=${f.input} onInput=${set('input')}></textarea></label>
  <//>`;
}

export function ScheduleDetail({ ns, id }) {
  const { data, error, reload } = useLoad((signal) => call(`${base(ns)}/${path(id)}`, { signal }), [ns, id]);
  const [dialog, setDialog] = useState('');
  const [overlap, setOverlap] = useState(OVERLAP[0]);
  const [range, setRange] = useState({ from: '', to: '' });
  if (error) return html`<h1>${id}</h1><${ErrorBox} error=${error} />`;
  if (!data) return html`<h1>${id}</h1><p class="muted">Loading…</p>`;
  const { schedule, info = {} } = data;
  const paused = schedule.state && schedule.state.paused;
  const start = schedule.action.startWorkflow || {};
  const act = (fn) => async () => { await fn(); reload(); };
  return html`
    <div class="crumbs"><a href=${href(['namespaces', ns, 'schedules'])}>Schedules</a></div>
    <h1>${id} ${paused ? html`<span class="badge s-canceled">Paused</span>` : html`<span class="badge s-running">Active</span>`}
      <${ActionButton} call="PatchSchedule" onClick=${() => setDialog('trigger')}>Trigger…<//>
      <${ActionButton} call="PatchSchedule" onClick=${() => setDialog('backfill')}>Backfill…<//>
      <${ActionButton} call="PatchSchedule" onClick=${() => act(() => patch(ns, id, paused ? { unpause: 'from the Tock console' } : { pause: 'from the Tock console' }))().catch(() => {})}>${paused ? 'Unpause' : 'Pause'}<//>
      <${ActionButton} call="UpdateSchedule" onClick=${() => setDialog('edit')}>Edit…<//>
      <${ActionButton} call="DeleteSchedule" class="danger" onClick=${() => setDialog('delete')}>Delete…<//>
    </h1>
    <div class="panel"><${Facts} items=${[
      ['Spec', specText(schedule.spec)],
      ['Starts', `${(start.workflowType || {}).name || ''} on ${(start.taskQueue || {}).name || ''} as ${start.workflowId || ''}`],
      ['Notes', schedule.state && schedule.state.notes],
      ['Actions taken', info.actionCount || 0],
      ['Created', time(info.createTime)], ['Updated', time(info.updateTime)],
    ]} /></div>
    <h2>Running</h2>
    <ul>${(info.runningWorkflows || []).map((w) => html`<li><a href=${href(['namespaces', ns, 'workflows', w.workflowId, w.runId])}>${w.workflowId}</a></li>`)}</ul>
    <h2>Recent actions</h2>
    <table class="grid" aria-label="Recent actions"><thead><tr><th>Scheduled for</th><th>Taken</th><th>Run</th></tr></thead>
      <tbody>${(info.recentActions || []).slice().reverse().map((a) => html`<tr><td>${time(a.scheduleTime)}</td><td>${time(a.actualTime)}</td>
        <td>${a.startWorkflowResult && html`<a href=${href(['namespaces', ns, 'workflows', a.startWorkflowResult.workflowId, a.startWorkflowResult.runId])}>${a.startWorkflowResult.workflowId}</a>`}</td></tr>`)}</tbody></table>
    <h2>Upcoming</h2>
    <ul>${(info.futureActionTimes || []).map((t) => html`<li>${time(t)}</li>`)}</ul>
    <${Dialog} title="Trigger now" open=${dialog === 'trigger'} onClose=${() => setDialog('')} submitLabel="Trigger"
      onSubmit=${act(() => patch(ns, id, { triggerImmediately: { overlapPolicy: overlap } }))}>
      <${OverlapField} value=${overlap} onChange=${setOverlap} />
    <//>
    <${Dialog} title="Backfill" open=${dialog === 'backfill'} onClose=${() => setDialog('')} submitLabel="Backfill"
      onSubmit=${act(() => {
        const from = Date.parse(range.from);
        const to = Date.parse(range.to);
        if (Number.isNaN(from) || Number.isNaN(to) || to <= from) throw new Error('give a start and a later end (2026-11-01T00:00:00Z)');
        return patch(ns, id, { backfillRequest: [{ startTime: new Date(from).toISOString(), endTime: new Date(to).toISOString(), overlapPolicy: overlap }] });
      })}>
      <label>From <input placeholder="2026-11-01T00:00:00Z" value=${range.from} onInput=${(e) => setRange({ ...range, from: e.currentTarget.value })} /></label>
      <label>To <input placeholder="2026-11-02T00:00:00Z" value=${range.to} onInput=${(e) => setRange({ ...range, to: e.currentTarget.value })} /></label>
      <${OverlapField} value=${overlap} onChange=${setOverlap} />
    <//>
    ${dialog === 'edit' && html`<${ScheduleForm} ns=${ns} open=${true} existing=${{ ...data, id }} onClose=${() => setDialog('')} onSaved=${() => { setDialog(''); reload(); }} />`}
    <${Dialog} title=${`Delete schedule ${id}`} open=${dialog === 'delete'} onClose=${() => setDialog('')} submitLabel="Delete" danger
      onSubmit=${async () => {
        try { await call(`${base(ns)}/${path(id)}`, { method: 'DELETE' }); } catch (e) { noteRefusal('DeleteSchedule', e); throw e; }
        navigate(['namespaces', ns, 'schedules']);
      }}>
      <p>Runs it started are kept.</p>
    <//>`;
}

function OverlapField({ value, onChange }) {
  return html`<label>When a run is still open <select value=${value} onChange=${(e) => onChange(e.currentTarget.value)}>
    ${OVERLAP.map((o) => html`<option value=${o}>${o.replace('SCHEDULE_OVERLAP_POLICY_', '').toLowerCase().replace(/_/g, ' ')}</option>`)}</select></label>`;
}
