// A run's history: newest events first (they come first), the older ones filled in behind,
// new ones followed while the run is open. Feed (a row an event), compact (a row an
// activity, timer, child, update or signal, from the server's summary) and JSON views;
// filters by category, failures, activity type and text in the decoded payloads; jump to
// an event id. Every choice is in the URL. Virtual lists keep 100,000 events smooth.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { call, path } from './api.js';
import { withQuery } from './router.js';
import { time, pretty, eventName, span, parseTime } from './format.js';
import { VirtualList } from './virtual_list.js';
import { ErrorBox, download } from './ui.js';
import { summarize } from './summary.js';
import { CATEGORIES, categoryOf, isFailure, activityTypeOf, summaryOf, loadHistory, followHistory } from './events.js';

const CHUNK = 5000; // events tested per frame when a filter changes

// The loaded events by id (index id-1), growing as pages and new events arrive; or, given
// `imported` (a history read from a file), those.
function useEvents(ns, workflowId, runId, running, imported) {
  const store = useRef({ byId: [], max: 0, loaded: 0 });
  const [version, setVersion] = useState(0);
  const [error, setError] = useState(null);
  const [complete, setComplete] = useState(false);
  useEffect(() => {
    store.current = { byId: [], max: 0, loaded: 0 };
    setComplete(false);
    setError(null);
    const abort = new AbortController();
    const put = (e) => {
      const id = Number(e.eventId);
      const s = store.current;
      if (!s.byId[id - 1]) s.loaded += 1;
      s.byId[id - 1] = e;
      if (id > s.max) s.max = id;
    };
    if (imported) {
      imported.forEach(put);
      setVersion((v) => v + 1);
      setComplete(true);
      return () => {};
    }
    let followed = false;
    const follow = () => {
      if (followed || !running) return;
      followed = true;
      followHistory(ns, workflowId, runId, store.current.max, (e) => { put(e); setVersion((v) => v + 1); }, abort.signal)
        .catch(() => {});
    };
    loadHistory(ns, workflowId, runId, (events) => {
      events.forEach(put);
      setVersion((v) => v + 1);
      follow(); // from the newest event the first page brought
    }, abort.signal).then(() => setComplete(true), (e) => { if (!abort.signal.aborted) setError(e); });
    return () => abort.abort();
  }, [ns, workflowId, runId, running, imported]);
  return { store: store.current, version, error, complete };
}

// The ids to show, in display order: all of them (computed per row), or those a filter
// keeps (tested a chunk per frame, so that a text search over 100,000 events never blocks).
function useMatches(store, version, filter, order) {
  const active = Boolean(filter.cat || filter.failed || filter.activity || filter.q);
  const [matches, setMatches] = useState(null);
  const key = JSON.stringify(filter);
  const text = useRef(new Map()); // id -> lower-case JSON, made once
  useEffect(() => {
    if (!active) { setMatches(null); return undefined; }
    let cancelled = false;
    const needle = (filter.q || '').toLowerCase();
    const keep = (e) => {
      if (filter.cat && categoryOf(e.eventType) !== filter.cat) return false;
      if (filter.failed && !isFailure(e)) return false;
      if (filter.activity && activityTypeOf(e, store.byId) !== filter.activity) return false;
      if (needle) {
        let t = text.current.get(e.eventId);
        if (t === undefined) { t = JSON.stringify(e).toLowerCase(); text.current.set(e.eventId, t); }
        if (!t.includes(needle)) return false;
      }
      return true;
    };
    (async () => {
      const found = [];
      for (let start = 0; start < store.max && !cancelled; start += CHUNK) {
        for (let i = start; i < Math.min(store.max, start + CHUNK); i++) {
          const e = store.byId[i];
          if (e && keep(e)) found.push(i + 1);
        }
        if (start + CHUNK < store.max) await new Promise((r) => requestAnimationFrame(r));
      }
      if (!cancelled) setMatches(order === 'asc' ? found : found.reverse());
    })();
    return () => { cancelled = true; };
  }, [key, version, order, store]);
  return active ? (matches || []) : null;
}

// `imported`: the events of a history file (no server: the compact view is computed here
// and nothing is downloaded or followed).
export function HistoryView({ ns, workflowId, runId, running, total, query, imported }) {
  const view = query.view || 'feed';
  const order = query.order || 'desc';
  const filter = { cat: query.cat || '', failed: query.failed || '', activity: query.activity || '', q: query.q || '' };
  const { store, version, error, complete } = useEvents(ns, workflowId, runId, running, imported);
  const matches = useMatches(store, version, filter, order);
  const count = matches ? matches.length : Math.max(store.max, Number(total || 0));
  const idAt = (i) => (matches ? matches[i] : order === 'asc' ? i + 1 : count - i);
  const selectedId = Number(query.event || 0);
  const selected = useMemo(() => {
    if (!selectedId) return -1;
    if (matches) return matches.indexOf(selectedId);
    return order === 'asc' ? selectedId - 1 : count - selectedId;
  }, [selectedId, matches, order, count]);
  const [jump, setJump] = useState('');
  const activities = useMemo(() => {
    const names = new Set();
    for (const e of store.byId) if (e && e.activityTaskScheduledEventAttributes) names.add(e.activityTaskScheduledEventAttributes.activityType.name);
    return [...names].sort();
  }, [version, store]);

  const select = (i) => withQuery({ event: idAt(i) });
  const setFilter = (k, v) => withQuery({ [k]: v, event: '' });
  const event = selectedId ? store.byId[selectedId - 1] : null;

  const downloadHistory = async () => {
    const events = [];
    let next = '';
    do {
      const page = await call(`api/v1/namespaces/${path(ns)}/workflows/${path(workflowId)}/history`,
        { params: { 'execution.runId': runId, nextPageToken: next, noPayloadShorthand: 'true', maximumPageSize: 1000 } });
      events.push(...((page.history && page.history.events) || []));
      next = page.nextPageToken || '';
    } while (next);
    download(`${workflowId}-${runId}-history.json`, 'application/json', JSON.stringify({ events }, null, 2));
  };

  const row = (i) => {
    const id = idAt(i);
    const e = store.byId[id - 1];
    if (!e) return [html`<span>${id}</span>`, html`<span class="muted">loading…</span>`, html`<span></span>`, html`<span></span>`];
    if (view === 'json') return [html`<span>${id}</span>`, html`<span class="mono">${JSON.stringify(e)}</span>`];
    return [html`<span>${id}</span>`, html`<span>${time(e.eventTime)}</span>`,
      html`<span class=${isFailure(e) ? 'event-failed' : ''}>${eventName(e.eventType)}</span>`,
      html`<span class="muted">${summaryOf(e)}</span>`];
  };

  return html`
    <div class="toolbar" role="group" aria-label="History view">
      ${['feed', 'compact', 'json'].map((v) => html`<button type="button" aria-pressed=${view === v}
        onClick=${() => withQuery({ view: v })}>${v === 'json' ? 'JSON' : v[0].toUpperCase() + v.slice(1)}</button>`)}
      ${view !== 'compact' && html`
        <select aria-label="Category" value=${filter.cat} onChange=${(e) => setFilter('cat', e.currentTarget.value)}>
          <option value="">Every category</option>${CATEGORIES.map((c) => html`<option value=${c}>${c}</option>`)}</select>
        <select aria-label="Activity type" value=${filter.activity} onChange=${(e) => setFilter('activity', e.currentTarget.value)}>
          <option value="">Every activity type</option>${activities.map((a) => html`<option value=${a}>${a}</option>`)}</select>
        <label><input type="checkbox" checked=${Boolean(filter.failed)} onChange=${(e) => setFilter('failed', e.currentTarget.checked ? '1' : '')} /> Failures only</label>
        <input type="search" aria-label="Search in events" placeholder="Search in events and payloads" value=${filter.q}
          onChange=${(e) => setFilter('q', e.currentTarget.value)} />
        <button type="button" onClick=${() => withQuery({ order: order === 'asc' ? 'desc' : 'asc' })}>${order === 'asc' ? 'Oldest first' : 'Newest first'}</button>
        <form onSubmit=${(e) => { e.preventDefault(); if (Number(jump) > 0) withQuery({ event: Number(jump), cat: '', failed: '', activity: '', q: '' }); }}>
          <input aria-label="Jump to event id" placeholder="Event id" size="8" value=${jump} onInput=${(e) => setJump(e.currentTarget.value)} />
          <button type="submit">Go</button></form>`}
      ${!imported && html`<button type="button" onClick=${downloadHistory}>Download JSON</button>`}
      <span class="muted" aria-live="polite">${store.loaded} of ${Math.max(store.max, Number(total || 0))} events${complete ? '' : ' (loading)'}${matches ? `, ${matches.length} match` : ''}</span>
    </div>
    <${ErrorBox} error=${error} />
    ${view === 'compact'
      ? html`<${CompactView} ns=${ns} workflowId=${workflowId} runId=${runId} version=${version} imported=${imported} />`
      : html`<div class="split">
          <div style="display:flex;flex-direction:column;min-height:0">
            <${VirtualList} id="events" label="Events" count=${count} rowHeight=${30}
              columns=${view === 'json' ? '70px 1fr' : '70px 200px 240px 1fr'}
              head=${view === 'json' ? [html`<span>Id</span>`, html`<span>Event</span>`] : [html`<span>Id</span>`, html`<span>Time</span>`, html`<span>Type</span>`, html`<span>Details</span>`]}
              row=${row} selected=${selected} scrollTo=${selected} onSelect=${select} />
          </div>
          <div class="detail" aria-label="Selected event">
            ${event ? html`<h2 style="margin-top:0">${event.eventId} ${eventName(event.eventType)}</h2><pre class="json">${pretty(event)}</pre>`
              : html`<p class="muted">Select an event (arrows, Enter) to see all of it.</p>`}
          </div></div>`}`;
}

// A row per activity, timer, child, update and signal: the server's summary of the run (or
// the browser's, of an imported history).
function CompactView({ ns, workflowId, runId, version, imported }) {
  const [summary, setSummary] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    if (imported) { setSummary(summarize(imported)); return undefined; }
    const abort = new AbortController();
    call(`tock/v1/namespaces/${path(ns)}/workflows/${path(workflowId)}/summary`, { params: { runId }, signal: abort.signal })
      .then(setSummary, (e) => { if (!abort.signal.aborted) setError(e); });
    return () => abort.abort();
  }, [ns, workflowId, runId, Math.floor(version / 20), imported]);
  if (error) return html`<${ErrorBox} error=${error} />`;
  if (!summary) return html`<p class="muted">Loading…</p>`;
  const items = [...summary.spans.map((s) => ({ ...s, at: s.start })), ...summary.points.map((p) => ({ ...p, at: p.time, status: 'RECEIVED' }))]
    .sort((a, b) => Number(a.eventId) - Number(b.eventId));
  const duration = (s) => (s.end ? span((parseTime(s.end) - parseTime(s.start)) / 1000) : 'open');
  return html`<${VirtualList} id="compact" label="Activities, timers, children, updates and signals" count=${items.length} rowHeight=${30}
    columns="70px 90px minmax(140px,1fr) 120px 90px 110px minmax(120px,2fr)"
    head=${['Event', 'Kind', 'Name', 'Status', 'Attempt', 'Duration', 'Failure'].map((h) => html`<span>${h}</span>`)}
    row=${(i) => {
      const s = items[i];
      return [html`<span>${s.eventId}</span>`, html`<span>${s.kind}</span>`, html`<span>${s.name || s.id}</span>`,
        html`<span class=${/FAIL|TIMED/.test(s.status) ? 'event-failed' : ''}>${s.status}</span>`,
        html`<span>${s.attempt || ''}</span>`, html`<span>${s.kind === 'signal' ? '' : duration(s)}</span>`,
        html`<span class="event-failed">${s.failure || ''}</span>`];
    }}
    onOpen=${(i) => withQuery({ view: 'feed', event: items[i].eventId })} />`;
}
