// The TypeScript SDK over mutual TLS (issue 15): tock-server serves TLS with client
// certificates required (`tls:` in its config), certificates made here with the openssl
// command; the client (Connection) and the worker (NativeConnection, Rust sdk-core) connect
// with the CA and a client certificate, and a workflow with an activity runs to completion.
// A worker without a client certificate is refused.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities.mjs';
import { startServer, uniqueName } from './server.mjs';

const DEADLINE = { timeout: 60_000 };
const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));

Runtime.install({ logger: new DefaultLogger('WARN') });

let dir;
let server;

function openssl(...args) {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 });
}

// A CA, a server certificate for 127.0.0.1 and localhost, and a client certificate.
function makeCertificates() {
  const p = (name) => join(dir, name);
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', p('ca.key'), '-out', p('ca.pem'),
    '-days', '2', '-subj', '/CN=tock-test-ca');
  for (const [name, san] of [['server', 'subjectAltName=IP:127.0.0.1,DNS:localhost\n'], ['client', '']]) {
    writeFileSync(p(`${name}.ext`), `basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth\n${san}`);
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', p(`${name}.key`), '-out', p(`${name}.csr`),
      '-subj', `/CN=${name}`);
    openssl('x509', '-req', '-in', p(`${name}.csr`), '-CA', p('ca.pem'), '-CAkey', p('ca.key'),
      '-set_serial', name === 'server' ? '1001' : '1002', '-out', p(`${name}.pem`), '-days', '2',
      '-extfile', p(`${name}.ext`));
  }
  return p;
}

function tls(p, withClientCertificate = true) {
  return {
    serverNameOverride: 'localhost',
    serverRootCACertificate: readFileSync(p('ca.pem')),
    ...(withClientCertificate
      ? { clientCertPair: { crt: readFileSync(p('client.pem')), key: readFileSync(p('client.key')) } }
      : {}),
  };
}

let p;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tock-sdk-tls-'));
  p = makeCertificates();
  const config = `tls:
  frontend: {cert_file: ${p('server.pem')}, key_file: ${p('server.key')}, client_ca_file: ${p('ca.pem')}}
  internode: {cert_file: ${p('server.pem')}, key_file: ${p('server.key')}, ca_file: ${p('ca.pem')}}
`;
  server = await startServer({ config });
}, DEADLINE);

after(async () => {
  try {
    await server?.stop();
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}, DEADLINE);

test('client and worker run a workflow over mutual TLS', DEADLINE, async () => {
  const connection = await Connection.connect({ address: server.address, tls: tls(p), connectTimeout: 10_000 });
  const nativeConnection = await NativeConnection.connect({ address: server.address, tls: tls(p) });
  try {
    const client = new Client({ connection, namespace: 'default' });
    const taskQueue = uniqueName('tls-tq');
    const worker = await Worker.create({
      connection: nativeConnection, namespace: 'default', taskQueue, workflowsPath, activities,
    });
    const result = await worker.runUntil(
      client.workflow.execute('activityRoundTrip', { taskQueue, workflowId: uniqueName('tls-wf'), args: ['mTLS'] }),
    );
    assert.equal(result, 'Hello, mTLS!');
  } finally {
    await nativeConnection.close();
    await connection.close();
  }
});

test('a worker without a client certificate is refused', DEADLINE, async () => {
  await assert.rejects(NativeConnection.connect({ address: server.address, tls: tls(p, false) }));
  // And one without TLS at all.
  await assert.rejects(NativeConnection.connect({ address: server.address }));
});
