// A run's timeline on a canvas: a lane per activity, timer, child workflow and update (the
// server's summary, no payloads), the time before an activity's last attempt started
// (retries and their backoff) drawn as its own segment, signals as marks on the top lane.
// Only the visible lanes are drawn, so 10,000 bars pan and zoom smoothly.
//   wheel: scroll the lanes; Ctrl+wheel or +/-: zoom at the pointer; drag or arrows: pan;
//   Shift+drag: brush a range to zoom into; double-click or 0: the whole run; click: the event.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { parseTime, span, time } from './format.js';

const LANE = 22;
const AXIS = 28;

function colors() {
  const css = getComputedStyle(document.documentElement);
  const v = (name) => css.getPropertyValue(name).trim();
  return { activity: v('--bar-activity'), timer: v('--bar-timer'), child: v('--bar-child'), update: v('--bar-update'),
    failed: v('--bar-failed'), backoff: v('--bar-backoff'), text: v('--text'), muted: v('--muted'), line: v('--line'),
    panel: v('--panel'), accent: v('--accent') };
}

// Spans as numbers (ms), open ones ending at the run's end or its last event.
export function bars(summary) {
  const runEnd = parseTime(summary.end) ?? Date.now();
  return summary.spans.map((s) => {
    const start = parseTime(s.start);
    const end = parseTime(s.end) ?? runEnd;
    return { ...s, t0: start, t1: Math.max(end, start), tStarted: parseTime(s.started),
      failed: /FAIL|TIMED_OUT|CANCELED|TERMINATED/.test(s.status), open: !s.end };
  });
}

function niceStep(ms, pixels) {
  const target = (ms / pixels) * 110; // a tick every ~110 px
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5,
    36e5, 72e5, 108e5, 216e5, 432e5, 864e5, 1728e5, 6048e5];
  return steps.find((s) => s >= target) || steps[steps.length - 1];
}

export function Timeline({ summary, onOpen }) {
  const canvas = useRef(null);
  const box = useRef(null);
  const data = useRef({ bars: [], signals: [], start: 0, end: 1 });
  const view = useRef({ t0: 0, t1: 1, y: 0 });
  const drag = useRef(null);
  const [tip, setTip] = useState(null);
  const [, redraw] = useState(0);

  useEffect(() => {
    const b = bars(summary);
    const start = parseTime(summary.start) ?? b.reduce((m, x) => Math.min(m, x.t0), Date.now());
    const end = b.reduce((m, x) => Math.max(m, x.t1), Math.max(parseTime(summary.end) ?? 0, start + 10));
    data.current = { bars: b, signals: summary.points.map((p) => ({ ...p, t: parseTime(p.time) })), start, end };
    view.current = { t0: start, t1: end + (end - start) * 0.02, y: 0 };
    draw();
  }, [summary]);

  useEffect(() => {
    const observer = new ResizeObserver(() => draw());
    observer.observe(box.current);
    return () => observer.disconnect();
  }, []);

  function geometry() {
    const c = canvas.current;
    const width = c.clientWidth;
    const height = c.clientHeight;
    const { t0, t1 } = view.current;
    const x = (t) => ((t - t0) / (t1 - t0)) * width;
    const tAt = (px) => t0 + (px / width) * (t1 - t0);
    return { c, width, height, x, tAt };
  }

  function draw() {
    const c = canvas.current;
    if (!c) return;
    const dpr = window.devicePixelRatio || 1;
    const { width, height, x } = geometry();
    if (c.width !== Math.round(width * dpr) || c.height !== Math.round(height * dpr)) {
      c.width = Math.round(width * dpr);
      c.height = Math.round(height * dpr);
    }
    const g = c.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    const k = colors();
    g.fillStyle = k.panel;
    g.fillRect(0, 0, width, height);
    const { t0, t1, y } = view.current;
    // Axis and grid.
    const step = niceStep(t1 - t0, width);
    g.font = '11px system-ui, sans-serif';
    g.textBaseline = 'middle';
    const origin = data.current.start; // ticks at whole steps from the run's start
    for (let t = origin + Math.ceil((t0 - origin) / step) * step; t <= t1; t += step) {
      const px = x(t);
      g.fillStyle = k.line;
      g.fillRect(px, AXIS - 6, 1, height);
      g.fillStyle = k.muted;
      g.fillText(`+${span((t - data.current.start) / 1000)}`, px + 3, 10);
    }
    // Signals on the axis.
    g.fillStyle = k.accent;
    for (const s of data.current.signals) {
      const px = x(s.t);
      if (px < -4 || px > width + 4) continue;
      g.beginPath();
      g.moveTo(px, AXIS - 10); g.lineTo(px + 4, AXIS - 5); g.lineTo(px, AXIS); g.lineTo(px - 4, AXIS - 5);
      g.fill();
    }
    // The visible lanes only.
    const all = data.current.bars;
    const first = Math.max(0, Math.floor(y / LANE));
    const last = Math.min(all.length, Math.ceil((y + height - AXIS) / LANE) + 1);
    let drawn = 0;
    g.save();
    g.beginPath();
    g.rect(0, AXIS, width, height - AXIS);
    g.clip();
    for (let i = first; i < last; i++) {
      const b = all[i];
      const top = AXIS + i * LANE - y + 3;
      const h = LANE - 6;
      const a = x(b.t0);
      const z = Math.max(x(b.t1), a + 2);
      if (z < 0 || a > width) continue;
      const begun = b.tStarted && b.tStarted > b.t0 ? Math.min(x(b.tStarted), z) : a;
      if (begun > a) {
        g.fillStyle = k.backoff;
        g.fillRect(a, top, begun - a, h);
      }
      g.fillStyle = b.failed ? k.failed : k[b.kind] || k.activity;
      g.globalAlpha = b.open ? 0.6 : 1;
      g.fillRect(begun, top, Math.max(2, z - begun), h);
      g.globalAlpha = 1;
      drawn += 1;
      const label = `${b.name || b.id}${b.attempt > 1 ? ` ×${b.attempt}` : ''}`;
      const room = width - Math.max(a, 0);
      if (room > 30) {
        g.fillStyle = k.text;
        g.fillText(label, Math.max(a, 0) + (z - a > 60 ? 4 : z - Math.max(a, 0) + 4), top + h / 2, Math.min(room - 8, 400));
      }
    }
    g.restore();
    const brush = drag.current && drag.current.brush;
    if (brush) {
      g.fillStyle = k.accent;
      g.globalAlpha = 0.15;
      g.fillRect(Math.min(brush.from, brush.to), AXIS, Math.abs(brush.to - brush.from), height - AXIS);
      g.globalAlpha = 1;
    }
    c.dataset.bars = String(drawn);
    c.dataset.lanes = String(all.length);
  }

  function zoom(factor, px) {
    const { tAt, width } = geometry();
    const at = tAt(px ?? width / 2);
    const v = view.current;
    const t0 = at - (at - v.t0) * factor;
    const t1 = at + (v.t1 - at) * factor;
    if (t1 - t0 < 5) return; // 5 ms across the whole width at most
    view.current = { ...v, t0, t1 };
    draw();
  }
  function pan(pixels) {
    const { width } = geometry();
    const v = view.current;
    const dt = (pixels / width) * (v.t1 - v.t0);
    view.current = { ...v, t0: v.t0 + dt, t1: v.t1 + dt };
    draw();
  }
  function reset() {
    const d = data.current;
    view.current = { t0: d.start, t1: d.end + (d.end - d.start) * 0.02, y: 0 };
    draw();
  }
  function scrollLanes(dy) {
    const { height } = geometry();
    const max = Math.max(0, data.current.bars.length * LANE - (height - AXIS));
    view.current = { ...view.current, y: Math.min(max, Math.max(0, view.current.y + dy)) };
    draw();
  }
  function hit(ev) {
    const rect = canvas.current.getBoundingClientRect();
    const px = ev.clientX - rect.left;
    const py = ev.clientY - rect.top;
    if (py < AXIS) return null;
    const i = Math.floor((py - AXIS + view.current.y) / LANE);
    const b = data.current.bars[i];
    if (!b) return null;
    const { x } = geometry();
    return px >= x(b.t0) - 3 && px <= Math.max(x(b.t1), x(b.t0) + 2) + 3 ? { b, px, py } : null;
  }

  const onWheel = (ev) => {
    ev.preventDefault();
    if (ev.ctrlKey || ev.metaKey) {
      const rect = canvas.current.getBoundingClientRect();
      zoom(ev.deltaY > 0 ? 1.25 : 0.8, ev.clientX - rect.left);
    } else if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
      pan(ev.deltaX || ev.deltaY);
    } else {
      scrollLanes(ev.deltaY);
    }
  };
  const onPointerDown = (ev) => {
    const rect = canvas.current.getBoundingClientRect();
    const px = ev.clientX - rect.left;
    drag.current = ev.shiftKey ? { brush: { from: px, to: px } } : { x: px, moved: 0 };
    canvas.current.setPointerCapture(ev.pointerId);
  };
  const onPointerMove = (ev) => {
    const rect = canvas.current.getBoundingClientRect();
    const px = ev.clientX - rect.left;
    const d = drag.current;
    if (d && d.brush) {
      d.brush.to = px;
      draw();
    } else if (d) {
      d.moved += Math.abs(px - d.x);
      pan(d.x - px);
      d.x = px;
    } else {
      const h = hit(ev);
      setTip(h ? { ...h } : null);
    }
  };
  const onPointerUp = (ev) => {
    const d = drag.current;
    drag.current = null;
    if (d && d.brush) {
      const { tAt } = geometry();
      const a = Math.min(d.brush.from, d.brush.to);
      const z = Math.max(d.brush.from, d.brush.to);
      if (z - a > 4) view.current = { ...view.current, t0: tAt(a), t1: tAt(z) };
      draw();
    } else if (d && d.moved < 3) {
      const h = hit(ev);
      if (h && onOpen) onOpen(h.b.eventId);
    }
  };
  const onKeyDown = (ev) => {
    const actions = { '+': () => zoom(0.8), '=': () => zoom(0.8), '-': () => zoom(1.25), 0: reset,
      ArrowLeft: () => pan(-80), ArrowRight: () => pan(80), ArrowDown: () => scrollLanes(LANE * 3), ArrowUp: () => scrollLanes(-LANE * 3) };
    if (actions[ev.key]) { ev.preventDefault(); actions[ev.key](); redraw((n) => n + 1); }
  };

  const b = tip && tip.b;
  return html`
    <div class="legend" aria-hidden="true">
      <span><i style="background:var(--bar-activity)"></i>activity</span><span><i style="background:var(--bar-timer)"></i>timer</span>
      <span><i style="background:var(--bar-child)"></i>child</span><span><i style="background:var(--bar-update)"></i>update</span>
      <span><i style="background:var(--bar-failed)"></i>failed</span><span><i style="background:var(--bar-backoff)"></i>retries and backoff</span>
      <span class="muted">wheel: lanes · Ctrl+wheel: zoom · drag: pan · Shift+drag: zoom to a range · double-click: all</span>
    </div>
    <div class="timeline" ref=${box}>
      <canvas ref=${canvas} tabindex="0" role="img"
        aria-label=${`Timeline of ${summary.spans.length} activities, timers, children and updates, and ${summary.points.length} signals`}
        onWheel=${onWheel} onPointerDown=${onPointerDown} onPointerMove=${onPointerMove} onPointerUp=${onPointerUp}
        onPointerLeave=${() => setTip(null)} onDblClick=${reset} onKeyDown=${onKeyDown}></canvas>
      ${b && html`<div class="tip" style=${{ left: `${Math.min(tip.px + 12, (canvas.current ? canvas.current.clientWidth : 600) - 360)}px`, top: `${tip.py + 12}px` }}>
        <strong>${b.kind} ${b.name || b.id}</strong> (event ${b.eventId})<br />
        ${b.status}${b.attempt ? `, attempt ${b.attempt}` : ''}<br />
        ${time(b.t0)} → ${b.open ? 'open' : time(b.t1)} (${span((b.t1 - b.t0) / 1000)})
        ${b.failure && html`<br /><span class="event-failed">${b.failure}</span>`}
      </div>`}
    </div>`;
}
