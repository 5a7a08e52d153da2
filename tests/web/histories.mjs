// The runs the console shows, written through the official TypeScript client's raw
// WorkflowService (no workflow code: this file answers the workflow and activity tasks
// itself, so each history is exactly what the test asks for).
import { randomUUID } from 'node:crypto';
import { Connection } from '@temporalio/client';
import protos from '@temporalio/proto';

const { CommandType } = protos.temporal.api.enums.v1;
const IDENTITY = 'tock-web-test';

export function payload(value) {
  return { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(value)) };
}

export async function connect(address, token) {
  const connection = await Connection.connect({ address, metadata: token ? { authorization: `Bearer ${token}` } : undefined });
  return { connection, svc: connection.workflowService, close: () => connection.close() };
}

export async function start(svc, { ns = 'default', id, type, queue, input }) {
  const r = await svc.startWorkflowExecution({ namespace: ns, workflowId: id, workflowType: { name: type },
    taskQueue: { name: queue }, requestId: randomUUID(), identity: IDENTITY,
    input: input === undefined ? undefined : { payloads: [payload(input)] } });
  return r.runId;
}

async function pollWorkflowTask(svc, ns, queue) {
  for (let i = 0; i < 20; i++) {
    const t = await svc.pollWorkflowTaskQueue({ namespace: ns, taskQueue: { name: queue }, identity: IDENTITY });
    if (t.taskToken && t.taskToken.length) return t;
  }
  throw new Error(`no workflow task on ${queue}`);
}

async function pollActivityTask(svc, ns, queue) {
  for (let i = 0; i < 20; i++) {
    const t = await svc.pollActivityTaskQueue({ namespace: ns, taskQueue: { name: queue }, identity: IDENTITY });
    if (t.taskToken && t.taskToken.length) return t;
  }
  throw new Error(`no activity task on ${queue}`);
}

const schedule = (activityId, type, queue) => ({
  commandType: CommandType.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK,
  scheduleActivityTaskCommandAttributes: { activityId, activityType: { name: type }, taskQueue: { name: queue },
    startToCloseTimeout: { seconds: 30 }, retryPolicy: { maximumAttempts: 1 }, input: { payloads: [payload({ item: activityId })] } },
});

// A run with activities (one completed, one failed), a timer and a signal, then completed:
// what the history views and the timeline draw.
export async function richRun(svc, { ns = 'default', id = 'order-rich', queue = 'q-rich' } = {}) {
  const runId = await start(svc, { ns, id, type: 'checkout', queue, input: { order: 42 } });
  let task = await pollWorkflowTask(svc, ns, queue);
  await svc.respondWorkflowTaskCompleted({ namespace: ns, taskToken: task.taskToken, identity: IDENTITY, commands: [
    schedule('charge-1', 'charge', queue), schedule('ship-1', 'ship', queue),
    { commandType: CommandType.COMMAND_TYPE_START_TIMER, startTimerCommandAttributes: { timerId: 'grace', startToFireTimeout: { nanos: 200_000_000 } } },
  ] });
  const first = await pollActivityTask(svc, ns, queue);
  const second = await pollActivityTask(svc, ns, queue);
  for (const a of [first, second]) {
    if (a.activityType.name === 'charge') {
      await svc.respondActivityTaskCompleted({ namespace: ns, taskToken: a.taskToken, identity: IDENTITY, result: { payloads: [payload({ charged: 42 })] } });
    } else {
      await svc.respondActivityTaskFailed({ namespace: ns, taskToken: a.taskToken, identity: IDENTITY,
        failure: { message: 'no courier available', applicationFailureInfo: { type: 'NoCourier', nonRetryable: true } } });
    }
  }
  await svc.signalWorkflowExecution({ namespace: ns, workflowExecution: { workflowId: id }, signalName: 'note',
    input: { payloads: [payload('left at the door')] }, identity: IDENTITY, requestId: randomUUID() });
  // Workflow tasks until the timer has fired and both activities closed, then the result.
  for (let i = 0; i < 10; i++) {
    task = await pollWorkflowTask(svc, ns, queue);
    const history = await svc.getWorkflowExecutionHistory({ namespace: ns, execution: { workflowId: id, runId } });
    const all = new Set(history.history.events.map((e) => e.eventType));
    const E = protos.temporal.api.enums.v1.EventType;
    const done = all.has(E.EVENT_TYPE_TIMER_FIRED) && all.has(E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) && all.has(E.EVENT_TYPE_ACTIVITY_TASK_FAILED);
    await svc.respondWorkflowTaskCompleted({ namespace: ns, taskToken: task.taskToken, identity: IDENTITY,
      commands: done ? [{ commandType: CommandType.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION,
        completeWorkflowExecutionCommandAttributes: { result: { payloads: [payload({ shipped: false })] } } }] : [] });
    if (done) return runId;
  }
  throw new Error('the rich run did not finish in 10 workflow tasks');
}

// A run of about `events` events: markers, `perTask` to a workflow task (a signal asks for
// each next task). Left running.
export async function longRun(svc, { ns = 'default', id = 'long-history', queue = 'q-long', events = 20000, perTask = 5000 } = {}) {
  const runId = await start(svc, { ns, id, type: 'ledger', queue });
  let written = 3;
  while (written < events) {
    const task = await pollWorkflowTask(svc, ns, queue);
    const n = Math.min(perTask, events - written - 4);
    const commands = [];
    for (let i = 0; i < n; i++) {
      commands.push({ commandType: CommandType.COMMAND_TYPE_RECORD_MARKER,
        recordMarkerCommandAttributes: { markerName: `entry-${written + i}`, details: { amount: { payloads: [payload(i % 97)] } } } });
    }
    await svc.respondWorkflowTaskCompleted({ namespace: ns, taskToken: task.taskToken, identity: IDENTITY, commands });
    written += n + 2; // the markers, the task's started and completed
    if (written + 4 >= events) break;
    await svc.signalWorkflowExecution({ namespace: ns, workflowExecution: { workflowId: id }, signalName: 'more',
      identity: IDENTITY, requestId: randomUUID() });
    written += 2; // the signal and the new task's scheduled event
  }
  return runId;
}

const startChild = (workflowId, type, queue) => ({
  commandType: CommandType.COMMAND_TYPE_START_CHILD_WORKFLOW_EXECUTION,
  startChildWorkflowExecutionCommandAttributes: { namespace: 'default', workflowId, workflowType: { name: type }, taskQueue: { name: queue } },
});

// Three generations: `root` starts `${root}-child`, which starts `${root}-grandchild` (none
// of them completes). Each workflow task is answered as it comes, in whatever order.
export async function family(svc, { ns = 'default', root = 'family', queue = 'q-family' } = {}) {
  await start(svc, { ns, id: root, type: 'household', queue });
  const starts = { [root]: [`${root}-child`, 'member'], [`${root}-child`]: [`${root}-grandchild`, 'member'] };
  const started = new Set();
  for (let i = 0; i < 10 && started.size < 2; i++) {
    const task = await pollWorkflowTask(svc, ns, queue);
    const id = task.workflowExecution.workflowId;
    const child = starts[id] && !started.has(id) ? starts[id] : null;
    if (child) started.add(id);
    await svc.respondWorkflowTaskCompleted({ namespace: ns, taskToken: task.taskToken, identity: IDENTITY,
      commands: child ? [startChild(child[0], child[1], queue)] : [] });
  }
  if (started.size < 2) throw new Error('the family did not start its children');
}
