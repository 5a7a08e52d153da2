// The workflow of the chaos test (chaos.test.mjs), bundled by its worker; deterministic code only.
import { condition, defineSignal, proxyActivities, setHandler, sleep } from '@temporalio/workflow';

// Short timeouts: an attempt lost with a killed server is retried 5 s later, not 10.
const { echo } = proxyActivities({
  startToCloseTimeout: '5 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 1.5, maximumInterval: '2 seconds' },
});
const { failFirstAttempts } = proxyActivities({
  startToCloseTimeout: '5 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 1, maximumInterval: '1 second' },
});

export const add = defineSignal('add');

// `activities` activities in a row, then one that fails its first `failures` attempts (when
// `failures` > 0) and is retried by its retry policy, then a timer of `timerMs` (when > 0),
// then waits for `signals` signals. Returns what the activities returned and the signal
// payloads in the order they arrived.
export async function chaosMix({ key, activities, failures, timerMs, signals }) {
  const received = [];
  setHandler(add, (payload) => {
    received.push(payload);
  });
  const results = [];
  for (let i = 0; i < activities; i++) results.push(await echo(`${key}/${i}`));
  if (failures > 0) results.push(await failFirstAttempts(key, failures));
  if (timerMs > 0) await sleep(timerMs);
  await condition(() => received.length >= signals);
  return { results, received };
}
