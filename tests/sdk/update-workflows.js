// Workflows of updates.test.mjs: a counter changed by updates (one with a validator, one that
// fails, one that waits for a signal before it answers).
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  defineSignal,
  defineUpdate,
  setHandler,
} from '@temporalio/workflow';

export const add = defineUpdate('add');
export const addPositive = defineUpdate('addPositive');
export const failingUpdate = defineUpdate('failingUpdate');
export const addWhenReleased = defineUpdate('addWhenReleased');
export const release = defineSignal('release');
export const finish = defineSignal('finish');

export async function counter(start = 0) {
  let total = start;
  let released = false;
  let finished = false;
  setHandler(add, (n) => {
    total += n;
    return total;
  });
  setHandler(
    addPositive,
    (n) => {
      total += n;
      return total;
    },
    {
      validator: (n) => {
        if (n <= 0) throw new Error('only positive amounts are accepted');
      },
    },
  );
  setHandler(failingUpdate, () => {
    throw ApplicationFailure.create({ message: 'this update fails on purpose', nonRetryable: true });
  });
  setHandler(addWhenReleased, async (n) => {
    await condition(() => released);
    total += n;
    return total;
  });
  setHandler(release, () => {
    released = true;
  });
  setHandler(finish, () => {
    finished = true;
  });
  await condition(() => finished && allHandlersFinished());
  return total;
}
