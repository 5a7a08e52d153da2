// Tests of tests/s3 itself (`npm test`, node's own runner): that the stack is a faithful enough
// S3 — what AWS accepts passes, what AWS refuses is refused the way AWS refuses it — so Tock's
// C++ tests can trust a pass against it.
//
// Two kinds of evidence: AWS's published example requests (fixed 2013 dates and signatures from
// the S3 documentation) run through the verifier with a 2013 clock, which checks the proxy
// against AWS rather than against the signer it uses; and the running stack, driven by the
// real AWS client and by hand-made requests for what a well-behaved client never sends.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import dns from 'node:dns';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import {
  GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand,
} from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { HttpRequest } from '@smithy/protocol-http';
import { Sha256 } from '@aws-crypto/sha256-js';
import { s3Client } from './aws_client.mjs';
import { S3Refusal, verifyRequest } from './sigv4_proxy.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const STACK_SCRIPT = path.join(HERE, 's3_stack.mjs');
const BUCKET = 'tock-test';
const sha256Hex = (data) => createHash('sha256').update(data).digest('hex');

// ---------------------------------------------------------------------------------------------
// AWS's published examples (S3 API reference, "Signature Calculations for the Authorization
// Header", "... Chunked Upload", "... trailing headers", "Authenticating Requests: Using Query
// Parameters"). Example credentials, 24 May 2013.

const AWS = {
  accessKey: 'AKIAIOSFODNN7EXAMPLE',
  secretKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  region: 'us-east-1',
  now: new Date('2013-05-24T00:00:00Z'),
};
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const awsAuthorization = (signedHeaders, signature) =>
  `AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=${signedHeaders},Signature=${signature}`;

function awsGet(url, extraHeaders, signedHeaders, signature) {
  return {
    method: 'GET', url, body: Buffer.alloc(0),
    headers: { host: 'examplebucket.s3.amazonaws.com', 'x-amz-content-sha256': EMPTY_SHA256,
               'x-amz-date': '20130524T000000Z', ...extraHeaders,
               authorization: awsAuthorization(signedHeaders, signature) },
  };
}

// PUT of 66560 bytes of 'a' as chunks of 64 KiB and 1 KiB, each chunk signed.
function awsChunkedPut() {
  const body = Buffer.from(
    `10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n${'a'.repeat(65536)}\r\n` +
    `400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n${'a'.repeat(1024)}\r\n` +
    '0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n');
  return {
    method: 'PUT', url: '/examplebucket/chunkObject.txt', body,
    headers: {
      host: 's3.amazonaws.com', 'x-amz-date': '20130524T000000Z', 'x-amz-storage-class': 'REDUCED_REDUNDANCY',
      'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD', 'content-encoding': 'aws-chunked',
      'x-amz-decoded-content-length': '66560', 'content-length': String(body.length),
      authorization: awsAuthorization(
        'content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class',
        '4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9'),
    },
  };
}

// The same upload with a signed trailer carrying a CRC32C of the object.
function awsTrailerPut(trailerChecksum = 'sOO8/Q==') {
  const body = Buffer.from(
    `10000;chunk-signature=b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2\r\n${'a'.repeat(65536)}\r\n` +
    `400;chunk-signature=1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7\r\n${'a'.repeat(1024)}\r\n` +
    '0;chunk-signature=2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992\r\n\r\n' +
    `x-amz-checksum-crc32c:${trailerChecksum}\r\n` +
    'x-amz-trailer-signature:d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435\r\n');
  return {
    method: 'PUT', url: '/examplebucket/chunkObject.txt', body,
    headers: {
      host: 's3.amazonaws.com', 'x-amz-date': '20130524T000000Z', 'x-amz-storage-class': 'REDUCED_REDUNDANCY',
      'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER', 'content-encoding': 'aws-chunked',
      'x-amz-decoded-content-length': '66560', 'x-amz-trailer': 'x-amz-checksum-crc32c',
      authorization: awsAuthorization(
        'content-encoding;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class;x-amz-trailer',
        '106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e'),
    },
  };
}

const AWS_PRESIGNED_GET = {
  method: 'GET', body: Buffer.alloc(0), headers: { host: 'examplebucket.s3.amazonaws.com' },
  url: '/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request' +
       '&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host' +
       '&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404',
};

async function refusal(promise) {
  try {
    await promise;
  } catch (err) {
    if (err instanceof S3Refusal) return err;
    throw err;
  }
  assert.fail('expected the request to be refused');
}

describe("the verifier against AWS's published examples", () => {
  test('GET object with a Range header', async () => {
    const request = awsGet('/test.txt', { range: 'bytes=0-9' }, 'host;range;x-amz-content-sha256;x-amz-date',
                           'f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41');
    await verifyRequest(request, AWS);
    const moved = { ...request, headers: { ...request.headers, range: 'bytes=0-10' } };
    assert.equal((await refusal(verifyRequest(moved, AWS))).code, 'SignatureDoesNotMatch');
  });

  test('a listing with query parameters, and a sub-resource without a value', async () => {
    const list = awsGet('/?max-keys=2&prefix=J', {}, 'host;x-amz-content-sha256;x-amz-date',
                        '34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7');
    assert.equal((await verifyRequest(list, AWS)).query, 'max-keys=2&prefix=J');
    await verifyRequest(awsGet('/?lifecycle', {}, 'host;x-amz-content-sha256;x-amz-date',
                               'fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543'), AWS);
    const other = { ...list, url: '/?max-keys=3&prefix=J' };
    assert.equal((await refusal(verifyRequest(other, AWS))).code, 'SignatureDoesNotMatch');
  });

  test('the wrong secret, the wrong region, an unknown key, a stale clock', async () => {
    const request = awsGet('/test.txt', { range: 'bytes=0-9' }, 'host;range;x-amz-content-sha256;x-amz-date',
                           'f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41');
    assert.equal((await refusal(verifyRequest(request, { ...AWS, secretKey: 'other' }))).code, 'SignatureDoesNotMatch');
    assert.equal((await refusal(verifyRequest(request, { ...AWS, region: 'eu-west-1' }))).code, 'AuthorizationHeaderMalformed');
    assert.equal((await refusal(verifyRequest(request, { ...AWS, accessKey: 'other' }))).code, 'InvalidAccessKeyId');
    const later = { ...AWS, now: new Date('2013-05-24T00:16:00Z') };
    assert.equal((await refusal(verifyRequest(request, later))).code, 'RequestTimeTooSkewed');
  });

  test('a presigned GET, valid for a day', async () => {
    const verdict = await verifyRequest(AWS_PRESIGNED_GET, AWS);
    assert.equal(verdict.query, '', 'the auth parameters are not passed on to s3rver');
    const expired = { ...AWS, now: new Date('2013-05-25T00:00:01Z') };
    assert.match((await refusal(verifyRequest(AWS_PRESIGNED_GET, expired))).message, /expired/);
    const otherKey = { ...AWS_PRESIGNED_GET, url: AWS_PRESIGNED_GET.url.replace('/test.txt', '/test2.txt') };
    assert.equal((await refusal(verifyRequest(otherKey, AWS))).code, 'SignatureDoesNotMatch');
  });

  test('a chunked upload: chunk signatures chained from the seed, framing removed', async () => {
    const verdict = await verifyRequest(awsChunkedPut(), AWS);
    assert.equal(verdict.unwrapped, true);
    assert.equal(verdict.body.length, 66560);
    assert.ok(verdict.body.equals(Buffer.alloc(66560, 'a')));
    const tampered = awsChunkedPut();
    tampered.body[tampered.body.length - 200] = 'b'.charCodeAt(0); // inside the 1 KiB chunk
    const refused = await refusal(verifyRequest(tampered, AWS));
    assert.equal(refused.code, 'SignatureDoesNotMatch');
    assert.match(refused.message, /chunk signature/);
  });

  test('a chunked upload with a signed trailer', async () => {
    const verdict = await verifyRequest(awsTrailerPut(), AWS);
    assert.equal(verdict.body.length, 66560);
    const refused = await refusal(verifyRequest(awsTrailerPut('AAAAAA=='), AWS));
    assert.match(refused.message, /trailer signature/);
  });
});

// ---------------------------------------------------------------------------------------------
// The running stack.

const live = new Set();

// Starts s3_stack.mjs; resolves once its JSON line is out. `legacyFlag: false` starts it the
// plain way, which makes it relaunch itself under --openssl-legacy-provider.
async function startStack(args, { legacyFlag = true } = {}) {
  const child = spawn(process.execPath, [...(legacyFlag ? ['--openssl-legacy-provider'] : []), STACK_SCRIPT, ...args],
                      { stdio: ['pipe', 'pipe', 'pipe'] });
  live.add(child);
  child.on('exit', () => live.delete(child));
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const info = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no JSON line within 20 s; stderr: ${stderr}`)), 20000);
    child.stdout.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(JSON.parse(out.slice(0, nl)));
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`s3_stack exited (${code}) before listening; stderr: ${stderr}`));
    });
  });
  return { ...info, child, stderr: () => stderr };
}

// Resolves with the exit code once `child` has exited, SIGKILLing it after `ms`.
function exited(child, ms = 10000) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

async function stopStack(stack) {
  process.kill(stack.pid, 'SIGTERM');
  return exited(stack.child);
}

after(async () => {
  for (const child of live) child.kill('SIGKILL');
});

// A request signed by hand (AWS's signer, as a client would), for what the AWS client never
// sends: a tampered body, a wrong clock, an explicit Host. `sendBody` and `sendHost` are what
// actually goes out when they differ from what was signed.
async function signedRequest(endpoint, { method = 'GET', path: requestPath, query = '', host, sendHost,
                                         headers = {}, body = Buffer.alloc(0), sendBody = body,
                                         secretKey = 'tocksecret', date = new Date(), payloadHash = sha256Hex(body) }) {
  const url = new URL(endpoint);
  const signer = new SignatureV4({
    credentials: { accessKeyId: 'tockaccess', secretAccessKey: secretKey }, region: 'us-east-1', service: 's3',
    sha256: Sha256, uriEscapePath: false, applyChecksum: false,
  });
  const queryObject = Object.fromEntries(new URLSearchParams(query));
  const signed = await signer.sign(new HttpRequest({
    method, protocol: 'http:', hostname: url.hostname, path: requestPath, query: queryObject, body,
    headers: { host: host ?? url.host, 'x-amz-content-sha256': payloadHash, ...headers },
  }), { signingDate: date });
  const sent = sendHost ? { ...signed.headers, host: sendHost } : signed.headers;
  return rawRequest(endpoint, method, query ? `${requestPath}?${query}` : requestPath, sent, sendBody);
}

function rawRequest(endpoint, method, target, headers, body = Buffer.alloc(0)) {
  const url = new URL(endpoint);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path: target, headers, timeout: 10000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

// What s3rver itself holds under `key` (behind the proxy: no credentials needed), or null.
async function directGet(stack, key) {
  const res = await fetch(`${stack.direct}/${BUCKET}/${key.split('/').map(encodeURIComponent).join('/')}`,
                          { signal: AbortSignal.timeout(10000) });
  return res.status === 404 ? null : res.text();
}

const errorCode = (text) => /<Code>([^<]+)<\/Code>/.exec(text)?.[1];

describe('the stack', { timeout: 120000 }, () => {
  let dir;
  let stack;
  let client;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tock-s3-test-'));
    stack = await startStack(['--dir', dir, '--bucket', BUCKET]);
    client = s3Client({ endpoint: stack.endpoint, maxAttempts: 1 });
  });

  after(async () => {
    if (stack) await stopStack(stack);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('the AWS client puts, gets, heads and lists, path style', async () => {
    const key = 'dir/a key+with é and (parens)*.txt';
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'first object' }));
    const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    assert.equal(await got.Body.transformToString(), 'first object');
    const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
    assert.equal(head.ContentLength, 'first object'.length);
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'dir/second', Body: 'second object' }));
    // One key a page: continuation tokens (s3rver makes them with DES) come back through the proxy.
    const keys = [];
    let token;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'dir/', MaxKeys: 1, ContinuationToken: token }));
      keys.push(...(page.Contents ?? []).map((o) => o.Key));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    assert.deepEqual(keys, [key, 'dir/second']);
    assert.equal(await directGet(stack, key), 'first object');
  });

  test('the AWS client, virtual-host style (<bucket>.localhost)', async () => {
    // *.localhost does not resolve here (no nss-myhostname): the client's agent resolves it to
    // loopback itself, so the request still goes out with Host: <bucket>.localhost:<port>.
    const looked = [];
    const httpAgent = new http.Agent({
      lookup: (hostname, options, callback) => {
        looked.push(hostname);
        if (hostname !== 'localhost' && !hostname.endsWith('.localhost')) return dns.lookup(hostname, options, callback);
        return options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4);
      },
    });
    const port = new URL(stack.endpoint).port;
    const vhost = s3Client({ endpoint: `http://localhost:${port}`, forcePathStyle: false, maxAttempts: 1, httpAgent });
    await vhost.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'vhost/one', Body: 'by virtual host' }));
    const got = await vhost.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'vhost/one' }));
    assert.equal(await got.Body.transformToString(), 'by virtual host');
    const list = await vhost.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'vhost/' }));
    assert.deepEqual(list.Contents.map((o) => o.Key), ['vhost/one']);
    assert.ok(looked.includes(`${BUCKET}.localhost`), `the client addressed ${looked.join(', ')}`);
    assert.equal(await directGet(stack, 'vhost/one'), 'by virtual host');
    httpAgent.destroy();
  });

  test('virtual-host style on <bucket>.127.0.0.1, signed over the Host as sent', async () => {
    const host = `${BUCKET}.127.0.0.1:${new URL(stack.endpoint).port}`;
    const put = await signedRequest(stack.endpoint, { method: 'PUT', path: '/vhost/two', host, body: Buffer.from('two') });
    assert.equal(put.status, 200, put.body);
    const get = await signedRequest(stack.endpoint, { path: '/vhost/two', host });
    assert.equal(get.body, 'two');
    const list = await signedRequest(stack.endpoint, { path: '/', query: 'list-type=2&prefix=vhost%2Ft', host });
    assert.match(list.body, /<Key>vhost\/two<\/Key>/);
    // Signed for one bucket's host, sent to another's: the Host header is signed.
    const moved = await signedRequest(stack.endpoint, { path: '/vhost/two', host,
                                                        sendHost: `other.127.0.0.1:${new URL(stack.endpoint).port}` });
    assert.equal(errorCode(moved.body), 'SignatureDoesNotMatch');
  });

  test('a streamed body (aws-chunked with a trailing checksum) is stored without its framing', async () => {
    const body = Readable.from([Buffer.from('streamed '), Buffer.from('body')]);
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'streamed', Body: body, ContentLength: 13 }));
    assert.equal(await directGet(stack, 'streamed'), 'streamed body');
  });

  test('a wrong secret gets 403 SignatureDoesNotMatch and stores nothing', async () => {
    const wrong = s3Client({ endpoint: stack.endpoint, secretKey: 'not-the-secret', maxAttempts: 1 });
    await assert.rejects(wrong.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'refused', Body: 'x' })),
                         (err) => err.name === 'SignatureDoesNotMatch' && err.$metadata.httpStatusCode === 403);
    assert.equal(await directGet(stack, 'refused'), null);
    const raw = await signedRequest(stack.endpoint, { method: 'PUT', path: `/${BUCKET}/refused`, body: Buffer.from('x'),
                                                      secretKey: 'not-the-secret' });
    assert.equal(raw.status, 403);
    assert.equal(raw.headers['content-type'], 'application/xml');
    assert.equal(raw.body, '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code>' +
                           '<Message>The request signature we calculated does not match the signature you provided.</Message></Error>');
    assert.match(stack.stderr(), /refused PUT \/tock-test\/refused: SignatureDoesNotMatch/);
  });

  test('an unknown access key, no credentials, a skewed clock', async () => {
    const stranger = s3Client({ endpoint: stack.endpoint, accessKey: 'someone-else', maxAttempts: 1 });
    await assert.rejects(stranger.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'dir/second' })),
                         (err) => err.name === 'InvalidAccessKeyId');
    const anonymous = await rawRequest(stack.endpoint, 'GET', `/${BUCKET}/dir/second`, {});
    assert.equal(anonymous.status, 403);
    assert.equal(errorCode(anonymous.body), 'AccessDenied');
    const skewed = await signedRequest(stack.endpoint, { path: `/${BUCKET}/dir/second`,
                                                         date: new Date(Date.now() - 20 * 60 * 1000) });
    assert.equal(skewed.status, 403);
    assert.equal(errorCode(skewed.body), 'RequestTimeTooSkewed');
  });

  test('a body that is not the one signed is refused and not stored', async () => {
    const body = Buffer.from('the signed body');
    const tampered = await signedRequest(stack.endpoint, { method: 'PUT', path: `/${BUCKET}/tampered`, body,
                                                           sendBody: Buffer.from('the forged body') });
    assert.equal(tampered.status, 400);
    assert.equal(errorCode(tampered.body), 'XAmzContentSHA256Mismatch');
    assert.equal(await directGet(stack, 'tampered'), null);
    // UNSIGNED-PAYLOAD is allowed; a declared CRC32 of other bytes is not.
    const unsigned = await signedRequest(stack.endpoint, { method: 'PUT', path: `/${BUCKET}/unsigned`, body,
                                                           payloadHash: 'UNSIGNED-PAYLOAD' });
    assert.equal(unsigned.status, 200, unsigned.body);
    assert.equal(await directGet(stack, 'unsigned'), 'the signed body');
    const badCrc = await signedRequest(stack.endpoint, { method: 'PUT', path: `/${BUCKET}/bad-crc`, body,
                                                         payloadHash: 'UNSIGNED-PAYLOAD',
                                                         headers: { 'x-amz-checksum-crc32': 'AAAAAA==' } });
    assert.equal(errorCode(badCrc.body), 'BadDigest');
    assert.equal(await directGet(stack, 'bad-crc'), null);
  });

  test('presigned URLs: accepted as signed, refused when altered', async () => {
    const url = new URL(stack.endpoint);
    const signer = new SignatureV4({
      credentials: { accessKeyId: 'tockaccess', secretAccessKey: 'tocksecret' }, region: 'us-east-1', service: 's3',
      sha256: Sha256, uriEscapePath: false, applyChecksum: false,
    });
    const presign = async (method, key) => {
      const request = await signer.presign(new HttpRequest({
        method, protocol: 'http:', hostname: url.hostname, path: `/${BUCKET}/${key}`,
        headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
      }), { expiresIn: 300, unsignableHeaders: new Set(['x-amz-content-sha256']),
            unhoistableHeaders: new Set(['x-amz-content-sha256']) });
      return `/${BUCKET}/${key}?${new URLSearchParams(request.query).toString().replace(/\+/g, '%20')}`;
    };
    const put = await rawRequest(stack.endpoint, 'PUT', await presign('PUT', 'presigned'), {}, Buffer.from('via a presigned URL'));
    assert.equal(put.status, 200, put.body);
    const get = await rawRequest(stack.endpoint, 'GET', await presign('GET', 'presigned'), {});
    assert.equal(get.body, 'via a presigned URL');
    const altered = (await presign('GET', 'presigned')).replace('/presigned?', '/unsigned?');
    const refused = await rawRequest(stack.endpoint, 'GET', altered, {});
    assert.equal(errorCode(refused.body), 'SignatureDoesNotMatch');
  });

  test('stopped, the endpoint is down; started again on the same ports, the objects are back', async () => {
    const earlier = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'dir/second' }));
    assert.equal(await earlier.Body.transformToString(), 'second object');
    const { endpoint, direct } = stack;
    assert.equal(await stopStack(stack), 0);
    await assert.rejects(client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'dir/second' })),
                         (err) => /ECONNREFUSED/.test(`${err.code} ${err.message}`));
    stack = await startStack(['--dir', dir, '--bucket', BUCKET,
                              '--proxy-port', new URL(endpoint).port, '--direct-port', new URL(direct).port]);
    assert.equal(stack.endpoint, endpoint);
    assert.equal(stack.direct, direct);
    const back = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'dir/second' }));
    assert.equal(await back.Body.transformToString(), 'second object');
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'after-restart', Body: 'new' }));
    assert.equal(await directGet(stack, 'after-restart'), 'new');
  });
});

describe('the launcher', { timeout: 60000 }, () => {
  test('started without --openssl-legacy-provider, it relaunches itself; closing stdin stops it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tock-s3-test-'));
    try {
      const stack = await startStack(['--dir', dir, '--bucket', BUCKET], { legacyFlag: false });
      assert.notEqual(stack.pid, stack.child.pid, 'the JSON pid is the relaunched process');
      const client = s3Client({ endpoint: stack.endpoint, maxAttempts: 1 });
      for (const key of ['a', 'b']) await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: key }));
      const first = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, MaxKeys: 1 }));
      const second = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, MaxKeys: 1,
                                                                  ContinuationToken: first.NextContinuationToken }));
      assert.deepEqual([...first.Contents, ...second.Contents].map((o) => o.Key), ['a', 'b']);
      stack.child.stdin.end();
      assert.equal(await exited(stack.child), 0);
      assert.throws(() => process.kill(stack.pid, 0), 'the relaunched process is gone too');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a missing --dir is an error, not a server', async () => {
    const child = spawn(process.execPath, ['--openssl-legacy-provider', STACK_SCRIPT], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    assert.equal(await exited(child), 1);
    assert.match(stderr, /--dir is required/);
  });
});
