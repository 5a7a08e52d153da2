// The workflow of long_workflow_bench.mjs (bundled by its worker; deterministic code only).
import { proxyActivities } from '@temporalio/workflow';

const { greet } = proxyActivities({ startToCloseTimeout: '10 seconds' });

// `steps` activities one after another: each step is one workflow task and one activity.
export async function sequentialSteps(steps) {
  for (let i = 0; i < steps; i += 1) await greet(`step ${i}`);
  return steps;
}
