// Starts and stops tock-server for the SDK tests: a fresh temp directory and database,
// port 0 (the server listens on 127.0.0.1 unless a config says otherwise), the bound
// address read from the banner (`Tock server <version> listening on <ip>:<port>`).
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { defaultGrpcRetryOptions, isRetryableError, makeGrpcRetryInterceptor } from '@temporalio/client';

const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;
const KEEP_OUTPUT = 64 * 1024; // the tail of stderr kept for error messages

// Every server still running, killed if this test process ends without stopping it
// (a failed hook, an uncaught error, the test runner cancelling the file), and every temp
// directory not yet removed.
const live = new Set();
const dirs = new Set();
function killAll() {
  for (const child of live) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  live.clear();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.clear();
}
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    killAll();
    process.kill(process.pid, signal);
  });
}

function serverBinary() {
  const bin = process.env.TOCK_SERVER_BIN;
  if (!bin) throw new Error('TOCK_SERVER_BIN is not set (the absolute path of the tock-server binary)');
  if (!isAbsolute(bin)) throw new Error(`TOCK_SERVER_BIN must be an absolute path, not ${bin}`);
  if (!existsSync(bin)) throw new Error(`TOCK_SERVER_BIN ${bin} does not exist (build the tock-server target)`);
  return bin;
}

// The persistence faults asked for by the environment: TOCK_SDK_FAULT_RATE (a share of
// store calls in [0, 1], e.g. 0.01) and TOCK_SDK_FAULT_SEED (default 1). Undefined when the
// rate is unset or 0.
export function faultsFromEnv() {
  const rate = Number(process.env.TOCK_SDK_FAULT_RATE ?? 0);
  if (!(rate > 0)) return undefined;
  if (!(rate <= 1)) throw new Error(`TOCK_SDK_FAULT_RATE must be in [0, 1], not ${process.env.TOCK_SDK_FAULT_RATE}`);
  const seed = Number(process.env.TOCK_SDK_FAULT_SEED ?? 1);
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`TOCK_SDK_FAULT_SEED must be a non-negative integer, not ${process.env.TOCK_SDK_FAULT_SEED}`);
  return { rate, seed };
}

// The YAML of the server config: `config` (a YAML document of other keys) plus the
// persistence faults and a metrics endpoint on a free port.
function configText(config, faults, metrics) {
  let text = config ?? '';
  for (const key of [faults && 'persistence', metrics && 'metrics'].filter(Boolean)) {
    if (new RegExp(`^${key}:`, 'm').test(text)) throw new Error(`startServer: give ${key} either in config or as an option`);
  }
  if (faults) text += `\npersistence:\n  fault_injection:\n    rate: ${faults.rate}\n    seed: ${faults.seed}\n`;
  if (metrics) text += '\nmetrics:\n  ip: 127.0.0.1\n  port: 0\n';
  return text;
}

// Starts tock-server (with `args` added to its command line); resolves with { address,
// banner, pid, metricsUrl, faults, stop(), restart(), scrape(), injectedFaults() } once it
// printed its banner. Fails (after killing the process) if it does not within 20 s or exits
// first, with its stderr in the error.
//
// `faults` ({rate, seed}; by default faultsFromEnv()) turns on persistence fault injection
// (`persistence.fault_injection` in the config); `metrics` (on whenever faults are) serves
// /metrics on a free port, so a test can prove the faults were injected (injectedFaults()).
//
// `postgresUrl` puts the server on that PostgreSQL database instead of a SQLite file.
export async function startServer({
  config, dir: existingDir, port = '0', args: extraArgs = [], faults = faultsFromEnv(), metrics = Boolean(faults),
  postgresUrl,
} = {}) {
  const bin = serverBinary();
  const dir = existingDir ?? mkdtempSync(join(tmpdir(), 'tock-sdk-'));
  dirs.add(dir);
  const database = postgresUrl ? ['--postgres-url', postgresUrl] : ['--db-file', join(dir, 'tock.db')];
  const args = ['--port', String(port), ...database, ...extraArgs];
  const yaml = configText(config, faults, metrics);
  if (yaml) {
    const path = join(dir, 'server.yaml');
    writeFileSync(path, yaml);
    args.push('--config', path);
  }
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  child.once('exit', () => live.delete(child));

  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stdout.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-KEEP_OUTPUT);
  });
  let banner;
  let address;
  let metricsUrl;
  try {
    address = await new Promise((resolve, reject) => {
      const fail = (why) => {
        clearTimeout(timer);
        reject(new Error(`${bin} ${args.join(' ')}: ${why}\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`));
      };
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        fail(`no "listening on" line within ${START_TIMEOUT_MS} ms`);
      }, START_TIMEOUT_MS);
      child.stdout.on('data', (d) => {
        if (banner !== undefined) return; // keep draining the pipe, nothing more to read
        stdout += d;
        const m = /listening on (\S+)/.exec(stdout);
        // With metrics the banner goes on to name their URL: wait for that line too.
        const url = /metrics:\s+(http\S+)/.exec(stdout);
        if (m && (!metrics || url)) {
          clearTimeout(timer);
          banner = stdout.split('\n', 1)[0];
          metricsUrl = url?.[1];
          resolve(m[1]);
        }
      });
      child.once('error', (err) => fail(`could not be started: ${err.message}`));
      child.once('exit', (code, signal) => {
        if (banner === undefined) fail(`exited (${signal ?? `code ${code}`}) before listening`);
      });
    });
  } catch (err) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (!existingDir) {
      rmSync(dir, { recursive: true, force: true });
      dirs.delete(dir);
    }
    throw err;
  }
  // A server left running (a test failed before its `after` stopped it) must not keep this
  // test process alive: once nothing else is pending the process exits and the exit hook
  // above kills the server. stop() keeps the process alive itself (its SIGKILL timer).
  child.unref();
  child.stdout.unref?.();
  child.stderr.unref?.();
  // A server that dies on its own (a crash) says so, with the end of its log: the test then
  // fails with connection errors that name no cause.
  let halting = false;
  child.once('exit', (code, signal) => {
    if (!halting) {
      console.error(`tock-server (pid ${child.pid}) exited by itself (${signal ?? `code ${code}`}); ` +
        `the end of its stderr:\n${stderr.slice(-8192)}`);
    }
  });

  async function halt(signal) {
    if (child.exitCode !== null || child.signalCode !== null) return;
    halting = true;
    // The child was unref'd: referenced again, it keeps this process alive until its exit
    // is seen (else the loop can run dry between the SIGKILL and the exit event).
    child.ref();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }

  // SIGTERM, then SIGKILL after 5 s; removes the temp directory.
  async function stop() {
    await halt('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
    dirs.delete(dir);
  }

  // Stops this server (SIGKILL when `kill`, as a crash) and starts a new one on the same
  // database and port, `downMs` later.
  async function restart({ kill = false, port: newPort = address.split(':').pop(), downMs = 0 } = {}) {
    await halt(kill ? 'SIGKILL' : 'SIGTERM');
    if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
    return startServer({ config, dir, port: newPort, args: extraArgs, faults, metrics, postgresUrl });
  }

  // The text of GET /metrics (metrics on).
  async function scrape() {
    if (!metricsUrl) throw new Error('this server has no metrics endpoint (start it with metrics: true)');
    const response = await fetch(metricsUrl, { signal: AbortSignal.timeout(10_000) });
    assert.equal(response.status, 200, `GET ${metricsUrl}`);
    return response.text();
  }

  // The persistence faults this server process has injected so far, by kind.
  async function injectedFaults() {
    const text = await scrape();
    const count = (kind) =>
      sumSamples(text, 'persistence_injected_faults_total', (labels) => labels.includes(`kind="${kind}"`));
    return { unavailable: count('unavailable'), timeoutAfter: count('timeout_after') };
  }

  return {
    address,
    banner,
    pid: child.pid,
    dir, // holds tock.db (and server.yaml)
    metricsUrl,
    faults,
    stop,
    restart,
    scrape,
    injectedFaults,
    stderr: () => stderr,
  };
}

// TOCK_SDK_HOSTS: how many tock-server hosts the scenario tests run against (1 by default:
// one server on SQLite; more: that many hosts on one PostgreSQL database of their own, on
// the ctest run's PostgreSQL named by TOCK_POSTGRES_FIXTURE_FILE).
export function hostsFromEnv() {
  const hosts = Number(process.env.TOCK_SDK_HOSTS ?? 1);
  if (!Number.isSafeInteger(hosts) || hosts < 1 || hosts > 8) {
    throw new Error(`TOCK_SDK_HOSTS must be 1 to 8, not ${process.env.TOCK_SDK_HOSTS}`);
  }
  return hosts;
}

function psql(url, sql) {
  return new Promise((resolve, reject) => {
    execFile('psql', [url, '-v', 'ON_ERROR_STOP=1', '-qc', sql], { timeout: 30_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`psql ${sql}: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
}

// `count` hosts on a fresh database of the fixture's PostgreSQL (membership heartbeats of
// 200 ms, cutoff 1 s; `args` go to every host's command line); resolves once each printed its banner and every host sees all the
// others. The result looks like startServer's: `address` is the first host, `workerAddress`
// the second (workers and clients on different hosts), `addresses` all of them, `hosts`
// the servers, stop() stops every host and drops the database.
export async function startHosts(count, { config = '', args = [] } = {}) {
  const fixture = process.env.TOCK_POSTGRES_FIXTURE_FILE;
  if (!fixture || !existsSync(fixture)) {
    throw new Error('TOCK_POSTGRES_FIXTURE_FILE names no running PostgreSQL (the ctest fixture `postgres` writes it)');
  }
  const adminUrl = readFileSync(fixture, 'utf8').split('\n', 1)[0].trim();
  const database = `tock_sdk_${process.pid}_${Date.now().toString(36)}`;
  await psql(adminUrl, `CREATE DATABASE ${database}`);
  const postgresUrl = adminUrl.replace(/\/[^/]*$/, `/${database}`);
  const hostConfig = `${config}\nmembership:\n  heartbeat: 200ms\n  cutoff: 1s\n`;
  const hosts = [];
  const stop = async () => {
    await Promise.all(hosts.map((h) => h.stop()));
    await psql(adminUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  };
  try {
    for (let i = 0; i < count; i++) hosts.push(await startServer({ config: hostConfig, args, postgresUrl, faults: null }));
    // Every host must see every other before the test starts (a host that joined last is
    // seen by the others within a heartbeat or two).
    const until = Date.now() + 20_000;
    for (;;) {
      const members = await tockJson(hosts[0].address, ['cluster', 'members']);
      if (members.filter((m) => m.alive).length === count) break;
      if (Date.now() > until) throw new Error(`the ${count} hosts did not all join: ${JSON.stringify(members)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    address: hosts[0].address,
    workerAddress: hosts[1 % count].address,
    addresses: hosts.map((h) => h.address),
    hosts,
    faults: undefined,
    stop,
  };
}

// The sum of the samples of `name` in a Prometheus text exposition whose label text
// (`{...}`, or '' without labels) passes `match`.
export function sumSamples(text, name, match = () => true) {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (m && m[1] === name && match(m[2] ?? '')) sum += Number(m[3]);
  }
  return sum;
}

// A name no other run (or test) uses.
export function uniqueName(prefix) {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

// `tock --address <address> args...` (the CLI at TOCK_CLI_BIN); resolves {code, stdout,
// stderr} whatever the exit code, within 30 s.
export function runTock(address, args) {
  const bin = process.env.TOCK_CLI_BIN;
  if (!bin) throw new Error('TOCK_CLI_BIN is not set (the path of the tock binary)');
  return new Promise((resolve) => {
    execFile(bin, ['--address', address, ...args], { timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code ?? 1 : 0, stdout, stderr });
    });
  });
}

// `tock ... -o json`: must exit 0; resolves with the parsed document.
export async function tockJson(address, args) {
  const r = await runTock(address, [...args, '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

// Options for `Connection.connect` of @temporalio/client: the SDK's own retries (UNAVAILABLE
// and the like, `maxAttempts` in all, 10 by default), plus a retry of the DEADLINE_EXCEEDED
// that tock-server answers for an injected store fault reported after the write. The TS
// client never retries DEADLINE_EXCEEDED by itself (it takes it for its own deadline); the
// retry sends the same request again (same request id), so the server's de-duplication of a
// write that did happen is what is being tested.
export function clientRetries({ maxAttempts = 10 } = {}) {
  const defaults = defaultGrpcRetryOptions({ maxAttempts });
  const ambiguous = (status) =>
    status.code === 4 /* DEADLINE_EXCEEDED */ && /\(injected fault; the call may have completed\)/.test(status.details);
  return {
    interceptors: [
      makeGrpcRetryInterceptor({
        delayFunction: defaults.delayFunction,
        retryableDecider: (attempt, status) =>
          attempt < maxAttempts && (isRetryableError(status) || ambiguous(status)),
      }),
    ],
  };
}
