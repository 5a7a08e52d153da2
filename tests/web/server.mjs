// Starts tock-server for the browser tests: a temp directory and database, port 0 for gRPC
// and the HTTP port, the addresses read from the banner. Every server is killed by pid and
// its directory removed when the test process ends, whatever happens.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';

const START_TIMEOUT_MS = 20_000;
const live = new Set();
const dirs = new Set();
function cleanUp() {
  for (const child of live) {
    try { child.kill('SIGKILL'); } catch { /* gone */ }
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
process.on('exit', cleanUp);
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => { cleanUp(); process.kill(process.pid, signal); });

export function serverBinary() {
  const bin = process.env.TOCK_SERVER_BIN;
  if (!bin || !isAbsolute(bin) || !existsSync(bin)) {
    throw new Error(`TOCK_SERVER_BIN must be the absolute path of a built tock-server (got ${bin})`);
  }
  return bin;
}

// Resolves with { address (gRPC), http (http://IP:PORT), console (its URL or undefined),
// dir, stop() } once the banner is out. `config`: YAML written to a file and passed with
// --config (`config` may be a function of the directory, to name files in it); `args`: more
// flags; `port`: the gRPC port (0: any).
export async function startServer({ config, args = [], port = 0 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'tock-web-'));
  dirs.add(dir);
  if (typeof config === 'function') config = config(dir);
  const argv = ['--port', String(port), '--http-port', '0', '--db-file', join(dir, 'tock.db'), ...args];
  if (config) {
    writeFileSync(join(dir, 'server.yaml'), config);
    argv.push('--config', join(dir, 'server.yaml'));
  }
  const child = spawn(serverBinary(), argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => { err = (err + d).slice(-32768); });
  const banner = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`tock-server printed no banner in ${START_TIMEOUT_MS} ms:\n${err}`)), START_TIMEOUT_MS);
    // The banner is written at once; its HTTP line means the listeners are up.
    child.stdout.on('data', (d) => {
      out += d;
      if (/\n  http api:[^\n]*\n/.test(out)) { clearTimeout(timer); setTimeout(() => resolve(out), 50); }
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`tock-server exited (${code}) before its banner:\n${err}`)); });
  });
  const address = /listening on (\S+)/.exec(banner)[1];
  const http = /http api:\s+(\S+)\/api\/v1/.exec(banner)[1];
  const consoleUrl = (/console:\s+(\S+)/.exec(banner) || [])[1];
  const stop = async () => {
    if (!live.has(child)) return;
    live.delete(child);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
    dirs.delete(dir);
  };
  return { address, http, console: consoleUrl, dir, banner, pid: child.pid, stop, stderr: () => err };
}

// A port free on 127.0.0.1 now (for a server whose configuration must name its own address).
export async function freePort() {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => { const { port } = probe.address(); probe.close(() => resolve(port)); });
  });
}

// A call to the server's HTTP port: { status, headers, json } (the body parsed, {} when empty).
export async function api(server, path, init = {}) {
  const r = await fetch(`${server.http}/${path}`, { ...init, headers: { 'Content-Type': 'application/json', ...(init.headers || {}) } });
  const text = await r.text();
  return { status: r.status, headers: r.headers, json: text ? JSON.parse(text) : {} };
}
