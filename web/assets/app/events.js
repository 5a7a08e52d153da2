// What the console reads from a history event: its attributes, a category, a one-line
// summary, whether it is a failure; and a run's history loaded newest first.
import { call, path, url } from './api.js';
import { token } from './state.js';
import { eventName } from './format.js';
import { decodeAll } from './codec.js';

export function attributesOf(event) {
  for (const key of Object.keys(event)) {
    if (key.endsWith('EventAttributes')) return [key, event[key]];
  }
  return ['', {}];
}

export const CATEGORIES = ['workflow', 'workflow task', 'activity', 'timer', 'signal', 'child', 'update', 'marker', 'other'];

export function categoryOf(type = '') {
  if (type.startsWith('EVENT_TYPE_WORKFLOW_TASK_')) return 'workflow task';
  if (type.startsWith('EVENT_TYPE_ACTIVITY_TASK_')) return 'activity';
  if (type.startsWith('EVENT_TYPE_TIMER_')) return 'timer';
  if (type.includes('SIGNAL')) return 'signal';
  if (type.includes('CHILD_WORKFLOW')) return 'child';
  if (type.startsWith('EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_')) return 'update';
  if (type === 'EVENT_TYPE_MARKER_RECORDED') return 'marker';
  if (type.startsWith('EVENT_TYPE_WORKFLOW_EXECUTION_')) return 'workflow';
  return 'other';
}

export function isFailure(event) {
  const t = event.eventType || '';
  return /_(FAILED|TIMED_OUT)$/.test(t) || t === 'EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED';
}

// The activity type an event belongs to (scheduled events name it; the others point at them).
export function activityTypeOf(event, byId) {
  const [, a] = attributesOf(event);
  if (a.activityType) return a.activityType.name;
  const scheduled = a.scheduledEventId && byId[Number(a.scheduledEventId) - 1];
  return scheduled ? activityTypeOf(scheduled, byId) : '';
}

function brief(value, max = 120) {
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  if (s === undefined) return '';
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

// One line: the names and the key values of an event.
export function summaryOf(event) {
  const [, a] = attributesOf(event);
  const parts = [];
  const add = (label, value) => { if (value !== undefined && value !== null && value !== '') parts.push(`${label}: ${brief(value)}`); };
  add('type', (a.workflowType || a.activityType || {}).name);
  add('id', a.activityId || a.timerId || a.updateId || (a.workflowExecution && a.workflowExecution.workflowId));
  add('signal', a.signalName);
  add('timer', a.startToFireTimeout);
  add('queue', a.taskQueue && a.taskQueue.name);
  add('attempt', a.attempt);
  add('input', a.input);
  add('result', a.result);
  add('failure', a.failure && a.failure.message);
  add('reason', a.reason);
  return parts.join('  ');
}

export { eventName };

// A run's events, newest page first, then the older ones, each page handed to `onPage` as
// it arrives; a page every animation frame at most, so that the page stays responsive.
export async function loadHistory(ns, workflowId, runId, onPage, signal, pageSize = 1000) {
  let next = '';
  do {
    const page = await call(`api/v1/namespaces/${path(ns)}/workflows/${path(workflowId)}/history-reverse`,
      { params: { 'execution.runId': runId, maximumPageSize: pageSize, nextPageToken: next }, signal });
    onPage(((page.history && page.history.events) || []));
    next = page.nextPageToken || '';
    if (next) await new Promise((r) => requestAnimationFrame(r));
  } while (next && !signal.aborted);
}

// Every event of a run, oldest first, at most `max` (a page of 1000 at a time): { events,
// archived } (archived: some page came from the history archive).
export async function loadAllEvents(ns, workflowId, runId, signal, max = 100000) {
  const events = [];
  let next = '';
  let archived = false;
  do {
    const page = await call(`api/v1/namespaces/${path(ns)}/workflows/${path(workflowId)}/history`,
      { params: { 'execution.runId': runId, maximumPageSize: 1000, nextPageToken: next }, signal });
    events.push(...((page.history || {}).events || []));
    archived = archived || Boolean(page.archived);
    next = page.nextPageToken || '';
  } while (next && events.length < max);
  return { events, archived };
}

// New events of a running run as they are written (server-sent events from
// tock/v1/.../events, read with fetch so that the token goes with it). Returns when the run
// closes, the stream ends or `signal` aborts.
export async function followHistory(ns, workflowId, runId, after, onEvent, signal) {
  const headers = { Accept: 'text/event-stream' };
  if (token.value) headers.Authorization = `Bearer ${token.value}`;
  const u = url(`tock/v1/namespaces/${path(ns)}/workflows/${path(workflowId)}/events`, { runId, after });
  const response = await fetch(u, { headers, signal });
  if (!response.ok || !response.body) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let kind = 'message';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) kind = line.slice(6).trim();
        else if (line.startsWith('data:')) data += line.slice(5).trim();
      }
      if (kind === 'end') return;
      if (kind === 'history' && data) onEvent(await decodeAll(JSON.parse(data), ns));
    }
  }
}
