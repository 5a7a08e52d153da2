// A namespace's batch jobs: the list, one job's progress (refreshed while it runs), stop.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, path } from '../api.js';
import { href } from '../router.js';
import { time, enumWords } from '../format.js';
import { useLoad, ErrorBox, Facts, Dialog, ActionButton, noteRefusal } from '../ui.js';

const base = (ns) => `api/v1/namespaces/${path(ns)}/batch-operations`;
const kind = (t) => enumWords(t, 'BATCH_OPERATION_TYPE_');
const state = (s) => enumWords(s, 'BATCH_OPERATION_STATE_');

export function Batches({ ns }) {
  const { data, error } = useLoad((signal) => call(base(ns), { params: { pageSize: 1000 }, signal }), [ns]);
  const list = (data && data.operationInfo) || [];
  return html`<h1>Batch jobs <span class="muted" style="font-size:14px;font-weight:400">${ns}</span></h1>
    <p class="muted">Start one from the <a href=${href(['namespaces', ns, 'workflows'])}>workflows</a> list (Bulk action).</p>
    <${ErrorBox} error=${error} />
    <table class="grid" aria-label="Batch jobs"><thead><tr><th>Job</th><th>State</th><th>Started</th><th>Closed</th></tr></thead>
      <tbody>${list.map((b) => html`<tr><td><a href=${href(['namespaces', ns, 'batches', b.jobId])}>${b.jobId}</a></td>
        <td>${state(b.state)}</td><td>${time(b.startTime)}</td><td>${time(b.closeTime)}</td></tr>`)}</tbody></table>
    ${data && list.length === 0 && html`<p class="muted">No batch jobs in ${ns}.</p>`}`;
}

export function BatchDetail({ ns, id }) {
  const { data, error, reload } = useLoad((signal) => call(`${base(ns)}/${path(id)}`, { signal }), [ns, id]);
  const [stopping, setStopping] = useState(false);
  const running = data && data.state === 'BATCH_OPERATION_STATE_RUNNING';
  useEffect(() => {
    if (!running) return undefined;
    const timer = setInterval(reload, 2000);
    return () => clearInterval(timer);
  }, [running]);
  if (error) return html`<h1>${id}</h1><${ErrorBox} error=${error} />`;
  if (!data) return html`<h1>${id}</h1><p class="muted">Loading…</p>`;
  const total = Number(data.totalOperationCount || 0);
  const done = Number(data.completeOperationCount || 0);
  const failed = Number(data.failureOperationCount || 0);
  return html`<div class="crumbs"><a href=${href(['namespaces', ns, 'batches'])}>Batch jobs</a></div>
    <h1>${id} <span class="badge">${state(data.state)}</span>
      ${running && html`<${ActionButton} call="StopBatchOperation" class="danger" onClick=${() => setStopping(true)}>Stop…<//>`}</h1>
    <div class="panel"><${Facts} items=${[
      ['Kind', kind(data.operationType)], ['Reason', data.reason], ['Identity', data.identity],
      ['Progress', `${done + failed} of ${total} (${failed} failed)`],
      ['Started', time(data.startTime)], ['Closed', time(data.closeTime)],
    ]} />
    <progress max=${total || 1} value=${done + failed} aria-label="Progress" style="width:100%"></progress></div>
    <${Dialog} title="Stop the batch job" open=${stopping} onClose=${() => setStopping(false)} submitLabel="Stop" danger
      onSubmit=${async () => {
        try {
          await call(`${base(ns)}/${path(id)}/stop`, { method: 'POST', body: { reason: 'stopped from the Tock console', identity: 'tock-web' } });
        } catch (e) { noteRefusal('StopBatchOperation', e); throw e; }
        reload();
      }}><p>Workflows already processed stay as they are.</p><//>`;
}
