// Calls to the server's HTTP API (Temporal's paths under api/v1, Tock's under tock/v1),
// relative to the console's own location so that it works under any reverse-proxy sub-path.
import { token } from './state.js';
import { decodeAll } from './codec.js';

// The console's root: this module is at <root>/assets/app/api.js.
export const root = new URL('../../', import.meta.url);

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// `segments` are joined as path segments, each percent-encoded ('order/1' stays one segment).
export function path(...segments) {
  return segments.map((s) => encodeURIComponent(String(s))).join('/');
}

export function url(relative, params) {
  const u = new URL(relative, root);
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === '') continue;
    for (const value of Array.isArray(v) ? v : [v]) u.searchParams.append(k, String(value));
  }
  return u;
}

function headers(extra) {
  const out = { Accept: 'application/json', 'Caller-Type': 'operator', ...extra };
  if (token.value) out.Authorization = `Bearer ${token.value}`;
  return out;
}

// `relative`: 'api/v1/namespaces/...'; the answer's JSON, or an ApiError with the server's
// message.
// Payloads the server could not show as values are decoded by the codec server, if any.
export async function call(relative, options = {}) {
  const text = await callText(relative, options);
  let json;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    return {};
  }
  const ns = /namespaces\/([^/?]+)/.exec(relative);
  return decodeAll(json, ns ? decodeURIComponent(ns[1]) : '');
}

// The same, the answer's text as it came (the metrics' Prometheus text).
export async function callText(relative, { method = 'GET', params, body, signal } = {}) {
  const init = { method, headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }), signal };
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  try {
    response = await fetch(url(relative, params), init);
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 14, `the server did not answer (${e.message})`);
  }
  const text = await response.text();
  if (!response.ok) {
    let json = null;
    try { json = JSON.parse(text); } catch { /* not Temporal's error body */ }
    const message = json && typeof json.message === 'string' ? json.message : `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, json && json.code, message);
  }
  return text;
}

// Every page of a paged list call, item arrays concatenated (`field`), at most `limit` items.
export async function callAll(relative, field, { params = {}, limit = 10000, signal } = {}) {
  const out = [];
  let next = '';
  do {
    const page = await call(relative, { params: { ...params, nextPageToken: next }, signal });
    out.push(...(page[field] || []));
    next = page.nextPageToken || '';
  } while (next && out.length < limit);
  return out;
}
