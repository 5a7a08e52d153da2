// Reads objects back with the real AWS client (@aws-sdk/client-s3), as any other tool would:
//   node read_objects.mjs --endpoint URL --bucket B [--prefix P] [--access-key AK --secret-key SK]
// Prints one JSON line {"objects":[{"key":..., "size":..., "body":"<utf-8>"}...]} sorted by
// key; exits 1 with the error on stderr.
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    endpoint: { type: 'string' }, bucket: { type: 'string' }, prefix: { type: 'string', default: '' },
    'access-key': { type: 'string', default: 'tockaccess' }, 'secret-key': { type: 'string', default: 'tocksecret' },
  },
});

const client = new S3Client({
  endpoint: values.endpoint, region: 'us-east-1', forcePathStyle: true,
  credentials: { accessKeyId: values['access-key'], secretAccessKey: values['secret-key'] },
});

try {
  const objects = [];
  let token;
  do {
    const page = await client.send(new ListObjectsV2Command({
      Bucket: values.bucket, Prefix: values.prefix, ContinuationToken: token,
    }));
    for (const { Key, Size } of page.Contents ?? []) {
      const got = await client.send(new GetObjectCommand({ Bucket: values.bucket, Key }));
      objects.push({ key: Key, size: Size, body: await got.Body.transformToString('utf8') });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  objects.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  process.stdout.write(`${JSON.stringify({ objects })}\n`);
} catch (err) {
  process.stderr.write(`read_objects: ${err.name}: ${err.message}\n`);
  process.exit(1);
}
