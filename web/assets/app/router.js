// Hash routes: every page and every filter is in the URL (#/namespaces/default/workflows?query=...),
// so that a view can be shared and the server needs to know no paths but the console's root.
import { signal } from '@preact/signals';

function parse() {
  const hash = location.hash.replace(/^#/, '') || '/';
  const q = hash.indexOf('?');
  const pathPart = q < 0 ? hash : hash.slice(0, q);
  const query = Object.fromEntries(new URLSearchParams(q < 0 ? '' : hash.slice(q + 1)));
  const segments = pathPart.split('/').filter(Boolean).map((s) => {
    try { return decodeURIComponent(s); } catch { return s; }
  });
  return { segments, query };
}

export const route = signal(parse());
window.addEventListener('hashchange', () => { route.value = parse(); });

// '#/a/b?x=1' from segments and a query (empty values left out).
export function href(segments, query = {}) {
  const p = segments.map((s) => encodeURIComponent(String(s))).join('/');
  const q = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined && v !== null && v !== ''));
  const qs = q.toString();
  return `#/${p}${qs ? `?${qs}` : ''}`;
}

export function navigate(segments, query, { replace = false } = {}) {
  const target = href(segments, query);
  if (replace) {
    history.replaceState(null, '', target);
    route.value = parse();
  } else {
    location.hash = target;
  }
}

// The current route with some query keys changed (filters kept in the URL).
export function withQuery(changes, { replace = true } = {}) {
  const { segments, query } = route.value;
  navigate(segments, { ...query, ...changes }, { replace });
}
