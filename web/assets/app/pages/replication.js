// Replication between clusters: each remote's connection, the namespace queue's and each
// shard's pulled, applied and acknowledged positions with the lag and last errors; the
// active cluster of each global namespace with its failover; the replication DLQ read,
// merged or purged by source cluster, shard and kind.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, path } from '../api.js';
import { href, withQuery } from '../router.js';
import { time } from '../format.js';
import { useLoad, ErrorBox, Facts, Dialog, ActionButton, noteRefusal } from '../ui.js';

async function loadReplication(signal) {
  const [status, namespaces] = await Promise.all([
    call('tock/v1/replication', { signal }),
    call('api/v1/namespaces', { params: { pageSize: 1000 }, signal }).catch(() => null),
  ]);
  return { status, namespaces };
}

function Remote({ remote }) {
  const inbound = remote.inbound || [];
  const outbound = remote.outbound || [];
  return html`<h3>${remote.clusterName} <span class="muted mono" style="font-weight:400">${remote.address}</span>
      ${!remote.connectionEnabled && html`<span class="badge">connection off</span>`}</h3>
    <div class="panel"><${Facts} items=${[
      ['Namespace queue pulled to', String(remote.namespaceLastRetrievedTaskId ?? 0)],
      ['Our namespace queue', `${remote.namespaceAckedTaskId ?? 0} of ${remote.namespaceMaxTaskId ?? 0} acknowledged`],
      ['Namespace DLQ', String(remote.namespaceDlqTasks || 0)],
      ['Namespace error', remote.namespaceLastError],
    ]} /></div>
    <div class="columns">
      <table class="grid" aria-label=${`From ${remote.clusterName}`}><caption>Pulled from ${remote.clusterName}</caption>
        <thead><tr><th>Shard</th><th>Pulled to</th><th>Applied</th><th>Last pull</th><th>DLQ</th><th>Error</th></tr></thead>
        <tbody>${inbound.map((s) => html`<tr><td>${s.shardId}</td><td>${s.lastRetrievedTaskId ?? 0}</td><td>${s.tasksApplied || 0}</td>
          <td>${time(s.lastPullTime)}</td><td>${s.dlqTasks || 0}</td><td class=${s.lastError ? 'bad' : ''}>${s.lastError}</td></tr>`)}</tbody></table>
      <table class="grid" aria-label=${`To ${remote.clusterName}`}><caption>Acknowledged by ${remote.clusterName}</caption>
        <thead><tr><th>Shard</th><th>Last task</th><th>Acknowledged</th><th>Lag (tasks)</th></tr></thead>
        <tbody>${outbound.map((s) => html`<tr><td>${s.shardId}</td><td>${s.maxTaskId || 0}</td><td>${s.ackedTaskId || 0}</td>
          <td class=${Number(s.lagTasks) > 0 ? 'warn' : ''}>${s.lagTasks || 0}</td></tr>`)}</tbody></table>
    </div>`;
}

// The DLQ selection from the URL: source cluster, shard (0: all), kind.
function selectionOf(query) {
  return {
    sourceCluster: query.source || '', shardId: Number(query.shard || 0),
    type: query.kind === 'namespace' ? 'DLQ_TYPE_NAMESPACE' : 'DLQ_TYPE_HISTORY',
  };
}

function Dlq({ remotes, query }) {
  const selection = selectionOf(query);
  const [form, setForm] = useState({ source: query.source || '', shard: query.shard || '', kind: query.kind || 'history' });
  const [dialog, setDialog] = useState('');
  const [outcome, setOutcome] = useState('');
  const tasks = useLoad((signal) => (query.dlq ? call('tock/v1/replication/dlq', { signal, params: {
    'selection.sourceCluster': selection.sourceCluster, 'selection.shardId': selection.shardId || undefined,
    'selection.type': selection.type, maximumPageSize: 1000 } }) : Promise.resolve(null)),
  [query.dlq, query.source, query.shard, query.kind]);
  const act = (rpc, verb) => async () => {
    let answer;
    try {
      answer = await call(`tock/v1/replication/dlq/${verb}`, { method: 'POST', body: { selection } });
    } catch (e) { noteRefusal(rpc, e); throw e; }
    setOutcome(verb === 'purge' ? `${answer.purgedTasks || 0} tasks purged.`
      : `${answer.mergedTasks || 0} tasks merged, ${answer.remainingTasks || 0} still in the DLQ.`);
    tasks.reload();
  };
  const list = (tasks.data && tasks.data.tasks) || [];
  return html`<h2>Replication DLQ</h2>
    <form class="toolbar" onSubmit=${(e) => { e.preventDefault(); setOutcome(''); withQuery({ source: form.source, shard: form.shard, kind: form.kind, dlq: String(Date.now()) }); }}>
      <label>Source cluster <select value=${form.source} onChange=${(e) => setForm({ ...form, source: e.currentTarget.value })}>
        <option value="">every remote</option>${remotes.map((r) => html`<option value=${r.clusterName}>${r.clusterName}</option>`)}</select></label>
      <label>Kind <select value=${form.kind} onChange=${(e) => setForm({ ...form, kind: e.currentTarget.value })}>
        <option value="history">history tasks</option><option value="namespace">namespace tasks</option></select></label>
      <label>Shard <input size="4" placeholder="all" value=${form.shard} onInput=${(e) => setForm({ ...form, shard: e.currentTarget.value })} /></label>
      <button type="submit" class="primary">Read</button>
      ${query.dlq && html`<${ActionButton} call="MergeDLQMessages" onClick=${() => setDialog('merge')}>Merge…<//>
        <${ActionButton} call="PurgeDLQMessages" class="danger" onClick=${() => setDialog('purge')}>Purge…<//>`}
    </form>
    ${outcome && html`<p role="status">${outcome}</p>`}
    <${ErrorBox} error=${tasks.error} />
    ${tasks.data && list.length === 0 && html`<p class="muted">The DLQ holds no task of this selection.</p>`}
    ${list.length > 0 && html`<table class="grid" aria-label="DLQ tasks">
      <thead><tr><th>Source</th><th>Shard</th><th>Task</th><th>Workflow</th><th>Events</th><th>Added</th><th>Why</th></tr></thead>
      <tbody>${list.map((t) => html`<tr><td>${t.sourceCluster}</td><td>${t.sourceShardId}</td><td>${t.taskId}</td>
        <td>${t.namespaceName || t.workflowId} <span class="muted mono">${t.runId}</span></td>
        <td>${t.firstEventId ? `${t.firstEventId}-${Number(t.nextEventId) - 1}` : ''}</td>
        <td>${time(t.addedTime)}</td><td>${t.lastError}</td></tr>`)}</tbody></table>`}
    <${Dialog} title="Merge the DLQ's tasks" open=${dialog === 'merge'} onClose=${() => setDialog('')} submitLabel="Merge"
      onSubmit=${act('MergeDLQMessages', 'merge')}>
      <p>The source rebuilds each task from its history as it is now, and this cluster applies it.</p><//>
    <${Dialog} title="Purge the DLQ's tasks" open=${dialog === 'purge'} onClose=${() => setDialog('')} submitLabel="Purge" danger
      onSubmit=${act('PurgeDLQMessages', 'purge')}>
      <p>The selected tasks are dropped: what they carried is not applied here.</p><//>`;
}

export function Replication({ query }) {
  const { data, error, reload } = useLoad(loadReplication, []);
  const [failover, setFailover] = useState(null); // { ns, to, clusters }
  if (error) return html`<h1>Replication</h1><${ErrorBox} error=${error} />`;
  if (!data) return html`<h1>Replication</h1><p class="muted">Loading…</p>`;
  const remotes = data.status.remotes || [];
  const global = ((data.namespaces && data.namespaces.namespaces) || []).filter((n) => n.isGlobalNamespace);
  return html`<h1>Replication <span class="muted" style="font-size:14px;font-weight:400">this cluster: ${data.status.currentCluster}</span>
      <button type="button" onClick=${reload}>Refresh</button></h1>
    ${remotes.length === 0 && html`<p class="muted">No remote cluster is connected (tock cluster upsert --frontend-address HOST:PORT).</p>`}
    ${remotes.map((r) => html`<${Remote} remote=${r} />`)}
    <h2>Global namespaces</h2>
    <table class="grid" aria-label="Global namespaces">
      <thead><tr><th>Namespace</th><th>Active cluster</th><th>Clusters</th><th>Failover version</th><th></th></tr></thead>
      <tbody>${global.map((n) => {
        const rc = n.replicationConfig || {};
        const clusters = (rc.clusters || []).map((c) => c.clusterName);
        return html`<tr><td><a href=${href(['namespaces', n.namespaceInfo.name])}>${n.namespaceInfo.name}</a></td>
          <td>${rc.activeClusterName}</td><td>${clusters.join(', ')}</td><td>${n.failoverVersion}</td>
          <td>${clusters.length > 1 && html`<${ActionButton} call="UpdateNamespace"
            onClick=${() => setFailover({ ns: n.namespaceInfo.name, to: clusters.find((c) => c !== rc.activeClusterName), clusters })}>Fail over…<//>`}</td></tr>`;
      })}</tbody></table>
    ${global.length === 0 && html`<p class="muted">No global namespace.</p>`}
    <${Dlq} remotes=${remotes} query=${query} />
    <${Dialog} title=${`Fail over ${failover ? failover.ns : ''}`} open=${Boolean(failover)} onClose=${() => setFailover(null)}
      submitLabel="Fail over" danger onSubmit=${async () => {
        try {
          await call(`api/v1/namespaces/${path(failover.ns)}/update`, { method: 'POST', body: { replicationConfig: { activeClusterName: failover.to } } });
        } catch (e) { noteRefusal('UpdateNamespace', e); throw e; }
        reload();
      }}>
      ${failover && html`<label>Make active <select value=${failover.to} onChange=${(e) => setFailover({ ...failover, to: e.currentTarget.value })}>
        ${failover.clusters.map((c) => html`<option value=${c}>${c}</option>`)}</select></label>`}
      <p class="muted">Writes go to the cluster made active; the others serve reads as standbys.</p><//>`;
}
