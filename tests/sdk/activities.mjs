// Activities the SDK tests' workers run.
import { CompleteAsyncError, Context } from '@temporalio/activity';

export async function greet(name) {
  return `Hello, ${name}!`;
}

export async function failTwice() {
  const { attempt } = Context.current().info;
  if (attempt < 3) throw new Error(`failing attempt ${attempt} on purpose`);
  return attempt;
}

export async function alwaysFail() {
  throw new Error('this activity always fails');
}

export async function heartbeatOnceThenStall() {
  Context.current().heartbeat('started');
  await new Promise((resolve) => setTimeout(resolve, 5000));
  return 'stalled';
}

// Completed later, from outside, by workflow id and activity id.
export async function completedElsewhere() {
  throw new CompleteAsyncError();
}

// What this attempt was started with: its attempt and the last heartbeat's details.
export async function reportHeartbeatDetails() {
  const { attempt, heartbeatDetails } = Context.current().info;
  return { attempt, heartbeatDetails };
}

// Resolves with `ms` after `ms` milliseconds (a slow local activity).
export async function waitFor(ms) {
  await new Promise((resolve) => setTimeout(resolve, ms));
  return ms;
}
