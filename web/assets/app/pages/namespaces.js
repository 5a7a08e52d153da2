// Namespaces: the list, one namespace's detail, and the operator's actions on them
// (register, retention, failover, search attributes, delete), each through the HTTP API so
// that the server's own rules and messages apply.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, path, ApiError } from '../api.js';
import { whoami } from '../state.js';
import { href, navigate } from '../router.js';
import { time, span, seconds, enumWords } from '../format.js';
import { useLoad, ErrorBox, Facts, Dialog, ActionButton, noteRefusal } from '../ui.js';

// "3d", "72h", "90m" or seconds as protobuf JSON's "259200s"; the server checks the range.
export function durationJson(text) {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(d|h|m|s)?\s*$/.exec(text);
  if (!m) throw new Error(`"${text.slice(0, 40)}" is not a duration: use a number with d, h, m or s (3d, 72h)`);
  const unit = { d: 86400, h: 3600, m: 60, s: 1 }[m[2] || 's'];
  return `${Math.round(Number(m[1]) * unit)}s`;
}

const stateName = (s) => enumWords(s, 'NAMESPACE_STATE_');
const archival = (s) => enumWords(s, 'ARCHIVAL_STATE_') || 'Disabled';

// Every namespace; or, for a token that may not list them (ListNamespaces needs
// temporal-system:read), those its roles name.
async function loadNamespaces(signal, who) {
  try {
    return await call('api/v1/namespaces', { params: { pageSize: 1000 }, signal });
  } catch (e) {
    const names = Object.keys((who && who.namespaceRoles) || {});
    if (!(e instanceof ApiError) || e.status !== 403 || names.length === 0) throw e;
    const found = await Promise.all(names.sort().map((n) => call(`api/v1/namespaces/${path(n)}`, { signal }).catch(() => null)));
    return { namespaces: found.filter(Boolean), scoped: true };
  }
}

export function Namespaces() {
  const who = whoami.value;
  const { data, error, reload } = useLoad((signal) => loadNamespaces(signal, who), [who]);
  const [registering, setRegistering] = useState(false);
  const [form, setForm] = useState({ name: '', retention: '3d', description: '' });
  const list = (data && data.namespaces) || [];
  const register = async () => {
    try {
      await call('api/v1/namespaces', { method: 'POST', body: {
        namespace: form.name.trim(), workflowExecutionRetentionPeriod: durationJson(form.retention),
        description: form.description } });
    } catch (e) {
      noteRefusal('RegisterNamespace', e);
      throw e;
    }
    reload();
  };
  return html`
    <h1>Namespaces
      <${ActionButton} call="RegisterNamespace" class="primary" onClick=${() => setRegistering(true)}>Register<//>
    </h1>
    <${ErrorBox} error=${error} />
    <table class="grid" aria-label="Namespaces">
      <thead><tr><th>Name</th><th>State</th><th>Retention</th><th>Active cluster</th><th>History archival</th><th>Description</th></tr></thead>
      <tbody>${list.map((n) => html`<tr>
        <td><a href=${href(['namespaces', n.namespaceInfo.name])}>${n.namespaceInfo.name}</a></td>
        <td>${stateName(n.namespaceInfo.state)}</td>
        <td>${span(seconds(n.config && n.config.workflowExecutionRetentionTtl))}</td>
        <td>${n.replicationConfig && n.replicationConfig.activeClusterName}</td>
        <td>${archival(n.config && n.config.historyArchivalState)}</td>
        <td>${n.namespaceInfo.description}</td></tr>`)}</tbody>
    </table>
    ${data && data.scoped && html`<p class="muted">The namespaces your token has roles on (it may not list them all).</p>`}
    ${data && list.length === 0 && html`<p class="muted">No namespaces this token may read.</p>`}
    <${Dialog} title="Register a namespace" open=${registering} onClose=${() => setRegistering(false)}
      onSubmit=${register} submitLabel="Register">
      <label>Name <input required value=${form.name} onInput=${(e) => setForm({ ...form, name: e.currentTarget.value })} /></label>
      <label>Retention (1-30 days: 3d, 72h) <input value=${form.retention} onInput=${(e) => setForm({ ...form, retention: e.currentTarget.value })} /></label>
      <label>Description <input value=${form.description} onInput=${(e) => setForm({ ...form, description: e.currentTarget.value })} /></label>
    <//>`;
}

async function loadNamespace(ns, signal) {
  const [detail, attributes, versions] = await Promise.all([
    call(`api/v1/namespaces/${path(ns)}`, { signal }),
    call(`api/v1/namespaces/${path(ns)}/search-attributes`, { signal }).catch(() => null),
    call(`tock/v1/namespaces/${path(ns)}/versions`, { signal }).catch(() => null),
  ]);
  return { detail, attributes, versions };
}

// The namespace as it was at `asOf` (RFC 3339): the version then valid and its settings.
function AsOf({ ns, asOf }) {
  const { data, error } = useLoad((signal) => call(`tock/v1/namespaces/${path(ns)}/as-of`, { params: { asOf }, signal }), [ns, asOf]);
  if (error) return html`<${ErrorBox} error=${error} />`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  const d = data.namespace || {};
  const v = data.version || {};
  return html`<div class="panel" aria-label="As of"><h3 style="margin-top:0">As of ${time(asOf)}: version ${v.version} (${v.operation})
      <a class="button" href=${href(['namespaces', ns])}>Now</a></h3>
    <${Facts} items=${[
      ['Valid', `from ${time(v.validFrom)}${v.validTo ? ` to ${time(v.validTo)}` : ' (current)'}`],
      ['State', stateName((d.namespaceInfo || {}).state)], ['Description', (d.namespaceInfo || {}).description],
      ['Retention', span(seconds(d.config && d.config.workflowExecutionRetentionTtl))],
      ['History archival', `${archival(d.config && d.config.historyArchivalState)} ${(d.config && d.config.historyArchivalUri) || ''}`],
      ['Active cluster', d.replicationConfig && d.replicationConfig.activeClusterName],
      ['Clusters', ((d.replicationConfig && d.replicationConfig.clusters) || []).map((c) => c.clusterName).join(', ')],
      ['Failover version', d.failoverVersion],
    ]} /></div>`;
}

export function NamespaceDetail({ ns, query = {} }) {
  const { data, error, reload } = useLoad((signal) => loadNamespace(ns, signal), [ns]);
  const [asOfText, setAsOfText] = useState(query.asOf || '');
  const [dialog, setDialog] = useState('');
  const [value, setValue] = useState('');
  const [saType, setSaType] = useState('INDEXED_VALUE_TYPE_KEYWORD');
  const [archivalForm, setArchivalForm] = useState({});
  if (error) return html`<h1>${ns}</h1><${ErrorBox} error=${error} />`;
  if (!data) return html`<h1>${ns}</h1><p class="muted">Loading…</p>`;
  const { detail, attributes, versions } = data;
  const info = detail.namespaceInfo || {};
  const config = detail.config || {};
  const replication = detail.replicationConfig || {};
  const open = (name, initial = '') => { setValue(initial); setDialog(name); };
  const act = (rpc, fn) => async () => {
    try { await fn(); } catch (e) { noteRefusal(rpc, e); throw e; }
    reload();
  };
  const update = (body) => call(`api/v1/namespaces/${path(ns)}/update`, { method: 'POST', body });
  const custom = Object.entries((attributes && attributes.customAttributes) || {});
  const system = Object.entries((attributes && attributes.systemAttributes) || {});
  return html`
    <div class="crumbs"><a href=${href(['namespaces'])}>Namespaces</a></div>
    <h1>${info.name} <span class="badge">${stateName(info.state)}</span>
      <a class="button" href=${href(['namespaces', ns, 'workflows'])}>Workflows</a>
      <${ActionButton} call="UpdateNamespace" onClick=${() => open('retention', span(seconds(config.workflowExecutionRetentionTtl)).replace(/\s/g, ''))}>Retention…<//>
      ${(replication.clusters || []).length > 1 && html`<${ActionButton} call="UpdateNamespace" onClick=${() => open('failover', replication.activeClusterName)}>Fail over…<//>`}
      <${ActionButton} call="UpdateNamespace" onClick=${() => { setArchivalForm({
        history: config.historyArchivalState === 'ARCHIVAL_STATE_ENABLED', historyUri: config.historyArchivalUri || '',
        visibility: config.visibilityArchivalState === 'ARCHIVAL_STATE_ENABLED', visibilityUri: config.visibilityArchivalUri || '' }); setDialog('archival'); }}>Archival…<//>
      <${ActionButton} call="AddSearchAttributes" onClick=${() => open('attribute')}>Add search attribute…<//>
      <${ActionButton} call="DeleteNamespace" class="danger" onClick=${() => open('delete')}>Delete…<//>
    </h1>
    <div class="panel"><${Facts} items=${[
      ['Id', info.id], ['Description', info.description], ['Owner', info.ownerEmail],
      ['Retention', span(seconds(config.workflowExecutionRetentionTtl))],
      ['History archival', `${archival(config.historyArchivalState)} ${config.historyArchivalUri || ''}`],
      ['Visibility archival', `${archival(config.visibilityArchivalState)} ${config.visibilityArchivalUri || ''}`],
      ['Global', detail.isGlobalNamespace ? 'yes' : 'no'],
      ['Active cluster', replication.activeClusterName],
      ['Clusters', (replication.clusters || []).map((c) => c.clusterName).join(', ')],
      ['Failover version', detail.failoverVersion],
    ]} /></div>
    <h2>Search attributes</h2>
    <table class="grid" aria-label="Search attributes">
      <thead><tr><th>Name</th><th>Type</th><th>Kind</th><th></th></tr></thead>
      <tbody>${custom.map(([name, type]) => html`<tr><td>${name}</td><td>${enumWords(type, 'INDEXED_VALUE_TYPE_')}</td><td>custom</td>
          <td><${ActionButton} call="RemoveSearchAttributes" class="danger" onClick=${() => open('remove-attribute', name)}>Remove<//></td></tr>`)}
        ${system.map(([name, type]) => html`<tr><td>${name}</td><td>${enumWords(type, 'INDEXED_VALUE_TYPE_')}</td><td class="muted">system</td><td></td></tr>`)}
      </tbody></table>
    ${versions && html`<h2>Version history</h2>
      <form class="toolbar" onSubmit=${(e) => { e.preventDefault(); navigate(['namespaces', ns], { asOf: asOfText.trim() }); }}>
        <label>As of <input aria-label="As of" placeholder="2026-11-01T00:00:00Z" value=${asOfText} onInput=${(e) => setAsOfText(e.currentTarget.value)} /></label>
        <button type="submit">Show</button></form>
      ${query.asOf && html`<${AsOf} ns=${ns} asOf=${query.asOf} />`}
      <table class="grid" aria-label="Version history">
        <thead><tr><th>Version</th><th>Operation</th><th>Valid from</th><th>Valid to</th><th>Active cluster</th></tr></thead>
        <tbody>${(versions.versions || []).map((v) => html`<tr><td><a href=${href(['namespaces', ns], { asOf: v.validFrom })}
            title="This version's settings">${v.version}</a></td><td>${v.operation}</td>
          <td>${time(v.validFrom)}</td><td>${v.validTo ? time(v.validTo) : html`<span class="muted">current</span>`}</td>
          <td>${v.record && v.record.replicationConfig && v.record.replicationConfig.activeClusterName}</td></tr>`)}</tbody></table>`}

    <${Dialog} title="Retention" open=${dialog === 'retention'} onClose=${() => setDialog('')} submitLabel="Save"
      onSubmit=${act('UpdateNamespace', () => update({ config: { workflowExecutionRetentionTtl: durationJson(value) } }))}>
      <label>Keep closed runs for (1-30 days: 3d, 72h) <input value=${value} onInput=${(e) => setValue(e.currentTarget.value)} /></label>
    <//>
    <${Dialog} title="Archival" open=${dialog === 'archival'} onClose=${() => setDialog('')} submitLabel="Save"
      onSubmit=${act('UpdateNamespace', () => update({ config: {
        historyArchivalState: archivalForm.history ? 'ARCHIVAL_STATE_ENABLED' : 'ARCHIVAL_STATE_DISABLED',
        historyArchivalUri: archivalForm.historyUri.trim(),
        visibilityArchivalState: archivalForm.visibility ? 'ARCHIVAL_STATE_ENABLED' : 'ARCHIVAL_STATE_DISABLED',
        visibilityArchivalUri: archivalForm.visibilityUri.trim() } }))}>
      <label><input type="checkbox" checked=${archivalForm.history} onChange=${(e) => setArchivalForm({ ...archivalForm, history: e.currentTarget.checked })} /> Archive histories</label>
      <label>History URI (empty: the cluster's default; fixed once set) <input value=${archivalForm.historyUri} onInput=${(e) => setArchivalForm({ ...archivalForm, historyUri: e.currentTarget.value })} /></label>
      <label><input type="checkbox" checked=${archivalForm.visibility} onChange=${(e) => setArchivalForm({ ...archivalForm, visibility: e.currentTarget.checked })} /> Archive visibility records</label>
      <label>Visibility URI <input value=${archivalForm.visibilityUri} onInput=${(e) => setArchivalForm({ ...archivalForm, visibilityUri: e.currentTarget.value })} /></label>
      <p class="muted"><a href=${href(['namespaces', ns, 'archival'])}>Archival status and archived runs</a></p>
    <//>
    <${Dialog} title="Fail over" open=${dialog === 'failover'} onClose=${() => setDialog('')} submitLabel="Fail over" danger
      onSubmit=${act('UpdateNamespace', () => update({ replicationConfig: { activeClusterName: value } }))}>
      <label>Active cluster <select value=${value} onChange=${(e) => setValue(e.currentTarget.value)}>
        ${(replication.clusters || []).map((c) => html`<option value=${c.clusterName}>${c.clusterName}</option>`)}</select></label>
    <//>
    <${Dialog} title="Add a search attribute" open=${dialog === 'attribute'} onClose=${() => setDialog('')} submitLabel="Add"
      onSubmit=${act('AddSearchAttributes', () => call(`tock/v1/namespaces/${path(ns)}/search-attributes`,
        { method: 'POST', body: { searchAttributes: { [value.trim()]: saType } } }))}>
      <label>Name <input required value=${value} onInput=${(e) => setValue(e.currentTarget.value)} /></label>
      <label>Type <select value=${saType} onChange=${(e) => setSaType(e.currentTarget.value)}>
        ${['KEYWORD', 'TEXT', 'INT', 'DOUBLE', 'BOOL', 'DATETIME', 'KEYWORD_LIST'].map((t) =>
          html`<option value=${`INDEXED_VALUE_TYPE_${t}`}>${enumWords(t)}</option>`)}</select></label>
    <//>
    <${Dialog} title=${`Remove search attribute ${value}`} open=${dialog === 'remove-attribute'} onClose=${() => setDialog('')}
      submitLabel="Remove" danger onSubmit=${act('RemoveSearchAttributes', () => call(`tock/v1/namespaces/${path(ns)}/search-attributes/remove`,
        { method: 'POST', body: { searchAttributes: [value] } }))}>
      <p>Runs keep their values, but queries can no longer use ${value}.</p>
    <//>
    <${Dialog} title=${`Delete namespace ${ns}`} open=${dialog === 'delete'} onClose=${() => setDialog('')} submitLabel="Delete" danger
      onSubmit=${async () => {
        if (value !== ns) throw new Error(`type the namespace's name (${ns}) to delete it`);
        try { await call(`tock/v1/namespaces/${path(ns)}`, { method: 'DELETE' }); } catch (e) { noteRefusal('DeleteNamespace', e); throw e; }
        navigate(['namespaces']);
      }}>
      <p>Its workflows and their histories are deleted too. Type <strong>${ns}</strong> to confirm.</p>
      <label>Name <input value=${value} onInput=${(e) => setValue(e.currentTarget.value)} /></label>
    <//>`;
}
