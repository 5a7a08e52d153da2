// A real S3-compatible server on loopback for Tock's tests: s3rver (a node S3 server keeping
// objects in a directory) behind a proxy that recomputes every request's AWS Signature V4 with
// AWS's own signer (@smithy/signature-v4) and refuses a mismatch with 403
// SignatureDoesNotMatch, as S3 does. s3rver itself does not hold clients to the signature.
//
//   node s3_stack.mjs --dir DIR [--bucket NAME]... [--access-key AK] [--secret-key SK]
//                     [--region R] [--proxy-port P] [--direct-port P]
//
// Run it as `node --openssl-legacy-provider s3_stack.mjs ...`: s3rver makes ListObjectsV2
// continuation tokens with DES, which OpenSSL 3 keeps in its legacy provider.
//
// Prints one JSON line once both listen:
//   {"endpoint":"http://127.0.0.1:<proxy>","direct":"http://127.0.0.1:<s3rver>","pid":<pid>}
// and runs until SIGTERM or SIGINT. Objects stay in DIR, so a test can
// stop the stack and start it again on the same ports (--proxy-port/--direct-port) to play an
// outage and a recovery.
import http from 'node:http';
import { createCipheriv, createHash } from 'node:crypto';
import S3rver from 's3rver';
import { SignatureV4 } from '@smithy/signature-v4';
import { HttpRequest } from '@smithy/protocol-http';
import { Sha256 } from '@aws-crypto/sha256-js';

function parseArgs(argv) {
  const out = { buckets: [], accessKey: 'tockaccess', secretKey: 'tocksecret', region: 'us-east-1',
                proxyPort: 0, directPort: 0, dir: '' };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    switch (flag) {
      case '--dir': out.dir = value; break;
      case '--bucket': out.buckets.push(value); break;
      case '--access-key': out.accessKey = value; break;
      case '--secret-key': out.secretKey = value; break;
      case '--region': out.region = value; break;
      case '--proxy-port': out.proxyPort = Number(value); break;
      case '--direct-port': out.directPort = Number(value); break;
      default: throw new Error(`unknown flag ${flag}`);
    }
  }
  if (!out.dir) throw new Error('--dir is required');
  return out;
}

const options = parseArgs(process.argv.slice(2));

function s3Error(res, status, code, message) {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`);
}

// "20130524T000000Z" -> Date
function parseAmzDate(text) {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text ?? '');
  if (!m) return null;
  return new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]));
}

// The decoded query parameters as the signer wants them (it encodes them itself).
function queryOf(rawQuery) {
  const query = {};
  if (!rawQuery) return query;
  for (const part of rawQuery.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const key = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
    const value = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1));
    if (query[key] === undefined) query[key] = value;
    else query[key] = [].concat(query[key], value);
  }
  return query;
}

// Why the request's signature is not AWS's for it, or null when it is.
async function verify(req, body) {
  const auth = req.headers.authorization ?? '';
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return [403, 'AccessDenied', 'A SigV4 Authorization header is required.'];
  const [, accessKey, , region, signedHeaders, signature] = m;
  if (accessKey !== options.accessKey) {
    return [403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.'];
  }
  const date = parseAmzDate(req.headers['x-amz-date']);
  if (!date) return [403, 'AccessDenied', 'x-amz-date is missing or malformed.'];
  if (Math.abs(Date.now() - date.getTime()) > 15 * 60 * 1000) {
    return [403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.'];
  }
  const declared = req.headers['x-amz-content-sha256'];
  if (declared && declared !== 'UNSIGNED-PAYLOAD' && !declared.startsWith('STREAMING-')) {
    const actual = createHash('sha256').update(body).digest('hex');
    if (declared !== actual) {
      return [400, 'XAmzContentSHA256Mismatch', 'The provided x-amz-content-sha256 header does not match what was computed.'];
    }
  }
  const headers = {};
  for (const name of signedHeaders.split(';')) {
    const value = req.headers[name];
    if (value === undefined) return [403, 'AccessDenied', `signed header ${name} is missing`];
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const [rawPath, rawQuery] = req.url.split('?', 2);
  const request = new HttpRequest({
    method: req.method, protocol: 'http:', hostname: headers.host ?? 'localhost', path: rawPath,
    query: queryOf(rawQuery), headers, body,
  });
  const signer = new SignatureV4({
    credentials: { accessKeyId: options.accessKey, secretAccessKey: options.secretKey },
    region, service: 's3', sha256: Sha256, uriEscapePath: false, applyChecksum: false,
  });
  const signed = await signer.sign(request, { signingDate: date });
  const expected = /Signature=([0-9a-f]{64})/.exec(signed.headers.authorization)?.[1];
  if (expected !== signature) {
    if (process.env.S3_PROXY_DEBUG) process.stderr.write(`${req.method} ${req.url} ${JSON.stringify(headers)} query=${JSON.stringify(queryOf(rawQuery))}\n`);
    return [403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.'];
  }
  return null;
}

// Virtual-host style ("<bucket>.127.0.0.1:port") becomes path style for s3rver.
function forwardPath(req) {
  const host = (req.headers.host ?? '').split(':')[0];
  const vhost = /^(.+)\.(127\.0\.0\.1|localhost)$/.exec(host);
  if (!vhost) return req.url;
  const [path, query] = req.url.split('?', 2);
  // "/" of the bucket itself is "/<bucket>" (s3rver reads "/<bucket>/" as an empty key).
  return `/${vhost[1]}${path === '/' ? '' : path}${query === undefined ? '' : `?${query}`}`;
}

async function main() {
  try {
    createCipheriv('des', Buffer.alloc(8), Buffer.alloc(8));
  } catch {
    throw new Error('DES is unavailable: run node with --openssl-legacy-provider (s3rver needs it for list continuation tokens)');
  }
  const s3 = new S3rver({
    address: '127.0.0.1', port: options.directPort, silent: true, directory: options.dir,
    configureBuckets: options.buckets.map((name) => ({ name })), allowMismatchedSignatures: true,
  });
  const directInfo = await s3.run();
  const directPort = directInfo.port;

  const proxy = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      let refused;
      try {
        refused = await verify(req, body);
      } catch (err) {
        refused = [500, 'InternalError', String(err)];
      }
      if (refused) {
        process.stderr.write(`s3 proxy: refused ${req.method} ${req.url}: ${refused[1]}\n`);
        return s3Error(res, ...refused);
      }
      const headers = { ...req.headers, host: `127.0.0.1:${directPort}` };
      delete headers.authorization; // checked here; s3rver serves anonymous requests
      const upstream = http.request({ host: '127.0.0.1', port: directPort, method: req.method,
                                      path: forwardPath(req), headers }, (up) => {
        res.writeHead(up.statusCode, up.headers);
        up.pipe(res);
      });
      upstream.on('error', (err) => s3Error(res, 502, 'BadGateway', String(err)));
      upstream.end(body);
    });
  });
  await new Promise((resolve, reject) => {
    proxy.once('error', reject);
    proxy.listen(options.proxyPort, '127.0.0.1', resolve);
  });
  const proxyPort = proxy.address().port;
  process.stdout.write(`${JSON.stringify({ endpoint: `http://127.0.0.1:${proxyPort}`,
                                           direct: `http://127.0.0.1:${directPort}`, pid: process.pid })}\n`);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    proxy.closeAllConnections?.();
    await new Promise((resolve) => proxy.close(resolve));
    await s3.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err) => {
  process.stderr.write(`s3_stack: ${err.stack ?? err}\n`);
  process.exit(1);
});
