// A run's spans and signals computed in the browser from its events, in the shape of the
// server's GET tock/v1/.../summary (lib/admin/history_spans.cc has the same rules), for a
// history imported from a file, which has no server behind it.
import { attributesOf } from './events.js';

const CLOSED = { EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED: 'COMPLETED', EVENT_TYPE_WORKFLOW_EXECUTION_FAILED: 'FAILED',
  EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT: 'TIMED_OUT', EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED: 'CANCELED',
  EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED: 'TERMINATED', EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW: 'CONTINUED_AS_NEW' };

// [span kind, id field, name, status] of the events that open a span.
const OPENS = {
  EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: (a) => ['activity', a.activityId, (a.activityType || {}).name, 'SCHEDULED'],
  EVENT_TYPE_TIMER_STARTED: (a) => ['timer', a.timerId, '', 'STARTED'],
  EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED: (a) => ['child', a.workflowId, (a.workflowType || {}).name, 'INITIATED'],
  EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED: (a) => ['update', a.protocolInstanceId,
    ((a.acceptedRequest || {}).input || {}).name, 'ACCEPTED'],
};
// [the field naming the opening event, status, where the failure is] of the events that close one.
const CLOSES = {
  EVENT_TYPE_ACTIVITY_TASK_COMPLETED: ['scheduledEventId', 'COMPLETED'],
  EVENT_TYPE_ACTIVITY_TASK_FAILED: ['scheduledEventId', 'FAILED', (a) => a.failure],
  EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: ['scheduledEventId', 'TIMED_OUT', (a) => a.failure],
  EVENT_TYPE_ACTIVITY_TASK_CANCELED: ['scheduledEventId', 'CANCELED'],
  EVENT_TYPE_TIMER_FIRED: ['startedEventId', 'FIRED'],
  EVENT_TYPE_TIMER_CANCELED: ['startedEventId', 'CANCELED'],
  EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED: ['initiatedEventId', 'START_FAILED'],
  EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED: ['initiatedEventId', 'COMPLETED'],
  EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED: ['initiatedEventId', 'FAILED', (a) => a.failure],
  EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED: ['initiatedEventId', 'CANCELED'],
  EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT: ['initiatedEventId', 'TIMED_OUT'],
  EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED: ['initiatedEventId', 'TERMINATED'],
  EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED: ['acceptedEventId', 'COMPLETED', (a) => (a.outcome || {}).failure],
};
const STARTS = { EVENT_TYPE_ACTIVITY_TASK_STARTED: 'scheduledEventId', EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED: 'initiatedEventId' };

const failureText = (f) => (f && f.message ? String(f.message).slice(0, 200) : '');

export function summarize(events) {
  const out = { status: 'RUNNING', spans: [], points: [], events: events.length };
  const at = new Map(); // first event id -> span
  for (const e of events) {
    const [, a] = attributesOf(e);
    const id = Number(e.eventId);
    const type = e.eventType;
    if (type === 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED') out.start = e.eventTime;
    if (CLOSED[type]) { out.status = CLOSED[type]; out.end = e.eventTime; }
    if (OPENS[type]) {
      const [kind, spanId, name, status] = OPENS[type](a);
      const s = { kind, id: spanId || '', name: name || '', eventId: id, start: e.eventTime, status };
      at.set(id, s);
      out.spans.push(s);
    } else if (STARTS[type]) {
      const s = at.get(Number(a[STARTS[type]]));
      if (s) {
        s.started = e.eventTime;
        s.status = 'STARTED';
        if (a.attempt) s.attempt = Math.max(1, Number(a.attempt));
        if (a.lastFailure) s.failure = failureText(a.lastFailure);
      }
    } else if (CLOSES[type]) {
      const [field, status, failure] = CLOSES[type];
      const s = at.get(Number(a[field]));
      if (s) {
        s.end = e.eventTime;
        s.status = status;
        if (failure && failure(a)) s.failure = failureText(failure(a));
      }
    } else if (type === 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED') {
      out.points.push({ kind: 'signal', name: a.signalName || '', eventId: id, time: e.eventTime });
    }
  }
  return out;
}
