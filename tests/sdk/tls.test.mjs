// The TypeScript SDK over mutual TLS (issue 15): tock-server serves TLS with client
// certificates required (`tls:` in its config), certificates made here with the openssl
// command; the client (Connection) and the worker (NativeConnection, Rust sdk-core) connect
// with the CA and a client certificate, and a workflow with an activity runs to completion.
// A worker without a client certificate is refused.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createSign, generateKeyPairSync } from 'node:crypto';
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

// A JWT signed with `privateKey` (RS256) under `kid`, for `permissions`, valid 10 minutes.
function token(privateKey, kid, permissions) {
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${b64({ alg: 'RS256', typ: 'JWT', kid })}.${b64({
    sub: 'sdk-test', aud: 'tock', exp: Math.floor(Date.now() / 1000) + 600, permissions,
  })}`;
  return `${input}.${createSign('RSA-SHA256').update(input).sign(privateKey).toString('base64url')}`;
}

// Authorization (issue 15) over mutual TLS: the client (Connection) and the worker
// (NativeConnection) send bearer tokens in their metadata (default:write, default:worker);
// the client certificate alone is mapped to default:read by its subject (`subjects:`), so
// a connection without a token may describe the namespace but not start a workflow.
test('client and worker with tokens run a workflow over mutual TLS', DEADLINE, async () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'sdk-1', use: 'sig', alg: 'RS256' }] }));
  const config = `tls:
  frontend: {cert_file: ${p('server.pem')}, key_file: ${p('server.key')}, client_ca_file: ${p('ca.pem')}}
  internode: {cert_file: ${p('server.pem')}, key_file: ${p('server.key')}, ca_file: ${p('ca.pem')}}
authorization:
  jwks: ${join(dir, 'jwks.json')}
  audience: tock
  subjects: {"CN=client": ["default:read"], "CN=server": ["temporal-system:admin"]}
`;
  const authzServer = await startServer({ config });
  const metadata = { authorization: `Bearer ${token(privateKey, 'sdk-1', ['default:write'])}` };
  const connection = await Connection.connect({ address: authzServer.address, tls: tls(p), metadata, connectTimeout: 10_000 });
  const anonymous = await Connection.connect({ address: authzServer.address, tls: tls(p), connectTimeout: 10_000 });
  const nativeConnection = await NativeConnection.connect({
    address: authzServer.address, tls: tls(p),
    metadata: { authorization: `Bearer ${token(privateKey, 'sdk-1', ['default:worker'])}` },
  });
  try {
    const described = await anonymous.workflowService.describeNamespace({ namespace: 'default' });
    assert.equal(described.namespaceInfo.name, 'default');
    await assert.rejects(
      new Client({ connection: anonymous, namespace: 'default' }).workflow.start('activityRoundTrip', {
        taskQueue: 'none', workflowId: uniqueName('authz-refused'), args: ['x'],
      }),
      (err) => {
        // The SDK wraps the gRPC error; its cause carries the server's status and message.
        assert.equal(err.cause?.code, 7, String(err.cause)); // PERMISSION_DENIED
        assert.match(err.cause?.details ?? '', /StartWorkflowExecution on namespace "default" needs the write role/);
        return true;
      },
    );
    const client = new Client({ connection, namespace: 'default' });
    const taskQueue = uniqueName('authz-tq');
    const worker = await Worker.create({
      connection: nativeConnection, namespace: 'default', taskQueue, workflowsPath, activities,
    });
    const result = await worker.runUntil(
      client.workflow.execute('activityRoundTrip', { taskQueue, workflowId: uniqueName('authz-wf'), args: ['token'] }),
    );
    assert.equal(result, 'Hello, token!');
  } finally {
    await nativeConnection.close();
    await anonymous.close();
    await connection.close();
    await authzServer.stop();
  }
});
