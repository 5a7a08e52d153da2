// Workflows the SDK tests run on tock-server (bundled by the worker; deterministic code only).
import { proxyActivities, sleep, defineSignal, defineQuery, setHandler, condition } from '@temporalio/workflow';

const { greet } = proxyActivities({ startToCloseTimeout: '10 seconds' });

export async function activityRoundTrip(name) {
  return await greet(name);
}

export async function timerThenReturn(ms) {
  const started = Date.now();
  await sleep(ms);
  return Date.now() - started;
}

export const unblock = defineSignal('unblock');
export const status = defineQuery('status');

export async function waitForSignal() {
  let state = 'waiting';
  setHandler(status, () => state);
  setHandler(unblock, () => {
    state = 'unblocked';
  });
  await condition(() => state === 'unblocked');
  return state;
}
