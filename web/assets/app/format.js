// Times in the chosen zone, durations, and Temporal's enum names made readable.
import { timeZone } from './state.js';

const formatters = new Map();
function formatter(zone) {
  const key = zone || 'local';
  if (!formatters.has(key)) {
    const options = { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit',
      second: '2-digit', fractionalSecondDigits: 3, hour12: false, timeZoneName: 'short' };
    if (key !== 'local') options.timeZone = key;
    let f;
    try { f = new Intl.DateTimeFormat('en-CA', options); } catch { f = new Intl.DateTimeFormat('en-CA', { ...options, timeZone: 'UTC' }); }
    formatters.set(key, f);
  }
  return formatters.get(key);
}

export function parseTime(text) {
  if (!text) return null;
  const t = Date.parse(text);
  return Number.isNaN(t) ? null : t;
}

// An RFC 3339 time (or milliseconds) in the chosen zone: "2026-11-29, 10:15:02.120 UTC".
export function time(value) {
  const ms = typeof value === 'number' ? value : parseTime(value);
  if (ms === null || ms === undefined) return '';
  return formatter(timeZone.value).format(new Date(ms));
}

// "1.5s" (protobuf JSON) to seconds.
export function seconds(duration) {
  if (!duration) return 0;
  const m = /^(-?\d+(?:\.\d+)?)s$/.exec(duration);
  return m ? Number(m[1]) : 0;
}

// 93.5 seconds as "1m 33.5s"; days and hours for the long ones.
export function span(totalSeconds) {
  if (totalSeconds === null || totalSeconds === undefined || Number.isNaN(totalSeconds)) return '';
  let s = Math.abs(totalSeconds);
  const parts = [];
  for (const [unit, size] of [['d', 86400], ['h', 3600], ['m', 60]]) {
    if (s >= size) {
      parts.push(`${Math.floor(s / size)}${unit}`);
      s %= size;
    }
  }
  if (s > 0 || parts.length === 0) parts.push(`${Number(s.toFixed(s < 10 ? 3 : 1))}s`);
  return (totalSeconds < 0 ? '-' : '') + parts.slice(0, 3).join(' ');
}

// WORKFLOW_EXECUTION_STATUS_RUNNING -> Running; EVENT_TYPE_ACTIVITY_TASK_STARTED -> ActivityTaskStarted.
export function enumWords(name, prefix) {
  if (!name) return '';
  const rest = prefix && name.startsWith(prefix) ? name.slice(prefix.length) : name;
  return rest.toLowerCase().split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(prefix === 'EVENT_TYPE_' ? '' : ' ');
}

export const statusName = (s) => enumWords(s, 'WORKFLOW_EXECUTION_STATUS_') || 'Unknown';
export const eventName = (t) => enumWords(t, 'EVENT_TYPE_');

export function statusClass(s) {
  return `badge s-${statusName(s).toLowerCase().replace(/\s+/g, '')}`;
}

// A JSON value as indented text (payloads arrive in Temporal's shorthand: plain values).
export function pretty(value) {
  return JSON.stringify(value, null, 2);
}
