// Schedules on two tock-server hosts sharing PostgreSQL (the ctest fixture `postgres`; the
// file skips itself without it): a schedule runs on the host that owns its shard, and when
// each host in turn is killed with -9 and restarted, the other host (or the restarted one)
// goes on with it: every second from the first action to the last has exactly one run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, Connection, ScheduleOverlapPolicy } from '@temporalio/client';
import { startHosts, uniqueName } from './server.mjs';

const POSTGRES = process.env.TOCK_POSTGRES_FIXTURE_FILE;

test('a schedule goes on across kill -9 of each host, no second lost or doubled', {
  timeout: 180_000,
  skip: !POSTGRES && 'needs the PostgreSQL fixture (TOCK_POSTGRES_FIXTURE_FILE)',
}, async () => {
  const cluster = await startHosts(2);
  const conns = [];
  try {
    // A client on each host: a call to a host being killed is retried on the other.
    for (const address of cluster.addresses) conns.push(await Connection.connect({ address }));
    const clients = conns.map((connection) => new Client({ connection }));
    const type = uniqueName('HostsEverySecond');
    const handle = await clients[0].schedule.create({
      scheduleId: uniqueName('hosts'),
      spec: { intervals: [{ every: '1s' }] },
      action: { type: 'startWorkflow', workflowType: type, taskQueue: uniqueName('nobody'), workflowId: uniqueName('tick') },
      policies: { overlap: ScheduleOverlapPolicy.ALLOW_ALL },
    });
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    await sleep(3000);
    for (const i of [0, 1]) {
      const port = cluster.hosts[i].address.split(':').pop();
      cluster.hosts[i] = await cluster.hosts[i].restart({ kill: true, port, downMs: 1500 });
      // The other host takes the shards after the membership cutoff (1 s), its runner finds
      // the schedule at its next scan (5 s) and catches the missed seconds up.
      await sleep(8000);
    }
    const other = clients[1].schedule.getHandle(handle.scheduleId);
    await other.pause('done');
    await sleep(1500);

    const d = await other.describe();
    const runs = [];
    for await (const w of clients[1].workflow.list({ query: `WorkflowType = '${type}'` })) runs.push(w);
    const ids = runs.map((w) => w.workflowId);
    assert.equal(new Set(ids).size, ids.length, 'no workflow id twice');
    const seconds = ids.map((id) => Date.parse(id.slice(-20)) / 1000).sort((a, b) => a - b);
    assert.equal(seconds.length, seconds[seconds.length - 1] - seconds[0] + 1, `a gap among ${JSON.stringify(seconds)}`);
    assert.ok(seconds.length >= 15, `only ${seconds.length} actions`);
    assert.equal(d.info.numActionsTaken, seconds.length, 'every run started is counted once');
    await other.delete();
  } finally {
    for (const c of conns) await c.close();
    await cluster.stop();
  }
});
