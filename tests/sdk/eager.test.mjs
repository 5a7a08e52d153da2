// Eager dispatch (Temporal's): an activity a worker schedules with request_eager_execution on
// the run's own queue is started in the workflow task's completion and comes back in its
// answer (activity_tasks), with no trip through matching; a start with
// request_eager_execution gets its first workflow task in the start's answer. The protocol is
// driven by hand with the official client's gRPC service (what an SDK worker sends), then a
// real TypeScript worker gets its activities eagerly and is handed a workflow its own process
// started eagerly.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { clientRetries, startServer, sumSamples, uniqueName } from './server.mjs';

const DEADLINE = { timeout: 90_000 };
const HOOK_DEADLINE = { timeout: 60_000 };
const NAMESPACE = 'default';
// temporal.api.enums.v1
const COMMAND_SCHEDULE_ACTIVITY = 1;
const COMMAND_COMPLETE_WORKFLOW = 4;
const ACTIVITY_TASK_STARTED = 11;

const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));
Runtime.install({ logger: new DefaultLogger('WARN') });

const payload = (text) => ({ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(text)) });

// A server, a client and its raw gRPC service; `config` is extra server YAML.
async function connect(config) {
  const server = await startServer({ config, metrics: true });
  const connection = await Connection.connect({ address: server.address, ...clientRetries() });
  return { server, connection, client: new Client({ connection, namespace: NAMESPACE }), service: connection.workflowService };
}

let main;
let eagerOff;  // eager activities switched off for the namespace

before(async () => {
  main = await connect();
  eagerOff = await connect('history:\n  eager_activities: {default: true, namespaces: {default: false}}\n');
}, HOOK_DEADLINE);

after(async () => {
  for (const s of [main, eagerOff]) {
    try {
      await s?.connection.close();
    } finally {
      await s?.server.stop();
    }
  }
}, HOOK_DEADLINE);

const eagerActivities = async (server) => sumSamples(await server.scrape(), 'activity_eager_execution_total');

// A worker by hand on `taskQueue`: polls, completes workflow tasks with commands, and works
// activities.
function handWorker({ connection, service }, taskQueue) {
  const identity = `hand-${taskQueue}`;
  const withDeadline = (fn) => connection.withDeadline(Date.now() + 20_000, fn);
  return {
    pollWorkflow: () => withDeadline(() => service.pollWorkflowTaskQueue({ namespace: NAMESPACE, taskQueue: { name: taskQueue }, identity })),
    pollActivity: (queue = taskQueue) => withDeadline(() => service.pollActivityTaskQueue({ namespace: NAMESPACE, taskQueue: { name: queue }, identity })),
    complete: (task, commands) => service.respondWorkflowTaskCompleted({ namespace: NAMESPACE, taskToken: task.taskToken, identity, commands }),
    finishActivity: (task, result) => service.respondActivityTaskCompleted({ namespace: NAMESPACE, taskToken: task.taskToken, identity, result: { payloads: [payload(result)] } }),
  };
}

const scheduleActivity = (activityId, { queue, eager = true, startToCloseSeconds = 10, retry } = {}) => ({
  commandType: COMMAND_SCHEDULE_ACTIVITY,
  scheduleActivityTaskCommandAttributes: {
    activityId, activityType: { name: 'greet' }, taskQueue: queue ? { name: queue } : undefined,
    input: { payloads: [payload(activityId)] }, startToCloseTimeout: { seconds: startToCloseSeconds },
    retryPolicy: retry, requestEagerExecution: eager,
  },
});
const completeWorkflow = { commandType: COMMAND_COMPLETE_WORKFLOW, completeWorkflowExecutionCommandAttributes: {} };

const eventTypes = async ({ client }, handle) =>
  (await client.workflow.getHandle(handle.workflowId).fetchHistory()).events.map((e) => e.eventType);

// One workflow by hand: a workflow task schedules activity 'a1' (eagerly or not), the worker
// works it (from the completion's answer or from a poll), and the next workflow task completes
// the run. Returns the workflow's handle and the completion's answer.
async function oneActivityRun(side, { eager }) {
  const taskQueue = uniqueName('eager');
  const worker = handWorker(side, taskQueue);
  const handle = await side.client.workflow.start('handDriven', { taskQueue, workflowId: uniqueName('eager') });
  const first = await worker.pollWorkflow();
  const answer = await worker.complete(first, [scheduleActivity('a1', { eager })]);
  const activity = answer.activityTasks.length > 0 ? answer.activityTasks[0] : await worker.pollActivity();
  await worker.finishActivity(activity, 'done');
  await worker.complete(await worker.pollWorkflow(), [completeWorkflow]);
  return { handle, answer, activity };
}

test('an activity asked for eagerly comes back started in the completion\'s answer, with a queued one\'s history', DEADLINE, async () => {
  const before = await eagerActivities(main.server);
  const eager = await oneActivityRun(main, { eager: true });
  assert.equal(eager.answer.activityTasks.length, 1, 'the activity is in the answer');
  const task = eager.answer.activityTasks[0];
  assert.equal(task.activityId, 'a1');
  assert.equal(task.activityType.name, 'greet');
  assert.equal(task.attempt, 1);
  assert.equal(task.workflowExecution.workflowId, eager.handle.workflowId);
  assert.equal(task.workflowType.name, 'handDriven');
  assert.equal(task.workflowNamespace, NAMESPACE);
  assert.equal(Buffer.from(task.input.payloads[0].data).toString(), '"a1"');
  assert.equal(Number(task.startToCloseTimeout.seconds), 10);
  assert.ok(task.startedTime, 'started when handed back');
  assert.equal(await eagerActivities(main.server), before + 1);

  const queued = await oneActivityRun(main, { eager: false });
  assert.equal(queued.answer.activityTasks.length, 0, 'not asked for: through the queue');
  assert.deepEqual(await eventTypes(main, eager.handle), await eventTypes(main, queued.handle),
    'the same events, eager or not');
});

test('an activity for another task queue is never handed back eagerly', DEADLINE, async () => {
  const taskQueue = uniqueName('eager');
  const worker = handWorker(main, taskQueue);
  const handle = await main.client.workflow.start('handDriven', { taskQueue, workflowId: uniqueName('eager') });
  const answer = await worker.complete(await worker.pollWorkflow(), [
    scheduleActivity('elsewhere', { queue: `${taskQueue}-other` }),
    scheduleActivity('here'),
  ]);
  assert.deepEqual(answer.activityTasks.map((t) => t.activityId), ['here']);
  const polled = await worker.pollActivity(`${taskQueue}-other`);
  assert.equal(polled.activityId, 'elsewhere');
  await handle.terminate();
});

test('an eager activity whose worker never answers times out and retries through its queue', DEADLINE, async () => {
  const taskQueue = uniqueName('eager');
  const worker = handWorker(main, taskQueue);
  const handle = await main.client.workflow.start('handDriven', { taskQueue, workflowId: uniqueName('eager') });
  const retry = { initialInterval: { seconds: 1 }, backoffCoefficient: 1, maximumAttempts: 2 };
  const answer = await worker.complete(await worker.pollWorkflow(), [
    scheduleActivity('lost', { startToCloseSeconds: 1, retry }),
  ]);
  assert.equal(answer.activityTasks.length, 1);
  // The worker crashed before it ran the activity: the start-to-close timeout fails the
  // attempt and the next one goes to the queue, as with any started activity.
  const retried = await worker.pollActivity();
  assert.equal(retried.activityId, 'lost');
  assert.equal(retried.attempt, 2);
  await worker.finishActivity(retried, 'second time');
  await worker.complete(await worker.pollWorkflow(), [completeWorkflow]);
  const history = await main.client.workflow.getHandle(handle.workflowId).fetchHistory();
  const started = history.events.filter((e) => e.eventType === ACTIVITY_TASK_STARTED);
  assert.equal(started.length, 1);
  assert.equal(started[0].activityTaskStartedEventAttributes.attempt, 2);
});

test('a namespace configured without eager activities gets them through the queue', DEADLINE, async () => {
  const before = await eagerActivities(eagerOff.server);
  const run = await oneActivityRun(eagerOff, { eager: true });
  assert.equal(run.answer.activityTasks.length, 0);
  assert.equal(run.activity.activityId, 'a1', 'polled from the queue');
  assert.equal(await eagerActivities(eagerOff.server), before);
});

test('a real worker gets its activities eagerly and a workflow its own process started eagerly', DEADLINE, async () => {
  const taskQueue = uniqueName('eager');
  const native = await NativeConnection.connect({ address: main.server.address });
  try {
    const worker = await Worker.create({ connection: native, taskQueue, workflowsPath, activities });
    const client = new Client({ connection: native, namespace: NAMESPACE });
    const activitiesBefore = await eagerActivities(main.server);
    const startsBefore = sumSamples(await main.server.scrape(), 'workflow_eager_execution_total');
    const result = await worker.runUntil(async () => {
      const handle = await client.workflow.start('stepsAroundATick', {
        taskQueue, workflowId: uniqueName('eager'), args: [6], requestEagerStart: true,
      });
      assert.equal(handle.eagerlyStarted, true, 'the first workflow task came back with the start');
      await handle.signal('tick');
      return await handle.result();
    });
    assert.equal(result, 6);
    assert.equal(sumSamples(await main.server.scrape(), 'workflow_eager_execution_total'), startsBefore + 1);
    assert.equal(await eagerActivities(main.server), activitiesBefore + 6, 'each of the 6 activities went eager');
  } finally {
    await native.close();
  }
});
