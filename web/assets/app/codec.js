// A remote codec server (--ui-codec-endpoint) decodes, in the browser, the payloads the server
// could not show as values (encrypted, compressed, any encoding but JSON), as Temporal's UI
// does: POST ENDPOINT/decode {"payloads": [...]} in the proto form, the namespace in the
// X-Namespace header; the answer's payloads replace them, in the same order. The server never
// sees the decoded values. A codec that fails leaves the payloads as they were and says why.
import { signal } from '@preact/signals';
import { settings } from './state.js';
import { isProtoPayload, payloadSlots, shortPayload } from './payloads.js';

const BATCH = 500; // payloads a request
export const codecError = signal(''); // the last failure, shown in the top bar

export function codecEndpoint() {
  const s = settings.value;
  return (s && s.Codec && s.Codec.Endpoint) || '';
}

// `value` with its proto-form payloads decoded (in place), when a codec is configured.
export async function decodeAll(value, namespace) {
  const endpoint = codecEndpoint();
  if (!endpoint || value === null || typeof value !== 'object') return value;
  const lists = [];
  const slots = payloadSlots(value, [], lists);
  for (let i = 0; i < slots.length; i += BATCH) {
    const batch = slots.slice(i, i + BATCH);
    try {
      const response = await fetch(`${endpoint.replace(/\/+$/, '')}/decode`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Namespace': namespace || '' },
        body: JSON.stringify({ payloads: batch.map(([holder, key]) => holder[key]) }),
      });
      if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
      const decoded = (await response.json()).payloads;
      if (!Array.isArray(decoded) || decoded.length !== batch.length) {
        throw new Error(`it answered ${Array.isArray(decoded) ? decoded.length : 'no'} payloads for ${batch.length}`);
      }
      batch.forEach(([holder, key], j) => { holder[key] = shortPayload(decoded[j]); });
      codecError.value = '';
    } catch (e) {
      codecError.value = `the codec server did not decode the payloads: ${e.message}`;
      return value;
    }
  }
  for (const [holder, key] of lists) {
    const { payloads } = holder[key];
    if (!payloads.some(isProtoPayload)) holder[key] = payloads;
  }
  return value;
}
