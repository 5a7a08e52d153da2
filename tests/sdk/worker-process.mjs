// A TypeScript SDK worker in a process of its own, for tests that kill it (kill -9):
//   node worker-process.mjs ADDRESS TASK_QUEUE STICKY_SCHEDULE_TO_START
// runs workflows.js and activities.mjs on TASK_QUEUE of namespace default, with its sticky
// queue's schedule-to-start timeout (e.g. '1s'), prints "ready" once polling, and runs until
// it is killed.
import { fileURLToPath } from 'node:url';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';

const [address, taskQueue, stickyQueueScheduleToStartTimeout] = process.argv.slice(2);
Runtime.install({ logger: new DefaultLogger('WARN') });
const connection = await NativeConnection.connect({ address });
const worker = await Worker.create({
  connection, taskQueue, activities, stickyQueueScheduleToStartTimeout,
  workflowsPath: fileURLToPath(new URL('./workflows.js', import.meta.url)),
});
const running = worker.run();
process.stdout.write('ready\n');
await running;
