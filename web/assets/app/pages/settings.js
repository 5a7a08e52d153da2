// This browser's settings: the token sent with every call, the time zone, the theme; and
// what the server says of itself.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { settings, token, timeZone, theme, refused } from '../state.js';
import { Facts } from '../ui.js';

export function Settings() {
  const [draft, setDraft] = useState(token.value);
  const [zone, setZone] = useState(timeZone.value);
  const [zoneError, setZoneError] = useState('');
  const s = settings.value || {};
  const saveZone = (e) => {
    e.preventDefault();
    try {
      if (zone !== 'local') new Intl.DateTimeFormat('en', { timeZone: zone });
      timeZone.value = zone;
      setZoneError('');
    } catch {
      setZoneError(`"${zone.slice(0, 60)}" is not a time zone: use local, UTC or an IANA name such as Europe/Paris`);
    }
  };
  return html`<h1>Settings</h1>
    <div class="panel">
      <h2 style="margin-top:0">Token</h2>
      <p class="muted">Sent as <code>Authorization: Bearer …</code> with every call${s.Auth && s.Auth.Enabled ? '; this server checks it' : ''}. Kept in this browser only.</p>
      <form class="toolbar" onSubmit=${(e) => { e.preventDefault(); token.value = draft.trim(); refused.value = new Set(); }}>
        <label class="grow"><span class="visually-hidden">Token</span>
          <input type="password" autocomplete="off" value=${draft} onInput=${(e) => setDraft(e.currentTarget.value)}
            placeholder="a JWT" style="width:100%" aria-label="Token" /></label>
        <button type="submit" class="primary">Save token</button>
        <button type="button" onClick=${() => { setDraft(''); token.value = ''; refused.value = new Set(); }}>Forget</button>
      </form>
    </div>
    <div class="panel">
      <h2 style="margin-top:0">Time zone and theme</h2>
      <form class="toolbar" onSubmit=${saveZone}>
        <label>Time zone <input value=${zone} onInput=${(e) => setZone(e.currentTarget.value)} aria-label="Time zone" /></label>
        <button type="submit">Use</button>
        <label>Theme <select value=${theme.value} onChange=${(e) => { theme.value = e.currentTarget.value; }}>
          <option value="system">System</option><option value="light">Light</option><option value="dark">Dark</option></select></label>
      </form>
      ${zoneError && html`<div class="error" role="alert">${zoneError}</div>`}
    </div>
    <div class="panel">
      <h2 style="margin-top:0">Server</h2>
      <${Facts} items=${[
        ['Tock', s.TockServerVersion],
        ['Default namespace', s.DefaultNamespace],
        ['Read-only', s.DisableWriteActions ? 'yes (--ui-read-only)' : 'no'],
        ['Codec endpoint', (s.Codec && s.Codec.Endpoint) || 'none'],
        ['Authorization', s.Auth && s.Auth.Enabled ? 'on' : 'off'],
      ]} />
    </div>`;
}
