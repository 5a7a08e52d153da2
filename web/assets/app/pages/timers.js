// A namespace's durable timers (the timer service's HTTP API under api/v1/timers): the list by
// state, one timer's callback, payload, retry policy, attempts and retry state; create and
// delete.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { call } from '../api.js';
import { href, withQuery } from '../router.js';
import { time, pretty } from '../format.js';
import { useLoad, ErrorBox, Facts, Dialog, ActionButton, noteRefusal, parseJsonInput } from '../ui.js';

const STATES = ['PENDING', 'FIRING', 'SUCCEEDED', 'FAILED', 'DELETED'];
const timerCall = (verb, body) => call(`api/v1/timers/${verb}`, { method: 'POST', body });

async function loadTimers(ns, state, signal) {
  const timers = [];
  let next = '';
  do { // at most 10 pages of the server's largest
    const page = await call('api/v1/timers/list', { method: 'POST', signal,
      body: { namespace: ns, ...(state ? { state } : {}), pageSize: 1000, ...(next ? { nextPageToken: next } : {}) } });
    timers.push(...(page.timers || []));
    next = page.nextPageToken || '';
  } while (next && timers.length < 10000);
  return timers;
}

// An hour from now, as the form's default fire time.
const inAnHour = () => new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');

export function Timers({ ns, query }) {
  const state = query.state || '';
  const { data, error, reload } = useLoad((signal) => loadTimers(ns, state, signal), [ns, state]);
  const [creating, setCreating] = useState(false);
  const [form, setForm] = useState({ id: '', executeAt: '', callbackUrl: '', payload: '', maxAttempts: '', initialInterval: '' });
  const [deleting, setDeleting] = useState('');
  const selected = (data || []).find((t) => t.id === query.timer);
  const field = (key, label, props = {}) => html`<label>${label}
    <input value=${form[key]} onInput=${(e) => setForm({ ...form, [key]: e.currentTarget.value })} ...${props} /></label>`;
  const create = async () => {
    const retryPolicy = {};
    if (form.maxAttempts.trim()) retryPolicy.maxAttempts = Number(form.maxAttempts);
    if (form.initialInterval.trim()) retryPolicy.initialInterval = form.initialInterval.trim();
    const body = { namespace: ns, id: form.id.trim(), executeAt: form.executeAt.trim(), callbackUrl: form.callbackUrl.trim() };
    const payload = parseJsonInput(form.payload, 'The payload');
    if (payload !== undefined) body.payload = payload;
    if (Object.keys(retryPolicy).length) body.retryPolicy = retryPolicy;
    try { await timerCall('create', body); } catch (e) { noteRefusal('CreateTimer', e); throw e; }
    withQuery({ timer: body.id });
    reload();
  };
  return html`<h1>Timers <span class="muted" style="font-size:14px;font-weight:400">${ns}</span>
      <${ActionButton} call="CreateTimer" class="primary" onClick=${() => { setForm({ ...form, executeAt: inAnHour() }); setCreating(true); }}>Create…<//>
      <button type="button" onClick=${reload}>Refresh</button></h1>
    <div class="toolbar" role="group" aria-label="Timer state">
      ${['', ...STATES].map((s) => html`<button type="button" aria-pressed=${state === s} onClick=${() => withQuery({ state: s, timer: '' })}>${s ? s.toLowerCase() : 'all'}</button>`)}
    </div>
    <${ErrorBox} error=${error} />
    ${data && html`<table class="grid" aria-label="Timers">
      <thead><tr><th>Id</th><th>State</th><th>Fires at</th><th>Callback</th><th>Attempts</th><th>Next attempt</th><th>Last error</th><th></th></tr></thead>
      <tbody>${data.map((t) => html`<tr aria-selected=${t.id === query.timer}>
        <td><a href=${href(['namespaces', ns, 'timers'], { ...query, timer: t.id })}>${t.id}</a></td>
        <td>${t.state}</td><td>${time(t.executeAt)}</td><td class="mono">${t.callbackUrl}</td><td>${t.attempts}</td>
        <td>${time(t.nextAttemptAt)}</td><td>${t.lastError}</td>
        <td>${t.state === 'PENDING' && html`<${ActionButton} call="DeleteTimer" class="danger" onClick=${() => setDeleting(t.id)}>Delete…<//>`}</td></tr>`)}
      </tbody></table>
      ${data.length === 0 && html`<p class="muted">No ${state ? state.toLowerCase() : ''} timer in ${ns}.</p>`}`}
    ${selected && html`<h2>${selected.id}</h2><div class="panel"><${Facts} items=${[
      ['State', selected.state], ['Fires at', time(selected.executeAt)], ['Fired at', time(selected.executedAt)],
      ['Callback', selected.callbackUrl], ['Callback timeout', `${selected.callbackTimeoutSeconds} s`],
      ['Attempts', String(selected.attempts)], ['Next attempt', time(selected.nextAttemptAt)], ['Last error', selected.lastError],
      ['Retry policy', selected.retryPolicy && html`<pre>${pretty(selected.retryPolicy)}</pre>`],
      ['Payload', selected.payload !== undefined && html`<pre>${pretty(selected.payload)}</pre>`],
      ['Created', time(selected.createdAt)], ['Updated', time(selected.updatedAt)],
    ]} /></div>`}
    <${Dialog} title="Create a timer" open=${creating} onClose=${() => setCreating(false)} onSubmit=${create} submitLabel="Create">
      ${field('id', 'Id', { required: true })}
      ${field('executeAt', 'Fires at (RFC 3339)', { required: true })}
      ${field('callbackUrl', 'Callback URL (http or https)', { required: true, type: 'url' })}
      <label>Payload (JSON, optional) <textarea rows="3" value=${form.payload} onInput=${(e) => setForm({ ...form, payload: e.currentTarget.value })}></textarea></label>
      ${field('maxAttempts', 'Retry: at most this many attempts (optional)', { inputmode: 'numeric' })}
      ${field('initialInterval', 'Retry: first interval, e.g. 30s (optional)')}
    <//>
    <${Dialog} title="Delete the timer" open=${Boolean(deleting)} onClose=${() => setDeleting('')} submitLabel="Delete" danger
      onSubmit=${async () => {
        try { await timerCall('delete', { namespace: ns, timerId: deleting }); } catch (e) { noteRefusal('DeleteTimer', e); throw e; }
        reload();
      }}><p>Timer <strong>${deleting}</strong> will not fire.</p><//>`;
}
