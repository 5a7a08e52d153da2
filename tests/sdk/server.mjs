// Starts and stops tock-server for the SDK tests: a fresh temp directory and database,
// port 0, the bound address read from the banner.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;

export async function startServer({ config, dir: existingDir, port = '0' } = {}) {
  const bin = process.env.TOCK_SERVER_BIN;
  if (!bin) throw new Error('TOCK_SERVER_BIN is not set (the path of the tock-server binary)');
  const dir = existingDir ?? mkdtempSync(join(tmpdir(), 'tock-sdk-'));
  const args = ['--port', String(port), '--db-file', join(dir, 'tock.db')];
  if (config) {
    const path = join(dir, 'server.yaml');
    writeFileSync(path, config);
    args.push('--config', path);
  }
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const address = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tock-server did not start in ${START_TIMEOUT_MS} ms: ${stderr}`));
    }, START_TIMEOUT_MS);
    child.stdout.on('data', (d) => {
      stdout += d;
      const m = /listening on (\S+)/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`tock-server exited with ${code}: ${stderr}`));
    });
  });
  child.removeAllListeners('exit');

  async function halt(signal) {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }

  async function stop() {
    await halt('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }

  // Stops this server (SIGKILL when `kill`, as a crash) and starts a new one on the same
  // database and port.
  async function restart({ kill = false, port: newPort = address.split(':').pop() } = {}) {
    await halt(kill ? 'SIGKILL' : 'SIGTERM');
    return startServer({ config, dir, port: newPort });
  }
  return { address, stop, restart, pid: child.pid };
}

// A namespace name no other run uses.
export function uniqueName(prefix) {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
