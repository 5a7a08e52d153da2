// What the whole console shares: the server's settings, the caller's token, the theme and
// the time zone (the last three kept in this browser).
import { signal, computed, effect } from '@preact/signals';

function stored(key, fallback) {
  const s = signal(localStorage.getItem(key) ?? fallback);
  effect(() => {
    if (s.value === '' || s.value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, s.value);
  });
  return s;
}

export const settings = signal(null); // GET api/v1/settings
export const token = stored('tock.token', '');
export const theme = stored('tock.theme', 'system'); // system | light | dark
export const timeZone = stored('tock.timeZone', 'local'); // local | UTC | an IANA name
export const readOnly = computed(() => Boolean(settings.value && settings.value.DisableWriteActions));
// Calls the token may not make, learnt from 403 answers: their buttons are hidden.
export const refused = signal(new Set());

export function applyTheme() {
  const dark = theme.value === 'dark' ||
    (theme.value === 'system' && window.matchMedia('(prefers-color-scheme: dark)').matches);
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
}
