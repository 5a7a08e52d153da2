// The overview's live charts: this host's metrics (GET tock/v1/metrics, Prometheus' text),
// sampled every few seconds while the page is open, turned into rates and averages between
// samples, and drawn with uPlot (its minified build, a classic script loaded by the first
// chart: no other page pays for it).
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { callText, root } from './api.js';
import { timeZone, theme } from './state.js';

// One sample's series: 'name{a="x",b="y"}' -> value. Comments and malformed lines are skipped.
export function parsePrometheus(text) {
  const out = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line[0] === '#') continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (m) out.set(m[1] + (m[2] || ''), Number(m[3]));
  }
  return out;
}

// The sum of the series of `name` whose labels include every `labels` pair (all of them
// for no labels).
function total(sample, name, labels = {}) {
  let sum = 0;
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const [key, value] of sample) {
    const brace = key.indexOf('{');
    const family = brace < 0 ? key : key.slice(0, brace);
    if (family !== name) continue;
    if (wanted.every((w) => key.includes(w))) sum += value;
  }
  return sum;
}

const START_CALLS = ['StartWorkflowExecution', 'SignalWithStartWorkflowExecution', 'ExecuteMultiOperation'];

// What each chart shows between two samples (`a` then `b`, `dt` seconds apart): its series'
// values, null where nothing happened (an average of no observations).
const perSecond = (a, b, dt, name, labels) => Math.max(0, total(b, name, labels) - total(a, name, labels)) / dt;
function averageMs(a, b, name, labels) {
  const count = total(b, `${name}_count`, labels) - total(a, `${name}_count`, labels);
  if (count <= 0) return null;
  return ((total(b, `${name}_sum`, labels) - total(a, `${name}_sum`, labels)) / count) * 1000;
}

export const CHARTS = [
  { title: 'Workflow starts per second', unit: '/s', series: [
    ['starts', (a, b, dt) => START_CALLS.reduce((s, op) => s + perSecond(a, b, dt, 'service_requests_total', { operation: op }), 0)],
  ] },
  { title: 'Task schedule-to-start latency', unit: 'ms', series: [
    ['workflow tasks', (a, b) => averageMs(a, b, 'task_schedule_to_start_latency', { task_type: 'Workflow' })],
    ['activity tasks', (a, b) => averageMs(a, b, 'task_schedule_to_start_latency', { task_type: 'Activity' })],
  ] },
  { title: 'Task backlog', unit: 'tasks', series: [
    ['workflow tasks', (a, b) => total(b, 'task_backlog', { task_type: 'Workflow' })],
    ['activity tasks', (a, b) => total(b, 'task_backlog', { task_type: 'Activity' })],
  ] },
  { title: 'Persistence latency', unit: 'ms', series: [
    ['all calls', (a, b) => averageMs(a, b, 'persistence_latency')],
  ] },
];

// Samples of tock/v1/metrics every `everyMs` while mounted; the charts' columns
// ([times, ...series] per chart, at most `keep` points) and the last error.
export function useMetrics(everyMs = 2000, keep = 150) {
  const [state, setState] = useState({ columns: CHARTS.map((c) => [[], ...c.series.map(() => [])]), error: null });
  const last = useRef(null);
  useEffect(() => {
    let stopped = false;
    let timer = 0;
    const abort = new AbortController();
    const tick = async () => {
      try {
        const text = await callText('tock/v1/metrics', { signal: abort.signal });
        const now = Date.now() / 1000;
        const sample = parsePrometheus(text);
        const previous = last.current;
        last.current = { at: now, sample };
        if (previous) {
          const dt = Math.max(0.001, now - previous.at);
          setState((s) => ({
            error: null,
            columns: s.columns.map((cols, i) => {
              const values = [now, ...CHARTS[i].series.map(([, f]) => f(previous.sample, sample, dt))];
              return cols.map((col, j) => [...col.slice(-(keep - 1)), values[j]]);
            }),
          }));
        }
      } catch (e) {
        if (e.name === 'AbortError') return;
        setState((s) => ({ ...s, error: e }));
      }
      if (!stopped) timer = setTimeout(tick, everyMs);
    };
    tick();
    return () => { stopped = true; clearTimeout(timer); abort.abort(); };
  }, []);
  return state;
}

let uPlotLoaded = null;
function loadUPlot() {
  uPlotLoaded ||= new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = new URL('assets/vendor/uplot.min.js', root).href;
    script.onload = () => resolve(window.uPlot);
    script.onerror = () => { uPlotLoaded = null; reject(new Error('the chart library did not load')); };
    document.head.appendChild(script);
  });
  return uPlotLoaded;
}

const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

// One uPlot chart of `columns`, as wide as its box, in the theme's colours and the chosen
// time zone (both redraw it).
export function Chart({ spec, columns }) {
  const box = useRef(null);
  const plot = useRef(null);
  // (uPlot is a function: held in a box, or useState would call it.)
  const [lib, setLib] = useState({ uPlot: window.uPlot || null });
  useEffect(() => { if (!lib.uPlot) loadUPlot().then((uPlot) => setLib({ uPlot }), () => {}); }, []);
  useEffect(() => {
    const { uPlot } = lib;
    if (!uPlot) return undefined;
    const text = css('--text');
    const grid = css('--line');
    const colours = [css('--accent'), css('--warn')];
    const zone = timeZone.value;
    const opts = {
      width: Math.max(200, box.current.clientWidth),
      height: 160,
      legend: { live: true },
      tzDate: zone === 'local' ? undefined : (ts) => uPlot.tzDate(new Date(ts * 1000), zone),
      scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(1, max * 1.1)] } },
      axes: [
        { stroke: text, grid: { stroke: grid }, ticks: { stroke: grid } },
        { stroke: text, grid: { stroke: grid }, ticks: { stroke: grid }, size: 56 },
      ],
      series: [{}, ...spec.series.map(([label], i) => ({
        label, stroke: colours[i % colours.length], width: 2, spanGaps: false,
        value: (u, v) => (v === null || v === undefined ? '–' : `${Number(v).toFixed(v < 10 ? 2 : 0)} ${spec.unit}`),
      }))],
    };
    plot.current = new uPlot(opts, columns, box.current);
    const resize = new ResizeObserver(() => plot.current.setSize({ width: Math.max(200, box.current.clientWidth), height: 160 }));
    resize.observe(box.current);
    return () => { resize.disconnect(); plot.current.destroy(); plot.current = null; };
  }, [lib, theme.value, timeZone.value]);
  useEffect(() => { if (plot.current) plot.current.setData(columns); }, [columns]);
  // The newest point's values, for tests and tools reading the page.
  const last = columns.slice(1).map((c) => (c.length && c[c.length - 1] !== null ? c[c.length - 1] : '')).join(',');
  return html`<figure class="chart" aria-label=${spec.title} data-points=${columns[0].length} data-last=${last}>
    <figcaption>${spec.title} <span class="muted">(${spec.unit})</span></figcaption>
    <div ref=${box}></div></figure>`;
}

export function LiveCharts() {
  const { columns, error } = useMetrics();
  const points = columns[0][0].length;
  return html`<h2>This host, live</h2>
    ${error && html`<p class="muted" role="status">No metrics: ${error.message}</p>`}
    ${!error && points === 0 && html`<p class="muted">Sampling…</p>`}
    <div class="charts">${CHARTS.map((spec, i) => html`<${Chart} spec=${spec} columns=${columns[i]} />`)}</div>`;
}
