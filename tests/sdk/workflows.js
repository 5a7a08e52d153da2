// Workflows the SDK tests run on tock-server (bundled by the worker; deterministic code only).
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  executeChild,
  getExternalWorkflowHandle,
  isCancellation,
  makeContinueAsNewFunc,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';

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

const flaky = proxyActivities({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '100 milliseconds', backoffCoefficient: 1, maximumAttempts: 5 },
});

// The activity fails twice, then succeeds on the third attempt, which it returns.
export async function retryUntilThirdAttempt() {
  return await flaky.failTwice();
}

const stubborn = proxyActivities({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 1, maximumAttempts: 100 },
});

export async function alwaysFailing() {
  return await stubborn.alwaysFail();
}

const heartbeating = proxyActivities({
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '1 second',
  retry: { maximumAttempts: 1 },
});

export async function heartbeatTimeout() {
  try {
    await heartbeating.heartbeatOnceThenStall();
    return 'completed';
  } catch (err) {
    return `${err.name}: ${err.cause?.name} ${err.cause?.timeoutType}`;
  }
}

// An activity with only a schedule-to-close timeout on a queue no worker polls: Temporal
// gives it the same schedule-to-start timeout, and reports that one when both expire.
export async function unpickedActivity(taskQueue) {
  const unpicked = proxyActivities({ scheduleToCloseTimeout: '2 seconds', taskQueue });
  try {
    await unpicked.greet('nobody');
    return 'completed';
  } catch (err) {
    return `${err.name}: ${err.cause?.name} ${err.cause?.timeoutType}`;
  }
}

export async function failing(message) {
  throw ApplicationFailure.nonRetryable(message, 'TockTestFailure');
}

export async function cancellable() {
  try {
    await sleep('1 day');
    return 'slept';
  } catch (err) {
    if (isCancellation(err)) return 'cancelled and cleaned up';
    throw err;
  }
}

// Continues as new `n` times, then returns how many runs it took.
export async function countdown(n, runs = 1) {
  if (n > 0) await continueAsNew(n - 1, runs + 1);
  return runs;
}

// Runs a child workflow (an activity round trip) and returns what it returned.
export async function parentOfChild(name) {
  const fromChild = await executeChild(activityRoundTrip, {
    workflowId: `${workflowInfo().workflowId}-child`,
    args: [name],
  });
  return `child said: ${fromChild}`;
}

const asyncActivities = proxyActivities({ startToCloseTimeout: '30 seconds' });

export async function waitsForAsyncActivity() {
  return await asyncActivities.completedElsewhere();
}

// Runs a cancellable child; when this workflow is cancelled, the child is asked to cancel too.
// The SDK resolves the child when the child closes, which can come before the server records
// ExternalWorkflowExecutionCancelRequested in this history (a transfer task of its own; the
// server drops it once this run is closed, as Temporal does). So the parent stays open, even
// though cancelled, until the test has seen that event and sends `unblock`.
export async function parentOfCancellable() {
  let released = false;
  setHandler(unblock, () => {
    released = true;
  });
  let outcome;
  try {
    const fromChild = await executeChild(cancellable, { workflowId: `${workflowInfo().workflowId}-child` });
    outcome = `child returned: ${fromChild}`;
  } catch (err) {
    outcome = `child failed: ${err.name}`;
  }
  await CancellationScope.nonCancellable(() => condition(() => released));
  return outcome;
}

// Signals another workflow by id.
export async function signaller(targetWorkflowId) {
  await getExternalWorkflowHandle(targetWorkflowId).signal(unblock);
  return 'signalled';
}

// Fails its first attempt; under a workflow retry policy the second attempt succeeds.
export async function failsOnFirstAttempt() {
  const { attempt } = workflowInfo();
  if (attempt === 1) throw ApplicationFailure.retryable('the first attempt fails on purpose');
  return `attempt ${attempt}`;
}

export const tick = defineSignal('tick');

// Completes as soon as it has seen a signal, reporting how many it saw.
export async function countSignals() {
  let seen = 0;
  setHandler(tick, () => {
    seen += 1;
  });
  await condition(() => seen >= 1);
  return seen;
}

// A cron workflow: each run returns one more than the run before it (last_completion_result).
export async function cronCounter() {
  const last = workflowInfo().lastResult;
  return (typeof last === 'number' ? last : 0) + 1;
}

// Upserts `fields` (untyped search attributes), then completes with what it upserted.
export async function upsertsSearchAttributes(fields) {
  upsertSearchAttributes(fields);
  return Object.keys(fields).sort();
}

// Greets through an activity, then waits for two 'tick' signals (the reset tests).
export async function greetThenTwoTicks(name) {
  let ticks = 0;
  setHandler(tick, () => {
    ticks += 1;
  });
  const greeting = await greet(name);
  await condition(() => ticks >= 2);
  return `${greeting} x${ticks}`;
}

// Replication scenario 9b: an activity on its own task queue (one the test polls by hand on
// the first cluster) whose heartbeat details must survive a failover and a retry.
export async function heartbeatSurvivesFailover(activityQueue) {
  const { reportHeartbeatDetails } = proxyActivities({
    taskQueue: activityQueue,
    startToCloseTimeout: '60 seconds',
    heartbeatTimeout: '3 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 1, maximumAttempts: 5 },
  });
  return await reportHeartbeatDetails();
}

// The sticky execution tests: `steps` activities one after another, a 'tick' signal between
// two halves, and a query of how far it got.
export const progress = defineQuery('progress');
export async function stepsAroundATick(steps) {
  let done = 0;
  let ticked = false;
  setHandler(progress, () => done);
  setHandler(tick, () => {
    ticked = true;
  });
  for (; done < steps / 2; done += 1) await greet(`step ${done}`);
  await condition(() => ticked);
  for (; done < steps; done += 1) await greet(`step ${done}`);
  return done;
}

// A local activity that outlasts the workflow task timeout: the worker keeps its task alive
// with workflow task heartbeats (completions that force a new workflow task).
export async function slowLocalActivity(ms) {
  const { waitFor } = proxyLocalActivities({ startToCloseTimeout: '60 seconds' });
  return await waitFor(ms);
}

// Worker Deployments: a pinned run's family. After 'unblock' it runs a child to completion,
// then continues as new as `echo` of whether its workflow task saw its queue's target version
// move (asking to upgrade when `upgrade`). The test reads which build ran what from histories.
export async function pinnedFamily(upgrade) {
  let unblocked = false;
  setHandler(status, () => (unblocked ? 'unblocked' : 'waiting'));
  setHandler(unblock, () => {
    unblocked = true;
  });
  await condition(() => unblocked);
  const changed = workflowInfo().targetWorkerDeploymentVersionChanged;
  await executeChild(timerThenReturn, { workflowId: `${workflowInfo().workflowId}-child`, args: [1] });
  await makeContinueAsNewFunc({
    workflowType: 'echo',
    initialVersioningBehavior: upgrade ? 'AUTO_UPGRADE' : undefined,
  })(changed);
}

export async function echo(value) {
  return value;
}
