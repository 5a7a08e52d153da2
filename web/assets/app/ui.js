// Small pieces every page uses.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { ApiError } from './api.js';
import { refused, readOnly, allowed } from './state.js';

// Runs `load` (given an AbortSignal) when `deps` change: { data, error, loading, reload }.
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const abort = new AbortController();
    setState((s) => ({ ...s, loading: true, error: null }));
    load(abort.signal).then(
      (data) => { if (!abort.signal.aborted) setState({ data, error: null, loading: false }); },
      (error) => { if (!abort.signal.aborted) setState({ data: null, error, loading: false }); });
    return () => abort.abort();
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

export function ErrorBox({ error }) {
  if (!error) return null;
  const hint = error instanceof ApiError && (error.status === 401 || error.status === 403)
    ? ' (enter a token with the key button at the top)' : '';
  return html`<div class="error" role="alert">${error.message}${hint}</div>`;
}

// A write action's button: hidden in read-only mode, when the caller's roles do not reach
// it, and once the server refused the call to this token (`call` names the RPC, e.g.
// "TerminateWorkflowExecution").
export function ActionButton({ call, children, ...props }) {
  if (readOnly.value || refused.value.has(call) || !allowed(call)) return null;
  return html`<button type="button" ...${props}>${children}</button>`;
}

export function noteRefusal(call, error) {
  if (error instanceof ApiError && error.status === 403) {
    refused.value = new Set([...refused.value, call]);
  }
}

// A modal form: fields render inside; onSubmit returns a promise (its error is shown).
export function Dialog({ title, open, onClose, onSubmit, submitLabel = 'OK', danger = false, children }) {
  const ref = useRef(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) { setError(null); d.showModal(); }
    if (!open && d.open) d.close();
  }, [open]);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await onSubmit();
      onClose();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return html`<dialog ref=${ref} onClose=${onClose} aria-label=${title}>
    <form onSubmit=${submit}>
      <h2 style="margin-top:0">${title}</h2>
      ${children}
      <${ErrorBox} error=${error} />
      <div class="buttons">
        <button type="button" onClick=${onClose}>Cancel</button>
        <button type="submit" class=${danger ? 'danger' : 'primary'} disabled=${busy}>${submitLabel}</button>
      </div>
    </form>
  </dialog>`;
}

// JSON typed by hand: the parsed value, or an error naming where it fails.
export function parseJsonInput(text, what) {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${what} is not valid JSON: ${e.message}`);
  }
}

export function Facts({ items }) {
  return html`<dl class="facts">${items.filter(([, v]) => v !== undefined && v !== null && v !== '' && v !== false).map(
    ([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`;
}

// Text as a file download.
export function download(name, type, text) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type }));
  a.download = name;
  document.body.appendChild(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 0);
}
