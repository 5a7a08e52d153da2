// Reads objects back with the real AWS client (@aws-sdk/client-s3), as any other tool would,
// so a test can check what Tock wrote is plain S3 data under the keys it meant:
//   node read_objects.mjs --endpoint URL --bucket B [--prefix P] [--access-key AK --secret-key SK]
// Prints one JSON line {"objects":[{"key":..., "size":..., "body":"<utf-8>"}...]} sorted by
// key; exits 1 with the error on stderr.
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { s3Client, scriptArgs } from './aws_client.mjs';

const args = scriptArgs('node read_objects.mjs --endpoint URL --bucket B [--prefix P] [--access-key AK --secret-key SK]',
                        { bucket: { type: 'string' }, prefix: { type: 'string', default: '' } }, ['bucket']);
const client = s3Client({ endpoint: args.endpoint, accessKey: args['access-key'], secretKey: args['secret-key'] });

try {
  const objects = [];
  let token;
  do {
    const page = await client.send(new ListObjectsV2Command({
      Bucket: args.bucket, Prefix: args.prefix, ContinuationToken: token,
    }));
    for (const { Key, Size } of page.Contents ?? []) {
      const got = await client.send(new GetObjectCommand({ Bucket: args.bucket, Key }));
      objects.push({ key: Key, size: Size, body: await got.Body.transformToString('utf8') });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  // Code-unit order, as S3 lists keys (localeCompare would not be).
  objects.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  process.stdout.write(`${JSON.stringify({ objects })}\n`);
} catch (err) {
  process.stderr.write(`read_objects: ${err.name}: ${err.message}\n`);
  process.exit(1);
}
