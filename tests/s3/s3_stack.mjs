// A real S3-compatible server on loopback for Tock's tests: s3rver (a node S3 server keeping
// objects in a directory) behind a proxy (sigv4_proxy.mjs) that checks every request's AWS
// Signature V4 with AWS's own signer and refuses what S3 would refuse. s3rver alone takes any
// signature, so a client that signs wrongly would pass against it and fail against AWS.
//
//   node s3_stack.mjs --dir DIR [--bucket NAME]... [--access-key AK] [--secret-key SK]
//                     [--region R] [--proxy-port P] [--direct-port P]
//
// Defaults: access key tockaccess, secret tocksecret, region us-east-1, free ports.
// Prints one JSON line once both listen:
//   {"endpoint":"http://127.0.0.1:<proxy>","direct":"http://127.0.0.1:<s3rver>","pid":<pid>}
// `endpoint` is what clients use; `direct` is s3rver itself (no checks) for a test to look
// behind the proxy. It runs until SIGTERM or SIGINT to `pid`, or until its stdin is closed when
// stdin is a pipe. Objects stay in DIR, so a test can stop it and start it again on the same
// ports (--proxy-port/--direct-port) to play an outage and a recovery.
//
// s3rver makes ListObjectsV2 continuation tokens with DES, which OpenSSL 3 keeps in its legacy
// provider: without `node --openssl-legacy-provider` this script starts itself again with it
// (the printed pid is then that second process's, and signalling either one stops both).
import { spawn } from 'node:child_process';
import { createCipheriv } from 'node:crypto';
import { fstatSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import S3rver from 's3rver';
import { createVerifyingProxy } from './sigv4_proxy.mjs';

const RELAUNCHED = 'TOCK_S3_STACK_RELAUNCHED';

function fail(message) {
  process.stderr.write(`s3_stack: ${message}\n`);
  process.exit(1);
}

function options() {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string' },
      bucket: { type: 'string', multiple: true, default: [] },
      'access-key': { type: 'string', default: 'tockaccess' },
      'secret-key': { type: 'string', default: 'tocksecret' },
      region: { type: 'string', default: 'us-east-1' },
      'proxy-port': { type: 'string', default: '0' },
      'direct-port': { type: 'string', default: '0' },
    },
  });
  if (!values.dir) fail('--dir is required');
  const port = (flag) => {
    const n = Number(values[flag]);
    if (!Number.isInteger(n) || n < 0 || n > 65535) fail(`--${flag} must be a port number`);
    return n;
  };
  return { dir: values.dir, buckets: values.bucket, accessKey: values['access-key'],
           secretKey: values['secret-key'], region: values.region,
           proxyPort: port('proxy-port'), directPort: port('direct-port') };
}

function desAvailable() {
  try {
    createCipheriv('des', Buffer.alloc(8), Buffer.alloc(8));
    return true;
  } catch {
    return false;
  }
}

// The same script under --openssl-legacy-provider, with this process as a thin shell around it:
// signals are passed on, its exit status becomes ours, and the IPC channel lets it notice if we
// die without a word (it stops then too, instead of holding the ports).
function relaunchWithLegacyProvider() {
  if (process.env[RELAUNCHED]) fail('DES is unavailable even with --openssl-legacy-provider (s3rver needs it)');
  const child = spawn(process.execPath,
                      [...process.execArgv, '--openssl-legacy-provider', fileURLToPath(import.meta.url),
                       ...process.argv.slice(2)],
                      { stdio: ['inherit', 'inherit', 'inherit', 'ipc'], env: { ...process.env, [RELAUNCHED]: '1' } });
  for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

// Whether stdin is a pipe or socket: then its end means our parent is gone or wants us gone.
// Not /dev/null (a C++ test harness's usual stdin, which would end at once) nor a terminal.
function stdinIsAPipe() {
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}

async function main() {
  const opts = options();
  mkdirSync(opts.dir, { recursive: true });
  const s3 = new S3rver({
    address: '127.0.0.1', port: opts.directPort, silent: true, directory: opts.dir,
    configureBuckets: opts.buckets.map((name) => ({ name })),
  });
  const { port: directPort } = await s3.run();

  const proxy = createVerifyingProxy({
    accessKey: opts.accessKey, secretKey: opts.secretKey, region: opts.region,
    upstream: { host: '127.0.0.1', port: directPort },
    log: (line) => process.stderr.write(`${line}\n`),
  });
  await new Promise((resolve, reject) => {
    proxy.once('error', reject);
    proxy.listen(opts.proxyPort, '127.0.0.1', resolve);
  });
  const proxyPort = proxy.address().port;

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    // Whatever hangs in closing must not keep the ports: exit regardless after a while.
    setTimeout(() => process.exit(0), 3000).unref();
    proxy.closeAllConnections();
    await new Promise((resolve) => proxy.close(resolve));
    // The proxy's kept-alive connections to s3rver would hold its close() open.
    s3.httpServer?.closeAllConnections();
    await s3.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  if (process.connected) process.on('disconnect', stop);
  if (stdinIsAPipe()) {
    process.stdin.on('end', stop);
    process.stdin.on('error', stop);
    process.stdin.resume();
  }

  process.stdout.write(`${JSON.stringify({ endpoint: `http://127.0.0.1:${proxyPort}`,
                                           direct: `http://127.0.0.1:${directPort}`, pid: process.pid })}\n`);
}

if (desAvailable()) {
  main().catch((err) => fail(err.stack ?? String(err)));
} else {
  relaunchWithLegacyProvider();
}
