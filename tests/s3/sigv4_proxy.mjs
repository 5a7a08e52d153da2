// The checking half of tests/s3: an HTTP proxy that holds every request to AWS Signature V4
// as S3 does, then hands it to s3rver (which checks no signature of ours: it only knows its own
// built-in account). The signature is recomputed with AWS's own signer (@smithy/signature-v4),
// so a client of Tock's that passes here signs the way AWS SDKs do, byte for byte.
//
// verifyRequest() is the whole decision and is exported on its own so that AWS's published
// example requests (fixed 2013 dates) can be run through it with a fixed clock.
import http from 'node:http';
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';
import { SignatureV4 } from '@smithy/signature-v4';
import { HttpRequest } from '@smithy/protocol-http';
import { Sha256 } from '@aws-crypto/sha256-js';

// S3 refuses requests whose x-amz-date is further than this from its clock.
const MAX_SKEW_MS = 15 * 60 * 1000;
// Longest lifetime S3 accepts for a presigned URL (7 days).
const MAX_PRESIGNED_SECONDS = 7 * 24 * 3600;
// Query parameters that carry presigned auth; stripped before s3rver sees the request, since it
// would try to check them against its own account.
const PRESIGN_PARAMS = new Set(['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Expires',
                                'X-Amz-SignedHeaders', 'X-Amz-Signature', 'X-Amz-Security-Token']);

// A refusal in S3's terms: HTTP status, S3 error code, message.
export class S3Refusal extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const refuse = (status, code, message) => { throw new S3Refusal(status, code, message); };
const SIGNATURE_MISMATCH = 'The request signature we calculated does not match the signature you provided.';

const sha256Hex = (data) => createHash('sha256').update(data).digest('hex');

// The x-amz-checksum-* algorithms node can compute (zlib.crc32 needs node >= 20.15); crc32c and
// crc64nvme would need packages of their own and pass unchecked.
const CHECKSUMS = {
  ...(typeof zlib.crc32 === 'function' ? {
    crc32: (data) => {
      const out = Buffer.alloc(4);
      out.writeUInt32BE(zlib.crc32(data) >>> 0);
      return out.toString('base64');
    },
  } : {}),
  sha1: (data) => createHash('sha1').update(data).digest('base64'),
  sha256: (data) => createHash('sha256').update(data).digest('base64'),
};

// S3 checks the integrity values a client declares, in headers or (aws-chunked) trailers.
function checkDigests(data, headers, trailers) {
  const declared = new Map([...Object.entries(headers), ...trailers]);
  const md5 = declared.get('content-md5');
  if (md5 !== undefined && createHash('md5').update(data).digest('base64') !== md5) {
    refuse(400, 'BadDigest', 'The Content-MD5 you specified did not match what we received.');
  }
  for (const [algorithm, compute] of Object.entries(CHECKSUMS)) {
    const value = declared.get(`x-amz-checksum-${algorithm}`);
    if (value !== undefined && compute(data) !== value) {
      refuse(400, 'BadDigest', `The ${algorithm.toUpperCase()} you specified did not match the calculated checksum.`);
    }
  }
}

export function errorXml(code, message) {
  const text = String(message).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${text}</Message></Error>`;
}

// "20130524T000000Z" -> Date, or null.
function parseAmzDate(text) {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text ?? '');
  return m ? new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])) : null;
}

function decodeComponent(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return refuse(400, 'InvalidArgument', `Malformed percent-encoding in the query: ${text}`);
  }
}

// The query as sent, one entry per parameter: the raw text (to forward untouched) and the
// decoded name and value (the signer re-encodes them its own, canonical, way — which is what
// makes "a%2Fb" and "a/b" sign alike, as on S3).
function parseQuery(rawQuery) {
  if (!rawQuery) return [];
  return rawQuery.split('&').filter(Boolean).map((raw) => {
    const eq = raw.indexOf('=');
    return { raw, name: decodeComponent(eq < 0 ? raw : raw.slice(0, eq)),
             value: eq < 0 ? '' : decodeComponent(raw.slice(eq + 1)) };
  });
}

// The shape @smithy/protocol-http's HttpRequest takes: repeated names become arrays.
function queryObject(params) {
  const query = {};
  for (const { name, value } of params) {
    if (query[name] === undefined) query[name] = value;
    else query[name] = [].concat(query[name], value);
  }
  return query;
}

// "AK/20130524/us-east-1/s3/aws4_request" checked against what this server is.
function parseCredential(text, options, amzDate) {
  const parts = (text ?? '').split('/');
  if (parts.length !== 5 || !parts[0]) {
    refuse(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
  }
  const [accessKey, date, region, service, terminal] = parts;
  if (accessKey !== options.accessKey) {
    refuse(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
  }
  if (service !== 's3' || terminal !== 'aws4_request') {
    refuse(400, 'AuthorizationHeaderMalformed', `The credential scope ${text} is not for s3.`);
  }
  if (region !== options.region) {
    refuse(400, 'AuthorizationHeaderMalformed', `The authorization header is malformed; the region '${region}' is wrong; expecting '${options.region}'`);
  }
  if (amzDate && date !== amzDate.slice(0, 8)) {
    refuse(400, 'AuthorizationHeaderMalformed', 'Invalid credential date. Date is not the same as X-Amz-Date.');
  }
  return { accessKey, date, region, scope: parts.slice(1).join('/') };
}

// `Authorization: AWS4-HMAC-SHA256 Credential=..., SignedHeaders=a;b, Signature=hex`.
function parseAuthorization(header) {
  const m = /^AWS4-HMAC-SHA256\s+(.*)$/.exec(header);
  if (!m) refuse(400, 'InvalidArgument', 'Unsupported Authorization Type: only AWS4-HMAC-SHA256 is accepted here.');
  const fields = {};
  for (const part of m[1].split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) fields[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  if (!fields.Credential || !fields.SignedHeaders || !/^[0-9a-f]{64}$/.test(fields.Signature ?? '')) {
    refuse(400, 'AuthorizationHeaderMalformed', 'The authorization header is malformed.');
  }
  return { credential: fields.Credential, signedHeaders: fields.SignedHeaders.split(';'),
           signature: fields.Signature };
}

// Exactly the headers the client signed, plus x-amz-content-sha256 even when unsigned: S3
// uses it as the payload hash either way. `unsignable` names what is present but must stay out
// of the canonical headers.
function signingHeaders(headers, signedNames) {
  const picked = {};
  for (const name of signedNames) {
    if (headers[name] === undefined) refuse(403, 'AccessDenied', `The signed header ${name} is not in the request.`);
    picked[name] = headers[name];
  }
  const unsignable = new Set();
  for (const extra of ['x-amz-content-sha256']) {
    if (picked[extra] === undefined && headers[extra] !== undefined) {
      picked[extra] = headers[extra];
      unsignable.add(extra);
    }
  }
  return { picked, unsignable };
}

function signerFor(options, region) {
  return new SignatureV4({
    credentials: { accessKeyId: options.accessKey, secretAccessKey: options.secretKey },
    region, service: 's3', sha256: Sha256,
    // S3's canonical URI is the path exactly as sent (each key segment encoded once by the
    // client); the signer's default would normalise and encode it a second time.
    uriEscapePath: false,
    // Never add an x-amz-content-sha256 the client did not send: it would change what is signed.
    applyChecksum: false,
  });
}

// aws-chunked framing: "<hex size>[;chunk-signature=<sig>]\r\n<data>\r\n" ... a zero-size chunk,
// then optional trailer lines "name:value\r\n" and blank lines.
export function decodeAwsChunked(buffer) {
  const malformed = () => refuse(400, 'IncompleteBody', 'The aws-chunked body is malformed.');
  const chunks = [];
  let pos = 0;
  for (;;) {
    const eol = buffer.indexOf('\r\n', pos);
    if (eol < 0) malformed();
    const [sizeText, ...extensions] = buffer.toString('latin1', pos, eol).split(';');
    if (!/^[0-9a-fA-F]+$/.test(sizeText)) malformed();
    const size = parseInt(sizeText, 16);
    pos = eol + 2;
    if (pos + size > buffer.length) malformed();
    const signature = extensions.find((e) => e.startsWith('chunk-signature='))?.slice('chunk-signature='.length);
    chunks.push({ data: buffer.subarray(pos, pos + size), signature });
    pos += size;
    if (size === 0) break;
    if (buffer.toString('latin1', pos, pos + 2) !== '\r\n') malformed();
    pos += 2;
  }
  const trailers = [];
  while (pos < buffer.length) {
    const eol = buffer.indexOf('\r\n', pos);
    const end = eol < 0 ? buffer.length : eol;
    const line = buffer.toString('latin1', pos, end);
    pos = end + 2;
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) malformed();
    trailers.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]);
  }
  return { data: Buffer.concat(chunks.map((c) => c.data)), chunks, trailers };
}

// Checks the body against x-amz-content-sha256 and returns the object's bytes (aws-chunked
// bodies unwrapped: s3rver would store the framing as the object).
async function checkPayload(declared, body, headers, signing) {
  if (/^[0-9a-fA-F]{64}$/.test(declared)) {
    if (sha256Hex(body) !== declared.toLowerCase()) {
      refuse(400, 'XAmzContentSHA256Mismatch', "The provided 'x-amz-content-sha256' header does not match what was computed.");
    }
    return { body, unwrapped: false, trailers: [] };
  }
  if (declared === 'UNSIGNED-PAYLOAD') return { body, unwrapped: false, trailers: [] };
  const signedChunks = declared === 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD' ||
                       declared === 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER';
  const signedTrailer = declared === 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER';
  if (!signedChunks && declared !== 'STREAMING-UNSIGNED-PAYLOAD-TRAILER') {
    refuse(400, 'InvalidArgument', `x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-..., or a valid sha256 value (got ${declared}).`);
  }
  const decoded = decodeAwsChunked(body);
  const expectedLength = headers['x-amz-decoded-content-length'];
  if (expectedLength !== undefined && Number(expectedLength) !== decoded.data.length) {
    refuse(400, 'IncompleteBody', `x-amz-decoded-content-length is ${expectedLength} but the chunks hold ${decoded.data.length} bytes.`);
  }
  if (signedChunks) {
    // Each chunk's signature chains on the previous one, starting from the request's (the seed);
    // the signer's event signing is that very string-to-sign (empty "headers" hash included).
    let previous = signing.seed;
    for (const { data, signature } of decoded.chunks) {
      const expected = await signing.signer.sign({ headers: new Uint8Array(0), payload: data },
                                                 { signingDate: signing.date, priorSignature: previous });
      if (signature !== expected) refuse(403, 'SignatureDoesNotMatch', `${SIGNATURE_MISMATCH} (chunk signature)`);
      previous = signature;
    }
    if (signedTrailer) {
      const sent = decoded.trailers.find(([name]) => name === 'x-amz-trailer-signature')?.[1];
      const text = decoded.trailers.filter(([name]) => name !== 'x-amz-trailer-signature')
        .map(([name, value]) => `${name}:${value}\n`).join('');
      const stringToSign = ['AWS4-HMAC-SHA256-TRAILER', signing.longDate, signing.scope, previous, sha256Hex(text)].join('\n');
      const expected = await signing.signer.sign(stringToSign, { signingDate: signing.date });
      if (sent !== expected) refuse(403, 'SignatureDoesNotMatch', `${SIGNATURE_MISMATCH} (trailer signature)`);
    }
  }
  return { body: decoded.data, unwrapped: true, trailers: decoded.trailers };
}

function checkClock(date, now) {
  if (Math.abs(now.getTime() - date.getTime()) > MAX_SKEW_MS) {
    refuse(403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');
  }
}

async function verifyHeaderAuth(request, path, params, options) {
  const { headers } = request;
  const auth = parseAuthorization(headers.authorization);
  const amzDateText = headers['x-amz-date'];
  const date = parseAmzDate(amzDateText);
  // Checked before the credential's date so a missing x-amz-date is named as such.
  if (!date) refuse(403, 'AccessDenied', 'AWS authentication requires a valid x-amz-date header.');
  const credential = parseCredential(auth.credential, options, amzDateText);
  checkClock(date, options.now ?? new Date());
  const declared = headers['x-amz-content-sha256'];
  if (declared === undefined) refuse(400, 'InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');

  const { picked, unsignable } = signingHeaders(headers, auth.signedHeaders);
  const signer = signerFor(options, credential.region);
  const signed = await signer.sign(
    new HttpRequest({ method: request.method, protocol: 'http:', hostname: 'localhost', path,
                      query: queryObject(params), headers: picked }),
    // signableHeaders lets through names the signer otherwise never signs (user-agent, expect,
    // ...): whatever the client listed counts, as on S3.
    { signingDate: date, signableHeaders: new Set(auth.signedHeaders), unsignableHeaders: unsignable },
  );
  const expected = /Signature=([0-9a-f]{64})/.exec(signed.headers.authorization)?.[1];
  if (expected !== auth.signature) {
    // The signer always drops a Date header (it only knows x-amz-date), so a client that signs
    // Date cannot be checked here; say so rather than blame the client's secret.
    const note = auth.signedHeaders.includes('date') ? ' (note: this test server cannot check a signed Date header)' : '';
    refuse(403, 'SignatureDoesNotMatch', SIGNATURE_MISMATCH + note);
  }

  const payload = await checkPayload(declared, request.body, headers, {
    signer, date, longDate: amzDateText, scope: credential.scope, seed: auth.signature,
  });
  return { ...payload, params };
}

async function verifyPresigned(request, path, params, options) {
  const get = (name) => params.find((p) => p.name === name)?.value;
  if (get('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256') {
    refuse(400, 'AuthorizationQueryParametersError', 'X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"');
  }
  const amzDateText = get('X-Amz-Date');
  const date = parseAmzDate(amzDateText);
  const expires = Number(get('X-Amz-Expires'));
  const signature = get('X-Amz-Signature') ?? '';
  const signedNames = (get('X-Amz-SignedHeaders') ?? '').split(';').filter(Boolean);
  if (!date || !Number.isInteger(expires) || expires < 1 || expires > MAX_PRESIGNED_SECONDS ||
      !/^[0-9a-f]{64}$/.test(signature) || signedNames.length === 0) {
    refuse(400, 'AuthorizationQueryParametersError', 'The X-Amz-* query parameters are missing or malformed.');
  }
  const credential = parseCredential(get('X-Amz-Credential'), options, amzDateText);
  const now = (options.now ?? new Date()).getTime();
  if (date.getTime() - now > MAX_SKEW_MS) refuse(403, 'AccessDenied', 'Request is not valid yet');
  if (now > date.getTime() + expires * 1000) refuse(403, 'AccessDenied', 'Request has expired');

  const { picked, unsignable } = signingHeaders(request.headers, signedNames);
  // A presigned URL's payload is never hashed: S3 signs it as UNSIGNED-PAYLOAD.
  if (picked['x-amz-content-sha256'] === undefined) {
    picked['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
    unsignable.add('x-amz-content-sha256');
  }
  const signer = signerFor(options, credential.region);
  // presign() sets X-Amz-Algorithm/Credential/Date/Expires/SignedHeaders itself, to the values
  // the client sent; every other parameter (x-id, response-*, ...) is signed as sent.
  const presigned = await signer.presign(
    new HttpRequest({ method: request.method, protocol: 'http:', hostname: 'localhost', path,
                      query: queryObject(params.filter((p) => p.name !== 'X-Amz-Signature')),
                      headers: picked }),
    { signingDate: date, expiresIn: expires, signableHeaders: new Set(signedNames),
      unsignableHeaders: unsignable,
      // The signer would otherwise move x-amz-* headers into the query.
      unhoistableHeaders: new Set(Object.keys(picked)) },
  );
  if (presigned.query['X-Amz-Signature'] !== signature) refuse(403, 'SignatureDoesNotMatch', SIGNATURE_MISMATCH);
  return { body: request.body, unwrapped: false, trailers: [],
           params: params.filter((p) => !PRESIGN_PARAMS.has(p.name)) };
}

// Decides one request: { method, url (path and query as sent), headers (lower-case names,
// string or string[] values), body (Buffer) }. Throws S3Refusal, or returns
//   { body, unwrapped, query }: the object bytes to forward (aws-chunked framing removed when
//   `unwrapped`) and the query string to forward (presigned auth parameters removed).
// options: { accessKey, secretKey, region, now? }.
export async function verifyRequest(input, options) {
  // A repeated header is one value, its values joined by "," (SigV4's canonical form).
  const headers = {};
  for (const [name, value] of Object.entries(input.headers)) headers[name.toLowerCase()] = [].concat(value).join(',');
  const request = { ...input, headers };
  const q = request.url.indexOf('?');
  const path = q < 0 ? request.url : request.url.slice(0, q);
  const params = parseQuery(q < 0 ? '' : request.url.slice(q + 1));
  let result;
  if (request.headers.authorization !== undefined) {
    result = await verifyHeaderAuth(request, path, params, options);
  } else if (params.some((p) => p.name === 'X-Amz-Algorithm')) {
    result = await verifyPresigned(request, path, params, options);
  } else {
    refuse(403, 'AccessDenied', 'Access Denied: anonymous requests are not allowed.');
  }
  checkDigests(result.body, headers, result.trailers);
  return { body: result.body, unwrapped: result.unwrapped, query: result.params.map((p) => p.raw).join('&') };
}

// Virtual-host style ("<bucket>.127.0.0.1:port", "<bucket>.localhost:port") as the path-style
// path s3rver understands. (s3rver's own virtual hosting only knows "<bucket>.s3.amazonaws.com"
// and a bare bucket name as the whole host; it would take "b.localhost" as a bucket named so.)
export function pathStyle(host, path) {
  const vhost = /^(.+)\.(127\.0\.0\.1|localhost)$/.exec((host ?? '').replace(/:\d+$/, ''));
  if (!vhost) return path;
  // The bucket itself is "/<bucket>": s3rver reads "/<bucket>/" as an object with an empty key.
  return `/${vhost[1]}${path === '/' ? '' : path}`;
}

// The proxy: refuses what S3 would refuse, forwards the rest to s3rver at `upstream`
// ({ host, port }) and passes its answer back unchanged. `log(line)` hears each refusal.
export function createVerifyingProxy({ accessKey, secretKey, region, upstream, log = () => {} }) {
  return http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('error', () => res.destroy());
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      let verdict;
      try {
        // headersDistinct: node joins some repeated headers with ", ", SigV4 wants ",".
        verdict = await verifyRequest({ method: req.method, url: req.url, headers: req.headersDistinct, body },
                                      { accessKey, secretKey, region });
      } catch (err) {
        const refusal = err instanceof S3Refusal ? err : new S3Refusal(500, 'InternalError', String(err?.stack ?? err));
        log(`s3 proxy: refused ${req.method} ${req.url}: ${refusal.code} (${refusal.message})`);
        res.writeHead(refusal.status, { 'content-type': 'application/xml' });
        res.end(errorXml(refusal.code, refusal.message));
        return;
      }
      forward(req, res, verdict, upstream, log);
    });
  });
}

function forward(req, res, verdict, upstream, log) {
  const headers = { ...req.headers, host: `${upstream.host}:${upstream.port}` };
  // Checked here; s3rver serves requests without credentials and would refuse ours.
  delete headers.authorization;
  // The body is already read in full: no 100-continue dance, and a plain content-length.
  delete headers.expect;
  delete headers['transfer-encoding'];
  if (verdict.body.length > 0 || req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined) {
    headers['content-length'] = String(verdict.body.length);
  }
  if (verdict.unwrapped) {
    // The object is now the decoded bytes; what described the chunked wrapping goes.
    const encodings = (headers['content-encoding'] ?? '').split(',').map((e) => e.trim())
      .filter((e) => e && e.toLowerCase() !== 'aws-chunked');
    if (encodings.length) headers['content-encoding'] = encodings.join(',');
    else delete headers['content-encoding'];
    delete headers['x-amz-decoded-content-length'];
    delete headers['x-amz-trailer'];
    headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
  }
  const q = req.url.indexOf('?');
  const path = pathStyle(req.headers.host, q < 0 ? req.url : req.url.slice(0, q));
  const upstreamReq = http.request({ host: upstream.host, port: upstream.port, method: req.method,
                                     path: verdict.query ? `${path}?${verdict.query}` : path, headers }, (up) => {
    res.writeHead(up.statusCode, up.statusMessage, up.rawHeaders);
    up.pipe(res);
  });
  upstreamReq.on('error', (err) => {
    log(`s3 proxy: ${req.method} ${req.url}: s3rver unreachable: ${err.message}`);
    if (res.headersSent) return res.destroy(err);
    res.writeHead(502, { 'content-type': 'application/xml' });
    res.end(errorXml('InternalError', `s3rver unreachable: ${err.message}`));
  });
  upstreamReq.end(verdict.body);
}
