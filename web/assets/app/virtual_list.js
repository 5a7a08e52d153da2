// A list of fixed-height rows of which only the visible ones (and a few around them) are in
// the page, so that 100,000 rows scroll as smoothly as 100. Keyboard: arrows, Page Up/Down,
// Home/End move the selection; Enter opens it. A grid to assistive technology: rows of
// cells, which may hold links.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';

const OVERSCAN = 8;

// count: rows; rowHeight: px; row(i): the row's content; columns: the CSS grid template of
// a row; selected / onSelect(i) / onOpen(i); onNearEnd(): when the last rows come into view
// (load the next page); label: the list's accessible name; scrollTo: a row to bring into view.
export function VirtualList({ count, rowHeight = 32, row, columns, head, selected = -1, onSelect, onOpen,
  onNearEnd, label, scrollTo, id = 'vlist' }) {
  const box = useRef(null);
  const [view, setView] = useState({ top: 0, height: 600 });

  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return undefined;
    const measure = () => setView({ top: el.scrollTop, height: el.clientHeight });
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  useEffect(() => {
    const el = box.current;
    if (!el || scrollTo === undefined || scrollTo < 0) return;
    const y = scrollTo * rowHeight;
    if (y < el.scrollTop || y + rowHeight > el.scrollTop + el.clientHeight) {
      el.scrollTop = Math.max(0, y - el.clientHeight / 3);
    }
  }, [scrollTo, rowHeight]);

  const first = Math.max(0, Math.floor(view.top / rowHeight) - OVERSCAN);
  const last = Math.min(count, Math.ceil((view.top + view.height) / rowHeight) + OVERSCAN);

  useEffect(() => {
    if (onNearEnd && count > 0 && last >= count - OVERSCAN) onNearEnd();
  }, [last, count]);

  const move = (to) => {
    if (count === 0) return;
    const i = Math.max(0, Math.min(count - 1, to));
    if (onSelect) onSelect(i);
    const el = box.current;
    const y = i * rowHeight;
    if (y < el.scrollTop) el.scrollTop = y;
    else if (y + rowHeight > el.scrollTop + el.clientHeight) el.scrollTop = y + rowHeight - el.clientHeight;
  };
  const page = Math.max(1, Math.floor(view.height / rowHeight) - 1);
  const onKeyDown = (e) => {
    const keys = { ArrowDown: selected + 1, ArrowUp: selected - 1, PageDown: selected + page,
      PageUp: selected - page, Home: 0, End: count - 1 };
    if (e.key in keys) {
      e.preventDefault();
      move(keys[e.key]);
    } else if (e.key === 'Enter' && selected >= 0 && onOpen) {
      e.preventDefault();
      onOpen(selected);
    }
  };

  const rows = [];
  for (let i = first; i < last; i++) {
    const cells = [].concat(row(i)).map((cell) => html`<div role="gridcell">${cell}</div>`);
    rows.push(html`<div key=${i} id=${`${id}-${i}`} role="row" aria-rowindex=${i + 1} aria-selected=${i === selected}
      class=${i === selected ? 'row selected' : 'row'}
      style=${{ top: `${i * rowHeight}px`, height: `${rowHeight}px`, gridTemplateColumns: columns }}
      onClick=${() => onSelect && onSelect(i)} onDblClick=${() => onOpen && onOpen(i)}>${cells}</div>`);
  }
  return html`
    ${head && html`<div class="vhead" aria-hidden="true" style=${{ gridTemplateColumns: columns, height: `${rowHeight}px` }}>${head}</div>`}
    <div class="vlist" ref=${box} tabindex="0" role="grid" aria-label=${label} aria-rowcount=${count}
      aria-activedescendant=${selected >= 0 ? `${id}-${selected}` : undefined}
      onScroll=${(e) => setView({ top: e.currentTarget.scrollTop, height: e.currentTarget.clientHeight })}
      onKeyDown=${onKeyDown} data-rows=${count}>
      <div class="spacer" style=${{ height: `${count * rowHeight}px` }}>${rows}</div>
    </div>`;
}
