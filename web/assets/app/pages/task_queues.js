// A task queue: the workers polling it (workflow and activity tasks), its backlog and its
// partitions with the hosts holding them.
// Temporal's API lists no queues, so the page offers the queues of recent runs.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, path } from '../api.js';
import { href, navigate } from '../router.js';
import { time, seconds, span } from '../format.js';
import { useLoad, ErrorBox } from '../ui.js';

export function TaskQueues({ ns }) {
  const [name, setName] = useState('');
  const recent = useLoad(async (signal) => {
    const r = await call(`api/v1/namespaces/${path(ns)}/workflows`, { params: { pageSize: 200 }, signal });
    return [...new Set((r.executions || []).map((e) => e.taskQueue).filter(Boolean))].sort();
  }, [ns]);
  return html`<h1>Task queues <span class="muted" style="font-size:14px;font-weight:400">${ns}</span></h1>
    <form class="toolbar" onSubmit=${(e) => { e.preventDefault(); if (name.trim()) navigate(['namespaces', ns, 'task-queues', name.trim()]); }}>
      <label class="grow"><span class="visually-hidden">Task queue name</span>
        <input class="query" aria-label="Task queue name" placeholder="a task queue's name" value=${name} onInput=${(e) => setName(e.currentTarget.value)} /></label>
      <button type="submit" class="primary">Open</button>
    </form>
    <${ErrorBox} error=${recent.error} />
    <h2>Queues of recent runs</h2>
    <ul>${(recent.data || []).map((q) => html`<li><a href=${href(['namespaces', ns, 'task-queues', q])}>${q}</a></li>`)}</ul>`;
}

export function TaskQueue({ ns, queue }) {
  const { data, error, reload } = useLoad(async (signal) => {
    const get = (type) => call(`api/v1/namespaces/${path(ns)}/task-queues/${path(queue)}`,
      { params: { taskQueueType: type, reportStats: 'true' }, signal });
    const [workflow, activity, partitions] = await Promise.all([get('TASK_QUEUE_TYPE_WORKFLOW'), get('TASK_QUEUE_TYPE_ACTIVITY'),
      call(`tock/v1/namespaces/${path(ns)}/task-queues/${path(queue)}/partitions`, { signal }).catch(() => null)]);
    return { kinds: [['Workflow tasks', workflow], ['Activity tasks', activity]], partitions };
  }, [ns, queue]);
  if (error) return html`<h1>${queue}</h1><${ErrorBox} error=${error} />`;
  if (!data) return html`<h1>${queue}</h1><p class="muted">Loading…</p>`;
  return html`<div class="crumbs"><a href=${href(['namespaces', ns, 'task-queues'])}>Task queues</a></div>
    <h1>${queue} <button type="button" onClick=${reload}>Refresh</button></h1>
    ${data.partitions && html`<h2>Partitions</h2>
      <p class="muted">Each host holds the tasks of its own shards; the root also serves the polls that find nothing elsewhere.</p>
      <table class="grid" aria-label="Partitions"><thead><tr><th>Partition</th><th>Host</th><th></th></tr></thead>
        <tbody>${(data.partitions.workflowTaskQueuePartitions || []).map((p, i) => html`<tr><td class="mono">${p.key}</td>
          <td class="mono">${p.ownerHostName}</td><td>${i === 0 ? 'root' : ''}</td></tr>`)}</tbody></table>`}
    ${data.kinds.map(([label, d]) => {
      const stats = d.stats || (d.taskQueueStatus ? { approximateBacklogCount: d.taskQueueStatus.backlogCountHint } : {});
      return html`<h2>${label}</h2>
        <p>Backlog: <strong>${stats.approximateBacklogCount || 0}</strong>${stats.approximateBacklogAge ? `, oldest ${span(seconds(stats.approximateBacklogAge))}` : ''}
          ${stats.tasksAddRate !== undefined ? html`; ${Number(stats.tasksAddRate).toFixed(1)} added/s, ${Number(stats.tasksDispatchRate || 0).toFixed(1)} dispatched/s` : ''}</p>
        <table class="grid" aria-label=${`${label}: pollers`}><thead><tr><th>Worker</th><th>Last poll</th><th>Rate/s</th></tr></thead>
          <tbody>${(d.pollers || []).map((p) => html`<tr><td>${p.identity}</td><td>${time(p.lastAccessTime)}</td><td>${p.ratePerSecond}</td></tr>`)}</tbody></table>
        ${(d.pollers || []).length === 0 && html`<p class="muted">No worker polled lately.</p>`}`;
    })}`;
}
