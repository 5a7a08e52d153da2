// The cluster at a glance: name, version, stores; the hosts and the shards each owns; the
// clusters it replicates with; live charts of this host's metrics.
import { html } from '../html.js';
import { call } from '../api.js';
import { time, span, seconds } from '../format.js';
import { useLoad, ErrorBox, Facts } from '../ui.js';
import { LiveCharts } from '../charts.js';

async function loadOverview(signal) {
  const [info, system, members, shards, clusters] = await Promise.all([
    call('api/v1/cluster-info', { signal }),
    call('api/v1/system-info', { signal }),
    call('tock/v1/cluster/members', { signal }).catch(() => null),
    call('tock/v1/cluster/shards', { signal }).catch(() => null),
    call('tock/v1/clusters', { signal }).catch(() => null),
  ]);
  return { info, system, members, shards, clusters };
}

export function Overview() {
  const { data, error, reload } = useLoad(loadOverview, []);
  if (error) return html`<h1>Overview</h1><${ErrorBox} error=${error} />`;
  if (!data) return html`<h1>Overview</h1><p class="muted">Loading…</p>`;
  const { info, system, members, shards, clusters } = data;
  const byOwner = {};
  for (const s of (shards && shards.shards) || []) (byOwner[s.owner] ||= []).push(s.shardId || 0);
  const capabilities = Object.entries(system.capabilities || {}).filter(([, on]) => on).map(([k]) => k);
  return html`
    <h1>${info.clusterName || 'Cluster'} <button type="button" onClick=${reload}>Refresh</button></h1>
    <div class="panel">
      <${Facts} items=${[
        ['Cluster id', info.clusterId],
        ['Server', `${info.serverVersion || ''}`],
        ['History shards', info.historyShardCount],
        ['Persistence', info.persistenceStore],
        ['Visibility', info.visibilityStore],
        ['Capabilities', capabilities.join(', ')],
      ]} />
    </div>
    <${LiveCharts} />
    ${members && html`<h2>Hosts</h2>
      <table class="grid" aria-label="Hosts">
        <thead><tr><th>Address</th><th>Alive</th><th>Shards</th><th>Up since</th><th>Heartbeat</th></tr></thead>
        <tbody>${(members.members || []).map((m) => html`<tr>
          <td class="mono">${m.address}</td><td>${m.alive ? 'yes' : 'no'}</td>
          <td title=${(byOwner[m.address] || []).join(', ')}>${m.shardsOwned || 0}
            ${byOwner[m.address] && html` <span class="muted">(${byOwner[m.address].join(', ')})</span>`}</td>
          <td>${time(m.sessionStart)}</td><td>${span(seconds(m.heartbeatAge))} ago</td></tr>`)}
        </tbody></table>`}
    ${clusters && html`<h2>Clusters</h2>
      <table class="grid" aria-label="Clusters">
        <thead><tr><th>Name</th><th>Address</th><th>Initial failover version</th><th>Enabled</th></tr></thead>
        <tbody>${(clusters.clusters || []).map((c) => html`<tr>
          <td>${c.clusterName}</td><td class="mono">${c.address}</td><td>${c.initialFailoverVersion}</td>
          <td>${c.isConnectionEnabled ? 'yes' : 'no'}</td></tr>`)}</tbody></table>`}`;
}
