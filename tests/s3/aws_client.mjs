// The real AWS client (@aws-sdk/client-s3) as the helper scripts and the tests build it:
// pointed at a loopback endpoint, with the stack's default credentials.
import { S3Client } from '@aws-sdk/client-s3';
import { parseArgs } from 'node:util';

// The SDK warns on stderr that future releases need node 22; the versions here are pinned,
// and the warning would only clutter what tests read from stderr.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export const DEFAULT_ACCESS_KEY = 'tockaccess';
export const DEFAULT_SECRET_KEY = 'tocksecret';

// options: endpoint, accessKey, secretKey, forcePathStyle (default true), maxAttempts,
// httpAgent (e.g. one whose lookup resolves <bucket>.localhost).
export function s3Client({ endpoint, accessKey = DEFAULT_ACCESS_KEY, secretKey = DEFAULT_SECRET_KEY,
                           forcePathStyle = true, maxAttempts = 3, httpAgent } = {}) {
  return new S3Client({
    endpoint, region: 'us-east-1', forcePathStyle, maxAttempts,
    credentials: { accessKeyId: accessKey, secretAccessKey: secretKey },
    // Bounded: a test must fail, not hang, when the stack is down.
    requestHandler: { connectionTimeout: 5000, requestTimeout: 30000, ...(httpAgent ? { httpAgent } : {}) },
  });
}

// Flags shared by the scripts: --endpoint, --access-key, --secret-key, plus `extra`.
// Exits 2 with a usage line when a required one is missing.
export function scriptArgs(usage, extra, required) {
  const { values } = parseArgs({
    options: {
      endpoint: { type: 'string' },
      'access-key': { type: 'string', default: DEFAULT_ACCESS_KEY },
      'secret-key': { type: 'string', default: DEFAULT_SECRET_KEY },
      ...extra,
    },
  });
  for (const name of ['endpoint', ...required]) {
    if (!values[name]) {
      process.stderr.write(`usage: ${usage}\n`);
      process.exit(2);
    }
  }
  return values;
}
