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
// The caller's roles (GET tock/v1/whoami): null until known, or when the server cannot say.
export const whoami = signal(null);
// The namespace the pages work in (the URL's, else the last one used).
export const currentNamespace = signal('default');

// The role each write action of the console needs (the server's rules, docs/server.md):
// the button of an action the caller's roles do not reach is not shown. The server decides
// anyway; a refusal it gives is remembered in `refused`.
const ROLES = ['', 'read', 'worker', 'write', 'admin'];
const NEEDS = {
  StartWorkflowExecution: 'write', SignalWorkflowExecution: 'write', RequestCancelWorkflowExecution: 'write',
  TerminateWorkflowExecution: 'write', ResetWorkflowExecution: 'write', DeleteWorkflowExecution: 'write',
  UpdateWorkflowExecution: 'write', StartBatchOperation: 'write', StopBatchOperation: 'write',
  CreateSchedule: 'write', UpdateSchedule: 'write', PatchSchedule: 'write', DeleteSchedule: 'write',
  CreateTimer: 'write', DeleteTimer: 'write',
  UpdateNamespace: 'admin', AddSearchAttributes: 'admin', RemoveSearchAttributes: 'admin', DeleteNamespace: 'admin',
};

// Calls on the whole cluster (archival triggers, replication's DLQ): the cluster role only.
const NEEDS_ON_CLUSTER = { TriggerArchival: 'admin', PurgeDLQMessages: 'admin', MergeDLQMessages: 'admin' };

export const roleOn = (w, ns) => Math.max(ROLES.indexOf(w.clusterRole || ''), ROLES.indexOf((w.namespaceRoles || {})[ns] || ''));

export function allowed(call) {
  const w = whoami.value;
  if (!w || !w.authorizationEnabled) return true;
  if (call === 'RegisterNamespace') { // admin on the name registered: any admin role may try
    return w.clusterRole === 'admin' || Object.values(w.namespaceRoles || {}).includes('admin');
  }
  if (NEEDS_ON_CLUSTER[call]) return ROLES.indexOf(w.clusterRole || '') >= ROLES.indexOf(NEEDS_ON_CLUSTER[call]);
  const need = NEEDS[call];
  return !need || roleOn(w, currentNamespace.value) >= ROLES.indexOf(need);
}

export function applyTheme() {
  const dark = theme.value === 'dark' ||
    (theme.value === 'system' && window.matchMedia('(prefers-color-scheme: dark)').matches);
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
}
