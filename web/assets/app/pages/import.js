// A history file browsed in the same views as a server's runs, without a server: the JSON
// `tock workflow show -o json` and Temporal's tools write (a list of events, {"events":
// [...]} or {"history": {"events": [...]}}), payloads in Temporal's proto form or already
// short. Dropped on the page or chosen; kept in this tab only.
import { useState } from 'preact/hooks';
import { signal } from '@preact/signals';
import { html } from '../html.js';
import { href, withQuery } from '../router.js';
import { HistoryView } from '../history_view.js';
import { Timeline } from '../timeline.js';
import { summarize } from '../summary.js';
import { ErrorBox } from '../ui.js';
import { shorten } from '../payloads.js';

const MAX_BYTES = 256 * 1024 * 1024;
const imported = signal(null); // { name, events }

// "WorkflowExecutionStarted" (older tools) as "EVENT_TYPE_WORKFLOW_EXECUTION_STARTED".
export function eventTypeName(t) {
  if (typeof t !== 'string' || t.startsWith('EVENT_TYPE_')) return t;
  return `EVENT_TYPE_${t.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}`;
}

export function parseHistoryFile(text) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error(`the file is not JSON: ${e.message}`);
  }
  const events = Array.isArray(doc) ? doc : (doc && (doc.events || (doc.history && doc.history.events)));
  if (!Array.isArray(events) || events.length === 0) {
    throw new Error('no events in the file: expected a list of events, {"events": [...]} or {"history": {"events": [...]}}');
  }
  return events.map((e, i) => {
    if (!e || typeof e !== 'object' || e.eventId === undefined) throw new Error(`event ${i + 1} of the file has no eventId`);
    return { ...shorten(e), eventId: String(e.eventId), eventType: eventTypeName(e.eventType) };
  });
}

export function Import({ query }) {
  const [error, setError] = useState(null);
  const [over, setOver] = useState(false);
  const read = async (file) => {
    setError(null);
    if (!file) return;
    if (file.size > MAX_BYTES) { setError(new Error(`the file is ${file.size} bytes; at most ${MAX_BYTES} are read`)); return; }
    try {
      imported.value = { name: file.name, events: parseHistoryFile(await file.text()) };
      withQuery({ event: '' });
    } catch (e) {
      setError(e);
    }
  };
  const loaded = imported.value;
  return html`<h1>Import a history</h1>
    <div class=${over ? 'panel dropzone over' : 'panel dropzone'}
      onDragOver=${(e) => { e.preventDefault(); setOver(true); }} onDragLeave=${() => setOver(false)}
      onDrop=${(e) => { e.preventDefault(); setOver(false); read(e.dataTransfer.files[0]); }}>
      <label>Drop a history JSON file here, or choose one:
        <input type="file" accept=".json,application/json" aria-label="History file" onChange=${(e) => read(e.currentTarget.files[0])} /></label>
      <p class="muted">It is read in this browser only: nothing is sent to the server.</p>
    </div>
    <${ErrorBox} error=${error} />
    ${loaded && html`
      <h2>${loaded.name}: ${loaded.events.length} events</h2>
      <${StaticHistory} events=${loaded.events} segments=${['import']} query=${query} label="Imported history views" />`}`;
}

// Events held in the page (a file's, an archive's) in the history and timeline views.
export function StaticHistory({ events, segments, query, label }) {
  const tab = query.tab || 'history';
  return html`<nav class="tabs" role="tablist" aria-label=${label}>
      <a role="tab" href=${href(segments, { ...query, tab: 'history' })} aria-selected=${tab === 'history'}>History</a>
      <a role="tab" href=${href(segments, { ...query, tab: 'timeline' })} aria-selected=${tab === 'timeline'}>Timeline</a>
    </nav>
    ${tab === 'timeline'
      ? html`<${Timeline} summary=${summarize(events)} onOpen=${(id) => withQuery({ tab: 'history', view: 'feed', event: id }, { replace: false })} />`
      : html`<${HistoryView} imported=${events} total=${events.length} query=${query} />`}`;
}
