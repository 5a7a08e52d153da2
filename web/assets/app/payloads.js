// Payloads in Temporal's proto form ({metadata: {encoding: base64}, data: base64}) and their
// short form (the value itself), as the server's payload shorthand writes them: for history
// files read in the browser and for what a codec server decodes.
const MAX_DEPTH = 100;

function decodeBase64(text) {
  const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

export function isProtoPayload(v) {
  return Boolean(v) && typeof v === 'object' && !Array.isArray(v) && Boolean(v.metadata) && typeof v.metadata.encoding === 'string';
}

// A proto-form payload as its value (json/plain, binary/null), else as it is.
export function shortPayload(p) {
  try {
    const encoding = decodeBase64(p.metadata.encoding);
    if (encoding === 'binary/null') return null;
    if (encoding === 'json/plain' && Object.keys(p.metadata).length === 1) return JSON.parse(decodeBase64(p.data || ''));
  } catch { /* not a payload this view can shorten */ }
  return p;
}

// Payloads shortened as the server's payload shorthand shortens them, to a bounded depth.
export function shorten(value, depth = 0) {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => shorten(v, depth + 1));
  if (isProtoPayload(value)) return shortPayload(value);
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === 'payloads' && Array.isArray(value.payloads) && value.payloads.every(isProtoPayload)) {
    return value.payloads.map(shortPayload);
  }
  const out = {};
  for (const k of keys) out[k] = shorten(value[k], depth + 1);
  return out;
}

// Where the proto-form payloads of `value` are: [holder, key] pairs, to a bounded depth; and
// in `lists`, the {payloads: [...]} wrappers ([holder, key]) that shorthand writes as a plain
// list once their payloads are values.
export function payloadSlots(value, out = [], lists = [], depth = 0) {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return out;
  for (const key of Object.keys(value)) {
    const v = value[key];
    if (isProtoPayload(v)) {
      out.push([value, key]);
    } else if (v !== null && typeof v === 'object') {
      if (!Array.isArray(v) && Object.keys(v).length === 1 && Array.isArray(v.payloads)) lists.push([value, key]);
      payloadSlots(v, out, lists, depth + 1);
    }
  }
  return out;
}
